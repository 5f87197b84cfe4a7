"""The life of a source through the shared route code (``dispatch``) over the real embedded
adapters: create, patch, refresh, cancel, disable, enable, delete, uploads, agents, the
retrieval-test limit, and a worker killed mid-job."""

from __future__ import annotations

import json
import threading

import pytest

from knowledge import lifecycle
from knowledge.api.auth import create_token
from knowledge.api.http import Request
from knowledge.api.ratelimit import TokenBucket
from knowledge.api.routes import ROUTES, dispatch
from knowledge.embedded.worker import InProcessWorkflow
from knowledge.model import Agent, Source
from knowledge.refresh.packsync import install_pack, pack_source_id
from knowledge.refresh.pipeline import Refresher
from knowledge.refresh.reaper import reap_expired_leases
from knowledge.refresh.reindex import reindex
from knowledge.retrieve.service import RetrievalRequest, retrieve
from knowledge.sources.base import upload_blob_key
from tests.conftest import page

KB = "/api/bots/default/knowledge"


class Api:
    def __init__(self, services, limiter=None):
        self.services = services
        self.limiter = limiter or TokenBucket(per_minute=1000)
        self.rw = create_token(services, "default", ["knowledge:read", "knowledge:write"])
        self.ro = create_token(services, "default", ["knowledge:read"])

    def __call__(self, method, path, body=None, token=None, raw=None):
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else b"")
        headers = {"authorization": f"Bearer {token or self.rw}"}
        resp = dispatch(self.services, Request(method, path, headers, {}, data), limiter=self.limiter)
        return resp.status, resp.body, resp.headers


@pytest.fixture
def api(services):
    services.workflow = InProcessWorkflow(services, background=False)  # jobs run inside the request
    return Api(services)


def ask(services, q, audience="customer", agent=None):
    return retrieve(services, RetrievalRequest("default", q, audience, agent))


def served(services, q, audience="customer"):
    return {e["sourceId"] for e in ask(services, q, audience)["excerpts"]}


def create(api, kind, config, name="src", **extra):
    status, body, _ = api("POST", f"{KB}/sources", {"type": kind, "name": name, "config": config, **extra})
    assert status == 201, body
    return body


# -- every type -------------------------------------------------------------------------


def test_articles_follow_their_state_over_the_api(api, services):
    pub = create(api, "article", {"title": "Refunds", "body": "Refunds of the lemur plan.", "state": "published"})
    internal = create(api, "article", {"title": "Escalation", "body": "Lemur escalations go to tier two.",
                                       "state": "internal"})
    draft = create(api, "article", {"title": "Draft", "body": "Lemur draft words.", "state": "draft"})
    empty = create(api, "article", {"title": "Stub", "body": "   ", "state": "published"})
    assert (pub["visibility"], internal["visibility"]) == ("public", "agent")
    assert all(s["status"] == "ready" for s in (pub, internal, draft, empty))
    assert (draft["passages"], empty["passages"]) == (0, 0)
    assert served(services, "lemur", "public") == {pub["id"]}
    assert served(services, "lemur", "customer") == {pub["id"], internal["id"]}
    assert pub["weight"] == 1.15


def test_instruction_fact_faq_and_their_weights(api, services):
    ins = create(api, "instruction", {"text": "Never promise a refund on the kestrel plan."})
    fact = create(api, "fact", {"key": "kestrel_price", "value": 42})
    faq = create(api, "faq", {"entries": [{"question": "How do I cancel kestrel?", "answer": "From billing."},
                                          {"question": "Is kestrel monthly?", "answer": "Yes, kestrel is."}]})
    assert [s["status"] for s in (ins, fact, faq)] == ["ready"] * 3
    assert (ins["weight"], fact["weight"], faq["weight"]) == (1.15, 1.15, 0.9)
    assert faq["passages"] == 2 and fact["config"] == {"key": "kestrel_price", "value": "42"}
    assert served(services, "kestrel price") >= {fact["id"]}
    docs = api("GET", f"{KB}/sources/{faq['id']}/documents")[1]["documents"]
    assert sorted(d["title"] for d in docs) == ["How do I cancel kestrel?", "Is kestrel monthly?"]


