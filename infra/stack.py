"""``KnowledgeStack``: storage, state, search, functions, workflow, schedules, API, monitoring."""

from __future__ import annotations

from typing import Any

from aws_cdk import CfnOutput, Stack
from constructs import Construct

from infra.api import KnowledgeApi
from infra.config import StackConfig, default_domain_name, log_retention
from infra.functions import FunctionRoles, KnowledgeFunctions
from infra.monitoring import KnowledgeMonitoring
from infra.schedules import KnowledgeSchedules, ReindexQueue
from infra.search import KnowledgeSearch
from infra.state import KnowledgeState
from infra.storage import KnowledgeStorage
from infra.waf import KnowledgeWaf, WafLimits
from infra.workflow import RefreshWorkflow


class KnowledgeStack(Stack):
    """Environment-agnostic: no lookups, so ``python app.py`` synthesises offline."""

    def __init__(
        self, scope: Construct, construct_id: str, *, config: StackConfig | None = None, **kwargs: Any
    ) -> None:
        super().__init__(scope, construct_id, **kwargs)
        self.config = config or StackConfig.from_node(self.node)
        cfg = self.config
        retention = log_retention(cfg.log_retention_days)
        state_machine_name = f"{self.stack_name}-refresh"

        self.storage = KnowledgeStorage(
            self, "Storage", staging_expiry_days=cfg.staging_expiry_days, retain=cfg.retain_data,
            upload_origins=cfg.upload_origins,
        )
        self.state = KnowledgeState(self, "State", retain=cfg.retain_data)
        self.roles = FunctionRoles(self, "Roles")
        self.search = KnowledgeSearch(
            self,
            "Search",
            profile=cfg.search,
            master_role=self.roles["ingest"],
            domain_name=cfg.search_domain_name or default_domain_name(self.stack_name),
            retain=cfg.retain_data,
            log_retention=retention,
        )
        self.reindex = ReindexQueue(self, "Reindex")
        self.functions = KnowledgeFunctions(
            self,
            "Functions",
            config=cfg,
            roles=self.roles,
            table=self.state.table,
            due_index_name=self.state.due_index_name,
            bucket=self.storage.bucket,
            domain=self.search.domain,
            state_machine_name=state_machine_name,
            reindex_queue=self.reindex.queue,
        )
        fns = self.functions.functions
        self.workflow = RefreshWorkflow(
            self,
            "Workflow",
            ingest=fns["ingest"],
            crawl=fns["crawl"],
            state_machine_name=state_machine_name,
            log_retention=retention,
        )
        self.schedules = KnowledgeSchedules(
            self,
            "Schedules",
            scheduler=fns["scheduler"],
            ingest=fns["ingest"],
            bucket=self.storage.bucket,
            nightly_hour_utc=cfg.nightly_reindex_hour_utc,
        )
        self.api = KnowledgeApi(
            self,
            "Api",
            admin_api=fns["admin_api"],
            retrieve=self.functions.retrieve_target,
            authorizer=fns["authorizer"],
            rate_limit=cfg.api_rate_limit,
            burst_limit=cfg.api_burst_limit,
            log_retention=retention,
            waf=cfg.waf_enabled,
        )
        self.waf = (
            KnowledgeWaf(self, "Waf", stage=self.api.api.deployment_stage, limits=WafLimits())
            if cfg.waf_enabled else None
        )
        self.monitoring = KnowledgeMonitoring(
            self,
            "Monitoring",
            namespace=cfg.metrics_namespace,
            service_name=cfg.service_name,
            api=self.api.api,
            domain=self.search.domain,
            state_machine=self.workflow.state_machine,
            functions=fns,
            table=self.state.table,
            failure_queues={
                "EventDeadLetters": self.schedules.dead_letters,
                "AsyncFailures": self.schedules.async_failures,
                "ReindexDeadLetters": self.reindex.dead_letters,
            },
            alarm_email=cfg.alarm_email,
        )

        CfnOutput(self, "ApiUrl", value=self.api.url, description="Base URL of the REST API stage")
        CfnOutput(self, "BucketName", value=self.storage.bucket.bucket_name,
                  description="Drop packs under packs/<slug>.ndjson.gz")
        CfnOutput(self, "TableName", value=self.state.table.table_name)
        CfnOutput(self, "SearchEndpoint", value=f"https://{self.search.domain.domain_endpoint}")
        CfnOutput(self, "StateMachineArn", value=self.workflow.state_machine.state_machine_arn)
        CfnOutput(self, "AlarmTopicArn", value=self.monitoring.topic.topic_arn)
