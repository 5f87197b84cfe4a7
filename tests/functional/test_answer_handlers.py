"""Answer time through the Lambda handlers (API Gateway events; moto for DynamoDB, S3 and Step
Functions, osmem for OpenSearch): the scenario tests/e2e/test_answer_api.py runs against
`kb serve`, on the AWS deployment."""

from __future__ import annotations

import json
from typing import Any

import pytest

from knowledge.answer import endpoint
from knowledge.api.auth import create_token
from knowledge.crawl.outbound import OutboundPolicy
from knowledge.model import BotSettings
from tests.answer_scenario import FEE_Q, PAGES, ROWS, TICKET
from tests.functional.test_handlers import (  # noqa: F401  (aws is a fixture)
    BOT,
    Aws,
    api_event,
    aws,
    invoke,
    pack_source,
    reply,
    run_refresh,
)
from tests.unit.crawl import conftest as crawl_fixtures

pytestmark = pytest.mark.filterwarnings("ignore:No application metrics:UserWarning")

KB_PATH = f"/api/bots/{BOT}/knowledge"


def call(env: Aws, token: str, method: str, path: str, body: Any = None, query: dict[str, str] | None = None,
         function: str = "admin_api") -> tuple[int, Any]:
    event = api_event("apigw_rest_retrieve.json", token, method=method, path=f"{KB_PATH}/{path}", body=body)
    if body is None:
        event["body"] = None
    event["queryStringParameters"] = query
    event["multiValueQueryStringParameters"] = {k: [v] for k, v in query.items()} if query else None
    return reply(invoke(env, function, event))


def ask(env: Aws, token: str, q: str, route: str = "retrieve") -> dict[str, Any]:
    status, body = call(env, token, "POST", route, {"q": q, "audience": "customer"}, function="retrieve")
    assert status == 200, body
    return body


def index_source(env: Aws, source_id: str, owner: str) -> None:
    """The refresh tasks in the order the state machine runs them, for any source type."""
    ids = {"botId": BOT, "sourceId": source_id, "executionName": owner}
    job = invoke(env, "ingest", {"action": "take_lease", **ids, "input": {}})
    assert job["acquired"] is True
    listing = invoke(env, "ingest", {"action": "list_documents", **ids, "job": job})
    for batch in listing["batches"]:
        invoke(env, "ingest", {"action": "process_batch", **ids, "job": job, "batch": batch})
    assert invoke(env, "ingest", {"action": "commit", **ids, "job": job})["status"] == "indexed"


def test_live_data_the_gate_gaps_and_tickets_through_the_lambda_routes(aws: Aws) -> None:  # noqa: F811
    run_refresh(aws, pack_source(aws, "wallet", PAGES), "exec-docs")
    rw = create_token(aws.services, BOT, ["knowledge:read", "knowledge:write"])
    ro = create_token(aws.services, BOT, ["knowledge:read"])

    gated = ask(aws, rw, FEE_Q)
    assert gated["topic"] == "fees" and gated["excerpts"]
    assert gated["gate"]["passed"] is False and gated["wouldAnswer"] is False
    assert ask(aws, rw, "what does a withdrawal cost in fees", route="retrieval-test")["gate"]["passed"] is False
    status, gaps = call(aws, ro, "GET", "gaps", query={"audience": "customer"})
    assert status == 200, gaps
    (cluster,) = gaps["clusters"]
    assert (cluster["representative"], cluster["outcomes"], cluster["topic"]) == (FEE_Q, {"gated": 1}, "fees")
    status, body = call(aws, ro, "GET", "gaps", query={"since": "2999-01-01T00:00:00Z"})
    assert (status, body) == (200, {"clusters": []})

    status, src = call(aws, rw, "POST", "sources", {"type": "live", "name": "Payment methods", "config": {}})
    assert status == 201, src
    assert (src["status"], src["queued"], src["weight"]) == ("ready", False, 1.3)
    assert aws.executions() == []  # a live source never starts a refresh
    status, body = call(aws, rw, "PUT", "live/methods", {"rows": ROWS}, query={"sourceId": src["id"]})
    assert (status, body) == (200, {"sourceId": src["id"], "table": "methods", "rows": 2, "enabled": 2})
    status, body = call(aws, rw, "PUT", "live/methods", {"rows": [{**ROWS[0], "colour": "red"}]})
    assert (status, body["error"]["code"]) == (400, "unknown_field")

    grounded = ask(aws, rw, FEE_Q)
    live = grounded["excerpts"][0]
    assert (live["sourceType"], live["sourceId"]) == ("live", src["id"])
    assert "Bitcoin (BTC): fixed fee 0.0005" in live["text"]  # the table as first pushed: the bad one changed nothing
    assert grounded["gate"]["passed"] is True and grounded["operatorGrounded"] is True
    cite = {k: live[k] for k in ("sourceId", "documentId", "fragmentId")}
    status, body = call(aws, ro, "POST", "citations/validate",
                        {"retrievalId": grounded["retrievalId"], "citations": [cite]})
    assert (status, body) == (200, {"valid": True})
    other = ask(aws, rw, "How do I reset my password?")
    assert other["topic"] is None and other["gate"] is None
    assert all(e["sourceType"] != "live" for e in other["excerpts"])

    status, rechecked = call(aws, rw, "POST", "gaps/recheck")
    assert status == 200, rechecked
    (cluster,) = rechecked["clusters"]
    assert cluster["answered"] == 1 and cluster["nowAnswers"] is True

    status, draft = call(aws, rw, "POST", "articles/from-ticket", TICKET)
    assert status == 201, draft
    assert draft["redacted"] == {"email": 1, "card": 1, "phone": 1} and draft["config"]["state"] == "draft"
    assert "jane.doe" not in draft["config"]["body"]
    index_source(aws, draft["id"], "exec-draft")
    for audience in ("customer", "operator"):
        status, served = call(aws, ro, "POST", "retrieve", {"q": "heron plan charged twice refunded",
                                                            "audience": audience}, function="retrieve")
        assert status == 200 and draft["id"] not in {e["sourceId"] for e in served["excerpts"]}

    status, _ = call(aws, rw, "DELETE", f"sources/{src['id']}")
    assert status == 204
    assert aws.services.state.get_live_tables(BOT, src["id"]) == {}
    assert all(e["sourceType"] != "live" for e in ask(aws, rw, FEE_Q)["excerpts"])


