"""Composition roots: one per process, creating clients once.

``build_local_services`` backs the embedded mode (SQLite, folder, tantivy);
``build_aws_services`` (added with the AWS adapters) backs the Lambda functions.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any, Generic, TypeVar, cast
from urllib.parse import urlsplit

from .ports import Embedder, Services
from .settings import (
    ENV_BEDROCK_MODEL,
    ENV_BUCKET,
    ENV_DUE_INDEX,
    ENV_EMBEDDER,
    ENV_INDEX_PREFIX,
    ENV_MAX_RUNNING_REFRESHES,
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
    LocalSettings,
    OutboundPolicy,
)

log = logging.getLogger(__name__)


def build_embedder(name: str, options: dict[str, Any], policy: OutboundPolicy | None = None) -> Embedder | None:
    """The embedder factory both composition roots give ``Services`` (imported on first use:
    most questions of a bot without an embedder never need it). ``policy`` governs the
    openai embedder's outbound calls (the local root passes its own; AWS passes none)."""
    from .embed import build_embedder as build

    return build(name, options, policy=policy)


def _reindex_plan(services: Services) -> Callable[[str], tuple[list[str], list[str]]]:
    """What a reindex of a bot refreshes (the use case), for the Step Functions adapter."""

    def plan(bot: str) -> tuple[list[str], list[str]]:
        from .refresh.reindex import reindex_targets  # the refresh package loads only when asked

        return reindex_targets(services, bot)

    return plan


def build_local_services(settings: LocalSettings) -> Services:
    from .adapters.local.folder_blobs import FolderBlobStore
    from .adapters.local.sqlite_state import SqliteStateStore
    from .adapters.local.tantivy_index import TantivySearchIndex

    root = settings.data_dir
    root.mkdir(parents=True, exist_ok=True)
    outbound = OutboundPolicy(loopback_port=settings.dev_loopback_port)
    services = Services(
        state=SqliteStateStore(root / "state.db"),
        blobs=FolderBlobStore(root),
        index=TantivySearchIndex(root / "index"),
        data_dir=root,
        default_embedder=settings.embedder,
        embedder_factory=partial(build_embedder, policy=outbound),
        outbound=outbound,
    )
    if settings.rerank_model:
        from .rerank.local import LocalCrossEncoder  # loads its model at the first question that reranks

        services.reranker = LocalCrossEncoder(settings.rerank_model)
    return services


#: refresh executions running at once before the reindex queue waits (the stack sets its own)
DEFAULT_MAX_RUNNING_REFRESHES = 20


@dataclass(frozen=True)
class AwsSettings:
    """The Lambda functions' configuration, read from the environment ``infra/`` sets and
    validated once per cold start (a missing name fails the import, not the first request)."""

    table: str
    bucket: str
    search_endpoint: str
    state_machine_arn: str | None
    region: str | None
    index_prefix: str = "kb"
    replicas: int = 0
    shards: int = 1
    dimension: int = 1024
    read_roles: tuple[str, ...] = ()
    embedder: str = "none"
    bedrock_model: str = "amazon.titan-embed-text-v2:0"
    #: a Bedrock rerank model's ARN (``KB_RERANK_MODEL_ARN``): the reranker of the bots whose
    #: ``rerank`` setting is on; None: no reranker
    rerank_model_arn: str | None = None
    #: where bots' secrets go in Secrets Manager (None: kept in the state table)
    secrets_prefix: str | None = None
    reindex_queue_url: str | None = None
    max_running_refreshes: int = DEFAULT_MAX_RUNNING_REFRESHES

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> AwsSettings:
        env = os.environ if env is None else env
        missing = [name for name in (ENV_TABLE, ENV_BUCKET, ENV_SEARCH_ENDPOINT) if not env.get(name)]
        if missing:
            raise ValueError(f"missing environment variable(s): {', '.join(missing)}")
        due_index = env.get(ENV_DUE_INDEX)
        if due_index:
            from .adapters.aws.dynamodb_table import DUE_INDEX

            if due_index != DUE_INDEX:
                raise ValueError(f"{ENV_DUE_INDEX} is {due_index!r}; the state store queries {DUE_INDEX!r}")
        embedder = env.get(ENV_EMBEDDER, "none").strip() or "none"
        if embedder not in ("none", "bedrock", "openai", "hashing"):
            raise ValueError(f"{ENV_EMBEDDER} must be none, bedrock, openai or hashing, not {embedder!r}")
        try:
            replicas = int(env.get(ENV_SEARCH_REPLICAS, "0"))
            shards = int(env.get(ENV_SEARCH_SHARDS, "1"))
            dimension = int(env.get(ENV_SEARCH_DIMENSION, "1024"))
        except ValueError as exc:
            raise ValueError(f"{ENV_SEARCH_REPLICAS}, {ENV_SEARCH_SHARDS} and {ENV_SEARCH_DIMENSION} must be "
                             "integers") from exc
        if replicas < 0 or not 1 <= dimension <= 16_000 or not 1 <= shards <= 1024:
            raise ValueError(f"{ENV_SEARCH_REPLICAS} must be >= 0, {ENV_SEARCH_SHARDS} within 1..1024 and "
                             f"{ENV_SEARCH_DIMENSION} within 1..16000")
        try:
            max_running = int(env.get(ENV_MAX_RUNNING_REFRESHES) or DEFAULT_MAX_RUNNING_REFRESHES)
        except ValueError as exc:
            raise ValueError(f"{ENV_MAX_RUNNING_REFRESHES} must be an integer") from exc
        if max_running < 1:
            raise ValueError(f"{ENV_MAX_RUNNING_REFRESHES} must be at least 1")
        return cls(
            table=env[ENV_TABLE],
            bucket=env[ENV_BUCKET],
            search_endpoint=env[ENV_SEARCH_ENDPOINT],
            state_machine_arn=env.get(ENV_STATE_MACHINE) or None,
            region=env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION") or None,
            index_prefix=env.get(ENV_INDEX_PREFIX, "kb") or "kb",
            replicas=replicas,
            shards=shards,
            dimension=dimension,
            read_roles=tuple(r.strip() for r in env.get(ENV_SEARCH_READ_ROLES, "").split(",") if r.strip()),
            embedder=embedder,
            bedrock_model=env.get(ENV_BEDROCK_MODEL, "") or "amazon.titan-embed-text-v2:0",
            rerank_model_arn=env.get(ENV_RERANK_MODEL_ARN, "").strip() or None,
            secrets_prefix=env.get(ENV_SECRETS_PREFIX) or None,
            reindex_queue_url=env.get(ENV_REINDEX_QUEUE) or None,
            max_running_refreshes=max_running,
        )


