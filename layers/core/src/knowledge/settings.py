"""Typed configuration. Environment variable names are constants shared with ``infra/``."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

# environment variable names (also used by infra/ to set Lambda environments)
ENV_DATA = "KB_DATA"
ENV_EMBEDDER = "KB_EMBEDDER"
ENV_TABLE = "KB_TABLE_NAME"
ENV_BUCKET = "KB_BUCKET_NAME"
ENV_SEARCH_ENDPOINT = "KB_SEARCH_ENDPOINT"
ENV_INDEX_PREFIX = "KB_INDEX_PREFIX"
ENV_STATE_MACHINE = "KB_STATE_MACHINE_ARN"
ENV_ALLOW_LOOPBACK = "KB_TEST_ALLOW_LOOPBACK"

#: Mixed into every content checksum. Raise it whenever chunking, weighting or audience rules
#: change: every stored checksum then mismatches exactly once and every source re-ingests.
INGEST_VERSION = "kb-ingest-4"

LEASE_SECONDS = 120.0
MAX_QUESTION_CHARS = 16_000
MAX_EXCERPTS = 12
MAX_EXCERPT_CHARS = 800
LEXICAL_TOP_K = 50
RECENCY_SECONDS = 30 * 24 * 3600
RETRIEVAL_TTL_SECONDS = 7 * 24 * 3600
EMBED_BATCH = 32
MAX_AGENT_SOURCES = 100


@dataclass(frozen=True)
class LocalSettings:
    data_dir: Path
    embedder: str = "none"

    @classmethod
    def from_env(cls, data_dir: str | os.PathLike[str] | None = None) -> LocalSettings:
        raw = data_dir or os.environ.get(ENV_DATA) or ".kb"
        embedder = os.environ.get(ENV_EMBEDDER, "none").strip() or "none"
        allowed = {"none", "local", "bedrock", "openai", "hashing"}
        if embedder not in allowed:
            raise ValueError(f"{ENV_EMBEDDER} must be one of {sorted(allowed)}, not {embedder!r}")
        return cls(data_dir=Path(raw), embedder=embedder)
