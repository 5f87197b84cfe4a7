"""The one DynamoDB table: sources, documents, agents, hashed tokens, leases, retrieval records."""

from __future__ import annotations

from aws_cdk import RemovalPolicy
from aws_cdk import aws_dynamodb as dynamodb
from constructs import Construct

# the layout the store reads and writes, named once (the stack creates what the code expects)
from knowledge.adapters.aws.dynamodb_table import (
    DUE_INDEX,
    DUE_PARTITION_KEY,
    DUE_SORT_KEY,
    LEASE_INDEX,
    LEASE_PARTITION_KEY,
    LEASE_SORT_KEY,
    PARTITION_KEY,
    SORT_KEY,
    TTL_ATTRIBUTE,
)


class KnowledgeState(Construct):
    """On-demand table with PITR, a TTL attribute and two sparse indexes for the scheduler:
    ``due`` (refreshes due) and ``leases`` (leases, by expiry).

    Only items that carry ``dueShard`` (sources waiting for a scheduled refresh) appear in the
    index, so the scheduler's query reads exactly the due rows. ``dueAt`` is a number (epoch
    seconds), like ``expiresAt`` (which DynamoDB TTL requires to be epoch seconds).
    """

    def __init__(self, scope: Construct, construct_id: str, *, retain: bool) -> None:
        super().__init__(scope, construct_id)
        self.table = dynamodb.Table(
            self,
            "Table",
            partition_key=dynamodb.Attribute(name=PARTITION_KEY, type=dynamodb.AttributeType.STRING),
            sort_key=dynamodb.Attribute(name=SORT_KEY, type=dynamodb.AttributeType.STRING),
            billing_mode=dynamodb.BillingMode.PAY_PER_REQUEST,
            point_in_time_recovery_specification=dynamodb.PointInTimeRecoverySpecification(
                point_in_time_recovery_enabled=True
            ),
            time_to_live_attribute=TTL_ATTRIBUTE,
            encryption=dynamodb.TableEncryption.AWS_MANAGED,
            deletion_protection=retain,
            removal_policy=RemovalPolicy.RETAIN if retain else RemovalPolicy.DESTROY,
        )
        self.table.add_global_secondary_index(
            index_name=DUE_INDEX,
            partition_key=dynamodb.Attribute(name=DUE_PARTITION_KEY, type=dynamodb.AttributeType.STRING),
            sort_key=dynamodb.Attribute(name=DUE_SORT_KEY, type=dynamodb.AttributeType.NUMBER),
            projection_type=dynamodb.ProjectionType.ALL,
        )
        self.due_index_name = DUE_INDEX
        # only leased sources carry leaseExpiresAt: the reaper queries the expired ones here
        self.table.add_global_secondary_index(
            index_name=LEASE_INDEX,
            partition_key=dynamodb.Attribute(name=LEASE_PARTITION_KEY, type=dynamodb.AttributeType.STRING),
            sort_key=dynamodb.Attribute(name=LEASE_SORT_KEY, type=dynamodb.AttributeType.NUMBER),
            projection_type=dynamodb.ProjectionType.KEYS_ONLY,
        )
        self.lease_index_name = LEASE_INDEX
