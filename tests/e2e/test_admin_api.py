"""The admin API over real HTTP against `kb serve` in a subprocess: every source type from
created to deleted, agents, citations, the retrieval-test rate limit and the OpenAPI
document. This is the README's curl walk-through, asserted."""

from __future__ import annotations

import signal
import time
import urllib.request

import pytest

from tests.conftest import pack_bytes, page
from tests.e2e.support import KB_PATH, call, free_port, run_kb, start_server


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    root = tmp_path_factory.mktemp("admin")
    data = root / "data"
    pack = root / "coinvault.ndjson.gz"
    pack.write_bytes(pack_bytes([
        page("help/deposit.md", "# Deposit\n\nDeposits of XMR need ten confirmations.", audience="CUSTOMER"),
    ]))
    run_kb(data, "ingest", str(pack))
    (data / "packs").mkdir(exist_ok=True)
    (data / "packs" / "stakehouse.ndjson.gz").write_bytes(pack_bytes([
        page("help/pools.md", "# Pools\n\nJoin a heron staking pool from the pools page.", audience="CUSTOMER"),
    ]))
    def token(bot, scopes):
        return run_kb(data, "token", "create", "--bot", bot, "--scopes", scopes).strip().splitlines()[-1]

    tokens = {
        "rw": token("default", "knowledge:read,knowledge:write"),
        "ro": token("default", "knowledge:read"),
        "ro2": token("default", "knowledge:read"),
        "other": token("other", "knowledge:read,knowledge:write"),
    }
    proc, base = start_server(data, free_port(), {"KB_RETRIEVAL_TEST_PER_MINUTE": "3"})
    yield base, tokens
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=10)


def wait_status(base, token, source_id, wanted, timeout=30.0):
    deadline = time.monotonic() + timeout
    body = None
    while time.monotonic() < deadline:
        status, body, _ = call(base, "GET", f"{KB_PATH}/sources/{source_id}/index-status", token)
        assert status == 200, body
        if body["status"] == wanted and not body["indexing"]:
            return body
        time.sleep(0.1)
    raise AssertionError(f"source {source_id} never reached {wanted}: {body}")


def ask(base, token, q, audience="customer"):
    status, body, _ = call(base, "POST", f"{KB_PATH}/retrieve", token, {"q": q, "audience": audience})
    assert status == 200, body
    return body


SOURCES = {
    "article": ({"title": "Refunds", "body": "Refunds for the walrus plan take three days.", "state": "published"},
                "walrus plan refunds", "public"),
    "instruction": ({"text": "Always offer the narwhal discount before a cancellation."}, "narwhal discount", "agent"),
    "fact": ({"key": "support_hours", "value": "Support answers from 9 to 17 on puffin days."}, "puffin days", "agent"),
    "faq": ({"entries": [{"question": "Can I pause the otter plan?", "answer": "Yes, from the billing page."}]},
            "pause otter plan", "public"),
}


@pytest.mark.parametrize("kind", sorted(SOURCES))
def test_each_type_from_created_to_deleted(server, kind):
    base, tokens = server
    config, question, visibility = SOURCES[kind]
    status, src, _ = call(base, "POST", f"{KB_PATH}/sources", tokens["rw"],
                          {"type": kind, "name": f"My {kind}", "visibility": visibility, "config": config})
    assert status == 201, src
    assert src["type"] == kind and src["queued"] is True
    sid = src["id"]
    ready = wait_status(base, tokens["ro"], sid, "ready")
    assert ready["passages"] == 1 and ready["attempts"] == 1 and ready["lastIndexedAt"]
    assert sid in {e["sourceId"] for e in ask(base, tokens["ro"], question)["excerpts"]}

    # refresh: queued, unchanged content is skipped, still ready
    status, body, _ = call(base, "POST", f"{KB_PATH}/sources/{sid}/refresh", tokens["rw"])
    assert status == 202 and body["queued"] is True
    after = wait_status(base, tokens["ro"], sid, "ready")
    assert after["attempts"] == 2 and after["lastIndexedAt"] == ready["lastIndexedAt"]  # skipped by checksum

    # disable: out of every search at once
    status, body, _ = call(base, "POST", f"{KB_PATH}/sources/{sid}/disable", tokens["rw"])
    assert (status, body["status"]) == (200, "disabled")
    assert sid not in {e["sourceId"] for e in ask(base, tokens["ro"], question)["excerpts"]}
    status, body, _ = call(base, "POST", f"{KB_PATH}/sources/{sid}/refresh", tokens["rw"])
    assert (status, body["error"]["code"]) == (409, "source_disabled")

    # enable: queued, searchable again
    status, body, _ = call(base, "POST", f"{KB_PATH}/sources/{sid}/enable", tokens["rw"])
    assert status == 202 and body["queued"] is True
    wait_status(base, tokens["ro"], sid, "ready")
    assert sid in {e["sourceId"] for e in ask(base, tokens["ro"], question)["excerpts"]}

    # delete: gone with its documents and passages
    status, body, _ = call(base, "DELETE", f"{KB_PATH}/sources/{sid}", tokens["rw"])
    assert status == 204 and body is None
    assert call(base, "GET", f"{KB_PATH}/sources/{sid}", tokens["ro"])[0] == 404
    assert sid not in {e["sourceId"] for e in ask(base, tokens["ro"], question)["excerpts"]}


