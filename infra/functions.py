"""The six Lambda functions, their two layers and least-privilege roles.

Code comes from the folders ``scripts/build_lambda_assets.py`` writes (no Docker bundling):
``<assets>/functions/<name>/`` (entry ``handler.handler``) and ``<assets>/layers/{core,third_party}/``.

Every role is written out here rather than taken from ``grant_*`` helpers so that each function's
permissions read as one list: which table verbs, which bucket prefixes, which search verbs.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from aws_cdk import Annotations, Duration, RemovalPolicy, Stack
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_opensearchservice as opensearch
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_sqs as sqs
from cdk_nag import NagSuppressions
from constructs import Construct

from infra import env_names as env
from infra.config import StackConfig, log_retention
from infra.state import LEASE_INDEX
from infra.storage import INCOMING_PREFIX, PACKS_PREFIX, STAGING_PREFIX, UPLOADS_PREFIX

PLACEHOLDER_MARKER = "README.kb-layer"
#: written into a placeholder handler by ``build_lambda_assets.py --allow-missing-functions``
PLACEHOLDER_HANDLER_TEXT = "was missing when the assets were built"
RUNTIME = lambda_.Runtime.PYTHON_3_12
ARCHITECTURE = lambda_.Architecture.ARM_64


def secrets_prefix(stack_name: str) -> str:
    """Name prefix of the bots' secrets in Secrets Manager (the IAM policies' scope)."""
    return f"{stack_name}/bots"


@dataclass(frozen=True)
class FunctionSpec:
    name: str
    description: str
    memory_mb: int
    timeout: Duration


FUNCTION_SPECS: tuple[FunctionSpec, ...] = (
    FunctionSpec("ingest", "Refresh steps (lease, list, process batch, commit, fail) and pack drops", 2048,
                 Duration.minutes(5)),
    FunctionSpec("crawl", "Crawls website pages within a time budget and returns a cursor", 1024,
                 Duration.minutes(3)),
    # API Gateway gives up after 29 s, so the API-facing functions never run longer
    FunctionSpec("retrieve", "Hybrid retrieval for POST retrieve and retrieval-test", 1024, Duration.seconds(29)),
    FunctionSpec("admin_api", "Knowledge admin routes, agents, MCP over HTTP and the OpenAPI document", 1024,
                 Duration.seconds(29)),
    FunctionSpec("authorizer", "Checks bot tokens and scopes for API Gateway", 256, Duration.seconds(10)),
    # state reads and workflow starts only; the nightly reindex syncs every bot's packs first
    FunctionSpec("scheduler", "Starts due refreshes, reaps expired leases, nightly reindex", 512,
                 Duration.minutes(5)),
)
FUNCTION_NAMES: tuple[str, ...] = tuple(spec.name for spec in FUNCTION_SPECS)

TABLE_READ = ("dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:Query", "dynamodb:ConditionCheckItem")
TABLE_WRITE = ("dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:BatchWriteItem")
SEARCH_READ = ("es:ESHttpGet", "es:ESHttpHead", "es:ESHttpPost")
SEARCH_WRITE = (*SEARCH_READ, "es:ESHttpPut", "es:ESHttpDelete", "es:ESHttpPatch")


class AssetsError(RuntimeError):
    """The Lambda assets are missing, empty or placeholders where a deployable build is needed."""


def check_assets(assets: Path, *, allow_placeholders: bool) -> bool:
    """Refuse assets that would deploy broken functions; True when placeholders were allowed.

    Missing folders always fail. An empty third-party layer, the ``--core-only`` placeholder
    layer or a placeholder handler fail too unless ``allow_placeholders`` (context
    ``kb:allowPlaceholderAssets``: the test suite and ``make synth``)."""
    hint = "run `make assets` first"
    if not assets.is_dir():
        raise AssetsError(f"no Lambda assets at {assets} ({hint})")
    missing = [
        str(path)
        for path in [
            assets / "layers" / "core" / "python" / "knowledge" / "__init__.py",
            assets / "layers" / "third_party" / "python",
            *(assets / "functions" / name / "handler.py" for name in FUNCTION_NAMES),
        ]
        if not path.exists()
    ]
    if missing:
        raise AssetsError(f"Lambda assets missing ({hint}): {', '.join(missing)}")
    third = assets / "layers" / "third_party" / "python"
    placeholders: list[str] = []
    if (third / PLACEHOLDER_MARKER).exists():
        placeholders.append("the third-party layer is the --core-only placeholder")
    elif not any(third.iterdir()):
        raise AssetsError(f"the third-party Lambda layer {third} is empty ({hint})")
    for name in FUNCTION_NAMES:
        handler = assets / "functions" / name / "handler.py"
        if PLACEHOLDER_HANDLER_TEXT in handler.read_text(encoding="utf-8", errors="replace"):
            placeholders.append(f"functions/{name} is a placeholder")
    if placeholders and not allow_placeholders:
        raise AssetsError(
            f"Lambda assets in {assets} are not deployable: {'; '.join(placeholders)} ({hint}, "
            "or pass -c kb:allowPlaceholderAssets=true to synthesise without deploying)"
        )
    return bool(placeholders)


class FunctionRoles(Construct):
    """One execution role per function, created before the search domain (whose fine-grained
    access control names the ``ingest`` role as master user)."""

    def __init__(self, scope: Construct, construct_id: str) -> None:
        super().__init__(scope, construct_id)
        self.roles: dict[str, iam.Role] = {}
        for spec in FUNCTION_SPECS:
            self.roles[spec.name] = iam.Role(
                self,
                _pascal(spec.name),
                assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"),
                description=f"kb {spec.name} function",
            )

    def __getitem__(self, name: str) -> iam.Role:
        return self.roles[name]


def _pascal(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_"))


def state_machine_arns(scope: Construct, name: str) -> tuple[str, str]:
    """ARN of the refresh state machine and the pattern of its executions, built from its fixed
    name so functions can reference it without a dependency cycle (the state machine invokes
    ``ingest``, and ``ingest`` starts executions on a pack drop)."""
    stack = Stack.of(scope)
    base = f"arn:{stack.partition}:states:{stack.region}:{stack.account}"
    return f"{base}:stateMachine:{name}", f"{base}:execution:{name}:*"


class KnowledgeFunctions(Construct):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        config: StackConfig,
        roles: FunctionRoles,
        table: dynamodb.Table,
        due_index_name: str,
        bucket: s3.IBucket,
        domain: opensearch.Domain,
        state_machine_name: str,
        reindex_queue: sqs.IQueue,
    ) -> None:
        super().__init__(scope, construct_id)
        self.config = config
        self.roles = roles
        assets = config.assets_dir
        if check_assets(assets, allow_placeholders=config.allow_placeholder_assets):
            Annotations.of(self).add_warning_v2(
                "kb:placeholderLayer",
                "The Lambda assets are --core-only placeholders: fine for synth and tests, "
                "but run `make assets` before `cdk deploy`.",
            )
        self.state_machine_arn, executions_arn = state_machine_arns(self, state_machine_name)

        self.core_layer = lambda_.LayerVersion(
            self,
            "CoreLayer",
            code=lambda_.Code.from_asset(str(assets / "layers" / "core")),
            compatible_runtimes=[RUNTIME],
            compatible_architectures=[ARCHITECTURE],
            description="kb core library (knowledge package)",
        )
        self.third_party_layer = lambda_.LayerVersion(
            self,
            "ThirdPartyLayer",
            code=lambda_.Code.from_asset(str(assets / "layers" / "third_party")),
            compatible_runtimes=[RUNTIME],
            compatible_architectures=[ARCHITECTURE],
            description="kb third-party dependencies (Lambda arm64 wheels, pruned)",
        )

        stack = Stack.of(self)
        common_env = {
            env.ENV_TABLE: table.table_name,
            env.ENV_DUE_INDEX: due_index_name,
            env.ENV_BUCKET: bucket.bucket_name,
            env.ENV_SEARCH_ENDPOINT: f"https://{domain.domain_endpoint}",
            env.ENV_INDEX_PREFIX: config.index_prefix,
            env.ENV_SEARCH_REPLICAS: str(config.search.index_replicas),
            env.ENV_SEARCH_SHARDS: str(config.search.index_shards),
            # the index and the deployment's embedder share this dimension (infra.config)
            env.ENV_SEARCH_DIMENSION: str(config.dimension),
            env.ENV_STATE_MACHINE: self.state_machine_arn,
            env.ENV_EMBEDDER: config.embedder,
            env.ENV_BEDROCK_MODEL: config.bedrock_model_id,
            env.ENV_POWERTOOLS_SERVICE: config.service_name,
            env.ENV_POWERTOOLS_NAMESPACE: config.metrics_namespace,
            env.ENV_LOG_LEVEL: config.log_level,
            env.ENV_SECRETS_PREFIX: secrets_prefix(stack.stack_name),
        }
        if config.rerank_model_arn:
            common_env[env.ENV_RERANK_MODEL_ARN] = config.rerank_model_arn
        extra_env = {
            "scheduler": {
                env.ENV_REINDEX_QUEUE: reindex_queue.queue_url,
                env.ENV_MAX_RUNNING_REFRESHES: str(config.reindex_concurrency),
            },
            "ingest": {
                env.ENV_SEARCH_READ_ROLES: ",".join(
                    [roles["retrieve"].role_arn, roles["admin_api"].role_arn]
                )
            }
        }
        retention = log_retention(config.log_retention_days)
        self.functions: dict[str, lambda_.Function] = {}
        self.log_groups: dict[str, logs.LogGroup] = {}
        for spec in FUNCTION_SPECS:
            log_group = logs.LogGroup(
                self,
                f"{_pascal(spec.name)}Logs",
                retention=retention,
                removal_policy=RemovalPolicy.DESTROY,
            )
            log_group.grant_write(roles[spec.name])
            fn = lambda_.Function(
                self,
                _pascal(spec.name),
                description=spec.description,
                runtime=RUNTIME,
                architecture=ARCHITECTURE,
                handler="handler.handler",
                code=lambda_.Code.from_asset(str(assets / "functions" / spec.name)),
                layers=[self.core_layer, self.third_party_layer],
                memory_size=spec.memory_mb,
                timeout=spec.timeout,
                role=roles[spec.name],
                environment={**common_env, **extra_env.get(spec.name, {})},
                tracing=lambda_.Tracing.ACTIVE,
                log_group=log_group,
                # answering keeps its share of the account's concurrency whatever refreshes
                # and reindexes do, and cannot starve them either
                reserved_concurrent_executions=(config.retrieve_reserved or None) if spec.name == "retrieve"
                else None,
            )
            self.functions[spec.name] = fn
            self.log_groups[spec.name] = log_group

        #: what API Gateway invokes for questions: the function, or its ``live`` alias with
        #: provisioned concurrency (kb:retrieveProvisioned) so no question waits for a cold start
        self.retrieve_target: lambda_.IFunction = self.functions["retrieve"]
        if config.retrieve_provisioned:
            self.retrieve_target = lambda_.Alias(
                self,
                "RetrieveLive",
                alias_name="live",
                version=self.functions["retrieve"].current_version,
                provisioned_concurrent_executions=config.retrieve_provisioned,
            )

        table_arns = [table.table_arn, f"{table.table_arn}/index/{due_index_name}"]
        domain_arns = [domain.domain_arn, f"{domain.domain_arn}/*"]
        bucket_arn = bucket.bucket_arn

        def objects(*prefixes: str) -> list[str]:
            return [f"{bucket_arn}/{prefix}*" for prefix in prefixes]

        def list_under(name: str, *prefixes: str) -> None:
            """s3:ListBucket for listings under these key prefixes only (``s3:prefix``)."""
            self.roles[name].add_to_principal_policy(
                iam.PolicyStatement(
                    actions=["s3:ListBucket"],
                    resources=[bucket_arn],
                    conditions={"StringLike": {"s3:prefix": [f"{prefix}*" for prefix in prefixes]}},
                )
            )

        bedrock_arn = (
            f"arn:{stack.partition}:bedrock:{stack.region}::foundation-model/{config.bedrock_model_id}"
        )
        uses_bedrock = config.embedder == "bedrock"

        # ingest: owns the refresh pipeline and the indexes
        self._allow("ingest", [*TABLE_READ, *TABLE_WRITE], table_arns)
        self._allow("ingest", ["s3:GetObject"], objects(PACKS_PREFIX))
        self._allow("ingest", ["s3:GetObject", "s3:DeleteObject"], objects(UPLOADS_PREFIX))
        # a presigned upload: read from incoming/, checked, written to uploads/, then removed
        self._allow("ingest", ["s3:GetObject", "s3:DeleteObject"], objects(INCOMING_PREFIX))
        self._allow("ingest", ["s3:PutObject"], objects(UPLOADS_PREFIX))
        self._allow("ingest", ["s3:GetObject", "s3:PutObject", "s3:DeleteObject"], objects(STAGING_PREFIX))
        self._allow("ingest", ["s3:ListBucket"], [bucket_arn])
        self._allow("ingest", SEARCH_WRITE, domain_arns)
        self._allow("ingest", ["states:StartExecution"], [self.state_machine_arn])
        # crawl: lease heartbeats and crawl progress on the source; fetched pages go to staging
        self._allow("crawl", ["dynamodb:GetItem", "dynamodb:Query", "dynamodb:UpdateItem"], [table.table_arn])
        # a fresh crawl first clears what an earlier crawl of the source staged (list + delete)
        self._allow("crawl", ["s3:GetObject", "s3:PutObject", "s3:DeleteObject"], objects(STAGING_PREFIX))
        self._allow("crawl", ["s3:ListBucket"], [bucket_arn])
        # retrieve: reads state and live tables, records the retrieval and gaps (PutItem), searches
        self._allow("retrieve", [*TABLE_READ, "dynamodb:PutItem"], [table.table_arn])
        # ... and the last use of the token that asked: an update of token items only
        self.roles["retrieve"].add_to_principal_policy(iam.PolicyStatement(
            actions=["dynamodb:UpdateItem"], resources=[table.table_arn],
            conditions={"ForAllValues:StringLike": {"dynamodb:LeadingKeys": ["TOKEN#*"]}}))
        self._allow("retrieve", SEARCH_READ, domain_arns)
        # admin_api: source/agent CRUD, uploads, starting/stopping refreshes, read-only search
        self._allow("admin_api", [*TABLE_READ, *TABLE_WRITE], table_arns)
        self._allow("admin_api", ["s3:PutObject", "s3:GetObject"], objects(UPLOADS_PREFIX))
        # POST upload-url signs a presigned POST with this role: what it may put, the client may
        self._allow("admin_api", ["s3:PutObject"], objects(INCOMING_PREFIX))
        self._allow("admin_api", SEARCH_READ, domain_arns)
        self._allow("admin_api", ["states:StartExecution"], [self.state_machine_arn])
        self._allow("admin_api", ["states:StopExecution", "states:DescribeExecution"], [executions_arn])
        # POST reindex syncs the bot's pack sources with the packs in packs/ (list only); a
        # pack source's pack and a file source's upload are looked up as one-key listings
        list_under("admin_api", PACKS_PREFIX, UPLOADS_PREFIX)
        # authorizer: looks up hashed tokens only
        self._allow("authorizer", ["dynamodb:GetItem"], [table.table_arn])
        # scheduler: due-index query, lease reaping, listing sources for the nightly reindex,
        # which first syncs every bot's pack sources with packs/ (a listing, new source rows;
        # withdrawing an out-of-scope pack retires its generation, a Put in a transaction)
        # (Scan stays for the one-time back-fill of the bots registry of an older table)
        self._allow(
            "scheduler",
            ["dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:Query", "dynamodb:Scan", "dynamodb:UpdateItem",
             "dynamodb:PutItem", "dynamodb:BatchWriteItem"],
            [*table_arns, f"{table.table_arn}/index/{LEASE_INDEX}"],
        )
        self._allow("scheduler", ["states:StartExecution", "states:ListExecutions"], [self.state_machine_arn])
        # the nightly reindex's bounded queue: filled by the nightly run, drained by every run
        self._allow("scheduler", ["sqs:SendMessage", "sqs:ReceiveMessage", "sqs:DeleteMessage",
                                  "sqs:ChangeMessageVisibility", "sqs:GetQueueAttributes"], [reindex_queue.queue_arn])
        list_under("scheduler", PACKS_PREFIX)
        # bots' provider keys and upstream tokens (knowledge.adapters.aws.secrets): read by the
        # functions that embed or ask upstream, written by the settings route alone
        secrets_arn = (f"arn:{stack.partition}:secretsmanager:{stack.region}:{stack.account}:secret:"
                       f"{secrets_prefix(stack.stack_name)}/*")
        for name in ("ingest", "retrieve", "admin_api", "scheduler"):
            self._allow(name, ["secretsmanager:GetSecretValue"], [secrets_arn])
        self._allow("admin_api", ["secretsmanager:CreateSecret", "secretsmanager:PutSecretValue",
                                  "secretsmanager:DeleteSecret"], [secrets_arn])
        if uses_bedrock:
            for name in ("ingest", "retrieve", "admin_api"):
                self._allow(name, ["bedrock:InvokeModel"], [bedrock_arn])
        if config.rerank_model_arn:
            # the questions' functions (retrieve, and admin_api's retrieval-test): Rerank has no
            # resource of its own; the model it calls is the one named
            for name in ("retrieve", "admin_api"):
                self._allow(name, ["bedrock:Rerank"], ["*"])
                self._allow(name, ["bedrock:InvokeModel"], [config.rerank_model_arn])

        self._nag()

    def _allow(self, name: str, actions: list[str] | tuple[str, ...], resources: list[str]) -> None:
        self.roles[name].add_to_principal_policy(
            iam.PolicyStatement(actions=list(actions), resources=resources)
        )

    def _nag(self) -> None:
        for spec in FUNCTION_SPECS:
            NagSuppressions.add_resource_suppressions(
                self.functions[spec.name],
                [
                    {
                        "id": "AwsSolutions-L1",
                        "reason": "Pinned to Python 3.12 on purpose: the third-party layer is built "
                        "for cp312 arm64 wheels; moving runtimes means rebuilding that layer.",
                    }
                ],
            )
            NagSuppressions.add_resource_suppressions(
                self.roles[spec.name],
                [
                    {
                        "id": "AwsSolutions-IAM5",
                        "reason": "X-Ray PutTraceSegments/PutTelemetryRecords (active tracing) and "
                        "bedrock:Rerank (when a rerank model is configured) support no resource "
                        "scoping, so they need Resource '*'.",
                        "applies_to": ["Resource::*"],
                    },
                    {
                        "id": "AwsSolutions-IAM5",
                        "reason": "Object access is scoped to one key prefix (packs/, uploads/, "
                        "or staging/) of the knowledge bucket; keys below it are generated "
                        "per source or per bot.",
                        "applies_to": [
                            {"regex": "/^Resource::<.*Bucket.*\\.Arn>\\/(packs|uploads|staging)\\/\\*$/"}
                        ],
                    },
                    {
                        "id": "AwsSolutions-IAM5",
                        "reason": "Search verbs apply to index paths under this one domain "
                        "(<domain-arn>/*); the index names depend on the bot and audience.",
                        "applies_to": [{"regex": "/^Resource::<.*Domain.*\\.Arn>\\/\\*$/"}],
                    },
                    {
                        "id": "AwsSolutions-IAM5",
                        "reason": "Stop/Describe apply to executions of the refresh state machine "
                        "only; execution names are generated per refresh.",
                        "applies_to": [{"regex": "/^Resource::arn:.*:execution:.*-refresh:\\*$/"}],
                    },
                ],
                apply_to_children=True,
            )

