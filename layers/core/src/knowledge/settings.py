"""Typed configuration. Environment variable names are constants shared with ``infra/``."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import socket
    import ssl

# environment variable names (also used by infra/ to set Lambda environments)
ENV_DATA = "KB_DATA"
ENV_EMBEDDER = "KB_EMBEDDER"
ENV_RERANK_MODEL = "KB_RERANK_MODEL"
#: a Bedrock rerank model's ARN: the AWS deployment's reranker
ENV_RERANK_MODEL_ARN = "KB_RERANK_MODEL_ARN"
ENV_TABLE = "KB_TABLE_NAME"
ENV_BUCKET = "KB_BUCKET_NAME"
ENV_SEARCH_ENDPOINT = "KB_SEARCH_ENDPOINT"
ENV_INDEX_PREFIX = "KB_INDEX_PREFIX"
ENV_STATE_MACHINE = "KB_STATE_MACHINE_ARN"
#: name of the sparse GSI the scheduler queries for due refreshes (AWS)
ENV_DUE_INDEX = "KB_DUE_INDEX_NAME"
#: Bedrock model id used when KB_EMBEDDER is "bedrock"
ENV_BEDROCK_MODEL = "KB_BEDROCK_MODEL_ID"
#: replicas per search index: 0 on the single-node minimum profile (else the cluster stays yellow)
ENV_SEARCH_REPLICAS = "KB_SEARCH_REPLICAS"
#: primary shards per search index (a bot's passages and searches stay on one: routing by bot)
ENV_SEARCH_SHARDS = "KB_SEARCH_SHARDS"
#: comma-separated IAM role ARNs the index owner maps to a read-only OpenSearch role
ENV_SEARCH_READ_ROLES = "KB_SEARCH_READ_ROLE_ARNS"
#: dimension of the ``knn_vector`` field (the default embedder's; Titan v2 gives 1024)
ENV_SEARCH_DIMENSION = "KB_SEARCH_DIMENSION"
#: SQS queue of the nightly reindex's refreshes, drained by the scheduler within a bound (AWS)
ENV_REINDEX_QUEUE = "KB_REINDEX_QUEUE_URL"
#: most refresh executions running at once before the scheduler stops draining that queue (AWS)
ENV_MAX_RUNNING_REFRESHES = "KB_MAX_RUNNING_REFRESHES"
#: name prefix of the bots' secrets in Secrets Manager (``<prefix>/<bot>/<purpose>``, AWS)
ENV_SECRETS_PREFIX = "KB_SECRETS_PREFIX"

# Powertools' own variable names (fixed by the library)
ENV_POWERTOOLS_SERVICE = "POWERTOOLS_SERVICE_NAME"
ENV_POWERTOOLS_NAMESPACE = "POWERTOOLS_METRICS_NAMESPACE"
ENV_LOG_LEVEL = "LOG_LEVEL"

#: custom metrics (Powertools Metrics, namespace from POWERTOOLS_METRICS_NAMESPACE, default
#: ``service`` dimension only) that the alarms watch
METRIC_REFRESH_FAILED = "RefreshFailed"
METRIC_LEASE_REAPED = "LeaseReaped"

#: Mixed into every content checksum. Raise it whenever chunking, weighting or audience rules
#: change: every stored checksum then mismatches exactly once and every source re-ingests.
INGEST_VERSION = "kb-ingest-10"  # 10: boundary key columns (tantivy-8); 9: knowledge.analysis, breadcrumbs

#: The stored layout of a rescue model. It is part of the digest a model is kept under, so
#: raising it makes every stored model stale: each bot's is relearned by the next reindex (or
#: by ``kb serve`` when its queue drains) instead of failing to load.
RESCUE_FORMAT = 4

LEASE_SECONDS = 120.0
#: A refresh extends its lease at least this often, in every workflow (the stages'
#: ``LeaseKeeper``, which both runners use): a third of the lease, so a heartbeat late by
#: a slow fetch or embedder call still lands in time.
HEARTBEAT_SECONDS = LEASE_SECONDS / 3
MAX_QUESTION_CHARS = 16_000
MAX_EXCERPTS = 12
#: a bot's default ``topK`` (excerpts per question; 1..MAX_EXCERPTS)
DEFAULT_TOP_K = 10
MAX_EXCERPT_CHARS = 800
LEXICAL_TOP_K = 50
RECENCY_SECONDS = 30 * 24 * 3600
RETRIEVAL_TTL_SECONDS = 7 * 24 * 3600
EMBED_BATCH = 32
MAX_AGENT_SOURCES = 100


@dataclass(frozen=True)
class OutboundPolicy:
    """How this process may reach URLs that operators, tenants or fetched pages choose (the
    crawler, upstream federation, the embedder; see ``knowledge.crawl.outbound``). Built
    once by the composition root and passed down.

    ``loopback_port`` is the development switch (``kb serve --dev-allow-loopback PORT``):
    127.0.0.1 / ``localhost`` on that one port, over ``http`` or ``https``. None (the
    default, and always on AWS) blocks every loopback address. ``resolve`` (``(host, port)
    -> addresses``), ``ssl_context`` and ``connect`` (``(ip, port, timeout) -> socket``)
    default to the system resolver, the system trust store and ``socket.create_connection``;
    tests point them at a local server."""

    loopback_port: int | None = None
    resolve: Callable[[str, int], list[str]] | None = None
    ssl_context: ssl.SSLContext | None = None
    connect: Callable[[str, int, float], socket.socket] | None = None

    def __post_init__(self) -> None:
        port = self.loopback_port
        if port is not None and (isinstance(port, bool) or not isinstance(port, int) or not 1 <= port <= 65535):
            raise ValueError("the development loopback port must be an integer from 1 to 65535")


#: the outbound policy of every production path
PRODUCTION_OUTBOUND = OutboundPolicy()


@dataclass(frozen=True)
class LocalSettings:
    data_dir: Path
    embedder: str = "none"
    #: the development switch (``kb serve --dev-allow-loopback PORT``): outbound calls (the
    #: crawler, upstream, the embedder) may reach 127.0.0.1 / localhost on this one port.
    #: Only that flag sets it; no environment variable does, and the AWS wiring has no such field.
    dev_loopback_port: int | None = None
    #: a cross-encoder directory (``KB_RERANK_MODEL``): the reranker of the bots whose
    #: ``rerank`` setting is on; None: no reranker
    rerank_model: str | None = None

    @classmethod
    def from_env(cls, data_dir: str | os.PathLike[str] | None = None) -> LocalSettings:
        raw = data_dir or os.environ.get(ENV_DATA) or ".kb"
        embedder = os.environ.get(ENV_EMBEDDER, "none").strip() or "none"
        allowed = {"none", "local", "bedrock", "openai", "hashing"}
        if embedder not in allowed:
            raise ValueError(f"{ENV_EMBEDDER} must be one of {sorted(allowed)}, not {embedder!r}")
        rerank_model = os.environ.get(ENV_RERANK_MODEL, "").strip() or None
        if rerank_model:
            from .rerank.local import INSTALL_HINT, missing_requirement

            missing = missing_requirement(rerank_model)
            if missing:
                raise ValueError(f"the local reranker ({ENV_RERANK_MODEL}) cannot load: {missing}; {INSTALL_HINT}")
        return cls(data_dir=Path(raw), embedder=embedder, rerank_model=rerank_model)
