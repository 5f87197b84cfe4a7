"""``admin_api``: every knowledge and agent route but retrieval, MCP over HTTP (``POST /mcp``:
the MCP SDK's stateless streamable HTTP transport) and ``GET /openapi.json`` (API Gateway
proxy events).

Routes go through the same ``dispatch`` as the embedded server (authentication, bot and
scope checks, the error shape); uploads arrive base64-encoded.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from knowledge.api.http import Response
from knowledge.api.routes import dispatch
from knowledge.entry.apigateway import event_response, mcp_event_response, request_from_event
from knowledge.entry.observability import powertools
from knowledge.wiring import build_aws_services

logger, tracer, metrics = powertools()
#: clients created at the cold start: what every route uses. The index, S3, Step Functions
#: and Bedrock are created by the first route that needs each (knowledge.wiring.Lazy)
EAGER = ("dynamodb",)
SERVICES = build_aws_services(eager=EAGER)

MCP_PATH = "/mcp"


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    request = request_from_event(event)
    if isinstance(request, Response):
        response = request
    elif request.path.rstrip("/") == MCP_PATH:
        if request.method == "POST":  # stateless: no GET stream, no DELETE of a session
            return mcp_event_response(SERVICES, event, context)
        response = Response(405, {"error": {"code": "method_not_allowed", "message": "MCP takes POST"}},
                            {"Allow": "POST"})
    else:
        response = dispatch(SERVICES, request)
    return event_response(response)