# the crawler tests' throw-away CA, HTTPS server on 127.0.0.1 and resolver (fixtures)
tls = crawl_fixtures.tls
site = crawl_fixtures.site
resolver = crawl_fixtures.resolver


def test_a_live_endpoint_and_answer_settings_through_the_lambda_routes(aws: Aws, site: Any, tls: Any,  # noqa: F811
                                                                       resolver: Any) -> None:
    endpoint.CACHE.clear()
    aws.services.outbound = OutboundPolicy(loopback_port=site.port, resolve=resolver, ssl_context=tls.client_context)
    aws.services.state.put_bot(BotSettings(bot=BOT))
    rw = create_token(aws.services, BOT, ["knowledge:read", "knowledge:write"])
    admin = create_token(aws.services, BOT, ["knowledge:admin"])
    site.routes["/rates"] = site.page(json.dumps({"tables": {"withdrawals": ROWS}}), "application/json")

    status, body = call(aws, rw, "POST", "sources", {"type": "live", "name": "Rates",
                                                     "config": {"endpoint": "http://rates.example/x"}})
    assert (status, body["error"]["code"]) == (400, "invalid_config")
    status, src = call(aws, rw, "POST", "sources", {"type": "live", "name": "Rates",
                                                    "config": {"endpoint": site.url("/rates")}})
    assert status == 201, src
    answered = ask(aws, rw, FEE_Q)
    assert "Bitcoin (BTC): fixed fee 0.0005" in answered["excerpts"][0]["text"] and "liveUnavailable" not in answered

    site.routes["/rates"] = site.page(b"x" * (endpoint.MAX_ENDPOINT_BYTES + 1), "application/json")
    endpoint.CACHE.clear()
    failed = ask(aws, rw, FEE_Q)
    assert failed["liveUnavailable"] == [{"sourceId": src["id"], "code": "file_too_large"}]
    assert failed["gate"]["passed"] is False

    # the answer settings, stored in DynamoDB and honoured by the retrieve function
    def settings(method: str, body: Any = None) -> tuple[int, Any]:
        event = api_event("apigw_rest_retrieve.json", admin, method=method, path=f"/api/bots/{BOT}/settings",
                          body=body)
        if body is None:
            event["body"] = None
        return reply(invoke(aws, "admin_api", event))

    status, body = settings("PATCH", {"answer": {"gate": False, "gapRetentionDays": 7}})
    assert (status, body["answer"]) == (200, {"gate": False, "gapRetentionDays": 7}), body
    assert settings("GET")[1]["answer"] == {"gate": False, "gapRetentionDays": 7}
    assert ask(aws, rw, FEE_Q)["gate"]["passed"] is True
    status, body = settings("PATCH", {"answer": {"gapRetentionDays": 0}})
    assert (status, body["error"]["code"]) == (400, "invalid_setting")
    endpoint.CACHE.clear()