def test_a_file_source_waits_for_its_upload(api, services):
    f = create(api, "file", {"filename": "guide.pdf", "contentType": "application/pdf"})
    assert (f["status"], f["queued"]) == ("waiting", False)
    services.workflow.tick()  # the scheduler does not run a file with nothing uploaded
    src = services.state.get_source("default", f["id"])
    assert (src.status, src.attempts) == ("waiting", 0)


def test_pack_source_uses_the_sync_id_and_refuses_duplicates(api, services, write_pack):
    install_pack(services, write_pack("coinvault", [page("help/a.md", "# A\n\nAardvark deposit.",
                                                         audience="CUSTOMER")]))
    src = create(api, "pack", {"slug": "coinvault"}, name="Coinvault docs")
    assert src["id"] == pack_source_id("default", "coinvault") and src["status"] == "ready"
    status, body, _ = api("POST", f"{KB}/sources", {"type": "pack", "name": "x", "config": {"slug": "coinvault"}})
    assert (status, body["error"]["code"]) == (409, "already_exists")
    status, body, _ = api("POST", f"{KB}/sources", {"type": "pack", "name": "x", "config": {"slug": "absent"}})
    assert (status, body["error"]["code"]) == (400, "unknown_pack")
    reindex(services, "default")  # the pack sync finds the same row, not a second one
    assert [s.id for s in services.state.list_sources("default")] == [src["id"]]


# -- validation over the API -------------------------------------------------------------


@pytest.mark.parametrize("body,code", [
    ({"type": "blog", "name": "x", "config": {}}, "invalid_type"),
    ({"type": "instruction", "name": "x" * 121, "config": {"text": "t"}}, "invalid_name"),
    ({"type": "instruction", "name": "x", "config": {"text": "t"}, "priority": 101}, "invalid_priority"),
    ({"type": "instruction", "name": "x", "config": {"text": "t"}, "visibility": "public"}, "invalid_visibility"),
    ({"type": "instruction", "name": "x", "config": {"text": "t" * 70_000}}, "config_too_large"),
    ({"type": "instruction", "name": "x", "config": {"text": "t"}, "colour": "red"}, "unknown_field"),
    ({"type": "instruction", "name": "x", "config": {"text": "t"}, "refreshEverySeconds": 3600},
     "invalid_refresh_interval"),
    ({"type": "website", "name": "x", "config": {"origins": ["https://a.example"],
                                                 "startUrls": ["https://b.example/"]}}, "invalid_start_url"),
    ([1, 2], "invalid_input"),
])
def test_create_rejects_with_stable_codes(api, services, body, code):
    status, reply, _ = api("POST", f"{KB}/sources", body)
    assert (status, reply["error"]["code"]) == (400, code)
    assert services.state.list_sources("default") == []


def test_malformed_and_deeply_nested_json_is_a_400(api):
    assert api("POST", f"{KB}/sources", raw=b"{nope")[0] == 400
    status, body, _ = api("POST", f"{KB}/sources", raw=b"[" * 100_000 + b"]" * 100_000)
    assert (status, body["error"]["code"]) == (400, "invalid_input")


# -- patch ------------------------------------------------------------------------------


def test_patch_priority_and_name_apply_at_once_without_reindexing(api, services):
    src = create(api, "instruction", {"text": "The osprey rule."}, name="Old name")
    attempts, indexed = src["attempts"], src["lastIndexedAt"]
    status, body, _ = api("PATCH", f"{KB}/sources/{src['id']}", {"priority": 7, "name": "New name"})
    assert status == 200 and (body["priority"], body["name"], body["queued"]) == (7, "New name", False)
    assert (body["attempts"], body["lastIndexedAt"], body["status"]) == (attempts, indexed, "ready")
    [live] = services.state.live_sources("default")
    assert (live.priority, live.name) == (7, "New name")  # what ranking reads, at once


