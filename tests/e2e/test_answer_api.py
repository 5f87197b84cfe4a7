"""Answer time over real HTTP against `kb serve` in a subprocess: live data read at answer time
and citable, the topic gate, gaps and their re-check, a ticket taught as a draft article.
The same scenario runs through the Lambda handlers in tests/functional/test_answer_handlers.py."""

from __future__ import annotations

import signal
import time

import pytest

from tests.answer_scenario import FEE_Q, PAGES, ROWS, TICKET
from tests.conftest import pack_bytes
from tests.e2e.support import KB_PATH, call, free_port, ingested, new_token, start_server


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    data = ingested(tmp_path_factory.mktemp("answer"), "wallet", pack_bytes(PAGES))
    token, ro = new_token(data), new_token(data, scopes="knowledge:read")
    proc, base = start_server(data, free_port())
    yield base, token, ro, data
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=10)


def ask(base, token, q, route="retrieve", audience="customer"):
    status, body, _ = call(base, "POST", f"{KB_PATH}/{route}", token, {"q": q, "audience": audience})
    assert status == 200, body
    return body


def test_live_data_the_gate_and_gaps_over_http(server):
    base, token, ro, _ = server
    # documentation alone never settles a fee question: gated, and recorded as a gap
    gated = ask(base, token, FEE_Q)
    assert gated["topic"] == "fees" and gated["excerpts"]
    assert all(e["sourceType"] == "pack" for e in gated["excerpts"])
    assert gated["gate"]["passed"] is False and gated["wouldAnswer"] is False and gated["gate"]["reason"]
    # the operator's test screen asks without recording a gap
    assert ask(base, token, "what does a withdrawal cost in fees", route="retrieval-test")["gate"]["passed"] is False
    status, gaps, _ = call(base, "GET", f"{KB_PATH}/gaps?audience=customer", ro)
    assert status == 200, gaps
    (cluster,) = gaps["clusters"]
    assert cluster["representative"] == FEE_Q and cluster["outcomes"] == {"gated": 1}
    assert cluster["topic"] == "fees" and cluster["lastSeen"].endswith("Z")
    status, later, _ = call(base, "GET", f"{KB_PATH}/gaps?since={int(time.time()) + 3600}", ro)
    assert (status, later) == (200, {"clusters": []})
    status, body, _ = call(base, "GET", f"{KB_PATH}/gaps?since=last-week", ro)
    assert (status, body["error"]["code"]) == (400, "invalid_since")

    # a live source: ready at once, its table pushed, read by the next question
    status, src, _ = call(base, "POST", f"{KB_PATH}/sources", token,
                          {"type": "live", "name": "Payment methods", "config": {"tables": ["methods"]}})
    assert status == 201, src
    assert (src["status"], src["queued"], src["weight"]) == ("ready", False, 1.3)
    status, body, _ = call(base, "PUT", f"{KB_PATH}/live/methods", token, {"rows": ROWS})
    assert (status, body) == (200, {"sourceId": src["id"], "table": "methods", "rows": 2, "enabled": 2})

    grounded = ask(base, token, FEE_Q)
    live = grounded["excerpts"][0]
    assert (live["sourceType"], live["sourceId"], live["reason"]) == ("live", src["id"], "live")
    assert "Bitcoin (BTC): fixed fee 0.0005" in live["text"] and "Ether" not in live["text"]
    assert grounded["gate"]["passed"] is True and grounded["operatorGrounded"] is True
    cite = {k: live[k] for k in ("sourceId", "documentId", "fragmentId")}
    status, body, _ = call(base, "POST", f"{KB_PATH}/citations/validate", ro,
                           {"retrievalId": grounded["retrievalId"], "citations": [cite]})
    assert (status, body) == (200, {"valid": True})

    # a question on no gated topic gets no live excerpt and no gate
    other = ask(base, token, "How do I reset my password?")
    assert other["topic"] is None and other["gate"] is None
    assert all(e["sourceType"] != "live" for e in other["excerpts"])

    # the gap's examples asked again: the live table answers them now
    status, rechecked, _ = call(base, "POST", f"{KB_PATH}/gaps/recheck", token, {"audience": "customer"})
    assert status == 200, rechecked
    (cluster,) = rechecked["clusters"]
    assert (cluster["representative"], cluster["answered"]) == (FEE_Q, 1)
    assert grounded["confidence"] >= grounded["floor"] and cluster["nowAnswers"] is True
    # a re-check records nothing: still the one gap
    assert call(base, "GET", f"{KB_PATH}/gaps", ro)[1]["clusters"][0]["count"] == 1


def test_bad_tables_are_refused_with_their_codes(server):
    base, token, ro, _ = server
    status, body, _ = call(base, "PUT", f"{KB_PATH}/live/methods", token,
                           {"rows": [{**ROWS[0], "colour": "red"}]})
    assert (status, body["error"]["code"]) == (400, "unknown_field")
    status, body, _ = call(base, "PUT", f"{KB_PATH}/live/methods", token, {"rows": [{**ROWS[0], "code": "btc"}]})
    assert (status, body["error"]["code"]) == (400, "invalid_live_row")
    status, body, _ = call(base, "PUT", f"{KB_PATH}/live/Bad%20Name", token, {"rows": []})
    assert (status, body["error"]["code"]) == (400, "invalid_live_table")
    status, body, _ = call(base, "PUT", f"{KB_PATH}/live/methods", token, {"rows": [ROWS[0]] * 501})
    assert (status, body["error"]["code"]) == (400, "invalid_live_table")
    status, body, _ = call(base, "PUT", f"{KB_PATH}/live/methods", ro, {"rows": ROWS})
    assert (status, body["error"]["code"]) == (403, "forbidden")


def test_a_ticket_becomes_a_redacted_draft_that_retrieval_never_serves(server):
    base, token, ro, _ = server
    status, body, _ = call(base, "POST", f"{KB_PATH}/articles/from-ticket", token, TICKET)
    assert status == 201, body
    assert body["redacted"] == {"email": 1, "card": 1, "phone": 1}
    assert body["type"] == "article" and body["config"]["state"] == "draft"
    text = body["config"]["body"]
    assert "[email]" in text and "jane.doe" not in text and "4111" not in text and "7946" not in text
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        status, state, _ = call(base, "GET", f"{KB_PATH}/sources/{body['id']}/index-status", ro)
        if state["status"] == "ready" and not state["indexing"]:
            break
        time.sleep(0.1)
    assert state["status"] == "ready"
    for audience in ("customer", "public", "operator"):
        served = ask(base, ro, "heron plan charged twice refunded", audience=audience)["excerpts"]
        assert body["id"] not in {e["sourceId"] for e in served}

    status, err, _ = call(base, "POST", f"{KB_PATH}/articles/from-ticket", token,
                          {**TICKET, "messages": [TICKET["messages"][0]]})
    assert (status, err["error"]["code"]) == (400, "invalid_ticket")
    status, err, _ = call(base, "POST", f"{KB_PATH}/articles/from-ticket", token,
                          {**TICKET, "messages": [{"role": "bot", "text": "hello"}]})
    assert (status, err["error"]["code"]) == (400, "invalid_ticket")
    status, err, _ = call(base, "POST", f"{KB_PATH}/articles/from-ticket", token, {**TICKET, "priority": 1})
    assert (status, err["error"]["code"]) == (400, "unknown_field")
