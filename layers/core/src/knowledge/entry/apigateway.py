"""API Gateway (REST API, Lambda proxy integration) events <-> the transport-neutral
``Request``/``Response`` of :mod:`knowledge.api.http`, plus MCP over HTTP for ``POST /mcp``.

The route code never sees an event: ``admin_api`` and ``retrieve`` convert here and call
``knowledge.api.routes.dispatch``, exactly as the embedded server does with its sockets.
Binary bodies (uploads under the API's binary media types) arrive base64-encoded.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from typing import Any

from ..api.http import MAX_BODY_BYTES, Request, Response
from ..errors import Code

JSON_TYPE = "application/json; charset=utf-8"


def request_from_event(event: Mapping[str, Any]) -> Request | Response:
    """The request an API Gateway proxy event carries, or the error ``Response`` to send
    when its body cannot be read (bad base64, too large)."""
    headers: dict[str, str] = {}
    for name, value in (event.get("headers") or {}).items():
        if value is not None:
            headers[str(name).lower()] = str(value)
    for name, values in (event.get("multiValueHeaders") or {}).items():
        if values and str(name).lower() not in headers:
            headers[str(name).lower()] = ", ".join(str(v) for v in values)
    query = {str(k): str(v) for k, v in (event.get("queryStringParameters") or {}).items() if v is not None}
    raw = event.get("body")
    body = b""
    if raw:
        if event.get("isBase64Encoded"):
            try:
                body = base64.b64decode(str(raw), validate=True)
            except (binascii.Error, ValueError):
                return _error(400, Code.INVALID_INPUT, "the body is not valid base64")
        else:
            body = str(raw).encode("utf-8")
    if len(body) > MAX_BODY_BYTES:
        return _error(413, Code.FILE_TOO_LARGE, "request body too large")
    return Request(
        method=str(event.get("httpMethod") or "GET").upper(),
        path=str(event.get("path") or "/"),
        headers=headers,
        query=query,
        body=body,
    )


def event_response(response: Response) -> dict[str, Any]:
    """A proxy integration result: JSON text body, the route's headers."""
    headers = {"Content-Type": JSON_TYPE, **response.headers}
    return {
        "statusCode": response.status,
        "headers": headers,
        "body": response.encoded().decode("utf-8"),
        "isBase64Encoded": False,
    }


def _error(status: int, code: str, message: str) -> Response:
    return Response(status, {"error": {"code": code, "message": message}})


# -- MCP over HTTP (the SDK's stateless streamable HTTP transport; read-only knowledge tools) -----


def mcp_event_response(services: Any, event: Mapping[str, Any], context: Any) -> dict[str, Any]:
    """Answer an MCP request sent to ``POST /mcp`` (an API Gateway proxy event) with the
    official SDK's streamable HTTP transport, stateless and in JSON: each invocation builds the
    three read-only tools for the caller's bearer token (so each call is authorised like the
    route it wraps) and runs the SDK's ASGI app through Mangum, the Lambda adapter for ASGI."""
    from mangum import Mangum
    from mcp.server.transport_security import TransportSecuritySettings

    from ..embedded.mcp_server import build_mcp_server

    headers = {str(k).lower(): str(v) for k, v in (event.get("headers") or {}).items() if v is not None}
    scheme, _, value = headers.get("authorization", "").partition(" ")
    token = value.strip() if scheme.lower() == "bearer" else ""
    server = build_mcp_server(services, token)
    app = server.streamable_http_app(
        stateless_http=True, json_response=True, max_request_body_size=MAX_BODY_BYTES,
        # the Host is API Gateway's: requests are authorised by their token, not by origin
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )
    result: dict[str, Any] = Mangum(app, lifespan="auto", api_gateway_base_path="/")(dict(event), context)
    return result