def test_patch_config_reindexes_and_replaces_the_passages(api, services):
    src = create(api, "instruction", {"text": "Refunds take five heron days."})
    status, body, _ = api("PATCH", f"{KB}/sources/{src['id']}", {"config": {"text": "Refunds take two ibis days."}})
    assert status == 200 and body["queued"] is True and body["status"] == "ready"
    assert served(services, "ibis days") == {src["id"]}
    assert served(services, "heron") == set()


def test_patch_refuses_a_type_change_and_bad_fields(api):
    src = create(api, "instruction", {"text": "t"})
    status, body, _ = api("PATCH", f"{KB}/sources/{src['id']}", {"type": "fact"})
    assert (status, body["error"]["code"]) == (400, "invalid_type")
    status, body, _ = api("PATCH", f"{KB}/sources/{src['id']}", {"priority": -101})
    assert (status, body["error"]["code"]) == (400, "invalid_priority")
    assert api("PATCH", f"{KB}/sources/nope", {"priority": 1})[0] == 404


def test_patch_of_a_disabled_source_does_not_run_it(api, services):
    src = create(api, "instruction", {"text": "The dunlin rule."})
    api("POST", f"{KB}/sources/{src['id']}/disable")
    status, body, _ = api("PATCH", f"{KB}/sources/{src['id']}", {"config": {"text": "The curlew rule."}})
    assert (status, body["status"], body["queued"]) == (200, "disabled", False)
    assert served(services, "curlew") == set() and served(services, "dunlin") == set()


# -- refresh, checksum ------------------------------------------------------------------


def test_refresh_skips_unchanged_content_and_force_rebuilds(api, services):
    src = create(api, "faq", {"entries": [{"question": "Pipit?", "answer": "Pipit answer."}]})
    gen = services.state.get_source("default", src["id"]).live_generation
    status, body, _ = api("POST", f"{KB}/sources/{src['id']}/refresh")
    assert status == 202 and body["queued"] is True
    after = services.state.get_source("default", src["id"])
    assert (after.live_generation, after.attempts, after.status) == (gen, 2, "ready")  # skipped
    api("POST", f"{KB}/sources/{src['id']}/refresh", {"force": True})
    # every run takes a generation with its lease (the skipped one ended its own unused): the
    # forced rebuild's is live, and no other generation is left behind
    assert services.state.get_source("default", src["id"]).live_generation > gen
    assert services.state.orphan_generations() == []
    status, body, _ = api("POST", f"{KB}/sources/{src['id']}/refresh", {"force": "yes"})
    assert (status, body["error"]["code"]) == (400, "invalid_input")


def test_partial_success_is_reported_not_hidden(api, services):
    entries = [{"question": f"Question {n} about grebes?", "answer": f"Answer {n}."} for n in range(101)]
    src = create(api, "faq", {"entries": entries})
    assert (src["status"], src["errorCode"]) == ("ready", "expanded_too_large")
    assert (src["documentsProcessed"], src["documentsFailed"], src["passages"]) == (100, 1, 100)
    status, st, _ = api("GET", f"{KB}/sources/{src['id']}/index-status")
    assert status == 200 and st["documentsFailed"] == 1 and st["errorCode"] == "expanded_too_large"


# -- disable / enable / delete ----------------------------------------------------------


def test_disable_leaves_every_search_at_once_and_enable_brings_it_back(api, services):
    src = create(api, "instruction", {"text": "The avocet discount applies on Mondays."})
    api("PUT", "/api/bots/default/agents/a1", {"status": "active", "sourceIds": [src["id"]]})
    assert served(services, "avocet discount") == {src["id"]}
    status, body, _ = api("POST", f"{KB}/sources/{src['id']}/disable")
    assert (status, body["status"]) == (200, "disabled")
    assert served(services, "avocet discount") == set()
    assert ask(services, "avocet discount", agent="a1")["excerpts"] == []
    assert api("GET", f"{KB}/index")[1]["totalPassages"] == 0
    status, body, _ = api("POST", f"{KB}/sources/{src['id']}/enable")
    assert (status, body["status"], body["queued"]) == (202, "ready", True)
    assert served(services, "avocet discount") == {src["id"]}


