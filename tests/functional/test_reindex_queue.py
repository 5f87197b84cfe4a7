# The fixtures are imported from another test module, so test arguments shadow them by design.
# ruff: noqa: F811
"""The nightly reindex through the bounded queue: queued per source, started only while fewer
than ``KB_MAX_RUNNING_REFRESHES`` executions run (moto: SQS, Step Functions, DynamoDB)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from knowledge.model import Source
from knowledge.settings import (
    ENV_BUCKET,
    ENV_MAX_RUNNING_REFRESHES,
    ENV_REINDEX_QUEUE,
    ENV_SEARCH_ENDPOINT,
    ENV_TABLE,
)
from knowledge.wiring import AwsSettings, build_aws_services
from tests.functional.test_handlers import (  # noqa: F401 - fixtures
    BOT,
    REGION,
    Aws,
    CountingSession,
    aws,
    invoke,
)
from tests.lambda_support import event

SOURCES = 5
MAX_RUNNING = 2


@pytest.fixture
def queued(aws: Aws, monkeypatch: pytest.MonkeyPatch) -> Any:
    import boto3

    sqs = boto3.client("sqs", region_name=REGION)
    url = sqs.create_queue(QueueName="kb-reindex")["QueueUrl"]
    monkeypatch.setenv(ENV_REINDEX_QUEUE, url)
    monkeypatch.setenv(ENV_MAX_RUNNING_REFRESHES, str(MAX_RUNNING))
    now = aws.services.clock.now()
    for n in range(SOURCES):
        aws.services.state.put_source(Source(id=f"fact{n}", bot=BOT, type="fact", name=f"Fact {n}", status="ready",
                                             config={"key": f"k{n}", "value": "v"}, created_at=now, updated_at=now))
    aws.services.state.put_source(Source(id="off", bot=BOT, type="fact", name="Off", status="disabled",
                                         config={"key": "k", "value": "v"}, created_at=now, updated_at=now))
    # the scheduler's services with the queue configured: the composition root builds the queue;
    # its SQS client is deferred here (and counted), so a run that used any other client shows
    session = CountingSession()
    scheduler = aws.handlers["scheduler"]
    eager = tuple(name for name in scheduler.EAGER if name != "sqs")
    monkeypatch.setattr(scheduler, "SERVICES", build_aws_services(
        session=session, search_client=aws.services.index.client, embedder=False, eager=eager))
    assert session.created["sqs"] == 0
    return sqs, url, session


def running(aws: Aws) -> list[dict[str, Any]]:
    return aws.sfn.list_executions(stateMachineArn=aws.state_machine_arn, statusFilter="RUNNING")["executions"]


def waiting(sqs: Any, url: str) -> int:
    attributes = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages"])
    return int(attributes["Attributes"]["ApproximateNumberOfMessages"])


def test_nightly_reindex_starts_no_more_than_the_bound_and_ticks_drain_the_rest(aws: Aws, queued: Any) -> None:
    sqs, url, session = queued
    result = invoke(aws, "scheduler", event("scheduler_reindex_all.json"))
    assert result == {"bots": 1, "started": MAX_RUNNING}
    assert len(running(aws)) == MAX_RUNNING and waiting(sqs, url) == SOURCES - MAX_RUNNING

    # nothing finished: a tick starts nothing more
    assert "reindexed" not in invoke(aws, "scheduler", event("scheduler_tick.json"))
    assert len(running(aws)) == MAX_RUNNING

    seen: set[str] = set()
    for _ in range(SOURCES):
        for execution in running(aws):
            seen.add(json.loads(aws.sfn.describe_execution(executionArn=execution["executionArn"])["input"])
                     ["sourceId"])
            aws.sfn.stop_execution(executionArn=execution["executionArn"])  # finished
        invoke(aws, "scheduler", event("scheduler_tick.json"))
        assert len(running(aws)) <= MAX_RUNNING
    assert seen == {f"fact{n}" for n in range(SOURCES)}  # every enabled source, the disabled one not
    assert waiting(sqs, url) == 0
    inputs = [json.loads(aws.sfn.describe_execution(executionArn=e["executionArn"])["input"])
              for e in aws.sfn.list_executions(stateMachineArn=aws.state_machine_arn)["executions"]]
    assert sorted(i["sourceId"] for i in inputs) == sorted(seen) and {i["reason"] for i in inputs} == {"reindex"}
    # every run used the one SQS client of the composition root
    assert session.created["sqs"] == 1


def test_a_retried_nightly_run_queues_duplicates_that_start_nothing(aws: Aws, queued: Any) -> None:
    sqs, url, _session = queued
    invoke(aws, "scheduler", event("scheduler_reindex_all.json"))
    invoke(aws, "scheduler", event("scheduler_reindex_all.json"))  # Lambda's async retry, same day
    for _ in range(2 * SOURCES):
        for execution in running(aws):
            aws.sfn.stop_execution(executionArn=execution["executionArn"])
        invoke(aws, "scheduler", event("scheduler_tick.json"))
    assert waiting(sqs, url) == 0
    assert len(aws.sfn.list_executions(stateMachineArn=aws.state_machine_arn)["executions"]) == SOURCES


def test_the_queue_settings_are_read_at_the_cold_start_and_a_bad_bound_fails_it() -> None:
    base = {ENV_TABLE: "t", ENV_BUCKET: "b", ENV_SEARCH_ENDPOINT: "search.example"}
    assert AwsSettings.from_env(base).reindex_queue_url is None
    configured = AwsSettings.from_env({**base, ENV_REINDEX_QUEUE: "https://sqs/q", ENV_MAX_RUNNING_REFRESHES: "3"})
    assert (configured.reindex_queue_url, configured.max_running_refreshes) == ("https://sqs/q", 3)
    with pytest.raises(ValueError, match=f"{ENV_MAX_RUNNING_REFRESHES} must be at least 1"):
        AwsSettings.from_env({**base, ENV_MAX_RUNNING_REFRESHES: "0"})
    with pytest.raises(ValueError, match=f"{ENV_MAX_RUNNING_REFRESHES} must be an integer"):
        AwsSettings.from_env({**base, ENV_MAX_RUNNING_REFRESHES: "many"})
