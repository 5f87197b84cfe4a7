"""The OpenSearch domain holding the hybrid (BM25 + k-NN) indexes.

Profiles (``kb:profile`` context):

* ``minimum`` (default): one ``t3.small.search`` data node, 10 GB gp3, no dedicated masters,
  one AZ, indexes with 0 replicas. The documented cost floor; no high availability.
* ``production``: three data nodes across three AZs, three dedicated masters, 1 replica.

Access: public endpoint (no VPC, so no NAT gateway), HTTPS only with TLS 1.2, node-to-node and
at-rest encryption, and fine-grained access control whose master user is an IAM role (the
index owner, i.e. the ``ingest`` function). The domain policy names only this account, so a
request gets in when it is SigV4-signed by a role whose identity policy grants the verb (each
function's role grants exactly its verbs). The domain has a fixed name so that its policy can
name it without referring to itself.
"""

from __future__ import annotations

from aws_cdk import RemovalPolicy, Stack
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_iam as iam
from aws_cdk import aws_logs as logs
from aws_cdk import aws_opensearchservice as opensearch
from cdk_nag import NagSuppressions
from constructs import Construct

from infra.config import SearchProfile

ENGINE_VERSION = opensearch.EngineVersion.OPENSEARCH_2_19


class KnowledgeSearch(Construct):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        profile: SearchProfile,
        master_role: iam.IRole,
        domain_name: str,
        retain: bool,
        log_retention: logs.RetentionDays,
    ) -> None:
        super().__init__(scope, construct_id)
        self.profile = profile
        multi_az = profile.availability_zones > 1
        removal = RemovalPolicy.RETAIN if retain else RemovalPolicy.DESTROY

        self.app_log = logs.LogGroup(self, "AppLog", retention=log_retention, removal_policy=removal)
        self.slow_search_log = logs.LogGroup(
            self, "SlowSearchLog", retention=log_retention, removal_policy=removal
        )
        self.slow_index_log = logs.LogGroup(self, "SlowIndexLog", retention=log_retention, removal_policy=removal)

        self.domain = opensearch.Domain(
            self,
            "Domain",
            domain_name=domain_name,
            version=ENGINE_VERSION,
            capacity=opensearch.CapacityConfig(
                data_nodes=profile.data_nodes,
                data_node_instance_type=profile.data_instance_type,
                master_nodes=profile.master_nodes or None,
                master_node_instance_type=profile.master_instance_type,
                multi_az_with_standby_enabled=False,
            ),
            ebs=opensearch.EbsOptions(
                enabled=True,
                volume_size=profile.volume_gb,
                volume_type=ec2.EbsDeviceVolumeType.GP3,
            ),
            zone_awareness=opensearch.ZoneAwarenessConfig(
                enabled=multi_az,
                availability_zone_count=profile.availability_zones if multi_az else None,
            ),
            encryption_at_rest=opensearch.EncryptionAtRestOptions(enabled=True),
            node_to_node_encryption=True,
            enforce_https=True,
            tls_security_policy=opensearch.TLSSecurityPolicy.TLS_1_2,
            fine_grained_access_control=opensearch.AdvancedSecurityOptions(
                master_user_arn=master_role.role_arn
            ),
            logging=opensearch.LoggingOptions(
                app_log_enabled=True,
                app_log_group=self.app_log,
                slow_search_log_enabled=True,
                slow_search_log_group=self.slow_search_log,
                slow_index_log_enabled=True,
                slow_index_log_group=self.slow_index_log,
            ),
            # the log-group resource policy is written below as a plain resource, so CDK does
            # not add its custom-resource Lambda for it
            suppress_logs_resource_policy=True,
            enable_version_upgrade=True,
            removal_policy=removal,
        )
        # Resource policy set on the resource itself (the L2 ``access_policies`` goes through a
        # custom-resource Lambda): the account is the only principal, so a request gets in only
        # when it is SigV4-signed by a role whose identity policy grants it this domain.
        stack = Stack.of(self)
        domain_arn = stack.format_arn(service="es", resource="domain", resource_name=domain_name)
        access = iam.PolicyDocument(
            statements=[
                iam.PolicyStatement(
                    principals=[iam.AccountRootPrincipal()],
                    actions=["es:ESHttp*"],
                    resources=[f"{domain_arn}/*"],
                )
            ]
        )
        cfn_domain = self.domain.node.default_child
        assert isinstance(cfn_domain, opensearch.CfnDomain)
        cfn_domain.access_policies = access.to_json()
        self._publish_logs_policy()
        self._nag()

    def _publish_logs_policy(self) -> None:
        stack = Stack.of(self)
        groups = [self.app_log, self.slow_search_log, self.slow_index_log]
        document = iam.PolicyDocument(
            statements=[
                iam.PolicyStatement(
                    principals=[iam.ServicePrincipal("es.amazonaws.com")],
                    actions=["logs:PutLogEvents", "logs:CreateLogStream"],
                    resources=[g.log_group_arn for g in groups],
                    conditions={"StringEquals": {"aws:SourceAccount": stack.account}},
                )
            ]
        )
        policy = logs.CfnResourcePolicy(
            self,
            "PublishLogsPolicy",
            policy_name=f"{stack.stack_name}-opensearch-logs",
            policy_document=stack.to_json_string(document.to_json()),
        )
        cfn_domain = self.domain.node.default_child
        assert isinstance(cfn_domain, opensearch.CfnDomain)
        cfn_domain.node.add_dependency(policy)

    def _nag(self) -> None:
        reasons = [
            {
                "id": "AwsSolutions-OS1",
                "reason": "Public endpoint by design: Lambda functions run outside a VPC so the "
                "stack needs no NAT gateway; every request is SigV4-signed, HTTPS-only and checked "
                "by fine-grained access control.",
            },
            {
                "id": "AwsSolutions-OS3",
                "reason": "Callers are Lambda functions without fixed IPs; access is restricted to "
                "IAM principals of this account instead of an IP allow list.",
            },
        ]
        if self.profile.master_nodes == 0:
            reasons.append(
                {
                    "id": "AwsSolutions-OS4",
                    "reason": "Minimum-cost profile: a single data node needs no dedicated masters; "
                    "the production profile (kb:profile=production) adds three.",
                }
            )
        if self.profile.availability_zones == 1:
            reasons.append(
                {
                    "id": "AwsSolutions-OS7",
                    "reason": "Minimum-cost profile runs one node in one AZ; the production profile "
                    "enables zone awareness across three AZs.",
                }
            )
        NagSuppressions.add_resource_suppressions(self.domain, reasons, apply_to_children=True)