#: the clients of the AWS composition root, by the name ``build_aws_services(eager=...)`` takes
AWS_COMPONENTS = ("dynamodb", "s3", "stepfunctions", "opensearch", "bedrock", "rerank", "sqs")
#: key of ``Services.caches`` holding the components ``build_aws_services`` deferred, by name
DEFERRED = "aws.deferred"

T = TypeVar("T")
_UNSET: Any = object()


class Lazy(Generic[T]):
    """Stands in for an object (a client, an adapter) that is built on first use, exactly once
    per process: the first attribute access calls ``factory`` under ``lock`` and every later
    access goes to the object it returned. A factory that raises is called again next time.

    A Lambda environment serves many invocations, so a client that only some routes need is
    created by the first invocation that needs it, never at a cold start that does not, and
    never twice. ``seconds`` is how long the factory took (``None`` until it ran)."""

    __slots__ = ("_factory", "_label", "_lock", "_value", "seconds")

    def __init__(self, factory: Callable[[], T], label: str = "", *, lock: threading.RLock | None = None):
        self._factory = factory
        self._label = label
        self._lock = lock if lock is not None else threading.RLock()
        self._value: T = _UNSET
        self.seconds: float | None = None

    @property
    def created(self) -> bool:
        return self._value is not _UNSET

    def get(self) -> T:
        value = self._value
        if value is _UNSET:
            with self._lock:
                value = self._value
                if value is _UNSET:
                    started = time.perf_counter()
                    value = self._factory()
                    self.seconds = time.perf_counter() - started
                    self._value = value
        return value

    def __getattr__(self, name: str) -> Any:
        # reached for the wrapped object's attributes only (and for an unset slot of a copy
        # made without __init__, which must not recurse)
        if name in Lazy.__slots__ or (name.startswith("__") and name.endswith("__")):
            raise AttributeError(name)
        return getattr(self.get(), name)

    def __repr__(self) -> str:
        state = "created" if self.created else "not created yet"
        return f"<Lazy {self._label or 'object'}: {state}>"


def _check_search_endpoint(endpoint: str) -> None:
    # the rule build_opensearch_client applies, checked at the cold start even when the
    # search client itself is deferred: a bad setting fails the import, not the first request
    parts = urlsplit(endpoint if "://" in endpoint else f"https://{endpoint}")
    if parts.scheme != "https" or not parts.hostname:
        raise ValueError("the search endpoint must be an https URL or a host name")


def _session_region(session: Any) -> str | None:
    """The region a botocore or boto3 session is configured with, if any."""
    if hasattr(session, "get_config_variable"):  # botocore.session.Session
        return cast("str | None", session.get_config_variable("region"))
    return cast("str | None", getattr(session, "region_name", None))


