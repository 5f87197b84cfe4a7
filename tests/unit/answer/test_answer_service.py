"""Answer-time use cases over real services (SQLite file + tantivy index), wired around the
real retrieval the way the integrator will call them."""

from __future__ import annotations

import sqlite3

import pytest

from knowledge.adapters.local import group_commit
from knowledge.adapters.local.sqlite_state import SqliteStateStore
from knowledge.answer import gaps as gaps_mod
from knowledge.answer import service
from knowledge.answer.live import document_id
from knowledge.errors import BackendError, InvalidInput, NotFound
from knowledge.model import BotSettings, Source
from knowledge.refresh.packsync import install_pack
from knowledge.refresh.pipeline import Refresher
from knowledge.refresh.reindex import reindex
from knowledge.retrieve.service import RetrievalRequest, retrieve
from tests.conftest import page

ROWS = [
    {"area": "withdrawal", "name": "Bitcoin", "code": "BTC", "fixedFee": 0.0005, "processingTime": "up to 1 hour"},
    {"area": "withdrawal", "name": "Ether", "code": "ETH", "fixedFee": 0.004},
    {"area": "deposit", "name": "Card", "percentageFee": 2.5, "minAmount": 10},
]


def live_source(services, sid="live1", visibility="agent", config=None, bot="default"):
    services.state.put_source(Source(id=sid, bot=bot, type="live", name="Payment methods", visibility=visibility,
                                     config=config or {}, status="ready"))


def answer(services, q, audience="customer"):
    """The retrieval, which classifies, fuses live excerpts in, gates and records a gap."""
    return retrieve(services, RetrievalRequest("default", q, audience, None))


@pytest.fixture
def docs(services, write_pack):
    install_pack(services, write_pack("wallet", [
        page("help/withdraw.md", "# Withdrawals\n\nWithdrawal fees depend on the method. Bitcoin withdrawals "
             "are sent in batches.", audience="CUSTOMER"),
        page("help/password.md", "# Password\n\nReset your password from the sign-in page.", audience="CUSTOMER"),
    ]))
    reindex(services, "default")


def test_documentation_alone_is_gated_and_recorded_as_a_gap(services, docs, clock):
    res = answer(services, "What is the bitcoin withdrawal fee?")
    assert res["topic"] == "fees"
    assert res["excerpts"] and all(e["sourceType"] == "pack" for e in res["excerpts"])
    assert res["gate"]["passed"] is False and res["wouldAnswer"] is False
    (gap,) = services.state.list_gaps("default", "customer", since=0.0, now=clock.now())
    assert gap.outcome == "gated" and gap.topic == "fees" and gap.question == "What is the bitcoin withdrawal fee?"
    clusters = service.gap_clusters(services, "default", "customer")
    assert clusters[0]["count"] == 1 and clusters[0]["outcomes"] == {"gated": 1}


def test_live_rows_ground_a_fee_question_at_once(services, docs, clock):
    live_source(services)
    summary = service.replace_live_table(services, "default", "methods", {"rows": ROWS})
    assert summary == {"sourceId": "live1", "table": "methods", "rows": 3, "enabled": 3}
    res = answer(services, "What is the BTC withdrawal fee?")
    first = res["excerpts"][0]
    assert first["sourceType"] == "live" and first["rank"] == 1 and first["reason"] == "live"
    assert first["documentId"] == document_id("live1", "methods")
    assert "Bitcoin (BTC): fixed fee 0.0005" in first["text"] and "Ether" not in first["text"]  # code named
    assert [e["rank"] for e in res["excerpts"]] == list(range(1, len(res["excerpts"]) + 1))
    assert res["gate"]["passed"] is True
    assert services.state.list_gaps("default", None, since=0.0, now=clock.now()) == []


def test_live_passages_only_for_classified_questions(services, docs):
    live_source(services)
    service.replace_live_table(services, "default", "methods", {"rows": ROWS})
    res = answer(services, "How do I reset my password?")
    assert res["topic"] is None and res["gate"] is None
    assert all(e["sourceType"] != "live" for e in res["excerpts"])


def test_audiences_see_only_the_live_sources_they_may(services, docs):
    live_source(services, "agentlive", "agent")
    live_source(services, "oplive", "operator")
    for sid in ("agentlive", "oplive"):
        service.replace_live_table(services, "default", "methods", {"rows": ROWS}, source_id=sid)
    ids = {a: {e["sourceId"] for e in service.live_excerpts(services, "default", "fees?", "fees", a)}
           for a in ("customer", "public", "operator")}
    assert ids == {"customer": {"agentlive"}, "public": set(), "operator": {"oplive"}}


