# The fixtures are imported from another test module, so test arguments shadow them by design.
# ruff: noqa: F811
"""The nightly reindex through the bounded queue: queued per source, started only while fewer
than ``KB_MAX_RUNNING_REFRESHES`` executions run (moto: SQS, Step Functions, DynamoDB)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from knowledge.model import Source
from knowledge.settings import ENV_MAX_RUNNING_REFRESHES, ENV_REINDEX_QUEUE
from tests.functional.test_handlers import BOT, REGION, Aws, aws, invoke  # noqa: F401 - fixtures
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
    return sqs, url


def running(aws: Aws) -> list[dict[str, Any]]:
    return aws.sfn.list_executions(stateMachineArn=aws.state_machine_arn, statusFilter="RUNNING")["executions"]


def waiting(sqs: Any, url: str) -> int:
    attributes = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages"])
    return int(attributes["Attributes"]["ApproximateNumberOfMessages"])


def test_nightly_reindex_starts_no_more_than_the_bound_and_ticks_drain_the_rest(aws: Aws, queued: Any) -> None:
    sqs, url = queued
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


def test_a_retried_nightly_run_queues_duplicates_that_start_nothing(aws: Aws, queued: Any) -> None:
    sqs, url = queued
    invoke(aws, "scheduler", event("scheduler_reindex_all.json"))
    invoke(aws, "scheduler", event("scheduler_reindex_all.json"))  # Lambda's async retry, same day
    for _ in range(2 * SOURCES):
        for execution in running(aws):
            aws.sfn.stop_execution(executionArn=execution["executionArn"])
        invoke(aws, "scheduler", event("scheduler_tick.json"))
    assert waiting(sqs, url) == 0
    assert len(aws.sfn.list_executions(stateMachineArn=aws.state_machine_arn)["executions"]) == SOURCES
