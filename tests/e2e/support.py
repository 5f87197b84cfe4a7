"""What the end-to-end tests share: running the ``kb`` command, starting ``kb serve`` on a free
loopback port, and calling its HTTP API. Test modules import from here, never from each other."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

KB = [sys.executable, "-m", "knowledge.embedded.cli"]
KB_PATH = "/api/bots/default/knowledge"


def run_kb(data: Path, *args: str) -> str:
    out = subprocess.run([*KB, "--data", str(data), *args], check=True, capture_output=True, text=True, timeout=120)
    return out.stdout


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(data: Path, port: int, extra_env: dict[str, str] | None = None,
                 extra_args: tuple[str, ...] = ()) -> tuple[subprocess.Popen[bytes], str]:
    """``kb serve`` in a subprocess, once its port accepts connections: (process, base URL)."""
    proc = subprocess.Popen([*KB, "--data", str(data), "serve", "--port", str(port), *extra_args],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env={**os.environ, **(extra_env or {})})
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return proc, f"http://127.0.0.1:{port}"
        except OSError:
            if proc.poll() is not None:
                raise RuntimeError(proc.stderr.read().decode() if proc.stderr else "server died") from None
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("server did not start")


def call(base: str, method: str, path: str, token: str | None = None,
         body: Any = None) -> tuple[int, Any, dict[str, str]]:
    """One JSON request: (status, decoded body, headers), error statuses included."""
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(base + path, data=data, method=method)
    if token:
        req.add_header("Authorization", f"Bearer {token}")
    if data is not None:
        req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return resp.status, json.loads(resp.read() or b"null"), dict(resp.headers)
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read() or b"null"), dict(err.headers)


def ingested(root: Path, slug: str, pack: bytes) -> Path:
    """A data folder with ``pack`` (the bytes of ``<slug>.ndjson.gz``) ingested by ``kb``."""
    data = root / "data"
    path = root / f"{slug}.ndjson.gz"
    path.write_bytes(pack)
    run_kb(data, "ingest", str(path))
    return data


def new_token(data: Path, bot: str = "default", scopes: str = "knowledge:read,knowledge:write") -> str:
    """``kb token create``: the token alone (its last line)."""
    return run_kb(data, "token", "create", "--bot", bot, "--scopes", scopes).strip().splitlines()[-1]
