"""DynamoDB state store specifics: the single-table layout, the due index, error translation,
the number conversion and the retried commit. The behaviour shared with SQLite is in the
contract suites."""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError
from botocore.stub import Stubber

from knowledge.adapters.aws.dynamodb_state import DynamoDbStateStore
from knowledge.adapters.aws.dynamodb_table import DUE_INDEX, GENERATIONS_SHARD, LEASE_INDEX, create_table
from knowledge.adapters.aws.dynamodb_values import from_dynamo, to_dynamo
from knowledge.errors import BackendError, Conflict, InvalidInput, NotFound
from knowledge.model import Agent, Document, RetrievalRecord, Source, Token

NOW = 1_800_000_000.0
AWS_REGION = "us-east-1"
TABLE = "kb-state-layout"


@pytest.fixture
def store(aws: None) -> DynamoDbStateStore:
    client = boto3.client("dynamodb", region_name=AWS_REGION)
    create_table(client, TABLE)
    return DynamoDbStateStore(TABLE, client=client)


def raw(store: DynamoDbStateStore, pk: str, sk: str) -> dict[str, Any]:
    item: dict[str, Any] = store.client.get_item(TableName=TABLE, Key={"PK": {"S": pk}, "SK": {"S": sk}})["Item"]
    return item


def test_single_table_layout(store):
    store.put_source(Source(id="s1", bot="b1", type="website", name="Site", status="waiting", created_at=NOW,
                            updated_at=NOW))
    store.acquire_lease("b1", "s1", "w1", NOW, 120)
    gen = store.begin_generation("b1", "s1", "w1")
    staged = raw(store, "BOT#b1", f"GEN#s1#{gen}")
    assert staged["state"] == {"S": "staging"} and staged["dueShard"] == {"S": GENERATIONS_SHARD}
    source = raw(store, "BOT#b1", "SOURCE#s1")
    assert source["leaseOwner"] == {"S": "w1"} and source["dueShard"]["S"].startswith("REFRESH#")
    assert source["dueAt"] == {"N": "0"}  # waiting: due now

    store.commit_generation("b1", "s1", "w1", gen, checksum="c", now=NOW, counters={"passages": 1},
                            documents=[Document(id="d1", bot="b1", source_id="s1", title="T", path="a.md")])
    source = raw(store, "BOT#b1", "SOURCE#s1")
    assert "leaseOwner" not in source and "dueShard" not in source  # ready, no schedule: not due
    assert source["liveGeneration"] == {"N": str(gen)}
    live = raw(store, "BOT#b1", f"GEN#s1#{gen}")
    assert live["state"] == {"S": "live"} and "dueShard" not in live
    assert raw(store, "BOT#b1", "DOC#s1#d1")["path"] == {"S": "a.md"}
    assert [s.id for s in store.list_sources("b1")] == ["s1"]  # documents and generations filtered out

    store.put_agent(Agent(id="a1", bot="b1", source_ids=["s1"]))
    assert raw(store, "BOT#b1", "AGENT#a1")["sourceIds"] == {"L": [{"S": "s1"}]}
    store.put_token(Token(token_hash="ab" * 32, bot="b1", scopes=("knowledge:read",)))
    assert raw(store, "TOKEN#" + "ab" * 32, "TOKEN")["bot"] == {"S": "b1"}
    store.put_retrieval(RetrievalRecord(id="r1", bot="b1", audience="customer", served=[], created_at=NOW,
                                        expires_at=NOW + 60))
    assert raw(store, "BOT#b1", "RETRIEVAL#r1")["expiresAt"] == {"N": str(int(NOW + 60))}

    ttl = store.client.describe_time_to_live(TableName=TABLE)["TimeToLiveDescription"]
    assert (ttl["TimeToLiveStatus"], ttl["AttributeName"]) == ("ENABLED", "expiresAt")
    indexes = store.client.describe_table(TableName=TABLE)["Table"]["GlobalSecondaryIndexes"]
    assert [i["IndexName"] for i in indexes] == [DUE_INDEX, LEASE_INDEX]
    assert store.list_bots() == ["b1"]
    assert raw(store, "BOTS", "BOT#b1") and raw(store, "BOTS", "#INDEXED")


def test_duplicate_token_is_a_conflict(store):
    store.put_token(Token(token_hash="h", bot="b1", scopes=()))
    with pytest.raises(Conflict):
        store.put_token(Token(token_hash="h", bot="b2", scopes=()))
    assert store.get_token("h").bot == "b1"


