"""``scheduler``: EventBridge schedules.

* ``{"action": "tick"}`` (every minute): requeue sources whose worker died (expired lease;
  metric ``LeaseReaped``), start the refresh of every due source, then relearn the
  corpus-learned rescue model of each bot whose live corpus moved and none of whose sources is
  being indexed (``rescue_build.rebuild_settled``: what ``kb serve`` does when its queue
  drains). Rebuilds start only within the first ``RESCUE_WINDOW_SECONDS`` of a tick and while
  ``RESCUE_RESERVE_MS`` of the invocation remain; a bot left over is rebuilt by a later tick;
* ``{"action": "reindex_all"}`` (nightly): refresh every enabled source of every bot
  (unchanged content ends in a checksum skip). With a reindex queue configured
  (``KB_REINDEX_QUEUE_URL``, as the stack does; the composition root builds it) the refreshes
  are queued and started only while fewer than ``KB_MAX_RUNNING_REFRESHES`` executions run, by
  this run and each tick after it; without one they all start at once.

Refreshes start through the Step Functions workflow with deterministic execution names, so
an overlapping tick starts nothing twice.
"""

from __future__ import annotations

import time
from typing import Any

from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from knowledge.entry.observability import powertools
from knowledge.errors import InvalidInput
from knowledge.refresh import leases, rescue_build, scheduling
from knowledge.schedule import runnable
from knowledge.settings import METRIC_LEASE_REAPED
from knowledge.wiring import build_aws_services

logger, tracer, metrics = powertools()
#: clients created at the cold start: what ticks and the nightly reindex use (SQS only when a
#: reindex queue is configured). The index and S3 are needed only when a rescue model is
#: rebuilt: created then (knowledge.wiring.Lazy)
EAGER = ("dynamodb", "stepfunctions", "sqs")
SERVICES = build_aws_services(embedder=False, eager=EAGER)
#: a tick starts rescue rebuilds during its first seconds only, so that it usually ends near
#: the next tick; one rebuild may run on into the function's timeout (infra: 10 minutes)
RESCUE_WINDOW_SECONDS = 45.0
#: ...and only while this much of the invocation remains (100k passages of real text: ~1 minute)
RESCUE_RESERVE_MS = 120_000


def tick(context: LambdaContext | None = None) -> dict[str, Any]:
    began = time.monotonic()
    reaped = leases.release_expired_leases(SERVICES)
    if reaped:
        metrics.add_metric(name=METRIC_LEASE_REAPED, unit=MetricUnit.Count, value=len(reaped))
    started = scheduling.start_due_refreshes(SERVICES, runnable)
    queue = SERVICES.reindex_queue
    drained = queue.drain() if queue is not None else []

    def keep_going() -> bool:
        remaining = context.get_remaining_time_in_millis() if context is not None else RESCUE_RESERVE_MS
        return time.monotonic() - began < RESCUE_WINDOW_SECONDS and remaining >= RESCUE_RESERVE_MS

    # a refresh started just now has not taken its lease yet: its bot waits for it to finish
    rescued = rescue_build.rebuild_settled(SERVICES, busy={str(job.get("bot")) for job in started},
                                           keep_going=keep_going)
    out: dict[str, Any] = {"reaped": [f"{s.bot}/{s.id}" for s in reaped], "started": [job["id"] for job in started],
                           "rescued": rescued}
    if drained:
        out["reindexed"] = [job["id"] for job in drained]
    return out


def reindex_all() -> dict[str, Any]:
    bots = SERVICES.state.list_bots()
    queue = SERVICES.reindex_queue
    if queue is None:
        workflow = SERVICES.require_workflow()
        jobs = [workflow.start_reindex(bot) for bot in bots]
        return {"bots": len(jobs), "started": sum(int(j.get("started", 0)) for j in jobs)}
    # one name per source and day: a retried nightly invocation queues duplicates, which start nothing
    token = time.strftime("%Y-%m-%d", time.gmtime(SERVICES.clock.now()))
    queued = sum(int(queue.enqueue(bot, token)["queued"]) for bot in bots)
    started = queue.drain()
    logger.info("reindex queued", extra={"queued": queued, "started_now": len(started)})
    return {"bots": len(bots), "started": len(started)}


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    action = event.get("action")
    if action == "tick":
        result = tick(context)
    elif action == "reindex_all":
        result = reindex_all()
    else:
        raise InvalidInput(f"unknown scheduler action {action!r}")
    logger.info("scheduler run", extra={"action": action, **{k: len(v) if isinstance(v, list) else v
                                                              for k, v in result.items()}})
    return result
