"""Read-only MCP tools over stdio: ``kb mcp`` (reference 003, "API and MCP").

Three tools, each a call through the same route code the HTTP API runs (``dispatch``), so
the token, bot and scope checks, the rate limit and the JSON are the API's own:

- ``list_knowledge_sources``: the token's bot's sources, without their configuration;
- ``get_knowledge_source_status``: one source's status, attempts and counters;
- ``test_knowledge_retrieval``: the retrieval test (excerpts without ranking internals).

The token: ``KB_TOKEN`` in the server's environment (the usual way: the MCP client's
config sets it), or a ``token`` argument on a call, which wins. A token opens exactly one
bot, so no tool takes a bot id. Only routes with the ``knowledge:read`` scope are called:
no tool changes anything or returns raw document text beyond the retrieval excerpts.
"""

from __future__ import annotations

import json
import os
from typing import Any
from urllib.parse import quote

from ..api.auth import SCOPE_READ, authenticate
from ..api.http import Request
from ..api.routes import dispatch
from ..api.views import retrieval_test_json
from ..errors import KnowledgeError
from ..ports import Services

ENV_TOKEN = "KB_TOKEN"
SERVER_NAME = "kb-knowledge"


class ToolFailure(Exception):
    """A tool call answered with an API error: ``code: message``."""

    def __init__(self, code: str, message: str):
        super().__init__(f"{code}: {message}")
        self.code = code


class KnowledgeTools:
    """The tool bodies, transport-free (the MCP server below wraps them)."""

    #: the routes the tools may reach; every one of them needs only knowledge:read
    READ_ONLY = SCOPE_READ

    def __init__(self, services: Services, default_token: str | None = None):
        self.services = services
        self.default_token = default_token

    def _call(self, method: str, path: str, token: str | None, body: Any = None) -> Any:
        value = token or self.default_token
        if not value:
            raise ToolFailure("unauthorized", f"no token: set {ENV_TOKEN} or pass the token argument")
        header = f"Bearer {value}"
        try:
            bot = authenticate(self.services, header).bot
        except KnowledgeError as exc:
            raise ToolFailure(exc.code, exc.message) from exc
        request = Request(
            method=method,
            path=f"/api/bots/{quote(bot, safe='')}/knowledge{path}",
            headers={"authorization": header, "content-type": "application/json"},
            body=json.dumps(body).encode("utf-8") if body is not None else b"",
        )
        response = dispatch(self.services, request)
        if response.status >= 400:
            error = (response.body or {}).get("error", {}) if isinstance(response.body, dict) else {}
            raise ToolFailure(str(error.get("code", "error")), str(error.get("message", "request failed")))
        return response.body

    def list_knowledge_sources(self, token: str | None = None) -> dict[str, Any]:
        body = self._call("GET", "/sources", token)
        rows = []
        for source in body["sources"]:
            row = dict(source)
            row.pop("config", None)  # operator-written content stays out of tool output
            rows.append(row)
        return {"sources": rows}

    def get_knowledge_source_status(self, source_id: str, token: str | None = None) -> dict[str, Any]:
        if not isinstance(source_id, str) or not source_id.strip() or "/" in source_id:
            raise ToolFailure("invalid_input", "source_id must be a source id")
        result: dict[str, Any] = self._call("GET", f"/sources/{quote(source_id, safe='')}/index-status", token)
        return result

    def test_knowledge_retrieval(self, q: str, audience: str = "customer", agent_id: str | None = None,
                                 token: str | None = None) -> dict[str, Any]:
        body: dict[str, Any] = {"q": q, "audience": audience}
        if agent_id:
            body["agentId"] = agent_id
        result: dict[str, Any] = self._call("POST", "/retrieval-test", token, body)
        return retrieval_test_json(result)


def tool_error(code: str, message: str) -> Any:
    """A tool result that failed: ``code: message`` as text, ``{"error": {code, message}}``
    as structured content (the API's error shape)."""
    from mcp.types import CallToolResult, TextContent

    return CallToolResult(content=[TextContent(type="text", text=f"{code}: {message}")],
                          structured_content={"error": {"code": code, "message": message}}, is_error=True)