def test_processing_time_is_grounded_only_by_rows_that_have_one(services, docs):
    live_source(services)
    service.replace_live_table(services, "default", "methods", {"rows": ROWS})
    res = answer(services, "How long does a withdrawal take?")
    live = [e for e in res["excerpts"] if e["sourceType"] == "live"]
    assert len(live) == 1 and "up to 1 hour" in live[0]["text"] and "Card" not in live[0]["text"]


def test_a_rejected_table_leaves_the_previous_one_whole(services):
    live_source(services)
    service.replace_live_table(services, "default", "methods", {"rows": ROWS})
    with pytest.raises(InvalidInput) as err:
        service.replace_live_table(services, "default", "methods", {"rows": [ROWS[0], {**ROWS[1], "colour": "x"}]})
    assert err.value.code == "unknown_field"
    assert len(services.state.get_live_tables("default", "live1")["methods"]) == 3


def test_table_needs_exactly_one_live_source(services):
    with pytest.raises(NotFound):
        service.replace_live_table(services, "default", "methods", {"rows": ROWS})
    live_source(services, "a")
    live_source(services, "b")
    with pytest.raises(InvalidInput) as err:
        service.replace_live_table(services, "default", "methods", {"rows": ROWS})
    assert err.value.code == "ambiguous_live_source"
    service.replace_live_table(services, "default", "methods", {"rows": ROWS}, source_id="b")
    assert services.state.get_live_tables("default", "a") == {}


def test_gate_switch_and_topic_terms_come_from_the_bot_settings(services, docs):
    settings = BotSettings(bot="default")
    settings.answer = {"gate": False, "topics": {"fees": {"extraStrong": ["rake"]}}}  # type: ignore[attr-defined]
    at = service.prepare(services, "default", "what rake applies to withdrawals", "customer", bot_settings=settings)
    assert at.topic == "fees"
    res = at.finish({"excerpts": [{"rank": 1, "sourceType": "pack", "text": "x"}], "confidence": 0.9,
                     "floor": 0.35, "wouldAnswer": True})
    assert res["gate"]["passed"] is True and res["wouldAnswer"] is True


def test_fuse_live_interleaves_by_weighted_rank():
    local = [{"rank": i, "sourceType": "pack", "fragmentId": f"p{i}"} for i in range(1, 4)]
    live = [{"rank": i, "sourceType": "live", "fragmentId": f"l{i}", "signals": {"weight": 1.3}} for i in (1, 2)]
    fused = service.fuse_live(local, live, limit=4)
    assert [e["fragmentId"] for e in fused] == ["l1", "l2", "p1", "p2"]  # 1.3/61 > 1.3/62 > 1/61
    assert [e["rank"] for e in fused] == [1, 2, 3, 4]
    deep = [{"rank": i, "sourceType": "pack", "fragmentId": f"p{i}"} for i in range(1, 40)]
    many_live = [{"fragmentId": f"l{i}"} for i in range(1, 40)]
    order = [e["fragmentId"] for e in service.fuse_live(deep, many_live, limit=40)]
    assert order.index("p1") < order.index("l30")  # weight 1.3, not an override


def test_a_gap_that_cannot_be_written_never_fails_the_answer(services, docs, monkeypatch):
    def broken(gap):
        raise BackendError("disk full")

    monkeypatch.setattr(services.state, "put_gap_later", broken)
    res = answer(services, "What is the bitcoin withdrawal fee?")
    assert res["gate"]["passed"] is False


def test_a_gap_is_redacted_and_written_behind_the_answer(services, docs, clock, monkeypatch):
    """The question's redaction runs off the answer's path, and only the redacted question is
    ever written: in the store's queue the gap is not built yet; listing builds it."""
    redacted = []
    real = gaps_mod.new_gap

    def counting(*args, **kwargs):
        redacted.append(args[2])
        return real(*args, **kwargs)

    monkeypatch.setattr(gaps_mod, "new_gap", counting)
    monkeypatch.setattr(group_commit, "LINGER_SECONDS", 60.0)  # the writer thread would not build it yet
    res = answer(services, "zebra migration for a@b.co, card 4111 1111 1111 1111")
    assert res["wouldAnswer"] is False and redacted == []
    (gap,) = services.state.list_gaps("default", "customer", since=0.0, now=clock.now())
    assert gap.question == "zebra migration for [email], card [card]" and gap.outcome == "nothing_found"
    assert len(redacted) == 1
    with sqlite3.connect(services.state.records_path) as db:
        assert [r[0] for r in db.execute("SELECT question FROM gaps")] == [gap.question]


