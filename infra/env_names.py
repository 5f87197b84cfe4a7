"""Environment variable and metric names shared by ``infra/`` and the Lambda code.

Every name is defined once, in :mod:`knowledge.settings` (the code reads them from there);
this module re-exports them so ``infra/`` never spells a name twice.
"""

from __future__ import annotations

from knowledge.settings import (
    ENV_BEDROCK_MODEL,
    ENV_BUCKET,
    ENV_DUE_INDEX,
    ENV_EMBEDDER,
    ENV_INDEX_PREFIX,
    ENV_LOG_LEVEL,
    ENV_MAX_RUNNING_REFRESHES,
    ENV_POWERTOOLS_NAMESPACE,
    ENV_POWERTOOLS_SERVICE,
    ENV_REINDEX_QUEUE,
    ENV_RERANK_MODEL_ARN,
    ENV_SEARCH_DIMENSION,
    ENV_SEARCH_ENDPOINT,
    ENV_SEARCH_READ_ROLES,
    ENV_SEARCH_REPLICAS,
    ENV_SEARCH_SHARDS,
    ENV_SECRETS_PREFIX,
    ENV_STATE_MACHINE,
    ENV_TABLE,
    METRIC_LEASE_REAPED,
    METRIC_REFRESH_FAILED,
)

#: names still to move into ``knowledge.settings``: none left (they all live there now)
ADDITIONS: dict[str, str] = {}

__all__ = [
    "ADDITIONS",
    "ENV_BEDROCK_MODEL",
    "ENV_BUCKET",
    "ENV_DUE_INDEX",
    "ENV_EMBEDDER",
    "ENV_INDEX_PREFIX",
    "ENV_LOG_LEVEL",
    "ENV_MAX_RUNNING_REFRESHES",
    "ENV_POWERTOOLS_NAMESPACE",
    "ENV_POWERTOOLS_SERVICE",
    "ENV_REINDEX_QUEUE",
    "ENV_RERANK_MODEL_ARN",
    "ENV_SEARCH_DIMENSION",
    "ENV_SEARCH_ENDPOINT",
    "ENV_SEARCH_READ_ROLES",
    "ENV_SEARCH_REPLICAS",
    "ENV_SEARCH_SHARDS",
    "ENV_SECRETS_PREFIX",
    "ENV_STATE_MACHINE",
    "ENV_TABLE",
    "METRIC_LEASE_REAPED",
    "METRIC_REFRESH_FAILED",
]
