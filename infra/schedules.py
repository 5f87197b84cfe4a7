"""EventBridge rules: the per-minute tick, the nightly reindex and S3 pack drops — and where
their failures go.

Two queues catch what would otherwise vanish, each watched by an alarm (``infra.monitoring``):

* ``EventDeadLetters``: events EventBridge could not hand to the function (throttled, function
  missing, permission lost) after its retry policy — every rule target has it and a policy;
* ``AsyncFailures``: the on-failure destination of every function EventBridge invokes
  (asynchronous invocations): an event the function accepted but failed on, after Lambda's own
  retries. The record holds the request payload and the error, enough to replay it.
"""

from __future__ import annotations

from aws_cdk import Duration, RemovalPolicy
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_destinations as destinations
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_sqs as sqs
from cdk_nag import NagSuppressions
from constructs import Construct

from infra.storage import INCOMING_PREFIX, PACKS_PREFIX

TICK_PAYLOAD = {"action": "tick"}
REINDEX_PAYLOAD = {"action": "reindex_all"}
#: failed events are kept this long in the two queues (the SQS maximum)
FAILED_EVENT_RETENTION = Duration.days(14)


def _failure_queue(scope: Construct, construct_id: str) -> sqs.Queue:
    return sqs.Queue(
        scope,
        construct_id,
        # SSE-SQS: EventBridge and Lambda destinations can write to it without a key grant
        encryption=sqs.QueueEncryption.SQS_MANAGED,
        enforce_ssl=True,
        retention_period=FAILED_EVENT_RETENTION,
        removal_policy=RemovalPolicy.DESTROY,
    )


#: a reindex message that failed to start this many times goes to the dead-letter queue
REINDEX_MAX_RECEIVES = 5


class ReindexQueue(Construct):
    """The bounded queue of the nightly reindex (``knowledge.adapters.aws.reindex_queue``):
    the scheduler queues one message per source and starts refreshes from it only while fewer
    than ``kb:reindexConcurrency`` executions run; a message that keeps failing moves to
    ``ReindexDeadLetters`` (alarmed)."""

    def __init__(self, scope: Construct, construct_id: str) -> None:
        super().__init__(scope, construct_id)
        self.dead_letters = _failure_queue(self, "ReindexDeadLetters")
        NagSuppressions.add_resource_suppressions(
            self.dead_letters,
            [
                {
                    "id": "AwsSolutions-SQS3",
                    "reason": "This queue is itself the dead-letter queue of the reindex queue, watched "
                    "by an alarm; nothing consumes it.",
                }
            ],
        )
        self.queue = sqs.Queue(
            self,
            "Queue",
            encryption=sqs.QueueEncryption.SQS_MANAGED,
            enforce_ssl=True,
            # a message received but not started (Step Functions throttled) is retried after this
            visibility_timeout=Duration.minutes(5),
            retention_period=Duration.days(1),
            dead_letter_queue=sqs.DeadLetterQueue(queue=self.dead_letters, max_receive_count=REINDEX_MAX_RECEIVES),
            removal_policy=RemovalPolicy.DESTROY,
        )


class KnowledgeSchedules(Construct):
    """* every minute -> scheduler ``{"action": "tick"}``: start due refreshes, reap expired leases;
    * nightly -> scheduler ``{"action": "reindex_all"}``;
    * S3 ``Object Created`` under ``packs/`` -> ingest, with the unmodified EventBridge event
      (``source == "aws.s3"``, bucket and key under ``detail``), so a real S3 event and the
      deployed one look the same to the handler.
    """

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        scheduler: lambda_.Function,
        ingest: lambda_.Function,
        bucket: s3.IBucket,
        nightly_hour_utc: int,
    ) -> None:
        super().__init__(scope, construct_id)
        self.dead_letters = _failure_queue(self, "EventDeadLetters")
        self.async_failures = _failure_queue(self, "AsyncFailures")
        for queue in (self.dead_letters, self.async_failures):
            NagSuppressions.add_resource_suppressions(
                queue,
                [
                    {
                        "id": "AwsSolutions-SQS3",
                        "reason": "This queue is itself a dead-letter queue (EventBridge target DLQ or "
                        "Lambda on-failure destination) watched by an alarm; nothing consumes it.",
                    }
                ],
            )

        # asynchronous invocations: Lambda retries, then the failed event goes to the queue.
        # A tick is superseded by the next one (no retry); the nightly run and pack drops retry.
        scheduler.configure_async_invoke(
            on_failure=destinations.SqsDestination(self.async_failures),
            max_event_age=Duration.hours(1),
            retry_attempts=0,
        )
        ingest.configure_async_invoke(
            on_failure=destinations.SqsDestination(self.async_failures),
            max_event_age=Duration.hours(2),
            retry_attempts=2,
        )

        self.tick = events.Rule(
            self,
            "EveryMinute",
            description="Start due refreshes and reap expired leases",
            schedule=events.Schedule.rate(Duration.minutes(1)),
            targets=[
                targets.LambdaFunction(
                    scheduler,
                    event=events.RuleTargetInput.from_object(TICK_PAYLOAD),
                    # a tick that cannot run within a minute is superseded by the next one
                    max_event_age=Duration.minutes(1),
                    retry_attempts=0,
                    dead_letter_queue=self.dead_letters,
                )
            ],
        )
        self.nightly = events.Rule(
            self,
            "Nightly",
            description="Reindex every bot",
            schedule=events.Schedule.cron(minute="0", hour=str(nightly_hour_utc)),
            targets=[
                targets.LambdaFunction(
                    scheduler,
                    event=events.RuleTargetInput.from_object(REINDEX_PAYLOAD),
                    max_event_age=Duration.hours(1),
                    retry_attempts=4,
                    dead_letter_queue=self.dead_letters,
                )
            ],
        )
        self.pack_drop = events.Rule(
            self,
            "PackDropped",
            description="A documentation pack landed under packs/: refresh the sources using it",
            event_pattern=events.EventPattern(
                source=["aws.s3"],
                detail_type=["Object Created"],
                detail={
                    "bucket": {"name": [bucket.bucket_name]},
                    "object": {"key": [{"prefix": PACKS_PREFIX}]},
                },
            ),
            targets=[
                targets.LambdaFunction(
                    ingest, max_event_age=Duration.hours(2), retry_attempts=8, dead_letter_queue=self.dead_letters
                )
            ],
        )
        self.upload_arrived = events.Rule(
            self,
            "UploadArrived",
            description="A presigned upload landed under incoming/: check it and queue its file source",
            event_pattern=events.EventPattern(
                source=["aws.s3"],
                detail_type=["Object Created"],
                detail={
                    "bucket": {"name": [bucket.bucket_name]},
                    "object": {"key": [{"prefix": INCOMING_PREFIX}]},
                },
            ),
            targets=[
                targets.LambdaFunction(
                    ingest, max_event_age=Duration.hours(2), retry_attempts=8, dead_letter_queue=self.dead_letters
                )
            ],
        )
        self.rules = {"EveryMinute": self.tick, "Nightly": self.nightly, "PackDropped": self.pack_drop,
                      "UploadArrived": self.upload_arrived}