def test_delete_removes_source_documents_and_passages(api, services):
    src = create(api, "instruction", {"text": "The shrike policy."})
    gen = services.state.get_source("default", src["id"]).live_generation
    assert services.index.count("default", "customer", [f"{src['id']}:{gen}"]) == 1
    status, body, _ = api("DELETE", f"{KB}/sources/{src['id']}")
    assert (status, body) == (204, None)
    assert services.state.get_source("default", src["id"]) is None
    assert services.state.list_documents("default", src["id"]) == []
    assert services.index.count("default", "customer", [f"{src['id']}:{gen}"]) == 0
    assert services.state.orphan_generations() == []
    assert api("GET", f"{KB}/sources/{src['id']}")[0] == 404


def test_delete_of_a_source_an_active_agent_selects_is_a_conflict(api, services):
    src = create(api, "instruction", {"text": "The tern policy."})
    other = create(api, "instruction", {"text": "The skua policy."})
    api("PUT", "/api/bots/default/agents/everything", {"status": "active", "sourceIds": []})  # none = all
    api("PUT", "/api/bots/default/agents/picky", {"status": "active", "sourceIds": [src["id"]]})
    status, body, _ = api("DELETE", f"{KB}/sources/{src['id']}")
    assert (status, body["error"]["code"], body["error"]["agents"]) == (409, "source_in_use", ["picky"])
    assert src["id"] in served(services, "tern policy")  # nothing was removed
    assert api("DELETE", f"{KB}/sources/{other['id']}")[0] == 204  # "all sources" does not pin one
    api("PUT", "/api/bots/default/agents/picky", {"status": "paused", "sourceIds": [src["id"]]})
    assert api("DELETE", f"{KB}/sources/{src['id']}")[0] == 204


# -- cancel -----------------------------------------------------------------------------


def _pack(write_pack, services, version, n=4):
    pages = [page(f"help/p{i}.md", f"# Page {i}\n\nversion {version} puffin text {i}", audience="CUSTOMER")
             for i in range(n)]
    install_pack(services, write_pack("coinvault", pages))
    return pack_source_id("default", "coinvault")


def test_cancel_stops_the_run_and_keeps_the_previous_generation(services, write_pack):
    sid = _pack(write_pack, services, "one")
    reindex(services, "default")
    live = services.state.get_source("default", sid).live_generation
    _pack(write_pack, services, "two")

    seen = []

    def progress(event, **data):
        if event == "document":
            seen.append(data["number"])
            if data["number"] == 1:
                lifecycle.cancel_source(services, "default", sid)

    outcome = Refresher(services, progress=progress).refresh("default", sid)
    assert (outcome.status, outcome.error_code) == ("failed", "cancelled")
    assert seen == [1]  # stopped before the next document, not at the end of the run
    src = services.state.get_source("default", sid)
    assert (src.status, src.error_code, src.live_generation, src.lease_owner) == ("failed", "cancelled", live, None)
    res = ask(services, "puffin text")
    assert res["excerpts"] and all("version one" in e["text"] for e in res["excerpts"])
    assert services.index.count("default", "customer", [f"{sid}:{live + 1}"]) == 0  # staged one dropped


def test_cancel_of_a_queued_refresh_drops_it(api, services):
    src = create(api, "instruction", {"text": "The plover rule."})
    services.workflow = InProcessWorkflow(services, background=True)  # queued, worker not started
    api("PATCH", f"{KB}/sources/{src['id']}", {"config": {"text": "The sandpiper rule."}})
    status, body, _ = api("POST", f"{KB}/sources/{src['id']}/cancel")
    assert (status, body["status"], body["errorCode"]) == (202, "failed", "cancelled")
    assert not services.workflow.pending("default", src["id"])
    services.workflow.tick()  # the scheduler does not queue it again
    assert not services.workflow.pending("default", src["id"])
    assert served(services, "plover rule") == {src["id"]}  # the previous content still answers
    status, body, _ = api("POST", f"{KB}/sources/{src['id']}/cancel")
    assert (status, body["error"]["code"]) == (409, "nothing_to_cancel")


