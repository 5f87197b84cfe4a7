"""``ingest``: the refresh workflow's tasks, and S3 pack drops.

Two kinds of event:

* a Step Functions task ``{"action", "botId", "sourceId", "executionName", ...}`` with
  ``action`` one of ``take_lease`` (-> ``{"acquired", "sourceType", "generation", ...}``),
  ``list_documents`` (-> ``{"batches": [...]}``), ``process_batch``, ``commit`` and ``fail``;
  the execution name is the lease owner;
* the EventBridge S3 "Object Created" event of ``packs/<slug>.ndjson.gz``: refresh every pack
  source of every bot using that pack;
* the same event for ``incoming/<bot>/<source>`` (a presigned upload): the direct upload's
  checks, then the file source's refresh is queued (``knowledge.lifecycle.uploads``).

Project errors become the exceptions the state machine retries (``RateLimited``) or catches
(``RefreshError``); see ``knowledge.refresh.workflow_errors``.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from knowledge.entry.observability import powertools
from knowledge.errors import InvalidInput, KnowledgeError
from knowledge.refresh import batches, finish, leases, packsync, workflow_errors
from knowledge.settings import METRIC_REFRESH_FAILED
from knowledge.sources.base import INCOMING_PREFIX
from knowledge.wiring import build_aws_services

logger, tracer, metrics = powertools()
#: clients created at the cold start: what every workflow task uses. Step Functions only
#: serves S3 pack drops, and the index and Bedrock only the batches and commits of content that
#: changed (a scheduled or nightly refresh of unchanged content, a pack drop or an upload's
#: arrival never touch them): each is created by the first invocation that needs it
#: (knowledge.wiring.Lazy)
EAGER = ("dynamodb", "s3")
SERVICES = build_aws_services(eager=EAGER)


def run_task(event: dict[str, Any]) -> dict[str, Any]:
    bot, source_id, owner = str(event["botId"]), str(event["sourceId"]), str(event["executionName"])
    action = event.get("action")
    logger.append_keys(bot=bot, source_id=source_id, execution=owner, action=action)
    job = event.get("job") or {}
    if action == "take_lease":
        force = bool((event.get("input") or {}).get("force", False))
        return leases.take_lease(SERVICES, bot, source_id, owner, force=force)
    if action == "list_documents":
        return batches.list_documents(SERVICES, bot, source_id, owner, job)
    if action == "process_batch":
        return batches.process_batch(SERVICES, bot, source_id, owner, job, event["batch"])
    if action == "commit":
        return finish.commit(SERVICES, bot, source_id, owner, job)
    if action == "fail":
        result = finish.fail(SERVICES, bot, source_id, owner, event.get("error"), event.get("state"))
        logger.warning("refresh failed", extra={"error_code": result["errorCode"], "status": result["status"]})
        if result["status"] == "failed":
            metrics.add_metric(name=METRIC_REFRESH_FAILED, unit=MetricUnit.Count, value=1)
        return result
    raise InvalidInput(f"unknown ingest action {action!r}")


def pack_dropped(event: dict[str, Any]) -> dict[str, Any]:
    detail = event.get("detail") or {}
    key = str((detail.get("object") or {}).get("key") or "")
    slug = packsync.pack_slug_of_key(key)
    if slug is None:
        logger.info("ignored object outside packs/<slug>.ndjson.gz", extra={"key": key[:200]})
        return {"slug": None, "started": []}
    etag = str((detail.get("object") or {}).get("etag") or detail.get("sequencer") or event.get("id") or "")
    started = packsync.start_pack_refreshes(SERVICES, slug, etag)
    logger.info("pack dropped", extra={"slug": slug, "refreshes": len(started)})
    return {"slug": slug, "started": started}


def upload_arrived(event: dict[str, Any]) -> dict[str, Any]:
    from knowledge.lifecycle.uploads import take_incoming  # the lifecycle: not on the workflow's path

    obj = (event.get("detail") or {}).get("object") or {}
    size = obj.get("size")
    result = take_incoming(SERVICES, str(obj.get("key") or ""), int(size) if isinstance(size, int) else None)
    logger.info("presigned upload", extra={k: v for k, v in result.items() if k != "key"})
    return result


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    if event.get("source") == "aws.s3" and event.get("detail-type") == "Object Created":
        key = str(((event.get("detail") or {}).get("object") or {}).get("key") or "")
        return upload_arrived(event) if key.startswith(INCOMING_PREFIX) else pack_dropped(event)
    try:
        return run_task(event)
    except KnowledgeError as exc:
        raise workflow_errors.workflow_error(exc) from exc
