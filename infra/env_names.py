"""Environment variable and metric names shared by ``infra/`` and the Lambda code.

The project's own names come from :mod:`knowledge.settings`; the names below the marker are
additions this stack needs that should move into ``knowledge.settings`` (this module then keeps
re-exporting them so ``infra/`` never spells a name twice).
"""

from __future__ import annotations

from knowledge.settings import (
    ENV_BUCKET,
    ENV_EMBEDDER,
    ENV_INDEX_PREFIX,
    ENV_SEARCH_ENDPOINT,
    ENV_STATE_MACHINE,
    ENV_TABLE,
)

# Powertools' own variable names (fixed by the library)
ENV_POWERTOOLS_SERVICE = "POWERTOOLS_SERVICE_NAME"
ENV_POWERTOOLS_NAMESPACE = "POWERTOOLS_METRICS_NAMESPACE"
ENV_LOG_LEVEL = "LOG_LEVEL"

# --- additions (to move into knowledge.settings) ---------------------------------------------
#: name of the sparse GSI the scheduler queries for due refreshes
ENV_DUE_INDEX = "KB_DUE_INDEX_NAME"
#: Bedrock model id used when KB_EMBEDDER is "bedrock"
ENV_BEDROCK_MODEL = "KB_BEDROCK_MODEL_ID"
#: replicas per search index: 0 on the single-node minimum profile (else the cluster stays yellow)
ENV_SEARCH_REPLICAS = "KB_SEARCH_REPLICAS"
#: comma-separated IAM role ARNs the index owner maps to a read-only OpenSearch role
ENV_SEARCH_READ_ROLES = "KB_SEARCH_READ_ROLE_ARNS"

#: custom metrics (Powertools Metrics, namespace from POWERTOOLS_METRICS_NAMESPACE, default
#: ``service`` dimension only) that the alarms watch
METRIC_REFRESH_FAILED = "RefreshFailed"
METRIC_LEASE_REAPED = "LeaseReaped"

ADDITIONS = {
    "ENV_DUE_INDEX": ENV_DUE_INDEX,
    "ENV_BEDROCK_MODEL": ENV_BEDROCK_MODEL,
    "ENV_SEARCH_REPLICAS": ENV_SEARCH_REPLICAS,
    "ENV_SEARCH_READ_ROLES": ENV_SEARCH_READ_ROLES,
    "METRIC_REFRESH_FAILED": METRIC_REFRESH_FAILED,
    "METRIC_LEASE_REAPED": METRIC_LEASE_REAPED,
}

__all__ = [
    "ADDITIONS",
    "ENV_BEDROCK_MODEL",
    "ENV_BUCKET",
    "ENV_DUE_INDEX",
    "ENV_EMBEDDER",
    "ENV_INDEX_PREFIX",
    "ENV_LOG_LEVEL",
    "ENV_POWERTOOLS_NAMESPACE",
    "ENV_POWERTOOLS_SERVICE",
    "ENV_SEARCH_ENDPOINT",
    "ENV_SEARCH_READ_ROLES",
    "ENV_SEARCH_REPLICAS",
    "ENV_STATE_MACHINE",
    "ENV_TABLE",
    "METRIC_LEASE_REAPED",
    "METRIC_REFRESH_FAILED",
]