def test_disable_during_a_run_stays_disabled(services, write_pack):
    sid = _pack(write_pack, services, "one")
    reindex(services, "default")
    _pack(write_pack, services, "two")

    seen = []

    def progress(event, **data):
        if event == "document":
            seen.append(data["number"])
            if data["number"] == 1:
                lifecycle.disable_source(services, "default", sid)

    Refresher(services, progress=progress).refresh("default", sid)
    assert seen == [1]
    src = services.state.get_source("default", sid)
    assert (src.status, src.lease_owner) == ("disabled", None)
    assert ask(services, "puffin text")["excerpts"] == []


# -- a worker killed mid-job ------------------------------------------------------------


def test_killed_worker_recovers_and_old_passages_are_served_throughout(services, write_pack, monkeypatch, clock):
    sid = _pack(write_pack, services, "one")
    reindex(services, "default")
    old = services.state.get_source("default", sid)
    _pack(write_pack, services, "two")

    def only_version(label):
        res = ask(services, "puffin text")
        assert res["excerpts"] and all(f"version {label}" in e["text"] for e in res["excerpts"]), res
        return res

    entered, never = threading.Event(), threading.Event()
    original_write = services.index.write

    def write(bot, passages, **kw):
        if threading.current_thread().name == "doomed-worker":
            entered.set()
            never.wait(30)  # the worker hangs here; it is never heard from again
        return original_write(bot, passages, **kw)

    monkeypatch.setattr(services.index, "write", write)
    results = []
    doomed = threading.Thread(name="doomed-worker", daemon=True,
                              target=lambda: results.append(Refresher(services, owner="doomed").refresh("default",
                                                                                                          sid)))
    doomed.start()
    assert entered.wait(10)
    _pack(write_pack, services, "three", n=6)  # what the next worker will find
    during = services.state.get_source("default", sid)
    assert (during.status, during.lease_owner, during.attempts) == ("indexing", "doomed", old.attempts + 1)
    only_version("one")

    clock.advance(60)  # lease not expired yet: nothing is reaped
    assert reap_expired_leases(services) == []
    only_version("one")
    clock.advance(61)  # now it is
    workflow = InProcessWorkflow(services, background=False)
    workflow.tick()  # reaps (source back to the queue) and runs the queued refresh
    after = services.state.get_source("default", sid)
    assert (after.status, after.lease_owner, after.error_code) == ("ready", None, None)
    assert after.attempts == old.attempts + 2
    assert after.live_generation == old.live_generation + 2  # the dead worker's generation was skipped
    assert after.documents_processed == 6
    only_version("three")

    never.set()  # the zombie wakes up: it must not touch what the next worker committed
    doomed.join(10)
    assert results and results[0].status == "lost"
    final = services.state.get_source("default", sid)
    assert (final.status, final.live_generation, final.error_code) == ("ready", after.live_generation, None)
    assert (final.documents_processed, final.fragments_processed) == (6, 6)  # not the zombie's 4
    only_version("three")
    assert services.state.orphan_generations() == []


# -- uploads ----------------------------------------------------------------------------


def test_upload_is_capped_at_8_mb_and_stored(api, services):
    f = create(api, "file", {"filename": "notes.md", "contentType": "text/markdown"})
    status, body, _ = api("POST", f"{KB}/sources/{f['id']}/upload", raw=b"x" * (8 * 1024 * 1024 + 1))
    assert (status, body["error"]["code"]) == (413, "file_too_large")
    assert not services.blobs.exists(upload_blob_key("default", f["id"]))
    status, body, _ = api("POST", f"{KB}/sources/{f['id']}/upload", raw=b"# Notes\n\nhello")
    assert status == 202 and body["queued"] is True  # an upload queues the refresh
    assert services.blobs.get(upload_blob_key("default", f["id"])) == b"# Notes\n\nhello"
    status, body, _ = api("POST", f"{KB}/sources/{f['id']}/upload", raw=b"")
    assert (status, body["error"]["code"]) == (400, "empty_upload")
    ins = create(api, "instruction", {"text": "t"})
    status, body, _ = api("POST", f"{KB}/sources/{ins['id']}/upload", raw=b"data")
    assert (status, body["error"]["code"]) == (409, "not_a_file_source")
    assert api("DELETE", f"{KB}/sources/{f['id']}")[0] == 204
    assert not services.blobs.exists(upload_blob_key("default", f["id"]))