def test_pack_source_over_http(server):
    base, tokens = server
    status, body, _ = call(base, "POST", f"{KB_PATH}/sources", tokens["rw"],
                           {"type": "pack", "name": "Stakehouse docs", "config": {"slug": "nopack"}})
    assert (status, body["error"]["code"]) == (400, "unknown_pack")
    status, src, _ = call(base, "POST", f"{KB_PATH}/sources", tokens["rw"],
                          {"type": "pack", "name": "Stakehouse docs", "config": {"slug": "stakehouse"}})
    assert status == 201, src
    wait_status(base, tokens["ro"], src["id"], "ready")
    assert [e["path"] for e in ask(base, tokens["ro"], "heron staking pool")["excerpts"]] == ["help/pools.md"]
    status, body, _ = call(base, "POST", f"{KB_PATH}/sources", tokens["rw"],
                           {"type": "pack", "name": "Again", "config": {"slug": "stakehouse"}})
    assert (status, body["error"]["code"]) == (409, "already_exists")
    status, _, _ = call(base, "POST", f"{KB_PATH}/sources/{src['id']}/disable", tokens["rw"])
    assert ask(base, tokens["ro"], "heron staking pool")["excerpts"] == []
    assert call(base, "DELETE", f"{KB_PATH}/sources/{src['id']}", tokens["rw"])[0] == 204


def test_website_and_file_are_accepted_and_queued(server):
    base, tokens = server
    status, web, _ = call(base, "POST", f"{KB_PATH}/sources", tokens["rw"], {
        "type": "website", "name": "Docs site",
        # .invalid never resolves: the queued crawl fails fast instead of reaching the network
        "config": {"origins": ["https://docs.kb.invalid"], "startUrls": ["https://docs.kb.invalid/start"],
                   "refreshEverySeconds": 86400}})
    assert status == 201 and (web["queued"], web["refreshEverySeconds"]) == (True, 86400)
    # queued; the server's worker may already have taken it (a website shows its crawl as indexing)
    assert web["status"] in ("waiting", "indexing")
    status, body, _ = call(base, "POST", f"{KB_PATH}/sources", tokens["rw"], {
        "type": "website", "name": "Plain", "config": {"origins": ["http://docs.example.com"],
                                                       "startUrls": ["http://docs.example.com/"]}})
    assert (status, body["error"]["code"]) == (400, "invalid_origin")

    status, f, _ = call(base, "POST", f"{KB_PATH}/sources", tokens["rw"], {
        "type": "file", "name": "Handbook", "config": {"filename": "handbook.md", "contentType": "text/markdown"}})
    assert status == 201 and f["status"] == "waiting"
    req = urllib.request.Request(f"{base}{KB_PATH}/sources/{f['id']}/upload", data=b"# Handbook\n\nHello.",
                                 method="POST")
    req.add_header("Authorization", f"Bearer {tokens['rw']}")
    req.add_header("Content-Type", "application/octet-stream")
    with urllib.request.urlopen(req, timeout=30) as resp:
        assert resp.status == 202
    status, body, _ = call(base, "POST", f"{KB_PATH}/sources", tokens["rw"], {
        "type": "file", "name": "Secret", "visibility": "public",
        "config": {"filename": "a.pdf", "contentType": "application/pdf"}})
    assert (status, body["error"]["code"]) == (400, "invalid_visibility")
    for sid in (web["id"], f["id"]):
        assert call(base, "DELETE", f"{KB_PATH}/sources/{sid}", tokens["rw"])[0] == 204


