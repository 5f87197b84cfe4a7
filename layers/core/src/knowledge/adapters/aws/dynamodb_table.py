"""The state table's layout: key names, the indexes the scheduler and the reaper read, and
``create_table`` (tests and local runs; the stack creates the same table in ``infra/state.py``)."""

from __future__ import annotations

from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from ...errors import BackendError

PARTITION_KEY = "PK"
SORT_KEY = "SK"
TTL_ATTRIBUTE = "expiresAt"
DUE_INDEX = "due"
DUE_PARTITION_KEY = "dueShard"
DUE_SORT_KEY = "dueAt"
#: number of ``REFRESH#<n>`` partitions of the due index (the scheduler queries each)
DUE_SHARDS = 4
GENERATIONS_SHARD = "GENERATIONS"
LEASE_INDEX = "leases"
LEASE_PARTITION_KEY = "kind"
LEASE_SORT_KEY = "leaseExpiresAt"
REGISTRY_PK = "BOTS"
REGISTRY_DONE = "#INDEXED"


def create_table(client: Any, name: str) -> str:
    """Create the table with the ``due`` index and TTL, as the stack does (tests, local runs)."""
    try:
        client.create_table(
            TableName=name,
            BillingMode="PAY_PER_REQUEST",
            AttributeDefinitions=[
                {"AttributeName": PARTITION_KEY, "AttributeType": "S"},
                {"AttributeName": SORT_KEY, "AttributeType": "S"},
                {"AttributeName": DUE_PARTITION_KEY, "AttributeType": "S"},
                {"AttributeName": DUE_SORT_KEY, "AttributeType": "N"},
                {"AttributeName": LEASE_PARTITION_KEY, "AttributeType": "S"},
                {"AttributeName": LEASE_SORT_KEY, "AttributeType": "N"},
            ],
            KeySchema=[
                {"AttributeName": PARTITION_KEY, "KeyType": "HASH"},
                {"AttributeName": SORT_KEY, "KeyType": "RANGE"},
            ],
            GlobalSecondaryIndexes=[
                {
                    "IndexName": DUE_INDEX,
                    "KeySchema": [
                        {"AttributeName": DUE_PARTITION_KEY, "KeyType": "HASH"},
                        {"AttributeName": DUE_SORT_KEY, "KeyType": "RANGE"},
                    ],
                    "Projection": {"ProjectionType": "ALL"},
                },
                {
                    "IndexName": LEASE_INDEX,
                    "KeySchema": [
                        {"AttributeName": LEASE_PARTITION_KEY, "KeyType": "HASH"},
                        {"AttributeName": LEASE_SORT_KEY, "KeyType": "RANGE"},
                    ],
                    "Projection": {"ProjectionType": "KEYS_ONLY"},
                },
            ],
        )
        client.get_waiter("table_exists").wait(TableName=name)
        client.update_time_to_live(
            TableName=name, TimeToLiveSpecification={"Enabled": True, "AttributeName": TTL_ATTRIBUTE}
        )
    except (ClientError, BotoCoreError) as exc:
        raise BackendError("cannot create the state table") from exc
    return name
