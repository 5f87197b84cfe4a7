"""Composition roots: one per process, creating clients once.

``build_local_services`` backs the embedded mode (SQLite, folder, tantivy);
``build_aws_services`` (added with the AWS adapters) backs the Lambda functions.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .ports import BlobStore, Clock, Embedder, SystemClock
from .settings import LocalSettings

log = logging.getLogger(__name__)


@dataclass
class Services:
    state: Any  # StateStore (+ the local extras withdraw_generation / stale_staging)
    blobs: BlobStore
    index: Any  # SearchIndex
    clock: Clock = field(default_factory=SystemClock)
    embedder: Embedder | None = None
    data_dir: Path | None = None
    workflow: Any = None  # Workflow: start_refresh / start_reindex


def build_local_services(settings: LocalSettings) -> Services:
    from .adapters.local.folder_blobs import FolderBlobStore
    from .adapters.local.sqlite_state import SqliteStateStore
    from .adapters.local.tantivy_index import TantivySearchIndex

    root = settings.data_dir
    root.mkdir(parents=True, exist_ok=True)
    services = Services(
        state=SqliteStateStore(root / "state.db"),
        blobs=FolderBlobStore(root),
        index=TantivySearchIndex(root / "index"),
        data_dir=root,
    )
    return services
