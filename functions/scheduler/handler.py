"""``scheduler``: EventBridge schedules.

* ``{"action": "tick"}`` (every minute): requeue sources whose worker died (expired lease;
  metric ``LeaseReaped``) and start the refresh of every due source;
* ``{"action": "reindex_all"}`` (nightly): start a refresh of every enabled source of every
  bot (unchanged content ends in a checksum skip).

Refreshes start through the Step Functions workflow with deterministic execution names, so
an overlapping tick starts nothing twice.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext
from wrapt import register_post_import_hook

from knowledge.errors import InvalidInput
from knowledge.model import Source
from knowledge.refresh import stages
from knowledge.settings import METRIC_LEASE_REAPED
from knowledge.wiring import build_aws_services

logger = Logger()
# X-Ray traces every AWS SDK call, and the OpenSearch client's HTTP (requests) from the
# moment something imports it: tracing alone never imports it
tracer = Tracer(patch_modules=("botocore",))
register_post_import_hook(lambda _: tracer.patch(["requests"]), "requests")
metrics = Metrics()
#: clients created at the cold start: what ticks and the nightly reindex use. They never
#: need the index or S3; those would be created on first use (knowledge.wiring.Lazy)
EAGER = ("dynamodb", "stepfunctions")
SERVICES = build_aws_services(embedder=False, eager=EAGER)


def runnable(source: Source) -> bool:
    from knowledge.refresh.reindex import REFRESHABLE  # the refresh pipeline is not needed to start

    return source.type in REFRESHABLE


def tick() -> dict[str, Any]:
    reaped = stages.release_expired_leases(SERVICES)
    if reaped:
        metrics.add_metric(name=METRIC_LEASE_REAPED, unit=MetricUnit.Count, value=len(reaped))
    started = stages.start_due_refreshes(SERVICES, runnable)
    return {"reaped": [f"{s.bot}/{s.id}" for s in reaped], "started": [job["id"] for job in started]}


def reindex_all() -> dict[str, Any]:
    jobs = [SERVICES.workflow.start_reindex(bot) for bot in SERVICES.state.list_bots()]
    return {"bots": len(jobs), "started": sum(int(j.get("started", 0)) for j in jobs)}


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
