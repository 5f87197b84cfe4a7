"""CloudWatch alarms (to one SNS topic) and the operators' dashboard."""

from __future__ import annotations

from dataclasses import dataclass

from aws_cdk import Duration, Stack
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_cloudwatch_actions as cw_actions
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_opensearchservice as opensearch
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sns_subscriptions as subscriptions
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
        alarm_email: str | None,
    ) -> None:
        super().__init__(scope, construct_id)
        stack = Stack.of(self)
        self.topic = sns.Topic(
            self,
            "AlarmTopic",
            display_name="kb alarms",
            enforce_ssl=True,
            master_key=kms.Alias.from_alias_name(self, "SnsKey", "alias/aws/sns"),
        )
        if alarm_email:
            self.topic.add_subscription(subscriptions.EmailSubscription(alarm_email))
        action = cw_actions.SnsAction(self.topic)
        dims = {"service": service_name}

        refresh_failed = cloudwatch.Metric(
            namespace=namespace,
            metric_name=env.METRIC_REFRESH_FAILED,
            dimensions_map=dims,
            statistic="Sum",
            period=Duration.minutes(5),
        )
        lease_reaped = cloudwatch.Metric(
            namespace=namespace,
            metric_name=env.METRIC_LEASE_REAPED,
            dimensions_map=dims,
            statistic="Sum",
            period=Duration.minutes(15),
        )
        api_5xx = api.metric_server_error(period=Duration.minutes(5), statistic="Sum")
        api_p95 = api.metric_latency(period=Duration.minutes(5), statistic="p95")
        red = domain.metric_cluster_status_red(period=Duration.minutes(1), statistic="Max")
        yellow = domain.metric_cluster_status_yellow(period=Duration.minutes(1), statistic="Max")
        free_storage = domain.metric_free_storage_space(period=Duration.minutes(5), statistic="Minimum")

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
