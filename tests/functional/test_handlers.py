"""The Lambda handlers with real event payloads (``tests/events/``), over moto (DynamoDB, S3,
Step Functions bookkeeping) and an in-process ``osmem-server`` standing in for OpenSearch.

Each handler module builds its composition root at import (``build_aws_services`` from the
environment the stack sets); the tests import it under that environment, then swap in the
same services pointed at the local search server (the SigV4 client needs https)."""

from __future__ import annotations

import base64
import importlib
import json
import os
import threading
import uuid
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest

from knowledge.api.auth import create_token
from knowledge.errors import Code, RateLimited
from knowledge.model import BotSettings, Source
from knowledge.refresh.packsync import pack_source_id
from knowledge.refresh.workflow_errors import RefreshError
from knowledge.settings import (
    ENV_EMBEDDER,
    ENV_SEARCH_ENDPOINT,
    ENV_STATE_MACHINE,
)
from knowledge.wiring import Services, build_aws_services
from tests.conftest import pack_bytes, page
from tests.lambda_support import FakeContext, event, fresh_lambda_env, function_env

pytestmark = pytest.mark.filterwarnings("ignore:No application metrics:UserWarning")

REGION = "us-east-1"
BOT = "acme"
HANDLERS = ("ingest", "crawl", "retrieve", "admin_api", "authorizer", "scheduler")

WITHDRAW = page("help/withdraw/monero.md",
                "# Withdraw Monero\n\nMonero withdrawals take ten confirmations, about twenty minutes.",
                audience="CUSTOMER", title="Withdraw Monero")
FEES = page("help/fees.md", "# Fees\n\nThe network fee for Monero is shown before you confirm.",
            audience="CUSTOMER", title="Fees")
HOT = page("admin/hot-wallet.md", "# Hot wallet\n\nRebalance the hot wallet every morning.",
           audience="OPERATOR", title="Hot wallet")


@dataclass
class Aws:
    services: Services
    sfn: Any
    s3: Any
    state_machine_arn: str
    handlers: dict[str, ModuleType]
    prefix: str

    def executions(self) -> list[dict[str, Any]]:
        listed = self.sfn.list_executions(stateMachineArn=self.state_machine_arn)["executions"]
        return [self.sfn.describe_execution(executionArn=e["executionArn"]) for e in listed]


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch, osmem: Any) -> Iterator[Aws]:
    import boto3
    from moto import mock_aws
    from opensearchpy import OpenSearch

    from knowledge.adapters.aws.dynamodb_table import create_table

    for name in ("AWS_PROFILE", "AWS_ROLE_ARN", "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ENDPOINT_URL"):
        monkeypatch.delenv(name, raising=False)
    prefix = f"kb{uuid.uuid4().hex[:10]}"
    env = {
        "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_SESSION_TOKEN": "testing",
        "AWS_DEFAULT_REGION": REGION, "AWS_REGION": REGION,
        **function_env(prefix), "POWERTOOLS_TRACE_DISABLED": "true",
    }
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    with mock_aws():
        create_table(boto3.client("dynamodb", region_name=REGION), "kb-table")
        s3 = boto3.client("s3", region_name=REGION)
        s3.create_bucket(Bucket="kb-bucket")
        sfn = boto3.client("stepfunctions", region_name=REGION)
        arn = sfn.create_state_machine(
            name="kb-refresh", roleArn="arn:aws:iam::123456789012:role/kb-sfn",
            definition=json.dumps({"StartAt": "Done", "States": {"Done": {"Type": "Succeed"}}}),
        )["stateMachineArn"]
        monkeypatch.setenv(ENV_STATE_MACHINE, arn)
        client = OpenSearch(hosts=[osmem.url], timeout=30)
        services = build_aws_services(search_client=client)
        handlers = {}
        for name in HANDLERS:
            module = importlib.import_module(f"functions.{name}.handler")
            monkeypatch.setattr(module, "SERVICES", services)
            handlers[name] = module
        yield Aws(services, sfn, s3, arn, handlers, prefix)
        client.indices.delete(index=f"{prefix}-*", ignore_unavailable=True, allow_no_indices=True)


def invoke(aws: Aws, name: str, payload: dict[str, Any]) -> Any:
    return aws.handlers[name].handler(payload, FakeContext())


def api_event(name: str, token: str, *, method: str | None = None, path: str | None = None,
              body: Any = None) -> dict[str, Any]:
    ev = event(name)
    for headers in (ev["headers"], ev["multiValueHeaders"]):
        if "Authorization" in headers:
            headers["Authorization"] = f"Bearer {token}" if isinstance(headers["Authorization"], str) \
                else [f"Bearer {token}"]
    if method:
        ev["httpMethod"] = method
    if path:
        ev["path"] = path
    if body is not None:
        ev["body"] = json.dumps(body)
        ev["isBase64Encoded"] = False
    return ev


def reply(result: dict[str, Any]) -> tuple[int, Any]:
    assert result["isBase64Encoded"] is False
    assert result["headers"]["Content-Type"].startswith("application/json")
    return result["statusCode"], json.loads(result["body"]) if result["body"] else None


def put_pack(aws: Aws, slug: str, pages: list[dict[str, Any]]) -> None:
    aws.services.blobs.put(f"packs/{slug}.ndjson.gz", pack_bytes(pages))


