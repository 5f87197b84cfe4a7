"""API Gateway (REST API, Lambda proxy integration) events <-> the transport-neutral
``Request``/``Response`` of :mod:`knowledge.api.http`, plus MCP over HTTP for ``POST /mcp``.

The route code never sees an event: ``admin_api`` and ``retrieve`` convert here and call
``knowledge.api.routes.dispatch``, exactly as the embedded server does with its sockets.
Binary bodies (uploads under the API's binary media types) arrive base64-encoded.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping
from typing import Any

from ...api.http import MAX_BODY_BYTES, Request, Response
from ...errors import Code

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


# -- MCP over HTTP (stateless JSON-RPC; read-only knowledge tools) ------------------------------

MCP_PROTOCOL_VERSION = "2025-06-18"
_TOOLS: tuple[dict[str, Any], ...] = (
    {
        "name": "list_knowledge_sources",
        "description": "The bot's knowledge sources with status and passage counts (no content).",
        "inputSchema": {"type": "object", "properties": {}, "additionalProperties": False},
        "annotations": {"readOnlyHint": True},
    },
    {
        "name": "get_knowledge_source_status",
        "description": "Status, attempts, counters, error code and lastIndexedAt of one source.",
        "inputSchema": {
            "type": "object",
            "properties": {"source_id": {"type": "string"}},
            "required": ["source_id"],
            "additionalProperties": False,
        },
        "annotations": {"readOnlyHint": True},
    },
    {
        "name": "test_knowledge_retrieval",
        "description": "What the bot's agents would retrieve for a question (rate limited).",
        "inputSchema": {
            "type": "object",
            "properties": {
                "q": {"type": "string"},
                "audience": {"type": "string", "enum": ["customer", "public", "operator"]},
                "agent_id": {"type": ["string", "null"]},
            },
            "required": ["q"],
            "additionalProperties": False,
        },
        "annotations": {"readOnlyHint": True},
    },
)


def mcp_response(services: Any, request: Request) -> Response:
    """Answer one MCP JSON-RPC message (or batch) sent to ``POST /mcp``. The caller's bearer
    token is the tools' token, so each tool call is authorised like the route it wraps."""
    from ...embedded.mcp_server import SERVER_NAME, KnowledgeTools, ToolFailure

    try:
        message = json.loads(request.body or b"null")
    except (UnicodeDecodeError, ValueError, RecursionError):
        return Response(400, {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "parse error"}})
    auth = request.header("authorization") or ""
    scheme, _, value = auth.partition(" ")
    tools = KnowledgeTools(services, value.strip() if scheme.lower() == "bearer" else None)

    def call(tool: str, args: dict[str, Any]) -> dict[str, Any]:
        handlers = {
            "list_knowledge_sources": lambda: tools.list_knowledge_sources(),
            "get_knowledge_source_status": lambda: tools.get_knowledge_source_status(str(args.get("source_id", ""))),
            "test_knowledge_retrieval": lambda: tools.test_knowledge_retrieval(
                str(args.get("q", "")), str(args.get("audience") or "customer"), args.get("agent_id")),
        }
        if tool not in handlers:
            raise KeyError(tool)
        try:
            result = handlers[tool]()
        except ToolFailure as exc:
            return {"content": [{"type": "text", "text": str(exc)}], "isError": True}
        return {"content": [{"type": "text", "text": json.dumps(result, ensure_ascii=False)}],
                "structuredContent": result, "isError": False}

    def answer(msg: Any) -> dict[str, Any] | None:
        if not isinstance(msg, dict) or msg.get("jsonrpc") != "2.0" or not isinstance(msg.get("method"), str):
            return {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "invalid request"}}
        if "id" not in msg:
            return None  # a notification (e.g. notifications/initialized): nothing to answer
        method, ident = msg["method"], msg["id"]
        raw_params = msg.get("params")
        params: dict[str, Any] = raw_params if isinstance(raw_params, dict) else {}
        if method == "initialize":
            result: dict[str, Any] = {"protocolVersion": MCP_PROTOCOL_VERSION,
                                      "capabilities": {"tools": {"listChanged": False}},
                                      "serverInfo": {"name": SERVER_NAME, "version": "0.1.0"}}
        elif method == "ping":
            result = {}
        elif method == "tools/list":
            result = {"tools": list(_TOOLS)}
        elif method == "tools/call":
            raw_args = params.get("arguments")
            args: dict[str, Any] = raw_args if isinstance(raw_args, dict) else {}
            try:
                result = call(str(params.get("name")), args)
            except KeyError:
                return {"jsonrpc": "2.0", "id": ident, "error": {"code": -32602, "message": "unknown tool"}}
        else:
            return {"jsonrpc": "2.0", "id": ident, "error": {"code": -32601, "message": "method not found"}}
        return {"jsonrpc": "2.0", "id": ident, "result": result}

    if isinstance(message, list):
        replies = [r for r in (answer(m) for m in message[:50]) if r is not None]
        return Response(200, replies) if replies else Response(202)
    reply = answer(message)
    return Response(200, reply) if reply is not None else Response(202)