# -- status and index views -------------------------------------------------------------


def test_index_status_and_index_rows(api, services):
    ins = create(api, "instruction", {"text": "The smew rule."}, name="Rules")
    faq = create(api, "faq", {"entries": [{"question": "Smew?", "answer": "Smew."}]}, name="FAQ")
    status, st, _ = api("GET", f"{KB}/sources/{ins['id']}/index-status", token=api.ro)
    assert status == 200
    assert {k: st[k] for k in ("status", "indexing", "attempts", "documentsProcessed", "fragmentsProcessed",
                               "documentsFailed", "errorCode")} == {
        "status": "ready", "indexing": False, "attempts": 1, "documentsProcessed": 1, "fragmentsProcessed": 1,
        "documentsFailed": 0, "errorCode": None}
    assert st["lastIndexedAt"]
    _, index, _ = api("GET", f"{KB}/index", token=api.ro)
    assert index["totalPassages"] == 2 and index["builtAt"]
    assert [r["id"] for r in index["sources"]] == [ins["id"], faq["id"]]  # heaviest first
    assert index["sources"][0]["weight"] == 1.15 and index["sources"][1]["weight"] == 0.9
    assert index["embedder"] == "none"  # the deployment's default: lexical only


def test_index_says_which_embedder_the_bot_uses(api, services):
    services.default_embedder = "hashing"
    assert api("GET", f"{KB}/index", token=api.ro)[1]["embedder"] == "hashing"
    settings = services.state.get_bot("default")
    settings.embedder = "openai"
    services.state.put_bot(settings)
    assert api("GET", f"{KB}/index", token=api.ro)[1]["embedder"] == "openai"


# -- agents -----------------------------------------------------------------------------


def test_agents_round_trip_and_validation(api, services):
    a = create(api, "instruction", {"text": "The eider rule."})
    b = create(api, "instruction", {"text": "The eider exception."})
    status, body, _ = api("PUT", "/api/bots/default/agents/bot-1", {"status": "active", "sourceIds": [a["id"]]})
    assert (status, body) == (200, {"id": "bot-1", "status": "active", "sourceIds": [a["id"]]})
    assert api("GET", "/api/bots/default/agents/bot-1", token=api.ro)[1] == body
    assert {e["sourceId"] for e in ask(services, "eider", agent="bot-1")["excerpts"]} == {a["id"]}
    assert served(services, "eider") == {a["id"], b["id"]}
    status, body, _ = api("PUT", "/api/bots/default/agents/bot-1", {"status": "asleep"})
    assert (status, body["error"]["code"]) == (400, "invalid_status")
    status, body, _ = api("PUT", "/api/bots/default/agents/bot-1", {"sourceIds": [a["id"], "ghost"]})
    assert (status, body["error"]["code"], body["error"]["unknown"]) == (400, "unknown_source", ["ghost"])
    many = [f"s{i}" for i in range(101)]
    status, body, _ = api("PUT", "/api/bots/default/agents/bot-1", {"sourceIds": many})
    assert (status, body["error"]["code"]) == (400, "too_many_sources")
    assert api("GET", "/api/bots/default/agents/nobody")[0] == 404
    api("PUT", "/api/bots/default/agents/a-first", {"status": "paused", "sourceIds": []})
    status, body, _ = api("GET", "/api/bots/default/agents", token=api.ro)
    assert (status, body) == (200, {"agents": [{"id": "a-first", "status": "paused", "sourceIds": []},
                                               {"id": "bot-1", "status": "active", "sourceIds": [a["id"]]}]})
    assert api("PUT", "/api/bots/default/agents/bot-1", {"status": "paused"}, token=api.ro)[0] == 403