def _failure(exc: BaseException) -> tuple[str, str] | None:
    """(code, message) of a failed call: arguments that do not fit a tool's schema, or an API
    error; None for anything else (a crash, which the SDK reports without details)."""
    from pydantic import ValidationError

    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, ToolFailure):
            code, _, message = str(seen).partition(": ")
            return code, message
        if isinstance(seen, ValidationError):
            # the names of the arguments at fault, never the values sent (nor pydantic's prose)
            fields = sorted({".".join(str(part) for part in err["loc"]) or "arguments" for err in seen.errors()})
            kinds = sorted({"missing" if err["type"] == "missing" else "invalid" for err in seen.errors()})
            return "invalid_input", f"{' and '.join(kinds)} argument(s): {', '.join(fields)[:200]}"
        seen = seen.__cause__
    return None


def build_mcp_server(services: Services, token: str | None = None) -> Any:
    """An ``MCPServer`` (mcp SDK 2.x) exposing the three read-only tools. A failed call is a
    tool result with ``isError`` and a stable code: ``invalid_input`` for arguments that do
    not fit the tool's schema, ``unknown_field`` for an argument it does not take,
    ``unauthorized``, ``forbidden``, ``not_found``... from the API."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
    from mcp.types import ToolAnnotations

    class KnowledgeMCPServer(MCPServer):
        async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
            tool = self._tool_manager.get_tool(name)
            if tool is None:
                return tool_error("not_found", f"no tool named {name[:100]!r}")
            # a misspelt argument fails, as an unknown body field does over HTTP: ignoring
            # `Audience` would answer for the default audience instead of the one meant
            unknown = sorted(str(k) for k in arguments if k not in tool.parameters.get("properties", {}))
            if unknown:
                return tool_error("unknown_field", f"unknown argument(s): {', '.join(unknown)[:200]}")
            try:
                return await super().call_tool(name, arguments, context)
            except ToolError as exc:
                failure = None if isinstance(exc, UnexpectedToolError) else _failure(exc)
                if failure is None:
                    raise
                return tool_error(*failure)

    tools = KnowledgeTools(services, token if token is not None else os.environ.get(ENV_TOKEN) or None)
    server: Any = KnowledgeMCPServer(
        SERVER_NAME,
        log_level="WARNING",
        instructions="Read-only access to a bot's knowledge sources: list them, read one's indexing status, "
                     "and test what retrieval returns for a question. Nothing here changes a source.",
    )
    read_only = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True,
                                open_world_hint=False)

    def run(fn: Any, *args: Any, **kwargs: Any) -> dict[str, Any]:
        try:
            result: dict[str, Any] = fn(*args, **kwargs)
        except ToolFailure as exc:
            raise ToolError(str(exc)) from exc
        return result

    @server.tool(annotations=read_only)
    def list_knowledge_sources(token: str | None = None) -> dict[str, Any]:
        """List the bot's knowledge sources (heaviest first) with status, passages and error code."""
        return run(tools.list_knowledge_sources, token)

    @server.tool(annotations=read_only)
    def get_knowledge_source_status(source_id: str, token: str | None = None) -> dict[str, Any]:
        """One source's indexing status: attempts, documents and fragments processed, failures, lastIndexedAt."""
        return run(tools.get_knowledge_source_status, source_id, token)

    @server.tool(annotations=read_only)
    def test_knowledge_retrieval(q: str, audience: str = "customer", agent_id: str | None = None,
                                 token: str | None = None) -> dict[str, Any]:
        """The excerpts an agent would receive for question q (audience customer|public|operator)."""
        return run(tools.test_knowledge_retrieval, q, audience, agent_id, token)

    return server


def serve_stdio(services: Services, token: str | None = None) -> None:
    build_mcp_server(services, token).run("stdio")
