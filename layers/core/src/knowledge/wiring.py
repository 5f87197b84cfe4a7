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
    #: embedder of bots that set none (``KB_EMBEDDER`` in the embedded mode)
    default_embedder: str = "none"
    data_dir: Path | None = None
    workflow: Any = None  # Workflow: start_refresh / start_reindex
    #: embedders built so far, by vector-space name, so questions can still be embedded in
    #: a space a bot is moving away from while its sources are re-embedded
    embedders: dict[str, Embedder] = field(default_factory=dict)

    def embedder_for(self, bot: str) -> Embedder | None:
        """The bot's embedder (its setting, else the default), built once per process."""
        from .embed import build_embedder

        settings = self.state.get_bot(bot)
        name = settings.embedder or self.default_embedder
        options = dict(settings.embedder_options or {})
        key = f"{name}|{sorted(options.items())!r}"
        cached = self.embedders.get(key)
        if cached is not None or name in (None, "", "none"):
            return cached
        embedder = build_embedder(name, options)
        if embedder is not None:
            self.embedders[key] = embedder
            self.embedders.setdefault(embedder.name, embedder)
        return embedder

    def embedder_named(self, space: str) -> Embedder | None:
        return self.embedders.get(space)


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
        default_embedder=settings.embedder,
    )
    return services