def run_refresh(aws: Aws, source_id: str, owner: str, *, force: bool = False) -> dict[str, Any]:
    """Drive the ingest tasks in the order the state machine does (a pack source)."""
    ids = {"botId": BOT, "sourceId": source_id, "executionName": owner}
    lease = event("sfn_take_lease.json")
    lease.update(ids)
    lease["input"].update(botId=BOT, sourceId=source_id, force=force)
    job = invoke(aws, "ingest", lease)
    assert job["acquired"] is True and job["sourceType"] == "pack"
    listing = invoke(aws, "ingest", {"action": "list_documents", **ids, "job": job})
    for batch in listing["batches"]:
        invoke(aws, "ingest", {"action": "process_batch", **ids, "job": job, "batch": batch})
    result: dict[str, Any] = invoke(aws, "ingest", {"action": "commit", **ids, "job": job})
    return result


def pack_source(aws: Aws, slug: str, pages: list[dict[str, Any]]) -> str:
    put_pack(aws, slug, pages)
    aws.services.state.put_bot(BotSettings(bot=BOT))
    from knowledge.refresh.packsync import sync_packs

    sync_packs(aws.services, BOT)
    return pack_source_id(BOT, slug)


# -- ingest: the workflow's tasks ------------------------------------------------------------


def test_ingest_tasks_index_a_pack_and_retrieve_answers_through_api_gateway(aws: Aws) -> None:
    source_id = pack_source(aws, "wallet", [WITHDRAW, FEES, HOT])
    outcome = run_refresh(aws, source_id, "exec-one")
    assert outcome["status"] == "indexed" and outcome["documents"] == 3 and outcome["passages"] >= 3
    source = aws.services.state.get_source(BOT, source_id)
    assert source.status == "ready" and source.lease_owner is None and source.live_generation is not None
    # staging is cleared after the commit
    assert aws.services.blobs.list(f"staging/{BOT}/{source_id}/") == []

    token = create_token(aws.services, BOT, ["knowledge:read"])
    status, body = reply(invoke(aws, "retrieve", api_event("apigw_rest_retrieve.json", token)))
    assert status == 200
    assert body["excerpts"][0]["path"] == "help/withdraw/monero.md"
    assert "admin/hot-wallet.md" not in [e["path"] for e in body["excerpts"]]

    # unchanged content: the next run ends in a checksum skip and keeps the live generation
    again = run_refresh(aws, source_id, "exec-two")
    assert again["status"] == "skipped"
    assert aws.services.state.get_source(BOT, source_id).live_generation == source.live_generation
    forced = run_refresh(aws, source_id, "exec-three", force=True)
    assert forced["status"] == "indexed"
    assert aws.services.state.get_source(BOT, source_id).live_generation > source.live_generation


def test_a_retried_commit_does_not_drop_the_generation_it_made_live(aws: Aws) -> None:
    source_id = pack_source(aws, "wallet", [WITHDRAW])
    ids = {"botId": BOT, "sourceId": source_id, "executionName": "exec-r"}
    job = invoke(aws, "ingest", {"action": "take_lease", **ids, "input": {}})
    listing = invoke(aws, "ingest", {"action": "list_documents", **ids, "job": job})
    for batch in listing["batches"]:
        invoke(aws, "ingest", {"action": "process_batch", **ids, "job": job, "batch": batch})
    first = invoke(aws, "ingest", {"action": "commit", **ids, "job": job})
    repeated = invoke(aws, "ingest", {"action": "commit", **ids, "job": job})
    assert first["status"] == repeated["status"] == "indexed" and repeated["repeated"] is True
    live = aws.services.state.live_sources(BOT)
    assert aws.services.index.count(BOT, "customer", [s.source_gen for s in live]) == 1


def test_a_second_execution_finds_the_lease_taken(aws: Aws) -> None:
    source_id = pack_source(aws, "wallet", [WITHDRAW])
    first = invoke(aws, "ingest", {"action": "take_lease", "botId": BOT, "sourceId": source_id,
                                   "executionName": "exec-a", "input": {}})
    # the same execution retried (a lost reply) keeps its lease; another one is turned away
    retried = invoke(aws, "ingest", {"action": "take_lease", "botId": BOT, "sourceId": source_id,
                                     "executionName": "exec-a", "input": {}})
    other = invoke(aws, "ingest", {"action": "take_lease", "botId": BOT, "sourceId": source_id,
                                   "executionName": "exec-b", "input": {}})
    assert first["acquired"] is True and retried["acquired"] is True
    assert other == {"acquired": False, "reason": "busy", "sourceType": "pack"}
    missing = invoke(aws, "ingest", {"action": "take_lease", "botId": BOT, "sourceId": "nope",
                                     "executionName": "exec-c", "input": {}})
    assert missing["acquired"] is False and missing["reason"] == "missing"


def test_cancel_mid_run_keeps_the_previous_generation(aws: Aws) -> None:
    source_id = pack_source(aws, "wallet", [WITHDRAW, FEES])
    run_refresh(aws, source_id, "exec-1")
    before = aws.services.state.get_source(BOT, source_id)
    ids = {"botId": BOT, "sourceId": source_id, "executionName": "exec-2"}
    job = invoke(aws, "ingest", {"action": "take_lease", **ids, "input": {"force": True}})
    listing = invoke(aws, "ingest", {"action": "list_documents", **ids, "job": job})
    aws.services.state.update_source(BOT, source_id, cancel_requested=True)
    stopped = invoke(aws, "ingest", {"action": "process_batch", **ids, "job": job, "batch": listing["batches"][0]})
    assert stopped["stopped"] == "cancelled"
    outcome = invoke(aws, "ingest", {"action": "commit", **ids, "job": job})
    assert outcome["status"] == "failed" and outcome["errorCode"] == Code.CANCELLED
    after = aws.services.state.get_source(BOT, source_id)
    assert after.live_generation == before.live_generation and after.error_code == Code.CANCELLED
    assert after.lease_owner is None and not after.cancel_requested