def test_live_tables_are_listed_per_live_source_with_their_rows(api, services):
    assert api("GET", f"{KB}/live", token=api.ro)[1] == {"sources": []}
    src = create(api, "live", {"tables": ["methods", "limits"]}, visibility="agent")
    rows = [{"area": "Deposits", "name": "Bitcoin", "code": "BTC", "fixedFee": 0, "enabled": False}]
    assert api("PUT", f"{KB}/live/methods", {"rows": rows})[0] == 200
    status, body, _ = api("GET", f"{KB}/live", token=api.ro)
    assert status == 200
    assert body["sources"] == [{"sourceId": src["id"], "name": src["name"], "visibility": "agent",
                                "status": src["status"], "requiredTables": ["methods", "limits"],
                                "tables": [{"table": "methods", "rows": rows}]}]


def test_retrieve_with_an_agent_over_the_api(api, services):
    a = create(api, "instruction", {"text": "The loon rule."})
    create(api, "instruction", {"text": "The loon exception."})
    api("PUT", "/api/bots/default/agents/x", {"status": "active", "sourceIds": [a["id"]]})
    status, body, _ = api("POST", f"{KB}/retrieve", {"q": "loon", "agentId": "x"}, token=api.ro)
    assert status == 200 and {e["sourceId"] for e in body["excerpts"]} == {a["id"]}


# -- retrieval-test ---------------------------------------------------------------------


def test_retrieval_test_shows_signals_and_confidence_components_and_validates(api, services):
    create(api, "instruction", {"text": "The razorbill refund rule."})
    status, body, _ = api("POST", f"{KB}/retrieval-test", {"q": "razorbill refund", "rerank": False}, token=api.ro)
    assert status == 200 and body["excerpts"]
    full = ask(services, "razorbill refund")
    top = body["excerpts"][0]
    # the operator's test shows what the ranking saw: the same signals retrieve computes
    assert top["signals"] == full["excerpts"][0]["signals"] and top["signals"]["lexicalRank"] == 1
    assert set(body["confidenceComponents"]) == set(full["confidenceComponents"]) >= {"coverage", "strength"}
    assert {"score", "reason", "title", "text", "breadcrumb"} <= set(top)
    status, reply, _ = api("POST", f"{KB}/retrieval-test", {"q": "razorbill", "rerank": "no"}, token=api.ro)
    assert (status, reply["error"]["code"]) == (400, "invalid_input")
    status, reply, _ = api("POST", f"{KB}/retrieval-test", {"q": "razorbill", "debug": True}, token=api.ro)
    assert (status, reply["error"]["code"]) == (400, "unknown_field")


def test_retrieval_test_is_rate_limited_per_token(services, clock):
    api = Api(services, limiter=TokenBucket(per_minute=3))
    for _ in range(3):
        assert api("POST", f"{KB}/retrieval-test", {"q": "anything"}, token=api.ro)[0] == 200
    status, body, headers = api("POST", f"{KB}/retrieval-test", {"q": "anything"}, token=api.ro)
    assert (status, body["error"]["code"]) == (429, "rate_limited")
    assert headers["Retry-After"] == "20"  # one request per 20 s at 3/min
    assert api("POST", f"{KB}/retrieval-test", {"q": "anything"}, token=api.rw)[0] == 200  # own bucket
    clock.advance(20)
    assert api("POST", f"{KB}/retrieval-test", {"q": "anything"}, token=api.ro)[0] == 200
    assert api("POST", f"{KB}/retrieval-test", {"q": "anything"}, token=api.ro)[0] == 429


# -- scopes and bots --------------------------------------------------------------------


