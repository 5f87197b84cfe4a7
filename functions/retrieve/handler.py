"""``retrieve``: ``POST .../knowledge/retrieve`` and ``.../retrieval-test`` (API Gateway proxy).

The event becomes a transport-neutral request for the same ``dispatch`` the embedded server
uses, which authenticates, authorises (bot + scope) and answers in the documented JSON. The
question's body is checked without pydantic (``knowledge.api.bodies``), so neither the cold
start nor the first question loads it.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from knowledge.api.http import Response
from knowledge.api.routes import dispatch
from knowledge.entry.apigateway import event_response, request_from_event
from knowledge.entry.observability import powertools
from knowledge.wiring import build_aws_services

logger, tracer, metrics = powertools()
#: clients created at the cold start: what answering uses. It never needs S3 or Step
#: Functions; they would be created on first use (knowledge.wiring.Lazy)
EAGER = ("dynamodb", "opensearch", "bedrock")
SERVICES = build_aws_services(eager=EAGER)


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    request = request_from_event(event)
    response = request if isinstance(request, Response) else dispatch(SERVICES, request)
    return event_response(response)
