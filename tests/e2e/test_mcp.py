"""`kb mcp` driven through the official MCP SDK's stdio client: three read-only tools, the
token from KB_TOKEN or a tool argument, the API's scope and bot checks."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import anyio
import pytest

from tests.conftest import pack_bytes, page
from tests.e2e.support import run_kb

mcp_client = pytest.importorskip("mcp.client")
from mcp.client.stdio import StdioServerParameters  # noqa: E402

TOOLS = {"list_knowledge_sources", "get_knowledge_source_status", "test_knowledge_retrieval"}


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    root = tmp_path_factory.mktemp("mcp")
    data = root / "data"
    pack = root / "coinvault.ndjson.gz"
    pack.write_bytes(pack_bytes([
        page("help/deposit.md", "# Deposit\n\nDeposits of XMR need ten confirmations.", audience="CUSTOMER"),
        page("admin/sweep.md", "# Sweep\n\nThe sweep threshold moves funds to cold storage.", audience="OPERATOR"),
    ]))
    run_kb(data, "ingest", str(pack))

    def token(bot, scopes):
        return run_kb(data, "token", "create", "--bot", bot, "--scopes", scopes).strip().splitlines()[-1]

    return data, {"ro": token("default", "knowledge:read"), "wo": token("default", "knowledge:write"),
                  "other": token("other", "knowledge:read")}


def params(data: Path, token: str | None) -> StdioServerParameters:
    env = {"PYTHONPATH": os.environ.get("PYTHONPATH", ""), "KB_DATA": str(data)}
    if token:
        env["KB_TOKEN"] = token
    return StdioServerParameters(command=sys.executable, args=["-m", "knowledge.embedded.cli", "mcp"], env=env)


def payload(result) -> dict:
    assert not result.is_error, result.content
    if result.structured_content is not None:
        return result.structured_content
    return json.loads(result.content[0].text)


async def bounded(fn) -> None:
    with anyio.fail_after(90):  # a hung server fails the test instead of stalling the suite
        await fn()


def error_text(result) -> str:
    assert result.is_error
    return " ".join(getattr(c, "text", "") for c in result.content)


@pytest.mark.timeout(120)
def test_read_only_tools_over_stdio(setup):
    data, tokens = setup
    from mcp.client import Client

    async def main():
        async with Client(params(data, tokens["ro"]), read_timeout_seconds=30) as client:
            listed = await client.list_tools()
            assert {t.name for t in listed.tools} == TOOLS  # nothing that changes a source
            assert all(t.annotations and t.annotations.read_only_hint for t in listed.tools)

            sources = payload(await client.call_tool("list_knowledge_sources", {}))["sources"]
            assert [(s["type"], s["status"], s["passages"]) for s in sources] == [("pack", "ready", 2)]
            assert "config" not in sources[0]

            status = payload(await client.call_tool("get_knowledge_source_status", {"source_id": sources[0]["id"]}))
            assert (status["status"], status["documentsProcessed"], status["errorCode"]) == ("ready", 2, None)
            missing = await client.call_tool("get_knowledge_source_status", {"source_id": "nope"})
            assert "not_found" in error_text(missing)

            found = payload(await client.call_tool("test_knowledge_retrieval", {"q": "deposit XMR confirmations"}))
            assert [e["path"] for e in found["excerpts"]][:1] == ["help/deposit.md"]
            assert all("signals" not in e for e in found["excerpts"])
            operator = payload(await client.call_tool("test_knowledge_retrieval",
                                                      {"q": "sweep threshold", "audience": "operator"}))
            assert [e["path"] for e in operator["excerpts"]] == ["admin/sweep.md"]

            # a token passed as an argument wins over KB_TOKEN, with the same checks
            foreign = await client.call_tool("list_knowledge_sources", {"token": tokens["other"]})
            assert payload(foreign)["sources"] == []  # bot "other" has nothing; never bot default's
            write_only = await client.call_tool("list_knowledge_sources", {"token": tokens["wo"]})
            assert "forbidden" in error_text(write_only)
            bad = await client.call_tool("list_knowledge_sources", {"token": "kb_not-a-token"})
            assert "unauthorized" in error_text(bad)

    anyio.run(bounded, main)


@pytest.mark.timeout(120)
def test_no_token_is_unauthorized(setup):
    data, _ = setup
    from mcp.client import Client

    async def main():
        async with Client(params(data, None), read_timeout_seconds=30) as client:
            result = await client.call_tool("list_knowledge_sources", {})
            assert "unauthorized" in error_text(result)

    anyio.run(bounded, main)


@pytest.mark.timeout(120)
def test_bad_tool_arguments_get_an_error_code_not_validation_prose(setup):
    data, tokens = setup
    from mcp.client import Client

    def coded(result) -> tuple[str, str]:
        assert result.is_error
        error = result.structured_content["error"]
        assert error_text(result) == f"{error['code']}: {error['message']}"
        assert "pydantic" not in error_text(result) and "Input should be" not in error_text(result)
        return error["code"], error["message"]

    async def main():
        async with Client(params(data, tokens["ro"]), read_timeout_seconds=30) as client:
            assert coded(await client.call_tool("test_knowledge_retrieval", {})) == (
                "invalid_input", "missing argument(s): q")
            assert coded(await client.call_tool("test_knowledge_retrieval", {"q": 5})) == (
                "invalid_input", "invalid argument(s): q")
            assert coded(await client.call_tool("get_knowledge_source_status", {"source_id": ["x"]}))[0] == \
                "invalid_input"
            # a misspelt argument fails rather than running for the default audience
            assert coded(await client.call_tool("test_knowledge_retrieval", {"q": "sweep", "Audience": "operator"})) \
                == ("unknown_field", "unknown argument(s): Audience")
            assert coded(await client.call_tool("test_knowledge_retrieval", {"q": "sweep", "audience": "admins"}))[0] \
                == "invalid_audience"
            assert coded(await client.call_tool("delete_knowledge_source", {"source_id": "x"}))[0] == "not_found"

    anyio.run(bounded, main)