def test_stage_errors_become_the_exceptions_the_state_machine_expects(aws: Aws) -> None:
    source_id = pack_source(aws, "wallet", [WITHDRAW])
    aws.services.blobs.put("packs/wallet.ndjson.gz", b"\x1f\x8b this is not a gzip stream")
    ids = {"botId": BOT, "sourceId": source_id, "executionName": "exec-x"}
    job = invoke(aws, "ingest", {"action": "take_lease", **ids, "input": {}})
    with pytest.raises(RefreshError) as caught:
        invoke(aws, "ingest", {"action": "list_documents", **ids, "job": job})
    assert caught.value.code == Code.MALFORMED_FILE
    assert str(caught.value).startswith(f"{Code.MALFORMED_FILE}: ")
    # the Catch path gets the error as Step Functions shapes a Lambda error
    cause = json.dumps({"errorMessage": str(caught.value), "errorType": "RefreshError", "stackTrace": []})
    result = invoke(aws, "ingest", {"action": "fail", **ids, "error": {"Error": "RefreshError", "Cause": cause},
                                    "state": {"botId": BOT, "sourceId": source_id, "job": job}})
    assert result == {"sourceId": source_id, "status": "failed", "errorCode": Code.MALFORMED_FILE}
    source = aws.services.state.get_source(BOT, source_id)
    assert (source.status, source.error_code, source.lease_owner) == ("failed", Code.MALFORMED_FILE, None)
    assert aws.services.state.orphan_generations() == []


def test_throttling_is_retried_by_name_and_requeues_when_it_persists(aws: Aws, capsys: Any) -> None:
    from knowledge.errors import SourceFailure

    source_id = pack_source(aws, "wallet", [WITHDRAW])
    ids = {"botId": BOT, "sourceId": source_id, "executionName": "exec-t"}
    job = invoke(aws, "ingest", {"action": "take_lease", **ids, "input": {}})

    def throttled(*args: Any, **kwargs: Any) -> Any:
        raise SourceFailure(Code.RATE_LIMITED, "embedding service throttled")

    import knowledge.refresh.batches as batches

    original = batches.list_documents
    batches.list_documents = throttled
    try:
        with pytest.raises(RateLimited):
            invoke(aws, "ingest", {"action": "list_documents", **ids, "job": job})
    finally:
        batches.list_documents = original
    result = invoke(aws, "ingest", {"action": "fail", **ids, "job": job,
                                    "error": {"Error": "RateLimited", "Cause": "{}"}, "state": {"job": job}})
    assert result["status"] == "queued" and result["errorCode"] == Code.RATE_LIMITED
    source = aws.services.state.get_source(BOT, source_id)
    assert source.status == "waiting" and source.next_refresh_at is not None and source.lease_owner is None
    # only a failure that stays failed counts for the RefreshFailed alarm
    assert "RefreshFailed" not in capsys.readouterr().out


def test_unknown_action_is_a_refresh_error() -> None:
    from knowledge.errors import InvalidInput
    from knowledge.refresh.workflow_errors import workflow_error

    err = workflow_error(InvalidInput("unknown ingest action 'x'"))
    assert isinstance(err, RefreshError) and err.code == Code.INVALID_INPUT


# -- ingest: S3 pack drops -------------------------------------------------------------------


def test_pack_drop_event_starts_each_using_source_once(aws: Aws) -> None:
    aws.services.state.put_bot(BotSettings(bot=BOT))
    aws.services.state.put_bot(BotSettings(bot="other"))
    put_pack(aws, "wallet", [WITHDRAW])
    drop = event("s3_object_created.json")
    first = invoke(aws, "ingest", drop)
    assert first["slug"] == "wallet"
    assert sorted(j["bot"] for j in first["started"]) == ["acme", "other"]
    assert {j["status"] for j in first["started"]} == {"started"}
    executions = aws.executions()
    assert sorted(json.loads(e["input"])["botId"] for e in executions) == ["acme", "other"]
    assert all(json.loads(e["input"])["reason"] == "pack" for e in executions)
    # the same event delivered again starts nothing new
    again = invoke(aws, "ingest", drop)
    assert {j["status"] for j in again["started"]} <= {"started", "duplicate"}
    assert {j["id"] for j in again["started"]} == {j["id"] for j in first["started"]}
    assert len(aws.executions()) == 2


def test_objects_outside_packs_are_ignored(aws: Aws) -> None:
    drop = event("s3_object_created.json")
    drop["detail"]["object"]["key"] = "packs/nested/x.ndjson.gz"
    assert invoke(aws, "ingest", drop) == {"slug": None, "started": []}
    assert aws.executions() == []


# -- admin_api and retrieve: API Gateway proxy events ------------------------------------------


def test_upload_arrives_base64_and_is_stored_byte_for_byte(aws: Aws) -> None:
    token = create_token(aws.services, BOT, ["knowledge:read", "knowledge:write"])
    create = api_event("apigw_rest_retrieve.json", token, path=f"/api/bots/{BOT}/knowledge/sources",
                       body={"type": "file", "name": "Refunds", "visibility": "agent",
                             "config": {"filename": "refunds.txt", "contentType": "text/plain"}})
    status, source = reply(invoke(aws, "admin_api", create))
    assert status == 201, source
    upload = api_event("apigw_rest_upload.json", token)
    upload["path"] = upload["path"].replace("SOURCE_ID", source["id"])
    status, body = reply(invoke(aws, "admin_api", upload))
    assert status == 202, body
    stored = aws.services.blobs.get(f"uploads/{BOT}/{source['id']}")
    assert stored == base64.b64decode(event("apigw_rest_upload.json")["body"])