def test_stale_generation_bookkeeping_never_drops_the_live_generation(store):
    """An eventually consistent index (or a crash) may leave a generation listed as pending
    after it went live; the consistent re-read must keep it out of the orphans."""
    store.put_source(Source(id="s1", bot="b1", type="pack", name="P", live_generation=3))
    store.client.put_item(TableName=TABLE, Item={
        "PK": {"S": "BOT#b1"}, "SK": {"S": "SOURCE#s1#GEN#3"}, "kind": {"S": "generation"},
        "bot": {"S": "b1"}, "sourceId": {"S": "s1"}, "generation": {"N": "3"}, "state": {"S": "staging"},
        "owner": {"S": "gone"}, "dueShard": {"S": GENERATIONS_SHARD}, "dueAt": {"N": "0"}})
    assert store.orphan_generations() == []


def test_retried_commit_finishes_its_documents(store, monkeypatch):
    store.put_source(Source(id="s1", bot="b1", type="pack", name="P", live_generation=1))
    store.acquire_lease("b1", "s1", "w1", NOW, 120)
    gen = store.begin_generation("b1", "s1", "w1")
    docs = [Document(id="d1", bot="b1", source_id="s1", title="T", path="a.md")]
    real = store._replace_documents
    calls = []

    def crash_once(*args: Any) -> None:
        calls.append(args)
        if len(calls) == 1:
            raise BackendError("lost the connection")
        real(*args)

    monkeypatch.setattr(store, "_replace_documents", crash_once)
    with pytest.raises(BackendError):
        store.commit_generation("b1", "s1", "w1", gen, checksum="c", documents=docs, counters={}, now=NOW)
    assert store.get_source("b1", "s1").live_generation == gen  # the flip itself happened
    assert store.list_documents("b1", "s1") == []
    # the retry no longer holds a lease, but recognises its own flip
    assert store.commit_generation("b1", "s1", "w1", gen, checksum="c", documents=docs, counters={}, now=NOW) == 1
    assert [d.id for d in store.list_documents("b1", "s1")] == ["d1"]
    # a different writer is still refused
    with pytest.raises(Conflict):
        store.commit_generation("b1", "s1", "w2", gen, checksum="c", documents=[], counters={}, now=NOW)


def test_client_errors_are_translated(store):
    missing = DynamoDbStateStore("no-such-table", client=store.client)
    with pytest.raises(BackendError) as info:
        missing.get_source("b1", "s1")
    assert isinstance(info.value.__cause__, ClientError)
    assert info.value.details["awsCode"] == "ResourceNotFoundException"


def test_throttling_and_transaction_conflicts():
    client = boto3.client("dynamodb", region_name=AWS_REGION, aws_access_key_id="x", aws_secret_access_key="x")
    store = DynamoDbStateStore(TABLE, client=client)
    with Stubber(client) as stub:
        stub.add_client_error("get_item", service_error_code="ProvisionedThroughputExceededException",
                              http_status_code=400)
        with pytest.raises(BackendError) as info:
            store.get_bot("b1")
        assert info.value.details == {"awsCode": "ProvisionedThroughputExceededException"}
        stub.add_client_error("put_item", service_error_code="TransactionConflictException", http_status_code=400)
        with pytest.raises(Conflict):
            store.put_agent(Agent(id="a", bot="b1"))


def test_number_conversion_is_exact():
    value = {"a": 0.1 + 0.2, "b": [1, 2.5, {"c": 1e-7}], "d": True, "e": None, "f": "x"}
    stored = to_dynamo(value)
    assert stored["a"] == Decimal("0.30000000000000004") and stored["d"] is True
    assert from_dynamo(stored) == value
    assert from_dynamo(Decimal("3")) == 3 and isinstance(from_dynamo(Decimal("3")), int)
    for bad in (math.nan, math.inf):
        with pytest.raises(InvalidInput):
            to_dynamo({"x": bad})


def test_ids_cannot_reach_into_other_items(store):
    with pytest.raises(InvalidInput):
        store.put_source(Source(id="s1#DOC#d1", bot="b1", type="pack", name="P"))
    store.put_source(Source(id="s1", bot="b1", type="pack", name="P"))
    store.acquire_lease("b1", "s1", "w1", NOW, 120)
    gen = store.begin_generation("b1", "s1", "w1")
    store.commit_generation("b1", "s1", "w1", gen, checksum="c", now=NOW, counters={},
                            documents=[Document(id="d1", bot="b1", source_id="s1", title="T", path="a.md")])
    assert store.get_source("b1", "s1#DOC#d1") is None  # a document item is not a source
    assert not store.acquire_lease("b1", "s1#DOC#d1", "w1", NOW, 120)
    with pytest.raises(NotFound):
        store.update_source("b1", "s1#DOC#d1", name="x")
    assert "leaseOwner" not in raw(store, "BOT#b1", "DOC#s1#d1")