def test_gaps_queued_behind_answers_are_written_at_close(services, docs, tmp_path, clock, monkeypatch):
    monkeypatch.setattr(group_commit, "LINGER_SECONDS", 60.0)
    for q in ("zebra migration schedule", "walrus feeding times"):
        answer(services, q)
    services.state.close()
    again = SqliteStateStore(tmp_path / "data" / "state.db")
    assert sorted(g.question for g in again.list_gaps("default", None, since=0.0, now=clock.now())) == [
        "walrus feeding times", "zebra migration schedule"]


def test_recheck_marks_clusters_that_now_answer(services, docs):
    answer(services, "What is the bitcoin withdrawal fee?")
    answer(services, "zebra migration schedule")
    clusters = service.gap_clusters(services, "default", "customer")
    assert len(clusters) == 2
    before = service.recheck_gaps(clusters, lambda q: answer(services, q))
    assert [c["nowAnswers"] for c in before] == [False, False]
    live_source(services)
    service.replace_live_table(services, "default", "methods", {"rows": ROWS})
    add = Source(id="fact1", bot="default", type="fact", name="fee", visibility="agent",
                 config={"key": "Bitcoin withdrawal fee", "value": "The bitcoin withdrawal fee is 0.0005 BTC."})
    services.state.put_source(add)
    assert Refresher(services).refresh("default", "fact1").status == "indexed"
    after = {c["representative"]: c for c in service.recheck_gaps(clusters, lambda q: answer(services, q))}
    assert after["What is the bitcoin withdrawal fee?"]["nowAnswers"] is True
    assert after["zebra migration schedule"]["nowAnswers"] is False


def test_gap_listing_validates_the_audience_and_keeps_the_retention(services, docs, clock):
    with pytest.raises(InvalidInput) as err:
        service.gap_clusters(services, "default", "robots")
    assert err.value.code == "invalid_audience"
    answer(services, "zebra migration schedule")
    clock.advance(91 * 86_400)
    assert service.gap_clusters(services, "default") == []


def test_retrieval_records_a_gap_only_when_it_records_and_gaps_are_on(services, docs, clock):
    req = RetrievalRequest("default", "What is the bitcoin withdrawal fee?", "customer", None)
    for kwargs in ({"gaps": False}, {"record": False}, {"record": False, "gaps": True}):
        res = retrieve(services, req, **kwargs)
        assert res["gate"]["passed"] is False and res["wouldAnswer"] is False  # gated all the same
    assert services.state.list_gaps("default", None, since=0.0, now=clock.now()) == []
    retrieve(services, req)
    assert len(services.state.list_gaps("default", None, since=0.0, now=clock.now())) == 1


def test_live_excerpts_make_the_answer_operator_grounded_and_citable(services, docs):
    from knowledge.api.citations import validate_citations

    assert answer(services, "What is the BTC withdrawal fee?")["operatorGrounded"] is False  # documentation only
    live_source(services)
    service.replace_live_table(services, "default", "methods", {"rows": ROWS})
    res = answer(services, "What is the BTC withdrawal fee?")
    live = next(e for e in res["excerpts"] if e["sourceType"] == "live")
    assert res["operatorGrounded"] is True
    cite = {"sourceId": live["sourceId"], "documentId": live["documentId"], "fragmentId": live["fragmentId"]}
    assert validate_citations(services, "default", {"retrievalId": res["retrievalId"], "citations": [cite]}) == {
        "valid": True}


def test_an_agent_reads_only_the_live_sources_it_selected(services, docs):
    from knowledge.model import Agent

    live_source(services, "live1")
    live_source(services, "live2")
    for sid in ("live1", "live2"):
        service.replace_live_table(services, "default", "methods", {"rows": ROWS}, source_id=sid)
    pack = next(s.id for s in services.state.list_sources("default") if s.type == "pack")
    services.state.put_agent(Agent(id="a1", bot="default", source_ids=[pack, "live2"]))
    services.state.put_agent(Agent(id="docs", bot="default", source_ids=[pack]))
    q = "What is the BTC withdrawal fee?"

    def live_ids(agent):
        res = retrieve(services, RetrievalRequest("default", q, "customer", agent))
        return [e["sourceId"] for e in res["excerpts"] if e["sourceType"] == "live"], res

    assert live_ids(None)[0] == ["live1", "live2"]
    assert live_ids("a1")[0] == ["live2"]
    none, res = live_ids("docs")
    assert none == [] and res["gate"]["passed"] is False
