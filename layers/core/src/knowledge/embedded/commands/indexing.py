"""``kb ingest`` and ``kb reindex``: index packs or refresh every source, then compact the
search partitions, and print what was done."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ...errors import KnowledgeError
from ...wiring import Services
from .common import Progress, open_services, print_json, require_embedders


def cmd_ingest(args: argparse.Namespace) -> int:
    from ...refresh.packsync import install_pack, pack_source_id
    from ...refresh.reindex import reindex
    from ...sources.packs import PACK_SUFFIX

    services = open_services(args)
    require_embedders(services, [args.bot])
    files: list[Path] = []
    for raw in args.paths:
        path = Path(raw)
        if path.is_dir():
            files.extend(sorted(p for p in path.iterdir() if p.name.endswith(PACK_SUFFIX)))
        elif path.is_file():
            files.append(path)
        else:
            print(f"kb: no such file or folder: {raw}", file=sys.stderr)
            return 2
    slugs = []
    for path in files:
        try:
            slugs.append(install_pack(services, path))
        except KnowledgeError as exc:
            print(f"kb: {path}: {exc.code}: {exc.message}", file=sys.stderr)
            return 2
    only = {pack_source_id(args.bot, s) for s in slugs}
    report = reindex(services, args.bot, force=args.force, only=only, progress=Progress())
    summary = report.as_dict()
    summary["compaction"] = _compact(services, args.bot)
    # a source left queued (throttled, embedder failing) is not in: the ingest did not finish
    queued = [row for row in summary["results"] if row["status"] == "queued"]
    if args.json:
        print_json(summary)
    else:
        print(
            f"ingested {len(slugs)} pack(s): {summary['pages']} pages, {summary['passages']} passages, "
            f"{summary['skipped']} unchanged, {summary['pagesSkipped']} pages skipped, "
            f"{summary['failed']} failed, {summary['pagesFailed']} pages failed"
            + (f", {len(queued)} queued for retry" if queued else "")
        )
        for slug in summary["outOfScope"]:
            print(f"  out of scope (not indexed): {slug}")
        for row in summary["results"]:
            if row["status"] in ("failed", "queued"):
                print(f"  {row['status']}: {row['name']}: {row['errorCode']}")
        _print_compaction(summary["compaction"])
    return 1 if report.failed or queued else 0


def cmd_reindex(args: argparse.Namespace) -> int:
    from ...refresh.reindex import reindex

    services = open_services(args)
    require_embedders(services, [args.bot])
    report = reindex(services, args.bot, force=args.force, progress=Progress())
    summary = report.as_dict()
    summary["compaction"] = _compact(services, args.bot)
    if args.json:
        print_json(summary)
    else:
        print(
            f"reindexed {summary['sources']} source(s): {summary['indexed']} rebuilt, {summary['skipped']} unchanged, "
            f"{summary['failed']} failed; {summary['passages']} passages written"
        )
        if summary["warning"]:
            print(f"  warning: {summary['warning']}")
        _print_compaction(summary["compaction"])
    return 1 if report.failed else 0


def _compact(services: Services, bot: str) -> list[dict[str, Any]]:
    """Rewrite the bot's search partitions that a refresh left in several segments (passages
    are already searchable: this only makes questions cheaper)."""
    if sys.stderr.isatty():
        sys.stderr.write("  compacting the search index...\033[K\r")
        sys.stderr.flush()
    try:
        return services.index.compact(bot)
    except KnowledgeError as exc:  # the passages are in and searchable: say so, and go on
        print(f"kb: search index compaction failed ({exc.code}); searches stay correct, only slower",
              file=sys.stderr)
        return []


def _print_compaction(done: list[dict[str, Any]]) -> None:
    for row in done:
        print(f"search index: {row['partition']} partition compacted, {row['segmentsBefore']} segments -> "
              f"{row['segmentsAfter']}, {row['passages']} passages, in {row['seconds']} s")
