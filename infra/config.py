"""Typed stack configuration read from CDK context (``cdk.json`` or ``cdk deploy -c key=value``)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from aws_cdk import aws_logs as logs
from constructs import Node

from knowledge.embed.factory import DEFAULT_DIMENSIONS as EMBEDDER_DIMENSIONS

REPO_ROOT = Path(__file__).resolve().parent.parent

Profile = Literal["minimum", "production"]
PROFILES: tuple[Profile, ...] = ("minimum", "production")

# context keys (documented in infra/README.md)
CTX_PROFILE = "kb:profile"
CTX_ASSETS_DIR = "kb:assetsDir"
CTX_INDEX_PREFIX = "kb:indexPrefix"
CTX_EMBEDDER = "kb:embedder"
CTX_BEDROCK_MODEL = "kb:bedrockModelId"
CTX_METRICS_NAMESPACE = "kb:metricsNamespace"
CTX_SERVICE_NAME = "kb:serviceName"
CTX_LOG_LEVEL = "kb:logLevel"
CTX_ALARM_EMAIL = "kb:alarmEmail"
CTX_API_RATE = "kb:apiRateLimit"
CTX_API_BURST = "kb:apiBurstLimit"
CTX_NIGHTLY_HOUR = "kb:nightlyReindexHourUtc"
CTX_SEARCH_INSTANCE = "kb:searchInstanceType"
CTX_SEARCH_VOLUME_GB = "kb:searchVolumeGb"
CTX_SEARCH_DOMAIN = "kb:searchDomainName"
CTX_RETAIN_DATA = "kb:retainData"
CTX_STAGING_DAYS = "kb:stagingExpiryDays"
CTX_LOG_RETENTION_DAYS = "kb:logRetentionDays"
CTX_ALLOW_PLACEHOLDER_ASSETS = "kb:allowPlaceholderAssets"
CTX_WAF = "kb:waf"
CTX_RETRIEVE_CONCURRENCY = "kb:retrieveConcurrency"
CTX_REINDEX_CONCURRENCY = "kb:reindexConcurrency"
CTX_RETRIEVE_PROVISIONED = "kb:retrieveProvisioned"
CTX_SEARCH_SHARDS = "kb:searchShards"
CTX_SEARCH_REPLICAS = "kb:searchReplicas"
CTX_EMBEDDING_DIMENSION = "kb:embeddingDimension"
CTX_UPLOAD_ORIGINS = "kb:uploadOrigins"
CTX_RERANK_MODEL = "kb:rerankModelArn"

#: reserved concurrency of ``retrieve`` per profile: answering keeps this much of the account's
#: Lambda concurrency whatever refreshes do, and cannot take more (0 = none reserved)
RETRIEVE_CONCURRENCY = {"minimum": 10, "production": 100}

EMBEDDERS = ("none", "bedrock", "openai", "hashing")
#: the ``knn_vector`` dimension each embedder produces unless told otherwise: the index is
#: created with it (``KB_SEARCH_DIMENSION``), so the two never disagree
#: what each embedder produces by default (the core's table); "none" still sizes the index
DEFAULT_DIMENSIONS = {**EMBEDDER_DIMENSIONS, "none": 1024}
#: dimensions a model can produce; another one is refused here, not at the first refresh
ALLOWED_DIMENSIONS = {"bedrock": (256, 512, 1024)}
MAX_DIMENSION = 16_000  # OpenSearch k-NN
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")


class ConfigError(ValueError):
    """A context value is missing or invalid."""


@dataclass(frozen=True)
class SearchProfile:
    """OpenSearch sizing. ``minimum`` is the documented cost floor; ``production`` is HA."""

    data_nodes: int
    data_instance_type: str
    volume_gb: int
    master_nodes: int
    master_instance_type: str | None
    availability_zones: int
    index_replicas: int
    #: primary shards per index: one per data node, so every node serves searches
    index_shards: int = 1


def search_profile(profile: Profile, instance_type: str | None, volume_gb: int | None,
                   shards: int | None = None, replicas: int | None = None) -> SearchProfile:
    if profile == "minimum":
        base = SearchProfile(
            data_nodes=1,
            data_instance_type="t3.small.search",
            volume_gb=10,
            master_nodes=0,
            master_instance_type=None,
            availability_zones=1,
            index_replicas=0,
        )
    else:
        base = SearchProfile(
            data_nodes=3,
            data_instance_type="r7g.large.search",
            volume_gb=100,
            master_nodes=3,
            master_instance_type="m7g.large.search",
            availability_zones=3,
            index_replicas=1,
        )
    return SearchProfile(
        data_nodes=base.data_nodes,
        data_instance_type=instance_type or base.data_instance_type,
        volume_gb=volume_gb or base.volume_gb,
        master_nodes=base.master_nodes,
        master_instance_type=base.master_instance_type,
        availability_zones=base.availability_zones,
        index_replicas=base.index_replicas if replicas is None else replicas,
        index_shards=shards or base.data_nodes,
    )


@dataclass(frozen=True)
class StackConfig:
    profile: Profile = "minimum"
    assets_dir: Path = REPO_ROOT / "build" / "assets"
    index_prefix: str = "kb"
    embedder: str = "bedrock"
    bedrock_model_id: str = "amazon.titan-embed-text-v2:0"
    metrics_namespace: str = "kb"
    service_name: str = "kb"
    log_level: str = "INFO"
    alarm_email: str | None = None
    api_rate_limit: float = 50.0
    api_burst_limit: int = 100
    nightly_reindex_hour_utc: int = 3
    search_instance_type: str | None = None
    search_volume_gb: int | None = None
    search_domain_name: str | None = None
    retain_data: bool = True
    staging_expiry_days: int = 3
    log_retention_days: int = 30
    #: synthesise from ``--core-only`` assets (tests, ``make synth``); never for a deploy
    allow_placeholder_assets: bool = False
    #: the WAF web ACL with per-token and per-IP rate rules (None: on in production only)
    waf: bool | None = None
    #: reserved concurrency of the answering function (None: per profile, 0: none)
    retrieve_concurrency: int | None = None
    #: refresh executions running at once before the nightly reindex queue waits
    reindex_concurrency: int = 20
    #: provisioned concurrency of the answering function's ``live`` alias (0: none, no alias)
    retrieve_provisioned: int = 0
    #: dimension of the index's vectors (None: the embedder's default)
    embedding_dimension: int | None = None
    #: browser origins allowed to POST presigned uploads to the bucket (CORS)
    upload_origins: tuple[str, ...] = ("*",)
    #: a Bedrock rerank model's ARN (``kb:rerankModelArn``); None: no reranker, the bots'
    #: ``rerank`` setting then changes nothing
    rerank_model_arn: str | None = None

    @property
    def dimension(self) -> int:
        return self.embedding_dimension or DEFAULT_DIMENSIONS[self.embedder]

    @property
    def waf_enabled(self) -> bool:
        return self.profile == "production" if self.waf is None else self.waf

    @property
    def retrieve_reserved(self) -> int:
        return RETRIEVE_CONCURRENCY[self.profile] if self.retrieve_concurrency is None else self.retrieve_concurrency

    #: shards / replicas per index (None: per profile)
    search_shards: int | None = None
    search_replicas: int | None = None

    @property
    def search(self) -> SearchProfile:
        return search_profile(self.profile, self.search_instance_type, self.search_volume_gb,
                              self.search_shards, self.search_replicas)

    @classmethod
    def from_node(cls, node: Node) -> StackConfig:
        """Read and validate every ``kb:*`` context value (strings from ``-c`` are coerced)."""
        d = cls()

        def get(key: str) -> Any:
            return node.try_get_context(key)

        profile = str(get(CTX_PROFILE) or d.profile)
        if profile not in PROFILES:
            raise ConfigError(f"{CTX_PROFILE} must be one of {PROFILES}, not {profile!r}")
        assets = Path(str(get(CTX_ASSETS_DIR) or d.assets_dir))
        if not assets.is_absolute():
            assets = REPO_ROOT / assets
        embedder = str(get(CTX_EMBEDDER) or d.embedder)
        if embedder not in EMBEDDERS:
            raise ConfigError(f"{CTX_EMBEDDER} must be one of {EMBEDDERS}, not {embedder!r}")
        log_level = str(get(CTX_LOG_LEVEL) or d.log_level).upper()
        if log_level not in LOG_LEVELS:
            raise ConfigError(f"{CTX_LOG_LEVEL} must be one of {LOG_LEVELS}, not {log_level!r}")
        prefix = str(get(CTX_INDEX_PREFIX) or d.index_prefix)
        if not prefix.replace("-", "").isalnum() or prefix != prefix.lower():
            raise ConfigError(f"{CTX_INDEX_PREFIX} must be lowercase letters, digits and '-'")
        dimension = get(CTX_EMBEDDING_DIMENSION)
        dimension_value = (_int(dimension, 0, CTX_EMBEDDING_DIMENSION, 1, MAX_DIMENSION)
                           if dimension not in (None, "") else None)
        allowed = ALLOWED_DIMENSIONS.get(embedder)
        if dimension_value is not None and allowed and dimension_value not in allowed:
            raise ConfigError(f"{CTX_EMBEDDING_DIMENSION}={dimension_value} does not fit the {embedder} "
                              f"embedder, which produces {', '.join(map(str, allowed))} dimensions")
        hour = _int(get(CTX_NIGHTLY_HOUR), d.nightly_reindex_hour_utc, CTX_NIGHTLY_HOUR, 0, 23)
        email = get(CTX_ALARM_EMAIL)
        volume = get(CTX_SEARCH_VOLUME_GB)
        config = cls(
            profile=profile,  # narrowed by the PROFILES check above
            assets_dir=assets,
            index_prefix=prefix,
            embedder=embedder,
            bedrock_model_id=str(get(CTX_BEDROCK_MODEL) or d.bedrock_model_id),
            metrics_namespace=str(get(CTX_METRICS_NAMESPACE) or d.metrics_namespace),
            service_name=str(get(CTX_SERVICE_NAME) or d.service_name),
            log_level=log_level,
            alarm_email=str(email) if email else None,
            api_rate_limit=float(get(CTX_API_RATE) or d.api_rate_limit),
            api_burst_limit=_int(get(CTX_API_BURST), d.api_burst_limit, CTX_API_BURST, 1, 10_000),
            nightly_reindex_hour_utc=hour,
            search_instance_type=str(get(CTX_SEARCH_INSTANCE) or "") or None,
            search_volume_gb=_int(volume, 0, CTX_SEARCH_VOLUME_GB, 10, 16_384) if volume else None,
            search_domain_name=_domain_name(get(CTX_SEARCH_DOMAIN)),
            retain_data=_bool(get(CTX_RETAIN_DATA), d.retain_data),
            staging_expiry_days=_int(get(CTX_STAGING_DAYS), d.staging_expiry_days, CTX_STAGING_DAYS, 1, 365),
            log_retention_days=_int(
                get(CTX_LOG_RETENTION_DAYS), d.log_retention_days, CTX_LOG_RETENTION_DAYS, 1, 3653
            ),
            allow_placeholder_assets=_bool(get(CTX_ALLOW_PLACEHOLDER_ASSETS), d.allow_placeholder_assets),
            embedding_dimension=dimension_value,
            search_shards=(None if get(CTX_SEARCH_SHARDS) in (None, "") else
                           _int(get(CTX_SEARCH_SHARDS), 1, CTX_SEARCH_SHARDS, 1, 1024)),
            search_replicas=(None if get(CTX_SEARCH_REPLICAS) in (None, "") else
                             _int(get(CTX_SEARCH_REPLICAS), 0, CTX_SEARCH_REPLICAS, 0, 15)),
            retrieve_provisioned=_int(get(CTX_RETRIEVE_PROVISIONED), d.retrieve_provisioned,
                                      CTX_RETRIEVE_PROVISIONED, 0, 10_000),
            reindex_concurrency=_int(get(CTX_REINDEX_CONCURRENCY), d.reindex_concurrency, CTX_REINDEX_CONCURRENCY,
                                     1, 1000),
            waf=None if get(CTX_WAF) in (None, "") else _bool(get(CTX_WAF), False),
            upload_origins=_origins(get(CTX_UPLOAD_ORIGINS)) or d.upload_origins,
            rerank_model_arn=_rerank_arn(get(CTX_RERANK_MODEL)),
            retrieve_concurrency=(None if get(CTX_RETRIEVE_CONCURRENCY) in (None, "") else
                                  _int(get(CTX_RETRIEVE_CONCURRENCY), 0, CTX_RETRIEVE_CONCURRENCY, 0, 10_000)),
        )
        if config.retrieve_provisioned and config.retrieve_reserved and \
                config.retrieve_provisioned > config.retrieve_reserved:
            raise ConfigError(f"{CTX_RETRIEVE_PROVISIONED}={config.retrieve_provisioned} exceeds the reserved "
                              f"concurrency of retrieve ({config.retrieve_reserved}, {CTX_RETRIEVE_CONCURRENCY})")
        search = config.search
        if search.index_replicas >= search.data_nodes:
            raise ConfigError(f"{CTX_SEARCH_REPLICAS}={search.index_replicas} needs more than {search.data_nodes} "
                              "data node(s): a replica never sits beside its primary, the cluster would stay yellow")
        return config


def default_domain_name(stack_name: str) -> str:
    """A valid OpenSearch domain name (3-28 chars, [a-z0-9-], starts with a letter) per stack."""
    slug = re.sub(r"[^a-z0-9-]", "", stack_name.lower())
    if not slug[:1].isalpha():
        slug = f"kb{slug}"
    return _domain_name(slug[:28].rstrip("-").ljust(3, "0")) or "kb-search"


def _domain_name(raw: Any) -> str | None:
    if raw is None or raw == "":
        return None
    name = str(raw)
    if not re.fullmatch(r"[a-z][a-z0-9-]{2,27}", name):
        raise ConfigError(f"{CTX_SEARCH_DOMAIN} must match [a-z][a-z0-9-]{{2,27}}, not {name!r}")
    return name


def _origins(raw: Any) -> tuple[str, ...]:
    """``kb:uploadOrigins``: a list or a comma-separated string of ``https://host[:port]``
    origins (or ``*``)."""
    if raw in (None, ""):
        return ()
    items = raw if isinstance(raw, list) else str(raw).split(",")
    origins = tuple(str(item).strip().rstrip("/") for item in items if str(item).strip())
    for origin in origins:
        if origin != "*" and not re.fullmatch(r"https?://[A-Za-z0-9.-]+(:\d{1,5})?", origin):
            raise ConfigError(f"{CTX_UPLOAD_ORIGINS}: {origin!r} is not an origin (scheme://host[:port]) or '*'")
    return origins


def _int(raw: Any, default: int, key: str, lo: int, hi: int) -> int:
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{key} must be an integer, not {raw!r}") from exc
    if not lo <= value <= hi:
        raise ConfigError(f"{key} must be within {lo}..{hi}, not {value}")
    return value


def _bool(raw: Any, default: bool) -> bool:
    if raw is None or raw == "":
        return default
    if isinstance(raw, bool):
        return raw
    return str(raw).strip().lower() in {"1", "true", "yes", "on"}


_RETENTION = {
    1: logs.RetentionDays.ONE_DAY,
    3: logs.RetentionDays.THREE_DAYS,
    5: logs.RetentionDays.FIVE_DAYS,
    7: logs.RetentionDays.ONE_WEEK,
    14: logs.RetentionDays.TWO_WEEKS,
    30: logs.RetentionDays.ONE_MONTH,
    60: logs.RetentionDays.TWO_MONTHS,
    90: logs.RetentionDays.THREE_MONTHS,
    120: logs.RetentionDays.FOUR_MONTHS,
    150: logs.RetentionDays.FIVE_MONTHS,
    180: logs.RetentionDays.SIX_MONTHS,
    365: logs.RetentionDays.ONE_YEAR,
    400: logs.RetentionDays.THIRTEEN_MONTHS,
    545: logs.RetentionDays.EIGHTEEN_MONTHS,
    731: logs.RetentionDays.TWO_YEARS,
    1827: logs.RetentionDays.FIVE_YEARS,
    3653: logs.RetentionDays.TEN_YEARS,
}


def log_retention(days: int) -> logs.RetentionDays:
    """The shortest CloudWatch Logs retention that keeps logs at least ``days`` days."""
    return next(value for limit, value in sorted(_RETENTION.items()) if limit >= days)


_RERANK_ARN = re.compile(r"arn:aws[a-z-]*:bedrock:[a-z0-9-]+::foundation-model/[A-Za-z0-9._:-]+")


def _rerank_arn(value: Any) -> str | None:
    """``kb:rerankModelArn``: empty for none, else a Bedrock foundation-model ARN (the
    functions are granted ``bedrock:InvokeModel`` on exactly that model)."""
    if value in (None, ""):
        return None
    text = str(value).strip()
    if not _RERANK_ARN.fullmatch(text):
        raise ConfigError(f"{CTX_RERANK_MODEL} must be a Bedrock foundation-model ARN "
                          f"(arn:aws:bedrock:REGION::foundation-model/MODEL), not {text!r}")
    return text