def test_agents_and_delete_conflict(server):
    base, tokens = server
    _, src, _ = call(base, "POST", f"{KB_PATH}/sources", tokens["rw"],
                     {"type": "instruction", "name": "Escalation", "config": {"text": "Escalate gannet outages."}})
    wait_status(base, tokens["ro"], src["id"], "ready")
    status, agent, _ = call(base, "PUT", "/api/bots/default/agents/helper", tokens["rw"],
                            {"status": "active", "sourceIds": [src["id"]]})
    assert status == 200 and agent == {"id": "helper", "status": "active", "sourceIds": [src["id"]]}
    assert call(base, "GET", "/api/bots/default/agents/helper", tokens["ro"])[1] == agent
    assert call(base, "PUT", "/api/bots/default/agents/helper", tokens["ro"], {"status": "paused"})[0] == 403
    status, body, _ = call(base, "DELETE", f"{KB_PATH}/sources/{src['id']}", tokens["rw"])
    assert (status, body["error"]["code"], body["error"]["agents"]) == (409, "source_in_use", ["helper"])
    call(base, "PUT", "/api/bots/default/agents/helper", tokens["rw"], {"status": "paused", "sourceIds": [src["id"]]})
    assert call(base, "DELETE", f"{KB_PATH}/sources/{src['id']}", tokens["rw"])[0] == 204


def test_citations_over_http(server):
    base, tokens = server
    result = ask(base, tokens["ro"], "deposits XMR confirmations")
    top = result["excerpts"][0]
    cite = {"sourceId": top["sourceId"], "documentId": top["documentId"], "fragmentId": top["fragmentId"]}
    status, body, _ = call(base, "POST", f"{KB_PATH}/citations/validate", tokens["ro"],
                           {"retrievalId": result["retrievalId"], "citations": [cite]})
    assert (status, body) == (200, {"valid": True})
    forged = {**cite, "fragmentId": "made-up"}
    status, body, _ = call(base, "POST", f"{KB_PATH}/citations/validate", tokens["ro"],
                           {"retrievalId": result["retrievalId"], "citations": [cite, forged]})
    assert (status, body["error"]["code"]) == (422, "invalid_citation")
    assert body["error"]["invalid"] == [{**forged, "reason": "not_served"}]


def test_retrieval_test_shows_signals_and_is_rate_limited_per_token(server):
    base, tokens = server
    for n in range(3):
        status, body, _ = call(base, "POST", f"{KB_PATH}/retrieval-test", tokens["ro2"],
                               {"q": "deposits XMR", "rerank": False})
        assert status == 200, (n, body)
        assert body["excerpts"] and all("lexicalRank" in e["signals"] for e in body["excerpts"])
        assert "strength" in body["confidenceComponents"]
    status, body, headers = call(base, "POST", f"{KB_PATH}/retrieval-test", tokens["ro2"], {"q": "deposits XMR"})
    assert (status, body["error"]["code"]) == (429, "rate_limited")
    assert int(headers["Retry-After"]) >= 1
    # the bucket is per token: another token of the same bot is not affected
    assert call(base, "POST", f"{KB_PATH}/retrieval-test", tokens["rw"], {"q": "deposits XMR"})[0] == 200


def test_openapi_is_served_without_auth_and_lists_every_route(server):
    base, _ = server
    status, doc, _ = call(base, "GET", "/openapi.json")
    assert status == 200 and doc["openapi"].startswith("3.")
    paths = doc["paths"]
    for path, method in [
        (f"{KB_PATH.replace('default', '{botID}')}/sources", "post"),
        ("/api/bots/{botID}/knowledge/sources/{sourceID}", "patch"),
        ("/api/bots/{botID}/knowledge/sources/{sourceID}/upload", "post"),
        ("/api/bots/{botID}/knowledge/sources/{sourceID}/cancel", "post"),
        ("/api/bots/{botID}/knowledge/sources/{sourceID}/index-status", "get"),
        ("/api/bots/{botID}/knowledge/citations/validate", "post"),
        ("/api/bots/{botID}/agents/{agentID}", "put"),
    ]:
        assert method in paths[path], path
    assert paths["/api/bots/{botID}/knowledge/sources"]["post"]["x-scope"] == "knowledge:write"


def test_tokens_open_exactly_one_bot(server):
    base, tokens = server
    _, src, _ = call(base, "GET", f"{KB_PATH}/sources", tokens["ro"])
    sid = src["sources"][0]["id"]
    for method, path in [("GET", f"{KB_PATH}/sources/{sid}"), ("POST", f"{KB_PATH}/sources/{sid}/disable"),
                         ("DELETE", f"{KB_PATH}/sources/{sid}"), ("GET", "/api/bots/default/agents/x")]:
        status, body, _ = call(base, method, path, tokens["other"])
        assert (status, body["error"]["code"]) == (403, "forbidden"), path
    assert call(base, "GET", f"{KB_PATH}/sources/{sid}", tokens["ro"])[1]["status"] == "ready"
