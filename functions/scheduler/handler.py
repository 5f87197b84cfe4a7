"""``scheduler``: EventBridge schedules.

* ``{"action": "tick"}`` (every minute): requeue sources whose worker died (expired lease;
  metric ``LeaseReaped``), start the refresh of every due source and drain the reindex queue;
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
from knowledge.refresh import leases, scheduling
from knowledge.schedule import runnable
from knowledge.settings import METRIC_LEASE_REAPED
from knowledge.wiring import build_aws_services

logger, tracer, metrics = powertools()
#: clients created at the cold start: what ticks and the nightly reindex use (SQS only when a
#: reindex queue is configured); S3 is created when the nightly reindex syncs packs
#: (knowledge.wiring.Lazy)
EAGER = ("dynamodb", "stepfunctions", "sqs")
SERVICES = build_aws_services(embedder=False, eager=EAGER)


def tick() -> dict[str, Any]:
    reaped = leases.release_expired_leases(SERVICES)
    if reaped:
        metrics.add_metric(name=METRIC_LEASE_REAPED, unit=MetricUnit.Count, value=len(reaped))
    started = scheduling.start_due_refreshes(SERVICES, runnable)
    queue = SERVICES.reindex_queue
    drained = queue.drain() if queue is not None else []
    out: dict[str, Any] = {"reaped": [f"{s.bot}/{s.id}" for s in reaped], "started": [job["id"] for job in started]}
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
        result = tick()
    elif action == "reindex_all":
        result = reindex_all()
    else:
        raise InvalidInput(f"unknown scheduler action {action!r}")
    logger.info("scheduler run", extra={"action": action, **{k: len(v) if isinstance(v, list) else v
                                                              for k, v in result.items()}})
    return result