def test_api_errors_keep_the_documented_shape(aws: Aws) -> None:
    token = create_token(aws.services, BOT, ["knowledge:read"])
    ev = api_event("apigw_rest_retrieve.json", token)
    del ev["headers"]["Authorization"], ev["multiValueHeaders"]["Authorization"]
    status, body = reply(invoke(aws, "retrieve", ev))
    assert status == 401 and body["error"]["code"] == Code.UNAUTHORIZED
    # a read token cannot write; another bot's path is forbidden
    status, body = reply(invoke(aws, "admin_api", api_event("apigw_rest_retrieve.json", token, method="POST",
                                                            path=f"/api/bots/{BOT}/knowledge/reindex", body={})))
    assert status == 403 and body["error"]["code"] == Code.FORBIDDEN
    status, body = reply(invoke(aws, "retrieve", api_event("apigw_rest_retrieve.json", token,
                                                           path="/api/bots/other/knowledge/retrieve")))
    assert status == 403
    bad = api_event("apigw_rest_upload.json", token)
    bad["body"] = "not base64!!"
    status, body = reply(invoke(aws, "admin_api", bad))
    assert status == 400 and body["error"]["code"] == Code.INVALID_INPUT


def test_reindex_route_starts_one_execution_per_source(aws: Aws) -> None:
    pack_source(aws, "wallet", [WITHDRAW])
    token = create_token(aws.services, BOT, ["knowledge:read", "knowledge:write"])
    status, body = reply(invoke(aws, "admin_api", api_event("apigw_rest_retrieve.json", token, method="POST",
                                                            path=f"/api/bots/{BOT}/knowledge/reindex",
                                                            body={"force": True})))
    assert status == 202 and body["job"]["started"] == 1
    [execution] = aws.executions()
    assert json.loads(execution["input"]) == {"botId": BOT, "sourceId": pack_source_id(BOT, "wallet"),
                                              "reason": "reindex", "force": True}


def mcp_event(token: str, message: Any) -> dict[str, Any]:
    ev = api_event("apigw_rest_retrieve.json", token, path="/mcp", body=message)
    ev["resource"] = "/mcp"
    for headers, value in ((ev["headers"], "application/json, text/event-stream"),
                           (ev["multiValueHeaders"], ["application/json, text/event-stream"])):
        headers["Accept"] = value  # what MCP clients send to a streamable HTTP server
    return ev


def mcp_reply(result: dict[str, Any]) -> tuple[int, Any]:
    headers = {k.lower(): v for k, v in result["headers"].items()}
    assert headers["content-type"].startswith("application/json")
    return result["statusCode"], json.loads(result["body"]) if result["body"] else None


def test_mcp_over_http_lists_tools_and_calls_them_with_the_callers_token(aws: Aws) -> None:
    pack_source(aws, "wallet", [WITHDRAW])
    token = create_token(aws.services, BOT, ["knowledge:read"])
    status, body = mcp_reply(invoke(aws, "admin_api", mcp_event(token, {
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})))
    assert status == 200 and body["result"]["serverInfo"]["name"] == "kb-knowledge"
    status, body = mcp_reply(invoke(aws, "admin_api", mcp_event(token, {"jsonrpc": "2.0", "id": 1,
                                                                         "method": "tools/list"})))
    assert status == 200 and body["id"] == 1
    assert {t["name"] for t in body["result"]["tools"]} == {
        "list_knowledge_sources", "get_knowledge_source_status", "test_knowledge_retrieval"}
    assert all(t["annotations"]["readOnlyHint"] for t in body["result"]["tools"])
    status, body = mcp_reply(invoke(aws, "admin_api", mcp_event(token, {
        "jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "list_knowledge_sources",
                                                                     "arguments": {}}})))
    listed = body["result"]
    assert status == 200 and listed["isError"] is False
    assert [s["id"] for s in listed["structuredContent"]["sources"]] == [pack_source_id(BOT, "wallet")]
    # the caller's token is the tools' token: an unknown one is refused with its code
    status, body = mcp_reply(invoke(aws, "admin_api", mcp_event("kb_unknown", {
        "jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "list_knowledge_sources",
                                                                     "arguments": {}}})))
    assert body["result"]["isError"] is True
    assert body["result"]["structuredContent"]["error"]["code"] == "unauthorized"
    # arguments that do not fit the tool: a code, not the validator's prose
    status, body = mcp_reply(invoke(aws, "admin_api", mcp_event(token, {
        "jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "test_knowledge_retrieval",
                                                                     "arguments": {"q": 5}}})))
    assert body["result"]["structuredContent"]["error"] == {"code": "invalid_input",
                                                            "message": "invalid argument(s): q"}
    # a notification is accepted without an answer; GET (a server stream) has no place here
    status, body = mcp_reply(invoke(aws, "admin_api", mcp_event(token, {
        "jsonrpc": "2.0", "method": "notifications/initialized"})))
    assert (status, body) == (202, None)
    ev = mcp_event(token, {})
    ev["httpMethod"], ev["body"] = "GET", None
    status, body = reply(invoke(aws, "admin_api", ev))
    assert (status, body["error"]["code"]) == (405, "method_not_allowed")


# -- authorizer ------------------------------------------------------------------------------


def test_authorizer_allows_known_tokens_with_their_bot_and_scopes(aws: Aws) -> None:
    token = create_token(aws.services, BOT, ["knowledge:read"])
    ev = event("authorizer_request.json")
    ev["headers"]["Authorization"] = f"Bearer {token}"
    result = invoke(aws, "authorizer", ev)
    [statement] = result["policyDocument"]["Statement"]
    assert statement == {"Action": "execute-api:Invoke", "Effect": "Allow", "Resource": ev["methodArn"]}
    assert result["context"] == {"bot": BOT, "botId": BOT, "scopes": "knowledge:read"}
    assert result["principalId"] == f"bot:{BOT}"
    ev["pathParameters"]["botID"] = "someone-else"
    assert invoke(aws, "authorizer", ev)["policyDocument"]["Statement"][0]["Effect"] == "Deny"


