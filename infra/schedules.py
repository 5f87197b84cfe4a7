"""EventBridge rules: the per-minute tick, the nightly reindex and S3 pack drops."""

from __future__ import annotations

from aws_cdk import Duration
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_s3 as s3
from constructs import Construct

from infra.storage import PACKS_PREFIX

TICK_PAYLOAD = {"action": "tick"}
REINDEX_PAYLOAD = {"action": "reindex_all"}


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
        scheduler: lambda_.IFunction,
        ingest: lambda_.IFunction,
        bucket: s3.IBucket,
        nightly_hour_utc: int,
    ) -> None:
        super().__init__(scope, construct_id)
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
                targets.LambdaFunction(ingest, max_event_age=Duration.hours(2), retry_attempts=8)
            ],
        )
