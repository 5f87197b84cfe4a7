"""End to end: `kb ingest` then `kb serve` in a subprocess, asked over real HTTP."""

from __future__ import annotations

import time
import urllib.error
import urllib.request

import pytest

from tests.conftest import pack_bytes, page
from tests.e2e.support import KB_PATH, call, free_port, ingested, new_token, start_server

PAGES = [
    page("help/withdraw/monero.md",
         "# Withdraw Monero\n\nSend XMR to your subaddress; payouts need ten confirmations.",
         audience="CUSTOMER", title="Withdraw Monero"),
    page("admin/hot-wallet.md", "# Hot wallet\n\nThe hot wallet rebalancing threshold sweeps XMR to cold storage.",
         audience="OPERATOR", title="Hot wallet"),
]






@pytest.fixture(scope="module")
def server(tmp_path_factory):
    data = ingested(tmp_path_factory.mktemp("e2e"), "coinvault", pack_bytes(PAGES))
    tokens = {"rw": new_token(data), "ro": new_token(data, scopes="knowledge:read"), "other": new_token(data, "other")}
    proc, base = start_server(data, free_port())
    yield base, tokens
    proc.terminate()
    proc.wait(timeout=10)






def test_retrieve_answers_with_the_documented_shape(server):
    base, tokens = server
    status, body, _ = call(base, "POST", f"{KB_PATH}/retrieve", tokens["ro"],
                           {"q": "how do I withdraw monero to my subaddress", "audience": "customer"})
    assert status == 200
    assert set(body) >= {"retrievalId", "audience", "confidence", "floor", "wouldAnswer", "operatorGrounded",
                         "corpusSize", "excerpts"}
    top = body["excerpts"][0]
    assert set(top) >= {"rank", "sourceId", "sourceType", "documentId", "fragmentId", "title", "path", "breadcrumb",
                        "text", "url", "score", "reason", "signals"}
    assert top["path"] == "help/withdraw/monero.md"
    assert top["text"].startswith("Coinvault › Help › Withdraw › Withdraw Monero")
    assert 0.0 <= body["confidence"] <= 1.0
    assert all(e["path"] != "admin/hot-wallet.md" for e in body["excerpts"])


def test_operator_question_reaches_operator_pages_only(server):
    base, tokens = server
    _, body, _ = call(base, "POST", f"{KB_PATH}/retrieval-test", tokens["ro"],
                      {"q": "hot wallet rebalancing threshold", "audience": "operator"})
    assert [e["path"] for e in body["excerpts"]] == ["admin/hot-wallet.md"]
    # the operator sees why the confidence is what it is
    components = body["confidenceComponents"]
    assert set(components) == {"coverage", "strength", "focus", "unseen", "agreement", "similarity", "rescue",
                               "reranker", "rare", "missing", "title", "depth", "nearness", "distinct", "concord",
                               "nqc", "wig", "sentcov", "sentence", "reach", "grounded", "softcov", "matched", "known"}
    assert components["unseen"] == 0.0 and components["coverage"] == 1.0 and body["confidence"] >= body["floor"]
    # a threshold is a limit: a documentation page alone never settles it (the topic gate)
    assert body["topic"] == "limits" and body["gate"]["passed"] is False and body["wouldAnswer"] is False


def test_auth_rules(server):
    base, tokens = server
    assert call(base, "GET", f"{KB_PATH}/sources")[0] == 401
    status, body, _ = call(base, "GET", f"{KB_PATH}/sources", "kb_not-a-real-token")
    assert (status, body["error"]["code"]) == (401, "unauthorized")
    status, body, _ = call(base, "GET", f"{KB_PATH}/sources", tokens["other"])
    assert (status, body["error"]["code"]) == (403, "forbidden")
    status, body, _ = call(base, "POST", f"{KB_PATH}/reindex", tokens["ro"], {})
    assert (status, body["error"]["code"]) == (403, "forbidden")


def test_sources_index_and_documents(server):
    base, tokens = server
    status, body, _ = call(base, "GET", f"{KB_PATH}/sources", tokens["ro"])
    assert status == 200
    [src] = body["sources"]
    assert (src["type"], src["status"], src["passages"]) == ("pack", "ready", 2)
    status, one, _ = call(base, "GET", f"{KB_PATH}/sources/{src['id']}", tokens["ro"])
    assert status == 200 and one["id"] == src["id"]
    status, docs, _ = call(base, "GET", f"{KB_PATH}/sources/{src['id']}/documents", tokens["ro"])
    assert sorted(d["path"] for d in docs["documents"]) == ["admin/hot-wallet.md", "help/withdraw/monero.md"]
    status, index, _ = call(base, "GET", f"{KB_PATH}/index", tokens["ro"])
    assert index["totalPassages"] == 2 and index["builtAt"]
    assert call(base, "GET", f"{KB_PATH}/sources/nope", tokens["ro"])[0] == 404


def test_bad_questions_get_400_with_codes(server):
    base, tokens = server
    status, body, _ = call(base, "POST", f"{KB_PATH}/retrieve", tokens["ro"], {"q": "   "})
    assert (status, body["error"]["code"]) == (400, "empty_question")
    status, body, _ = call(base, "POST", f"{KB_PATH}/retrieve", tokens["ro"], {"q": "x" * 16_001})
    assert (status, body["error"]["code"]) == (400, "question_too_long")
    status, body, _ = call(base, "POST", f"{KB_PATH}/retrieve", tokens["ro"], {"q": "hi", "audience": "admins"})
    assert (status, body["error"]["code"]) == (400, "invalid_audience")
    req = urllib.request.Request(base + f"{KB_PATH}/retrieve", data=b"{not json", method="POST")
    req.add_header("Authorization", f"Bearer {tokens['ro']}")
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(req, timeout=10)
    assert err.value.code == 400


def test_reindex_is_accepted_and_runs(server):
    base, tokens = server
    status, body, _ = call(base, "POST", f"{KB_PATH}/reindex", tokens["rw"], {})
    assert status == 202 and body["accepted"] is True
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        _, src, _ = call(base, "GET", f"{KB_PATH}/sources", tokens["ro"])
        if all(s["status"] == "ready" for s in src["sources"]):
            break
        time.sleep(0.2)
    assert all(s["status"] == "ready" for s in src["sources"])
