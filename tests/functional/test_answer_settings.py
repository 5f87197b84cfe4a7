"""The ``answer`` entry of ``PATCH settings`` through the route table (SQLite + tantivy): checked
with stable codes, stored, read back by ``GET settings``, and honoured at answer time (the gate
switch, topic terms, gap retention)."""

from __future__ import annotations

import pytest

from knowledge.api.auth import create_token
from knowledge.model import BotSettings
from tests.functional.test_tokens_and_settings import BOT, KB, Api

DAY = 24 * 3600.0


@pytest.fixture
def api(services):
    return Api(services)


def ask(api, q: str) -> dict:
    reader = create_token(api.services, "default", ["knowledge:read"])
    status, body = api("POST", f"{KB}/retrieve", {"q": q, "audience": "customer"}, token=reader)
    assert status == 200, body
    return body


def test_answer_settings_are_stored_and_read_back(api, services):
    assert api("GET", f"{BOT}/settings")[1]["answer"] == {}
    answer = {"gate": False, "gapRetentionDays": 30,
              "topics": {"fees": {"extraStrong": ["toll"]}, "processing_time": {"strong": ["eta"]}},
              "extraContext": ["parcel*"]}
    status, body = api("PATCH", f"{BOT}/settings", {"answer": answer})
    assert (status, body["answer"]) == (200, answer), body
    assert api("GET", f"{BOT}/settings")[1]["answer"] == answer
    assert services.state.get_bot("default").answer == answer
    # another field patched alone leaves them; answer given replaces them whole; null restores the defaults
    api("PATCH", f"{BOT}/settings", {"floor": 0.5})
    assert api("GET", f"{BOT}/settings")[1]["answer"] == answer
    assert api("PATCH", f"{BOT}/settings", {"answer": {"gate": True}})[1]["answer"] == {"gate": True}
    assert api("PATCH", f"{BOT}/settings", {"answer": None})[1]["answer"] == {}
    assert services.state.get_bot("default").answer is None


def test_the_gate_switch_is_honoured(api):
    assert ask(api, "What is the withdrawal fee?")["gate"]["passed"] is False
    api("PATCH", f"{BOT}/settings", {"answer": {"gate": False}})
    reply = ask(api, "What is the withdrawal fee?")
    assert reply["topic"] == "fees"
    assert reply["gate"] == {"topic": "fees", "passed": True, "reason": "the topic gate is switched off for this bot"}


def test_topic_terms_are_honoured(api):
    assert ask(api, "What is the toll on a transfer?")["topic"] is None
    api("PATCH", f"{BOT}/settings", {"answer": {"topics": {"fees": {"extraStrong": ["toll"]}}}})
    assert ask(api, "What is the toll on a transfer?")["topic"] == "fees"
    # replacing a list drops the defaults
    api("PATCH", f"{BOT}/settings", {"answer": {"topics": {"fees": {"strong": ["toll"]}}}})
    assert ask(api, "What is the commission?")["topic"] is None


def test_gap_retention_is_honoured(api, clock):
    ask(api, "Where is the purple llama setting?")
    clock.advance(31 * DAY)
    reader = create_token(api.services, "default", ["knowledge:read"])
    assert len(api("GET", f"{KB}/gaps", token=reader)[1]["clusters"]) == 1  # 90 days by default
    api("PATCH", f"{BOT}/settings", {"answer": {"gapRetentionDays": 30}})
    assert api("GET", f"{KB}/gaps", token=reader)[1]["clusters"] == []


@pytest.mark.parametrize(("body", "code"), [
    ({"answer": {"gate": "no"}}, "invalid_setting"),
    ({"answer": {"gate": None}}, "invalid_setting"),
    ({"answer": {"gapRetentionDays": 0}}, "invalid_setting"),
    ({"answer": {"gapRetentionDays": 366}}, "invalid_setting"),
    ({"answer": {"gapRetentionDays": 30.5}}, "invalid_setting"),
    ({"answer": {"topics": {"fees": {"strong": "fee"}}}}, "invalid_setting"),
    ({"answer": {"topics": {"fees": {"strong": [""]}}}}, "invalid_setting"),
    ({"answer": {"topics": {"fees": {"strong": ["x" * 81]}}}}, "invalid_setting"),
    ({"answer": {"topics": {"fees": {"strong": ["???"]}}}}, "invalid_setting"),
    ({"answer": {"topics": {"fees": {"strong": ["fee"] * 501}}}}, "invalid_setting"),
    ({"answer": {"context": [3]}}, "invalid_setting"),
    ({"answer": {"colour": "red"}}, "invalid_setting"),
    ({"answer": {"topics": {"taxes": {}}}}, "invalid_setting"),
    ({"answer": {"topics": {"fees": {"strongest": []}}}}, "invalid_setting"),
    ({"answer": []}, "invalid_setting"),
])
def test_bad_answer_settings_are_refused_with_their_code(api, services, body, code):
    status, reply = api("PATCH", f"{BOT}/settings", body)
    assert (status, reply["error"]["code"]) == (400, code), (body, reply)
    assert reply["error"]["message"].startswith(("answer", "unknown field answer", "invalid answer")), reply
    assert services.state.get_bot("default") == BotSettings(bot="default")
