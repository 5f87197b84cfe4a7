"""What the hot paths read from DynamoDB, counted in moto: the items each request evaluated
(``ScannedCount`` of a query or scan, the items a get or batch get returned). Answering a
question reads the bot's settings and its source items only; the scheduler's minute tick reads
the due and expired items through the indexes, never scanning the table (infra/README.md has
the table of every access)."""

from __future__ import annotations

from collections import Counter
from typing import Any

import boto3
import pytest

from knowledge.adapters.aws.dynamodb_state import DynamoDbStateStore
from knowledge.adapters.aws.dynamodb_table import create_table
from knowledge.model import Document, Source

NOW = 1_800_000_000.0
TABLE = "kb-access"
BOTS, SOURCES, DOCUMENTS = 3, 4, 60


class CountingClient:
    """A boto3 DynamoDB client that counts requests and the items each one read."""

    def __init__(self, inner: Any):
        self.inner = inner
        self.requests: Counter[str] = Counter()
        self.items: Counter[str] = Counter()

    def reset(self) -> None:
        self.requests.clear()
        self.items.clear()

    def __getattr__(self, name: str) -> Any:
        method = getattr(self.inner, name)
        if not callable(method) or name.startswith("get_waiter"):
            return method

        def call(**kwargs: Any) -> Any:
            response = method(**kwargs)
            self.requests[name] += 1
            if name in ("query", "scan"):
                self.items[name] += int(response.get("ScannedCount", 0))
            elif name == "get_item":
                self.items[name] += int("Item" in response)
            elif name == "batch_get_item":
                self.items[name] += sum(len(v) for v in response.get("Responses", {}).values())
            return response

        return call

    def read(self) -> int:
        return sum(self.items.values())


@pytest.fixture
def counted(aws: None) -> tuple[DynamoDbStateStore, CountingClient]:
    inner = boto3.client("dynamodb", region_name="us-east-1")
    create_table(inner, TABLE)
    client = CountingClient(inner)
    store = DynamoDbStateStore(TABLE, client=client)
    for b in range(BOTS):
        for s in range(SOURCES):
            bot, sid = f"bot{b}", f"src{s}"
            store.put_source(Source(id=sid, bot=bot, type="pack", name=sid, status="waiting", created_at=NOW,
                                    updated_at=NOW))
            owner = f"w-{bot}-{sid}"
            assert store.acquire_lease(bot, sid, owner, NOW, 120)
            gen = store.begin_generation(bot, sid, owner)
            docs = [Document(id=f"d{n}", bot=bot, source_id=sid, title="T", path=f"p{n}.md") for n in range(DOCUMENTS)]
            store.commit_generation(bot, sid, owner, gen, checksum="c", now=NOW, counters={"passages": DOCUMENTS},
                                    documents=docs)
    # two refreshes running: one heartbeating, one whose worker died (its lease expires first)
    store.acquire_lease("bot0", "src0", "alive", NOW + 200, 120)
    store.acquire_lease("bot1", "src1", "dead", NOW + 10, 120)
    store.list_bots()  # the registry is back-filled at most once
    client.reset()
    return store, client


def test_answering_reads_the_settings_and_the_bots_source_items_only(counted: Any) -> None:
    store, client = counted
    _, live = store.retrieval_view("bot0")
    assert len(live) == SOURCES
    # 1 settings get (absent here) + the 4 source items; none of the 240 documents of the bot
    assert client.read() == SOURCES
    assert client.requests == Counter({"get_item": 1, "query": 1})


def test_the_minute_tick_reads_only_due_and_expired_items_through_the_indexes(counted: Any) -> None:
    store, client = counted
    now = NOW + 200  # the dead worker's lease (NOW + 130) expired, the live one's (NOW + 320) did not
    expired = store.expired_leases(now)
    assert [(s.bot, s.id, s.lease_owner) for s in expired] == [("bot1", "src1", "dead")]
    assert client.requests["scan"] == 0
    assert client.items == Counter({"query": 1, "batch_get_item": 1})  # one index entry, one re-read

    client.reset()
    assert store.due_sources(now) == []  # every source is ready without a schedule
    assert client.requests["scan"] == 0 and client.read() == 0

    client.reset()
    assert store.list_bots() == [f"bot{b}" for b in range(BOTS)]
    assert client.requests == Counter({"query": 1}) and client.read() == BOTS + 1  # + the back-fill marker


def test_a_table_without_the_registry_is_scanned_once_then_never(aws: None) -> None:
    inner = boto3.client("dynamodb", region_name="us-east-1")
    create_table(inner, TABLE)
    client = CountingClient(inner)
    store = DynamoDbStateStore(TABLE, client=client)
    store.put_source(Source(id="s", bot="old", type="pack", name="s", status="ready", created_at=NOW,
                            updated_at=NOW))
    inner.delete_item(TableName=TABLE, Key={"PK": {"S": "BOTS"}, "SK": {"S": "BOT#old"}})  # as written before
    client.reset()
    assert store.list_bots() == ["old"] and client.requests["scan"] == 1
    client.reset()
    assert store.list_bots() == ["old"] and client.requests["scan"] == 0