@pytest.mark.parametrize("header", [None, "Bearer kb_unknown-token", "Basic dXNlcjpwYXNz", "Bearer "])
def test_authorizer_rejects_missing_and_unknown_tokens(aws: Aws, header: str | None) -> None:
    ev = event("authorizer_request.json")
    if header is None:
        del ev["headers"]["Authorization"]
    else:
        ev["headers"]["Authorization"] = header
    with pytest.raises(Exception, match=r"^Unauthorized$"):
        invoke(aws, "authorizer", ev)


# -- scheduler -------------------------------------------------------------------------------


def test_tick_reaps_expired_leases_and_starts_due_refreshes(aws: Aws, capsys: Any) -> None:
    state = aws.services.state
    now = aws.services.clock.now()
    state.put_source(Source(id="s-dead", bot=BOT, type="article", name="Dead worker", status="indexing",
                            config={"title": "T", "body": "B", "state": "published"}, created_at=now, updated_at=now))
    assert state.acquire_lease(BOT, "s-dead", "exec-dead", now - 1000, 120)
    result = invoke(aws, "scheduler", event("scheduler_tick.json"))
    assert result["reaped"] == [f"{BOT}/s-dead"]
    source = state.get_source(BOT, "s-dead")
    assert source.status == "waiting" and source.lease_owner is None
    assert len(result["started"]) == 1
    [execution] = aws.executions()
    assert json.loads(execution["input"])["reason"] == "schedule"
    emitted = [json.loads(line) for line in capsys.readouterr().out.splitlines() if '"_aws"' in line]
    assert any(m.get("LeaseReaped") == [1.0] or m.get("LeaseReaped") == 1.0 for m in emitted)
    # the next tick overlaps the running execution: nothing new starts
    again = invoke(aws, "scheduler", event("scheduler_tick.json"))
    assert again["reaped"] == [] and len(aws.executions()) == 1


def test_a_failing_website_is_started_once_per_interval_not_at_every_tick(aws: Aws) -> None:
    from tests.conftest import FakeClock

    clock = aws.services.clock = FakeClock(1_900_000_000.0)
    state = aws.services.state
    state.put_source(Source(id="site", bot=BOT, type="website", name="Site", status="failed", attempts=1,
                            config={"origins": ["https://docs.example.com"], "startUrls": ["https://docs.example.com/"]},
                            refresh_every=3600, next_refresh_at=clock.now() - 5,
                            created_at=clock.now() - 7200, updated_at=clock.now() - 7200))
    assert len(invoke(aws, "scheduler", event("scheduler_tick.json"))["started"]) == 1
    # picking it up moved its time one interval on, before the run (which fails again)
    assert state.get_source(BOT, "site").next_refresh_at == clock.now() + 3600
    state.update_source(BOT, "site", status="failed", attempts=2)
    for _ in range(3):
        clock.advance(60)
        assert invoke(aws, "scheduler", event("scheduler_tick.json"))["started"] == []
    clock.advance(3600)
    assert len(invoke(aws, "scheduler", event("scheduler_tick.json"))["started"]) == 1
    assert len(aws.executions()) == 2


def test_nightly_reindex_starts_every_enabled_source(aws: Aws) -> None:
    pack_source(aws, "wallet", [WITHDRAW])
    now = aws.services.clock.now()
    aws.services.state.put_source(Source(id="off", bot=BOT, type="fact", name="Off", status="disabled",
                                         config={"key": "k", "value": "v"}, created_at=now, updated_at=now))
    result = invoke(aws, "scheduler", event("scheduler_reindex_all.json"))
    assert result == {"bots": 1, "started": 1}
    assert [json.loads(e["input"])["sourceId"] for e in aws.executions()] == [pack_source_id(BOT, "wallet")]


def test_unknown_scheduler_action_is_refused(aws: Aws) -> None:
    from knowledge.errors import InvalidInput

    with pytest.raises(InvalidInput):
        invoke(aws, "scheduler", {"action": "explode"})


# -- crawl -----------------------------------------------------------------------------------


def test_crawl_turn_heartbeats_and_shapes_the_loop_state(aws: Aws, monkeypatch: pytest.MonkeyPatch) -> None:
    import knowledge.sources.website as website

    now = aws.services.clock.now()
    aws.services.state.put_source(Source(id="site", bot=BOT, type="website", name="Docs site", status="waiting",
                                         config={"origins": ["https://docs.example"],
                                                 "startUrls": ["https://docs.example/"]},
                                         created_at=now, updated_at=now))
    ids = {"botId": BOT, "sourceId": "site", "executionName": "exec-w"}
    job = invoke(aws, "ingest", {"action": "take_lease", **ids, "input": {}})
    assert job["acquired"] is True and job["sourceType"] == "website"
    assert aws.services.state.get_source(BOT, "site").status == "indexing"
    seen: list[Any] = []

    def step(services: Any, source: Source, cursor: Any, *, deadline: float, fetcher: Any = None) -> Any:
        seen.append(cursor)
        return website.CrawlStep(False, {"version": 1, "step": 1}, 2.2, 3, 1)

    monkeypatch.setattr(website, "crawl_step", step)
    lease_before = aws.services.state.get_source(BOT, "site").lease_expires_at
    result = invoke(aws, "crawl", {**ids, "job": job, "crawl": {"done": False, "waitSeconds": 0}})
    assert result == {"done": False, "cursor": {"version": 1, "step": 1}, "waitSeconds": 3, "pages": 3,
                      "failures": 1}
    assert seen == [None]
    assert aws.services.state.get_source(BOT, "site").lease_expires_at >= lease_before
    # cancelled between turns: the loop ends without crawling, and commit records it
    aws.services.state.update_source(BOT, "site", cancel_requested=True)
    stopped = invoke(aws, "crawl", {**ids, "job": job, "crawl": result})
    assert stopped["done"] is True and stopped["stopped"] == "cancelled" and len(seen) == 1
    assert invoke(aws, "ingest", {"action": "list_documents", **ids, "job": job})["batches"] == []
    outcome = invoke(aws, "ingest", {"action": "commit", **ids, "job": job})
    assert outcome["errorCode"] == Code.CANCELLED


