"""Shared fixtures: a real data directory (SQLite file + tantivy index) per test."""

from __future__ import annotations

import contextlib
import gzip
import io
import json
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

from knowledge.settings import LocalSettings
from knowledge.wiring import Services, build_local_services


class FakeClock:
    def __init__(self, start: float = 1_800_000_000.0):
        self.t = start

    def now(self) -> float:
        return self.t

    def advance(self, seconds: float) -> None:
        self.t += seconds


def page(path: str, body: str, *, audience: str | None = None, title: str | None = None,
         type_: str | None = None, url: str | None = None) -> dict:
    """One pack line. Frontmatter is written only for the keys given."""
    meta = []
    if audience:
        meta.append(f"audience: {audience}")
    if title:
        meta.append(f"title: {title}")
    if type_:
        meta.append(f"type: {type_}")
    text = ("---\n" + "\n".join(meta) + "\n---\n" if meta else "") + body
    line = {"path": path, "title": title or Path(path).stem, "body": text}
    if url:
        line["url"] = url
    return line


def pack_bytes(pages: Iterable[dict]) -> bytes:
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0) as gz:
        for p in pages:
            gz.write((json.dumps(p) + "\n").encode("utf-8"))
    return buf.getvalue()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def services(tmp_path: Path, clock: FakeClock) -> Services:
    svc = build_local_services(LocalSettings(data_dir=tmp_path / "data"))
    svc.clock = clock
    return svc


@pytest.fixture
def write_pack(tmp_path: Path) -> Callable[[str, Iterable[dict]], Path]:
    def _write(slug: str, pages: Iterable[dict]) -> Path:
        folder = tmp_path / "packs-in"
        folder.mkdir(exist_ok=True)
        path = folder / f"{slug}.ndjson.gz"
        path.write_bytes(pack_bytes(pages))
        return path

    return _write


@contextlib.contextmanager
def osmem_server() -> Iterator[Any]:
    """An in-memory OpenSearch-compatible server on loopback; the test is skipped (not failed)
    only when the bundled binary cannot run on this machine."""
    from osmem_server import OsmemError, OsmemServer

    try:
        server = OsmemServer.start(addr="127.0.0.1:0", japanese=False, startup_timeout=30.0)
    except (OsmemError, OSError) as exc:
        pytest.skip(f"osmem-server cannot start here: {exc}")
    try:
        yield server
    finally:
        server.close()


@pytest.fixture(scope="module")
def osmem() -> Iterator[Any]:
    with osmem_server() as server:
        yield server
