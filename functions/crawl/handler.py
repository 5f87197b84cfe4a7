"""``crawl``: one turn of a website source's crawl loop.

Task input ``{"botId", "sourceId", "executionName", "job", "crawl"}`` where ``crawl`` is the
previous turn's result (the first turn gets ``{"done": false, "waitSeconds": 0}``). Fetches
pages until shortly before the function's own timeout, stages them, heartbeats the lease
and returns ``{"done", "cursor", "waitSeconds", "pages", "failures"}``; the state machine
waits ``waitSeconds`` (the site's Crawl-delay) and calls again until ``done``.
"""

from __future__ import annotations

import time
from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from knowledge.entry.observability import powertools
from knowledge.errors import KnowledgeError
from knowledge.refresh import crawl_turn, workflow_errors
from knowledge.wiring import build_aws_services

logger, tracer, metrics = powertools()
#: clients created at the cold start: what a crawl turn uses. It never needs the index or
#: Step Functions; they would be created on first use (knowledge.wiring.Lazy)
EAGER = ("dynamodb", "s3")
SERVICES = build_aws_services(embedder=False, eager=EAGER)

#: time kept back from the function's timeout: the last fetch, staging, the reply
SAFETY_SECONDS = 30.0


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    bot, source_id, owner = str(event["botId"]), str(event["sourceId"]), str(event["executionName"])
    logger.append_keys(bot=bot, source_id=source_id, execution=owner)
    remaining = context.get_remaining_time_in_millis() / 1000.0
    deadline = time.monotonic() + max(5.0, remaining - SAFETY_SECONDS)
    cursor = (event.get("crawl") or {}).get("cursor")
    try:
        result = crawl_turn.crawl_pages(SERVICES, bot, source_id, owner, cursor, deadline=deadline)
    except KnowledgeError as exc:
        raise workflow_errors.workflow_error(exc) from exc
    logger.info("crawl turn", extra={"done": result.done, "pages": result.pages, "failures": result.failures})
    return result.as_dict()