# -- the OpenSearch index's vector spaces ------------------------------------------------------


class RecordingSearch:
    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []

    def search(self, **kwargs: Any) -> dict[str, Any]:
        self.bodies.append(kwargs["body"])
        return {"hits": {"hits": []}}


def test_vector_search_filters_each_space_inside_the_knn_query() -> None:
    from knowledge.adapters.aws.opensearch_index import OpenSearchIndex, knn_query, search_filters

    client = RecordingSearch()
    index = OpenSearchIndex(client, "kb", dimension=3)
    hits = index.search_vector("b1", "customer", {"bedrock:a": [0.1, 0.2, 0.3], "other": [1.0], "hash": [1, 0, 0]},
                               visibilities=["public"], source_gens=["s:1"], limit=7)
    assert hits == []
    base = search_filters("b1", ["public"], ["s:1"])
    assert client.bodies == [knn_query([0.1, 0.2, 0.3], 7, [*base, {"term": {"space": "bedrock:a"}}]),
                             knn_query([1, 0, 0], 7, [*base, {"term": {"space": "hash"}}])]


def test_passages_carry_their_vector_space_and_spaces_are_listed_per_generation(aws: Aws) -> None:
    from knowledge.model import Passage

    index = aws.services.index

    def passage(pid: str, gen: int, vector: list[float] | None) -> Passage:
        return Passage(id=pid, bot=BOT, source_id="s", document_id="d", generation=gen, ordinal=0, title="T",
                       path="p.md", breadcrumb="B", text="monero fees", visibility="public", vector=vector)

    dim = index.dimension
    index.write(BOT, [passage("a", 1, [0.5] * dim)], space="bedrock:old")
    index.write(BOT, [passage("b", 2, [0.25] * dim)], space="bedrock:new")
    index.write(BOT, [passage("c", 3, None)], space=None)
    assert index.vector_spaces(BOT, "customer", ["s:1"]) == {"bedrock:old"}
    assert index.vector_spaces(BOT, "customer", ["s:1", "s:2", "s:3"]) == {"bedrock:old", "bedrock:new"}
    assert index.vector_spaces(BOT, "customer", ["s:3"]) == set()
    assert index.vector_spaces(BOT, "operator", ["s:1"]) == set()


# -- cold start: components deferred to their first use ---------------------------------------


def test_lazy_holder_creates_its_object_once_on_first_use() -> None:
    from knowledge.wiring import Lazy

    made: list[SimpleNamespace] = []

    def factory() -> SimpleNamespace:
        made.append(SimpleNamespace(name="client", ping=lambda: "pong"))
        return made[-1]

    holder = Lazy(factory, "fake")
    assert made == [] and not holder.created and holder.seconds is None
    assert "not created yet" in repr(holder)
    assert holder.ping() == "pong"  # first attribute access builds it
    assert len(made) == 1 and holder.created and holder.seconds is not None and holder.seconds >= 0
    assert holder.name == "client" and holder.get() is made[0] and holder.get() is holder.get()
    with pytest.raises(AttributeError):
        _ = holder.no_such_attribute
    assert len(made) == 1


def test_lazy_holder_is_created_once_when_threads_race_for_it() -> None:
    from knowledge.wiring import Lazy

    threads_n = 8

    class CountingLock:
        """An RLock that counts the threads that reached it: the factory holds the first
        one until every thread has found the holder empty and is waiting for the lock."""

        def __init__(self) -> None:
            self._lock = threading.RLock()
            self.arrived = 0
            self.cond = threading.Condition()

        def __enter__(self) -> CountingLock:
            with self.cond:
                self.arrived += 1
                self.cond.notify_all()
            self._lock.acquire()
            return self

        def __exit__(self, *exc: object) -> None:
            self._lock.release()

    lock = CountingLock()
    calls: list[int] = []

    def slow_factory() -> object:
        with lock.cond:
            assert lock.cond.wait_for(lambda: lock.arrived == threads_n, timeout=10)
        calls.append(1)
        return object()

    holder: Lazy[object] = Lazy(slow_factory, lock=lock)  # type: ignore[arg-type]
    got: list[object] = []
    threads = [threading.Thread(target=lambda: got.append(holder.get())) for _ in range(threads_n)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=20)
    assert lock.arrived == threads_n  # every thread saw the holder empty: they did race
    assert len(got) == threads_n and len({id(obj) for obj in got}) == 1
    assert calls == [1]


def test_lazy_holder_tries_again_after_a_failed_creation() -> None:
    from knowledge.wiring import Lazy

    attempts: list[int] = []

    def flaky() -> str:
        attempts.append(1)
        if len(attempts) == 1:
            raise ConnectionError("credentials not there yet")
        return "client"

    holder = Lazy(flaky)
    with pytest.raises(ConnectionError):
        holder.get()
    assert not holder.created
    assert holder.get() == "client" and holder.get() == "client"
    assert len(attempts) == 2


class CountingSession:
    """A boto3 session that counts the clients it creates, by service."""

    def __init__(self) -> None:
        import boto3

        self.session = boto3.Session(region_name=REGION)
        self.created: Counter[str] = Counter()

    @property
    def region_name(self) -> str | None:
        return self.session.region_name

    def client(self, service: str, **kwargs: Any) -> Any:
        self.created[service] += 1
        return self.session.client(service, **kwargs)

    def get_credentials(self) -> Any:
        return self.session.get_credentials()


