"""CloudWatch alarms (to one SNS topic) and the operators' dashboard."""

from __future__ import annotations

from dataclasses import dataclass

from aws_cdk import Duration, RemovalPolicy, Stack
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_cloudwatch_actions as cw_actions
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_opensearchservice as opensearch
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sns_subscriptions as subscriptions
from aws_cdk import aws_sqs as sqs
from aws_cdk import aws_stepfunctions as sfn
from constructs import Construct

from infra import env_names as env

P95_LATENCY_THRESHOLD_MS = 3000
API_5XX_THRESHOLD = 5
LOW_STORAGE_MB = 2048


@dataclass(frozen=True)
class AlarmDoc:
    """What an alarm means, for the operators' README and the alarm description."""

    name: str
    meaning: str


#: Lambda ``Errors`` (sum over 5 minutes) at which each function's alarm fires. Stage errors of
#: ``ingest``/``crawl`` are also recorded on their source (a bad upload is one), so a few are
#: normal; every rejected token is an authorizer error by API Gateway's contract (401).
FUNCTION_ERROR_THRESHOLDS = {
    "ingest": 5,
    "crawl": 5,
    "retrieve": 5,
    "admin_api": 5,
    "authorizer": 100,
    "scheduler": 2,
}
JVM_PRESSURE_PERCENT = 85
EXECUTIONS_FAILED_THRESHOLD = 3


