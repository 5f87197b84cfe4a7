"""Adapters under contract. Each port's suite runs against every adapter listed here; the
AWS adapters (DynamoDB via moto, OpenSearch via osmem-server) join these lists."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from knowledge.adapters.local.folder_blobs import FolderBlobStore
from knowledge.adapters.local.sqlite_state import SqliteStateStore
from knowledge.adapters.local.tantivy_index import TantivySearchIndex

StateFactory = Callable[[Path], Any]

STATE_ADAPTERS: dict[str, StateFactory] = {"sqlite": lambda tmp: SqliteStateStore(tmp / "state.db")}
INDEX_ADAPTERS: dict[str, StateFactory] = {"tantivy": lambda tmp: TantivySearchIndex(tmp / "index")}
BLOB_ADAPTERS: dict[str, StateFactory] = {"folder": lambda tmp: FolderBlobStore(tmp / "blobs")}


@pytest.fixture(params=sorted(STATE_ADAPTERS))
def state_store(request, tmp_path: Path) -> Iterator[Any]:
    yield STATE_ADAPTERS[request.param](tmp_path)


@pytest.fixture(params=sorted(INDEX_ADAPTERS))
def search_index(request, tmp_path: Path) -> Iterator[Any]:
    yield INDEX_ADAPTERS[request.param](tmp_path)


@pytest.fixture(params=sorted(BLOB_ADAPTERS))
def blob_store(request, tmp_path: Path) -> Iterator[Any]:
    yield BLOB_ADAPTERS[request.param](tmp_path)