def build_aws_services(
    env: Mapping[str, str] | None = None,
    *,
    session: Any = None,
    search_client: Any = None,
    embedder: bool = True,
    eager: Collection[str] = AWS_COMPONENTS,
) -> Services:
    """The composition root of a Lambda function: clients are created here, once per cold
    start (module level in each handler), and never call the network until used.

    ``search_client`` replaces the SigV4 OpenSearch client (tests point it at a local
    server); ``embedder=False`` skips the Bedrock client in functions that never embed.

    ``eager`` names the components (:data:`AWS_COMPONENTS`) created now; each other one is a
    :class:`Lazy` holder created by the first call that uses it, still once per process (the
    OpenSearch index as a whole, so ``opensearchpy`` is not even imported until then; the S3,
    Step Functions, Bedrock and SQS clients inside their adapters). A function lists what most
    of its invocations use; the holders are in ``services.caches[DEFERRED]``.

    With a state machine and ``KB_REINDEX_QUEUE_URL`` configured, ``services.reindex_queue``
    is the nightly reindex's bounded queue (``KB_MAX_RUNNING_REFRESHES`` executions at most).

    ``session`` is a botocore session (the default) or anything with boto3's ``client()``,
    ``region_name`` and ``get_credentials()``. The default is botocore's own: boto3 would
    add its resource layer and s3transfer to every cold start, and nothing here uses them."""
    from botocore.config import Config
    from botocore.session import get_session

    from .adapters.aws.dynamodb_state import DynamoDbStateStore
    from .adapters.aws.s3_blobs import S3BlobStore
    from .adapters.aws.stepfunctions_workflow import StepFunctionsWorkflow

    unknown = sorted(set(eager) - set(AWS_COMPONENTS))
    if unknown:
        raise ValueError(f"unknown AWS component(s) {', '.join(unknown)}; known: {', '.join(AWS_COMPONENTS)}")
    settings = AwsSettings.from_env(env)
    if session is None:
        from .adapters.aws.model_loader import use_plain_json

        session = use_plain_json(get_session())  # the same models, parsed for less at each cold start
        if settings.region:
            session.set_config_variable("region", settings.region)
    region = _session_region(session) or settings.region
    if not region:
        raise ValueError("no AWS region configured (AWS_REGION)")
    if search_client is None:
        _check_search_endpoint(settings.search_endpoint)
    aws = Config(retries={"mode": "standard", "max_attempts": 3}, connect_timeout=2, read_timeout=10)
    lock = threading.RLock()  # one session: clients are never created by two threads at once
    deferred: dict[str, Lazy[Any]] = {}

    def component(name: str, factory: Callable[[], T]) -> T:
        if name in eager:
            with lock:
                return factory()
        holder: Lazy[T] = Lazy(factory, name, lock=lock)
        deferred[name] = holder
        return cast(T, holder)

    # S3 signs presigned uploads with SigV4 at the regional endpoint (botocore's default for
    # a presigned POST is the legacy signature at the global endpoint)
    s3_config = aws.merge(Config(signature_version="s3v4", s3={"addressing_style": "virtual"}))

    def client(service: str) -> Callable[[], Any]:
        config = s3_config if service == "s3" else aws
        create = getattr(session, "create_client", None)  # botocore; boto3 calls it client()
        if create is None:
            return lambda: session.client(service, region_name=region, config=config)
        return lambda: create(service, region_name=region, config=config)

    def search_index() -> Any:
        from .adapters.aws.opensearch_index import OpenSearchIndex, build_query_client

        search = search_client
        if search is None:  # queries as signed HTTP; management and writes load opensearch-py when first made
            search = build_query_client(settings.search_endpoint, region, session=session)
        return OpenSearchIndex(search, settings.index_prefix, dimension=settings.dimension,
                               shards=settings.shards, replicas=settings.replicas, read_roles=settings.read_roles)

    blobs = S3BlobStore(settings.bucket, client=component("s3", client("s3")))
    vault = None
    if settings.secrets_prefix:
        from .adapters.aws.secrets import SecretVault

        # created by the first bot secret read or written: most bots have none
        vault = SecretVault(settings.secrets_prefix, client=Lazy(client("secretsmanager"), "secretsmanager", lock=lock))
    services = Services(
        state=DynamoDbStateStore(settings.table, client=component("dynamodb", client("dynamodb")), secrets=vault),
        blobs=blobs,
        upload_signer=blobs,
        index=component("opensearch", search_index),
        vector_dimension=settings.dimension,
        default_embedder=settings.embedder,
        embedder_factory=build_embedder,
    )
    if settings.state_machine_arn:
        services.workflow = StepFunctionsWorkflow(component("stepfunctions", client("stepfunctions")),
                                                  settings.state_machine_arn, services=services,
                                                  plan_reindex=_reindex_plan(services))
        if settings.reindex_queue_url:
            from .adapters.aws.reindex_queue import ReindexQueue

            services.reindex_queue = ReindexQueue(component("sqs", client("sqs")), settings.reindex_queue_url,
                                                  services.workflow, max_running=settings.max_running_refreshes)
    if settings.rerank_model_arn:
        from .adapters.aws.bedrock_reranker import BedrockReranker

        services.reranker = BedrockReranker(component("rerank", client("bedrock-agent-runtime")),
                                            settings.rerank_model_arn)
    if embedder and settings.embedder == "bedrock":
        # the bots that set no embedder share the deployment's model (KB_BEDROCK_MODEL_ID),
        # with one client for the whole environment; bots with their own settings build theirs
        from .adapters.aws.bedrock_embedder import BedrockEmbedder

        bedrock = BedrockEmbedder(component("bedrock", client("bedrock-runtime")), model_id=settings.bedrock_model,
                                  dimensions=settings.dimension)
        services.embedders[f"bedrock|{[]!r}"] = bedrock
        services.embedders.setdefault(bedrock.name, bedrock)
    services.caches[DEFERRED] = deferred
    return services
