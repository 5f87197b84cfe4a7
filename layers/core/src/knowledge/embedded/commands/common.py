"""What every ``kb`` command shares: the services built from ``--data`` (and the development
switch of ``kb serve``), JSON output, progress on a terminal, and the start-up check that the
embedders the command needs can load."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import replace
from typing import Any, TextIO

from ...settings import LocalSettings
from ...wiring import Services, build_local_services


def open_services(args: argparse.Namespace) -> Services:
    """The embedded services over ``--data`` (default ``$KB_DATA`` or ``./.kb``)."""
    settings = LocalSettings.from_env(args.data)
    port = getattr(args, "dev_allow_loopback", None)  # only ``kb serve`` has the switch
    if port is not None:
        print(f"kb: WARNING: DEVELOPMENT SWITCH ON: outbound calls (crawler, upstream, embedder) may reach "
              f"http(s)://127.0.0.1:{port} and http(s)://localhost:{port}. Never use this in production.",
              file=sys.stderr, flush=True)
        settings = replace(settings, dev_loopback_port=port)
    return build_local_services(settings)


def print_json(obj: Any, out: TextIO | None = None) -> None:
    (out or sys.stdout).write(json.dumps(obj, ensure_ascii=False) + "\n")


class Progress:
    """Progress on a terminal (one rewritten line); silent when stderr is not a TTY."""

    def __init__(self, stream: TextIO | None = None):
        self.stream = stream or sys.stderr
        self.live = self.stream.isatty()

    def __call__(self, event: str, **data: Any) -> None:
        if not self.live:
            return
        if event == "document":
            self.stream.write(
                f"\r  {data['source']}: {data['number']}/{data['total']} pages, {data['passages']} passages\033[K"
            )
        elif event in ("committed", "skipped"):
            self.stream.write(f"\r  {data['source']}: {event}\033[K\n")
        self.stream.flush()


def require_embedders(services: Services, bots: Sequence[str] | None = None) -> None:
    """Stop at start when an embedder that ``bots`` use (None: the default one and every
    known bot's) cannot load: one line saying which bot, what is missing and the fix."""
    from ...embed import EmbedderUnavailable, bot_embedder, check_embedder

    checked: set[str] = set()
    if bots is None:
        check_default = services.default_embedder
        try:
            check_embedder(check_default)
        except EmbedderUnavailable as exc:
            raise EmbedderUnavailable(f"KB_EMBEDDER={check_default}: {exc.message}") from exc
        checked.add(check_default)
        bots = services.state.list_bots()
    for bot in bots:
        settings = services.state.get_bot(bot)
        name, origin = bot_embedder(settings, services.default_embedder)
        options = dict(settings.embedder_options or {})
        key = f"{name}|{sorted(options.items())!r}" if origin == "bot" else name
        if key in checked:
            continue
        checked.add(key)
        try:
            check_embedder(name, options if origin == "bot" else None, policy=services.outbound)
        except EmbedderUnavailable as exc:
            via = f"the {name} embedder (its own setting)" if origin == "bot" else f"KB_EMBEDDER={name}"
            raise EmbedderUnavailable(f"bot {bot!r} uses {via}, but {exc.message}") from exc
