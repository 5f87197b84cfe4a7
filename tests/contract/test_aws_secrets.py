"""Bots' secrets on AWS (moto): a provider key and an upstream token go to Secrets Manager,
one secret per bot and purpose; the settings item keeps only references; reads come through
Powertools Parameters' cache; a changed secret is read fresh at once, a removed one deleted."""

from __future__ import annotations

import json
from typing import Any

import boto3
import pytest

from knowledge.adapters.aws.dynamodb_state import DynamoDbStateStore
from knowledge.adapters.aws.dynamodb_table import SORT_KEY, create_table
from knowledge.adapters.aws.secrets import EMBEDDER_KEY, UPSTREAM_TOKEN, SecretVault
from knowledge.api.models import SettingsPatch
from knowledge.api.settings import apply_settings
from knowledge.api.views import settings_json
from knowledge.errors import BackendError
from knowledge.model import BotSettings

REGION = "us-east-1"
KEY = "sk-live-4f9a0c2b7e1d"
TOKEN = "upstream-token-8c1e5d"
PREFIX = "KnowledgeStack/bots"


class CountingClient:
    """The Secrets Manager client, counting the secret reads that reach it."""

    def __init__(self, inner: Any):
        self.inner, self.reads = inner, 0

    def get_secret_value(self, **kwargs: Any) -> Any:
        self.reads += 1
        return self.inner.get_secret_value(**kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


@pytest.fixture
def table(aws: None) -> Any:
    client = boto3.client("dynamodb", region_name=REGION)
    create_table(client, "kb-table")
    return client


def store(table: Any) -> tuple[DynamoDbStateStore, CountingClient]:
    secrets = CountingClient(boto3.client("secretsmanager", region_name=REGION))
    return DynamoDbStateStore("kb-table", client=table, secrets=SecretVault(PREFIX, client=secrets)), secrets


def with_secrets(bot: str = "acme") -> BotSettings:
    return BotSettings(bot=bot, embedder="openai",
                       embedder_options={"baseUrl": "https://embed.example/v1", "apiKey": KEY, "model": "m"},
                       upstream={"url": "https://kb.example", "bot": "default", "token": TOKEN})


def raw_item(table: Any, bot: str) -> str:
    [item] = [i for i in table.scan(TableName="kb-table")["Items"]
              if i[SORT_KEY] == {"S": "SETTINGS"} and i.get("bot") == {"S": bot}]
    return json.dumps(item)


def test_the_item_holds_references_and_the_secrets_are_one_per_bot_and_purpose(table: Any) -> None:
    state, _ = store(table)
    state.put_bot(with_secrets())
    stored = raw_item(table, "acme")
    assert KEY not in stored and TOKEN not in stored
    assert f"{PREFIX}/acme/{EMBEDDER_KEY}" in stored and f"{PREFIX}/acme/{UPSTREAM_TOKEN}" in stored
    sm = boto3.client("secretsmanager", region_name=REGION)
    assert sm.get_secret_value(SecretId=f"{PREFIX}/acme/{EMBEDDER_KEY}")["SecretString"] == KEY
    assert sm.get_secret_value(SecretId=f"{PREFIX}/acme/{UPSTREAM_TOKEN}")["SecretString"] == TOKEN
    read = state.get_bot("acme")
    assert read.embedder_options["apiKey"] == KEY and read.upstream is not None and read.upstream["token"] == TOKEN
    # the API shows whether they are set, never what they are
    shown = json.dumps(settings_json(read))
    assert KEY not in shown and TOKEN not in shown
    assert settings_json(read)["embedderOptions"]["apiKeySet"] is True


def test_reads_are_cached_and_a_changed_secret_is_read_fresh_at_once(table: Any) -> None:
    writer, _ = store(table)
    writer.put_bot(with_secrets())
    reader, counted = store(table)  # another warm function
    for _ in range(5):
        assert reader.get_bot("acme").embedder_options["apiKey"] == KEY
    assert counted.reads == 2  # one per secret, then the cache
    # an unchanged value writes no new version (a PATCH of the floor, say)
    before = raw_item(table, "acme")
    floor, _ = apply_settings(writer.get_bot("acme"), SettingsPatch.model_validate({"floor": 0.3}))
    writer.put_bot(floor)
    assert json.loads(raw_item(table, "acme"))["embedderOptions"] == json.loads(before)["embedderOptions"]
    # a new key: the reader sees it at its next read, not after the cache's max age
    rotated, _ = apply_settings(writer.get_bot("acme"), SettingsPatch.model_validate(
        {"embedderOptions": {"baseUrl": "https://embed.example/v1", "apiKey": "sk-live-rotated", "model": "m"}}))
    writer.put_bot(rotated)
    assert reader.get_bot("acme").embedder_options["apiKey"] == "sk-live-rotated"


def test_a_removed_secret_is_deleted_and_another_bot_s_is_kept(table: Any) -> None:
    state, _ = store(table)
    state.put_bot(with_secrets("acme"))
    state.put_bot(with_secrets("other"))
    without, _ = apply_settings(state.get_bot("acme"), SettingsPatch.model_validate({"upstream": None}))
    state.put_bot(without)
    names = {s["Name"] for s in boto3.client("secretsmanager", region_name=REGION).list_secrets()["SecretList"]}
    assert f"{PREFIX}/acme/{UPSTREAM_TOKEN}" not in names
    assert {f"{PREFIX}/acme/{EMBEDDER_KEY}", f"{PREFIX}/other/{UPSTREAM_TOKEN}"} <= names
    assert state.get_bot("acme").upstream is None
    assert state.get_bot("other").upstream["token"] == TOKEN  # type: ignore[index]


def test_a_reference_without_a_vault_is_an_error_not_a_leak(table: Any) -> None:
    state, _ = store(table)
    state.put_bot(with_secrets())
    plain = DynamoDbStateStore("kb-table", client=table)
    with pytest.raises(BackendError):
        plain.get_bot("acme")


def test_a_bad_prefix_is_refused() -> None:
    with pytest.raises(ValueError):
        SecretVault("kb bots", client=None)