def deferred_of(services: Services) -> dict[str, Any]:
    from knowledge.wiring import DEFERRED

    holders: dict[str, Any] = services.caches[DEFERRED]
    return holders


def test_deferred_clients_are_created_by_their_first_use_and_only_once(aws: Aws) -> None:
    from knowledge.adapters.aws.bedrock_embedder import BedrockEmbedder
    from knowledge.adapters.aws.opensearch_index import OpenSearchIndex

    session = CountingSession()
    env = {**dict(os.environ), ENV_EMBEDDER: "bedrock"}
    services = build_aws_services(env, session=session, search_client=aws.services.index.client,
                                  eager=("dynamodb",))
    assert session.created == Counter({"dynamodb": 1})
    deferred = deferred_of(services)
    assert set(deferred) == {"s3", "stepfunctions", "opensearch", "bedrock"}
    assert not any(holder.created for holder in deferred.values())

    services.blobs.put("uploads/one.txt", b"one")
    services.blobs.put("uploads/two.txt", b"two")
    assert services.blobs.get("uploads/one.txt") == b"one"
    assert session.created == Counter({"dynamodb": 1, "s3": 1})
    assert not deferred["stepfunctions"].created and not deferred["opensearch"].created

    services.workflow.start_refresh(BOT, "src-1", reason="manual", token="t1")
    services.workflow.start_refresh(BOT, "src-2", reason="manual", token="t2")
    assert len(aws.executions()) == 2
    assert session.created == Counter({"dynamodb": 1, "s3": 1, "stepfunctions": 1})

    assert services.index.vector_spaces(BOT, "customer", ["s:1"]) == set()
    assert isinstance(deferred["opensearch"].get(), OpenSearchIndex) and services.index.dimension == 1024

    [bedrock] = {id(e): e for e in services.embedders.values()}.values()
    assert isinstance(bedrock, BedrockEmbedder)
    assert bedrock.client.meta.service_model.service_name == "bedrock-runtime"  # no call: just built
    assert bedrock.client.meta.region_name == REGION
    assert session.created == Counter({"dynamodb": 1, "s3": 1, "stepfunctions": 1, "bedrock-runtime": 1})
    assert all(holder.created for holder in deferred.values())


def test_eager_components_are_checked_and_settings_still_fail_at_the_cold_start(aws: Aws) -> None:
    with pytest.raises(ValueError, match="unknown AWS component"):
        build_aws_services(eager=("dynamodb", "lambda"))
    # the search endpoint is validated at build time even though its client is deferred
    with pytest.raises(ValueError, match="https"):
        build_aws_services({**dict(os.environ), ENV_SEARCH_ENDPOINT: "http://search.internal"}, eager=("dynamodb",))
    everything = build_aws_services(search_client=aws.services.index.client)
    assert deferred_of(everything) == {}


def handler_services(aws: Aws, name: str, monkeypatch: pytest.MonkeyPatch) -> tuple[Services, CountingSession]:
    """The services a handler builds at its cold start (its own ``EAGER``), in place of the
    all-eager ones the fixture gives it, with the clients it creates counted."""
    session = CountingSession()
    module = aws.handlers[name]
    services = build_aws_services(session=session, search_client=aws.services.index.client,
                                  embedder=name not in ("authorizer", "crawl", "scheduler"), eager=module.EAGER)
    monkeypatch.setattr(module, "SERVICES", services)
    return services, session


def test_each_function_defers_only_clients_its_usual_invocations_do_not_touch(
        aws: Aws, monkeypatch: pytest.MonkeyPatch) -> None:
    source_id = pack_source(aws, "wallet", [WITHDRAW, FEES])
    ingest, ingest_session = handler_services(aws, "ingest", monkeypatch)
    assert set(deferred_of(ingest)) == {"stepfunctions", "opensearch"}
    # the usual refresh (scheduled or nightly) finds its content unchanged: no index, no workflow
    assert run_refresh(aws, source_id, "exec-lazy")["status"] == "indexed"
    ingest, ingest_session = handler_services(aws, "ingest", monkeypatch)
    assert run_refresh(aws, source_id, "exec-lazy-again")["status"] == "skipped"
    assert not any(holder.created for holder in deferred_of(ingest).values())
    assert set(ingest_session.created) == {"dynamodb", "s3"}
    # content that changed is written by the first batch: the index is created then, once
    put_pack(aws, "wallet", [WITHDRAW])
    assert run_refresh(aws, source_id, "exec-lazy-changed")["status"] == "indexed"
    assert deferred_of(ingest)["opensearch"].created and not deferred_of(ingest)["stepfunctions"].created

    token = create_token(aws.services, BOT, ["knowledge:read"])
    retrieve, retrieve_session = handler_services(aws, "retrieve", monkeypatch)
    status, body = reply(invoke(aws, "retrieve", api_event("apigw_rest_retrieve.json", token)))
    assert status == 200 and body["excerpts"][0]["path"] == "help/withdraw/monero.md"
    assert set(deferred_of(retrieve)) == {"s3", "stepfunctions"}
    assert not any(holder.created for holder in deferred_of(retrieve).values())
    assert set(retrieve_session.created) == {"dynamodb"}

    authorizer, authorizer_session = handler_services(aws, "authorizer", monkeypatch)
    ev = event("authorizer_request.json")
    ev["headers"]["Authorization"] = f"Bearer {token}"
    assert invoke(aws, "authorizer", ev)["policyDocument"]["Statement"][0]["Effect"] == "Allow"
    assert set(deferred_of(authorizer)) == {"s3", "stepfunctions", "opensearch"}
    assert not any(holder.created for holder in deferred_of(authorizer).values())
    assert set(authorizer_session.created) == {"dynamodb"}

    now = aws.services.clock.now()
    aws.services.state.put_source(Source(id="s-due", bot=BOT, type="article", name="Due", status="waiting",
                                         config={"title": "T", "body": "B", "state": "published"},
                                         created_at=now, updated_at=now, next_refresh_at=now - 1))
    scheduler, scheduler_session = handler_services(aws, "scheduler", monkeypatch)
    assert len(invoke(aws, "scheduler", event("scheduler_tick.json"))["started"]) >= 1
    assert not any(holder.created for holder in deferred_of(scheduler).values())
    assert set(scheduler_session.created) == {"dynamodb", "stepfunctions"}