def _pascal(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_"))


class KnowledgeMonitoring(Construct):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        namespace: str,
        service_name: str,
        api: apigw.RestApi,
        domain: opensearch.Domain,
        state_machine: sfn.StateMachine,
        functions: dict[str, lambda_.Function],
        table: dynamodb.ITable,
        failure_queues: dict[str, sqs.IQueue],
        alarm_email: str | None,
    ) -> None:
        super().__init__(scope, construct_id)
        stack = Stack.of(self)
        # a customer-managed key: CloudWatch cannot publish to a topic under the AWS-managed
        # SNS key (its policy cannot be changed to let cloudwatch.amazonaws.com use it)
        self.key = kms.Key(
            self,
            "AlarmTopicKey",
            description="kb alarm topic (CloudWatch alarms publish to it)",
            enable_key_rotation=True,
            removal_policy=RemovalPolicy.DESTROY,
        )
        self.key.add_to_resource_policy(
            iam.PolicyStatement(
                sid="CloudWatchAlarmsPublish",
                principals=[iam.ServicePrincipal("cloudwatch.amazonaws.com")],
                actions=["kms:Decrypt", "kms:GenerateDataKey*"],
                resources=["*"],
            )
        )
        self.topic = sns.Topic(
            self,
            "AlarmTopic",
            display_name="kb alarms",
            enforce_ssl=True,
            master_key=self.key,
        )
        if alarm_email:
            self.topic.add_subscription(subscriptions.EmailSubscription(alarm_email))
        action = cw_actions.SnsAction(self.topic)
        dims = {"service": service_name}
        five = Duration.minutes(5)

        refresh_failed = cloudwatch.Metric(
            namespace=namespace,
            metric_name=env.METRIC_REFRESH_FAILED,
            dimensions_map=dims,
            statistic="Sum",
            period=five,
        )
        lease_reaped = cloudwatch.Metric(
            namespace=namespace,
            metric_name=env.METRIC_LEASE_REAPED,
            dimensions_map=dims,
            statistic="Sum",
            period=Duration.minutes(15),
        )
        api_5xx = api.metric_server_error(period=five, statistic="Sum")
        api_p95 = api.metric_latency(period=five, statistic="p95")
        red = domain.metric_cluster_status_red(period=Duration.minutes(1), statistic="Max")
        yellow = domain.metric_cluster_status_yellow(period=Duration.minutes(1), statistic="Max")
        free_storage = domain.metric_free_storage_space(period=five, statistic="Minimum")
        jvm = domain.metric_jvm_memory_pressure(period=five, statistic="Max")
        writes_blocked = domain.metric_cluster_index_writes_blocked(period=five, statistic="Max")

        gt = cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD
        not_breaching = cloudwatch.TreatMissingData.NOT_BREACHING
        self.docs: list[AlarmDoc] = []
        self.alarms: dict[str, cloudwatch.Alarm] = {}

        def alarm(
            name: str,
            metric: cloudwatch.IMetric,
            threshold: float,
            periods: int,
            meaning: str,
            comparison: cloudwatch.ComparisonOperator = gt,
            missing: cloudwatch.TreatMissingData = not_breaching,
        ) -> None:
            created = cloudwatch.Alarm(
                self,
                name,
                alarm_name=f"{stack.stack_name}-{name}",
                alarm_description=meaning,
                metric=metric,
                threshold=threshold,
                evaluation_periods=periods,
                datapoints_to_alarm=periods,
                comparison_operator=comparison,
                treat_missing_data=missing,
            )
            created.add_alarm_action(action)
            created.add_ok_action(action)
            self.alarms[name] = created
            self.docs.append(AlarmDoc(name, meaning))

        alarm(
            "RefreshFailed",
            refresh_failed,
            1,
            1,
            "A source refresh ended failed (its error code is on the source; the previous live "
            "generation keeps serving). Check the source's errorCode and the workflow execution.",
        )
        alarm(
            "LeaseReaped",
            lease_reaped,
            1,
            1,
            "The scheduler found an expired lease and requeued the source: a refresh worker died "
            "or stopped heartbeating (Lambda timeout, throttling, a crashed execution).",
        )
        alarm(
            "Api5xx",
            api_5xx,
            API_5XX_THRESHOLD,
            1,
            f"At least {API_5XX_THRESHOLD} API responses in 5 minutes were 5xx: a handler is failing "
            "or timing out (29 s). See the function logs and the access log.",
        )
        alarm(
            "ApiLatencyP95",
            api_p95,
            P95_LATENCY_THRESHOLD_MS,
            3,
            f"API p95 latency stayed at or above {P95_LATENCY_THRESHOLD_MS} ms for 15 minutes: cold "
            "starts, a slow search domain or a slow embedder.",
        )

        # -- the refresh workflow ---------------------------------------------------------
        alarm(
            "ExecutionsFailed",
            state_machine.metric_failed(period=Duration.minutes(15), statistic="Sum"),
            EXECUTIONS_FAILED_THRESHOLD,
            1,
            f"At least {EXECUTIONS_FAILED_THRESHOLD} refresh executions failed in 15 minutes: more "
            "than one bad source — a stage, the embedder or the domain is failing for everyone.",
        )
        alarm(
            "ExecutionsTimedOut",
            state_machine.metric_timed_out(period=five, statistic="Sum"),
            1,
            1,
            "A refresh execution hit the 12-hour workflow timeout: its lease lapses and the reaper "
            "requeues the source. Look for a crawl that never ends or a Map stuck on retries.",
        )
        alarm(
            "ExecutionsThrottled",
            state_machine.metric_throttled(period=five, statistic="Sum"),
            1,
            1,
            "Step Functions throttled state transitions or starts: refreshes are delayed. A reindex "
            "storm or the account's StartExecution quota; the reindex queue bounds this.",
        )

        # -- the scheduler: when it stops, nothing is refreshed and no lease is reaped ----
        scheduler = functions["scheduler"]
        alarm(
            "SchedulerStopped",
            scheduler.metric_invocations(period=five, statistic="Sum"),
            1,
            1,
            "The scheduler was not invoked for 5 minutes: the tick rule is disabled, its target "
            "broken or the function throttled. No refresh starts and no lease is reaped.",
            comparison=cloudwatch.ComparisonOperator.LESS_THAN_THRESHOLD,
            missing=cloudwatch.TreatMissingData.BREACHING,
        )

        # -- every function: errors and throttles -----------------------------------------
        for name, fn in functions.items():
            threshold = FUNCTION_ERROR_THRESHOLDS[name]
            alarm(
                f"{_pascal(name)}Errors",
                fn.metric_errors(period=five, statistic="Sum"),
                threshold,
                1,
                f"The {name} function failed {threshold} or more times in 5 minutes. Its log group "
                "(errors carry a stable code) and X-Ray traces say which call failed.",
            )
            alarm(
                f"{_pascal(name)}Throttles",
                fn.metric_throttles(period=five, statistic="Sum"),
                1,
                1,
                f"The {name} function was throttled: the account's concurrency is used up or the "
                "function reached its reserved concurrency. Requests were refused or delayed.",
            )

        # -- asynchronous failures: events nobody handled -----------------------------------
        for name, queue in failure_queues.items():
            alarm(
                name,
                queue.metric_approximate_number_of_messages_visible(period=five, statistic="Maximum"),
                1,
                1,
                f"A message waits in the {name} queue: an event (tick, nightly reindex, pack drop) "
                "failed for good. Read it (it holds the event and the error), fix, then replay it.",
            )

        # -- DynamoDB ----------------------------------------------------------------------
        alarm(
            "TableThrottled",
            cloudwatch.MathExpression(
                expression="reads + writes",
                using_metrics={
                    "reads": table.metric("ReadThrottleEvents", period=five, statistic="Sum"),
                    "writes": table.metric("WriteThrottleEvents", period=five, statistic="Sum"),
                },
                label="throttle events",
                period=five,
            ),
            1,
            1,
            "DynamoDB throttled reads or writes of the table (on-demand tables throttle past twice "
            "their previous peak, or on one hot partition key: a single bot's partition).",
        )

        # -- OpenSearch ----------------------------------------------------------------------
        alarm(
            "SearchClusterRed",
            red,
            1,
            1,
            "The OpenSearch cluster is red: at least one primary shard is unassigned, so some bots "
            "cannot be searched or indexed.",
        )
        alarm(
            "SearchClusterYellow",
            yellow,
            1,
            15,
            "The OpenSearch cluster stayed yellow for 15 minutes: replica shards are unassigned "
            "(on a single node, indexes must use 0 replicas).",
        )
        alarm(
            "SearchLowStorage",
            free_storage,
            LOW_STORAGE_MB,
            1,
            f"The search domain has under {LOW_STORAGE_MB} MB of free storage left on a node; "
            "indexing stops when the disk fills. Grow kb:searchVolumeGb.",
            comparison=cloudwatch.ComparisonOperator.LESS_THAN_OR_EQUAL_TO_THRESHOLD,
            missing=cloudwatch.TreatMissingData.MISSING,
        )
        alarm(
            "SearchJvmPressure",
            jvm,
            JVM_PRESSURE_PERCENT,
            3,
            f"JVM memory pressure stayed at or above {JVM_PRESSURE_PERCENT}% for 15 minutes: k-NN "
            "graphs and heavy queries outgrow the heap; the domain will reject requests or crash. "
            "Larger instance type or more data nodes.",
        )
        alarm(
            "SearchWritesBlocked",
            writes_blocked,
            1,
            1,
            "The domain blocks index writes (disk watermark, or memory pressure): refreshes fail "
            "while searches still answer. Free storage or add capacity, then re-run failed sources.",
        )

        self.dashboard = cloudwatch.Dashboard(self, "Dashboard", dashboard_name=f"{stack.stack_name}-kb")
        self.dashboard.add_widgets(
            cloudwatch.AlarmStatusWidget(
                title="Alarms", alarms=list(self.alarms.values()), width=24, height=4
            )
        )
        self.dashboard.add_widgets(
            cloudwatch.GraphWidget(
                title="Refreshes",
                left=[
                    refresh_failed,
                    lease_reaped,
                    state_machine.metric_succeeded(period=Duration.minutes(5)),
                    state_machine.metric_failed(period=Duration.minutes(5)),
                ],
                width=12,
            ),
            cloudwatch.GraphWidget(
                title="API",
                left=[api.metric_count(period=Duration.minutes(5)), api_5xx,
                      api.metric_client_error(period=Duration.minutes(5))],
                right=[api_p95],
                width=12,
            ),
        )
        self.dashboard.add_widgets(
            cloudwatch.GraphWidget(
                title="Lambda errors",
                left=[fn.metric_errors(period=Duration.minutes(5), label=name) for name, fn in functions.items()],
                width=12,
            ),
            cloudwatch.GraphWidget(
                title="Lambda p95 duration",
                left=[
                    fn.metric_duration(period=Duration.minutes(5), statistic="p95", label=name)
                    for name, fn in functions.items()
                ],
                width=12,
            ),
        )
        self.dashboard.add_widgets(
            cloudwatch.GraphWidget(title="Search cluster status", left=[red, yellow], width=8),
            cloudwatch.GraphWidget(
                title="Search resources",
                left=[free_storage],
                right=[
                    domain.metric_cpu_utilization(period=Duration.minutes(5)),
                    domain.metric_jvm_memory_pressure(period=Duration.minutes(5)),
                ],
                width=16,
            ),
        )
