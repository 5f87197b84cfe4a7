"""``POST citations/validate``: an answer may cite only what its retrieval served, and
nothing whose source has since been disabled or deleted."""

from __future__ import annotations

import json

import pytest

from knowledge.api.auth import create_token
from knowledge.api.http import Request
from knowledge.api.routes import dispatch
from knowledge.embedded.worker import InProcessWorkflow
from knowledge.settings import RETRIEVAL_TTL_SECONDS

KB = "/api/bots/default/knowledge"


@pytest.fixture
def call(services):
    services.workflow = InProcessWorkflow(services, background=False)
    tokens = {"rw": create_token(services, "default", ["knowledge:read", "knowledge:write"]),
              "other": create_token(services, "other", ["knowledge:read", "knowledge:write"])}

    def _call(method, path, body=None, token="rw"):
        data = json.dumps(body).encode() if body is not None else b""
        resp = dispatch(services, Request(method, path, {"authorization": f"Bearer {tokens[token]}"}, {}, data))
        return resp.status, resp.body

    return _call


@pytest.fixture
def answer(call):
    """Two sources and one retrieval that served both."""
    ids = []
    for text in ("The gadwall refund rule.", "The gadwall shipping rule."):
        status, src = call("POST", f"{KB}/sources", {"type": "instruction", "name": "r", "config": {"text": text}})
        assert status == 201
        ids.append(src["id"])
    status, result = call("POST", f"{KB}/retrieve", {"q": "gadwall rule"})
    assert status == 200 and {e["sourceId"] for e in result["excerpts"]} == set(ids)
    cites = [{"sourceId": e["sourceId"], "documentId": e["documentId"], "fragmentId": e["fragmentId"]}
             for e in result["excerpts"]]
    return result["retrievalId"], cites


def validate(call, retrieval_id, cites, token="rw"):
    return call("POST", f"{KB}/citations/validate", {"retrievalId": retrieval_id, "citations": cites}, token)


def test_served_citations_are_valid(call, answer):
    retrieval_id, cites = answer
    assert validate(call, retrieval_id, cites) == (200, {"valid": True})
    assert validate(call, retrieval_id, []) == (200, {"valid": True})


def test_anything_not_served_is_rejected_and_named(call, answer):
    retrieval_id, cites = answer
    forged = [
        {**cites[0], "fragmentId": cites[0]["fragmentId"] + "-x"},
        {**cites[0], "sourceId": cites[1]["sourceId"]},  # real ids, wrong combination
    ]
    status, body = validate(call, retrieval_id, [cites[0], *forged])
    assert (status, body["error"]["code"]) == (422, "invalid_citation")
    assert body["error"]["invalid"] == [{**f, "reason": "not_served"} for f in forged]


def test_citations_of_a_disabled_or_deleted_source_are_rejected(call, answer):
    retrieval_id, cites = answer
    first, second = cites
    assert call("POST", f"{KB}/sources/{first['sourceId']}/disable")[0] == 200
    assert call("DELETE", f"{KB}/sources/{second['sourceId']}")[0] == 204
    status, body = validate(call, retrieval_id, cites)
    assert status == 422
    assert [(i["sourceId"], i["reason"]) for i in body["error"]["invalid"]] == [
        (first["sourceId"], "source_disabled"), (second["sourceId"], "source_deleted")]


def test_unknown_expired_or_foreign_retrievals(call, answer, clock):
    retrieval_id, cites = answer
    status, body = validate(call, "no-such-retrieval", cites)
    assert (status, body["error"]["code"]) == (404, "retrieval_not_found")
    status, body = validate(call, retrieval_id, cites, token="other")
    assert status == 403  # the token is for another bot
    status, body = call("POST", "/api/bots/other/knowledge/citations/validate",
                        {"retrievalId": retrieval_id, "citations": cites}, token="other")
    assert (status, body["error"]["code"]) == (404, "retrieval_not_found")  # records are per bot
    clock.advance(RETRIEVAL_TTL_SECONDS + 1)
    status, body = validate(call, retrieval_id, cites)
    assert (status, body["error"]["code"]) == (404, "retrieval_not_found")


@pytest.mark.parametrize("body", [
    [],
    {"citations": []},
    {"retrievalId": 5, "citations": []},
    {"retrievalId": "r", "citations": {}},
    {"retrievalId": "r", "citations": [{"sourceId": "s", "documentId": "d"}]},
    {"retrievalId": "r", "citations": [{"sourceId": "s", "documentId": "d", "fragmentId": 3}]},
    {"retrievalId": "r", "citations": [{"sourceId": "s", "documentId": "d", "fragmentId": "f"}] * 101},
    {"retrievalId": "r", "citations": [], "extra": 1},
])
def test_malformed_requests_are_400(call, body):
    status, reply = call("POST", f"{KB}/citations/validate", body)
    assert status == 400 and reply["error"]["code"] in ("invalid_input", "unknown_field")