def test_every_route_checks_scope_and_bot(services):
    api = Api(services)
    other = create_token(services, "other", ["knowledge:read", "knowledge:write"])
    services.state.put_source(Source(id="s1", bot="default", type="instruction", name="n", config={"text": "t"}))
    services.state.put_agent(Agent(id="a1", bot="default"))
    params = {"botID": "default", "sourceID": "s1", "agentID": "a1", "tokenID": "0" * 16, "table": "methods"}
    checked = 0
    for route in ROUTES:
        if route.scope is None:
            continue
        path = route.template.format(**params)
        status, body, _ = api(route.method, path, {}, token=other)
        assert (status, body["error"]["code"]) == (403, "forbidden"), path
        status, body, _ = api(route.method, path, {}, token="kb_" + "x" * 40)
        assert (status, body["error"]["code"]) == (401, "unauthorized"), path
        if route.scope in ("knowledge:write", "knowledge:admin"):
            status, body, _ = api(route.method, path, {}, token=api.ro)
            assert (status, body["error"]["code"]) == (403, "forbidden"), path
        if route.scope == "knowledge:admin":  # read and write do not open tokens or settings
            status, body, _ = api(route.method, path, {}, token=api.rw)
            assert (status, body["error"]["code"]) == (403, "forbidden"), path
        checked += 1
    assert checked >= 24
    assert services.state.get_source("default", "s1") is not None  # nothing got through


def test_every_route_of_the_table_is_deployed_on_aws_and_published(services):
    """The route table is what ``kb serve`` answers; API Gateway's resources are declared apart
    (``infra/api.py``) and the document is generated: all three must list the same routes."""
    pytest.importorskip("aws_cdk")
    from infra.api import BOT_ROUTES

    table = {(r.method, r.template) for r in ROUTES}
    deployed = {(m, "/api/bots/{botID}/" + r.path.replace("{id}", "{sourceID}")) for r in BOT_ROUTES
                for m in r.methods} | {("GET", "/openapi.json")}
    assert table == deployed
    doc = dispatch(services, Request("GET", "/openapi.json")).body
    assert {(m.upper(), p) for p, item in doc["paths"].items() for m in item} == deployed
    create_op = doc["paths"]["/api/bots/{botID}/knowledge/sources"]["post"]
    assert create_op["requestBody"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/SourceCreate"}
    assert "201" in create_op["responses"] and "409" in create_op["responses"]


def test_delete_with_a_read_only_index_leaves_passages_for_the_next_clean_up(api, services, monkeypatch):
    from knowledge.errors import BackendError
    from knowledge.refresh.finish import drop_orphans

    src = create(api, "instruction", {"text": "The gnu policy."}, visibility="agent")
    services.workflow.tick()
    live = services.state.get_source("default", src["id"]).live_generation
    original = services.index.delete_generation

    def forbidden(*args, **kwargs):
        raise BackendError("403 from the search domain")

    monkeypatch.setattr(services.index, "delete_generation", forbidden)
    status, _, _ = api("DELETE", f"{KB}/sources/{src['id']}")
    assert status == 204
    assert services.state.get_source("default", src["id"]) is None
    assert ask(services, "gnu policy")["excerpts"] == []  # out of every search at once
    assert ("default", src["id"], live) in services.state.orphan_generations()
    monkeypatch.setattr(services.index, "delete_generation", original)
    drop_orphans(services)  # the next commit (with a writer role) cleans up
    assert services.index.count("default", "customer", [f"{src['id']}:{live}"]) == 0


def test_an_upload_while_the_file_is_being_indexed_stops_that_run(api, services):
    f = create(api, "file", {"filename": "notes.md", "contentType": "text/markdown"})
    assert api("POST", f"{KB}/sources/{f['id']}/upload", raw=b"# Notes\n\nThe heron rule.")[0] == 202
    now = services.clock.now()
    assert services.state.acquire_lease("default", f["id"], "worker-x", now, 120.0)  # a run reading it
    before = services.state.get_source("default", f["id"])
    status, _, _ = api("POST", f"{KB}/sources/{f['id']}/upload", raw=b"# Notes\n\nThe egret rule.")
    assert status == 202
    src = services.state.get_source("default", f["id"])
    # the running job is asked to stop (it may have read the heron file); its row is still its own
    assert src.cancel_requested is True
    assert (src.status, src.lease_owner) == (before.status, "worker-x")
    assert services.blobs.get(upload_blob_key("default", f["id"])) == b"# Notes\n\nThe egret rule."