class TitanEmbeddings:
    """Bedrock's ``InvokeModel`` for the Titan body (moto has no bedrock-runtime): a unit
    vector per text, every text kept."""

    def __init__(self, dimensions: int) -> None:
        self.dimensions = dimensions
        self.texts: list[str] = []
        self.lock = threading.Lock()

    def invoke_model(self, **kwargs: Any) -> dict[str, Any]:
        import io

        text = json.loads(kwargs["body"])["inputText"]
        with self.lock:
            self.texts.append(text)
        vector = [0.0] * self.dimensions
        vector[sum(map(ord, text)) % self.dimensions] = 1.0
        return {"body": io.BytesIO(json.dumps({"embedding": vector, "inputTextTokenCount": 1}).encode())}


class BedrockSession(CountingSession):
    """A counting session whose ``bedrock-runtime`` client is ``bedrock``."""

    def __init__(self, bedrock: TitanEmbeddings) -> None:
        super().__init__()
        self.bedrock = bedrock

    def client(self, service: str, **kwargs: Any) -> Any:
        if service != "bedrock-runtime":
            return super().client(service, **kwargs)
        self.created[service] += 1
        return self.bedrock


def test_ingest_creates_the_bedrock_client_only_for_content_that_changed(
        aws: Aws, monkeypatch: pytest.MonkeyPatch) -> None:
    """The deployment embeds with Bedrock: a refresh of unchanged content (the usual one)
    never creates the Bedrock client; new content creates it with its first batch."""
    monkeypatch.setenv(ENV_EMBEDDER, "bedrock")
    source_id = pack_source(aws, "wallet", [WITHDRAW, FEES])
    bedrock = TitanEmbeddings(aws.services.index.dimension)
    module = aws.handlers["ingest"]

    def cold_start() -> tuple[Services, BedrockSession]:
        session = BedrockSession(bedrock)
        services = build_aws_services(session=session, search_client=aws.services.index.client, eager=module.EAGER)
        monkeypatch.setattr(module, "SERVICES", services)
        return services, session

    ingest, session = cold_start()
    assert set(deferred_of(ingest)) == {"stepfunctions", "opensearch", "bedrock"}
    assert "bedrock-runtime" not in session.created
    assert run_refresh(aws, source_id, "exec-new")["status"] == "indexed"
    embedded = len(bedrock.texts)
    assert embedded >= 2 and deferred_of(ingest)["bedrock"].created and session.created["bedrock-runtime"] == 1

    ingest, session = cold_start()
    assert run_refresh(aws, source_id, "exec-same")["status"] == "skipped"
    assert not deferred_of(ingest)["bedrock"].created and "bedrock-runtime" not in session.created
    assert len(bedrock.texts) == embedded and set(session.created) == {"dynamodb", "s3"}


def test_a_cold_start_in_lambda_traces_search_calls_once_the_index_is_first_used(tmp_path: Path) -> None:
    """In a Lambda-like environment (tracing on), ``admin_api`` imports neither the OpenSearch
    client nor requests at its cold start, and the first use of the index patches requests
    for X-Ray all the same; AWS SDK calls are patched from the start."""
    import subprocess
    import sys

    probe = (
        "import sys, botocore.client\n"
        "import functions.admin_api.handler as h\n"
        "assert not h.tracer.disabled\n"
        "assert type(botocore.client.BaseClient._make_api_call).__name__ == 'BoundFunctionWrapper'\n"
        "print('cold', sorted(m for m in ('requests', 'opensearchpy', 'sqlite3') if m in sys.modules))\n"
        "assert h.SERVICES.index.prefix == 'kb'\n"
        "import requests\n"
        "print('traced', type(requests.Session.request).__name__)\n"
    )
    env = fresh_lambda_env("admin-api", tmp_path)
    out = subprocess.run([sys.executable, "-c", probe], env=env, cwd=tmp_path, capture_output=True, text=True,
                         timeout=120, check=False)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.splitlines() == ["cold []", "traced BoundFunctionWrapper"]


def test_a_rerank_model_arn_gives_the_deployment_a_bedrock_reranker(aws: Aws) -> None:
    from knowledge.adapters.aws.bedrock_reranker import BedrockReranker
    from knowledge.settings import ENV_RERANK_MODEL_ARN

    arn = "arn:aws:bedrock:us-east-1::foundation-model/amazon.rerank-v1:0"
    session = CountingSession()
    services = build_aws_services({**dict(os.environ), ENV_RERANK_MODEL_ARN: arn}, session=session,
                                  search_client=aws.services.index.client, eager=("dynamodb",))
    assert isinstance(services.reranker, BedrockReranker) and services.reranker.model_arn == arn
    assert "rerank" in deferred_of(services) and "bedrock-agent-runtime" not in session.created
    plain = build_aws_services(dict(os.environ), session=CountingSession(), search_client=aws.services.index.client,
                               eager=("dynamodb",))
    assert plain.reranker is None and "rerank" not in deferred_of(plain)
