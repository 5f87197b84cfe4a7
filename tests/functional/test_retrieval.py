"""Retrieval over the real embedded adapters: limits, audiences, grounding, records."""

from __future__ import annotations

import itertools

import pytest

from knowledge.errors import Code, InvalidInput
from knowledge.model import Agent, Source
from knowledge.refresh.packsync import install_pack
from knowledge.refresh.pipeline import Refresher
from knowledge.refresh.reindex import reindex
from knowledge.retrieve.service import RetrievalRequest, retrieve
from tests.conftest import page


def ask(services, q, audience="customer", agent=None):
    return retrieve(services, RetrievalRequest("default", q, audience, agent))


def add_source(services, sid, type_, visibility, config, name="src", priority=0):
    services.state.put_source(Source(id=sid, bot="default", type=type_, name=name, visibility=visibility,
                                     config=config, priority=priority))
    outcome = Refresher(services).refresh("default", sid)
    assert outcome.status == "indexed", outcome
    return sid


@pytest.fixture
def many_pages(services, write_pack):
    pages = [page(f"help/p{i:02d}.md", f"# Page {i}\n\nThe ocelot topic number {i} explained at length.",
                  audience="CUSTOMER") for i in range(30)]
    install_pack(services, write_pack("zoo", pages))
    reindex(services, "default")


def test_top_k_excerpts_at_most_twelve_of_at_most_800_chars(services, write_pack):
    long_body = "# Long\n\n" + "\n\n".join(f"Paragraph {i} about the ocelot and its habits." * 6 for i in range(40))
    pages = [page(f"help/p{i:02d}.md", f"# Page {i}\n\nThe ocelot topic number {i}.", audience="CUSTOMER")
             for i in range(20)]
    pages.append(page("help/long.md", long_body, audience="CUSTOMER"))
    install_pack(services, write_pack("zoo", pages))
    reindex(services, "default")
    res = ask(services, "ocelot")
    assert len(res["excerpts"]) == 10  # the default topK
    assert all(len(e["text"]) <= 800 for e in res["excerpts"])
    assert [e["rank"] for e in res["excerpts"]] == list(range(1, 11))
    for top_k, served in ((12, 12), (3, 3), (1, 1), (40, 12), (0, 1), (-5, 1)):  # out of range: clamped
        settings = services.state.get_bot("default")
        settings.top_k = top_k
        services.state.put_bot(settings)
        res = ask(services, "ocelot")
        assert [e["rank"] for e in res["excerpts"]] == list(range(1, served + 1)), top_k
        assert all(len(e["text"]) <= 800 for e in res["excerpts"])


def test_neighbouring_fragments_of_one_document_collapse(services, write_pack):
    sections = "\n\n".join(f"## Part {i}\n\n" + ("The pangolin scales story continues. " * 90) for i in range(6))
    install_pack(services, write_pack("zoo", [page("help/pangolin.md", "# Pangolin\n\n" + sections,
                                                   audience="CUSTOMER")]))
    reindex(services, "default")
    res = ask(services, "pangolin scales")
    ords = sorted(int(e["fragmentId"].rsplit("-", 1)[1]) for e in res["excerpts"])
    assert len(ords) >= 2  # the document has several passages...
    assert all(b - a > 1 for a, b in itertools.pairwise(ords))  # ...but no two neighbours


def test_agent_visibility_reaches_customer_not_public(services):
    add_source(services, "ins", "instruction", "agent", {"text": "Refunds of the wombat plan take five days."})
    assert [e["sourceId"] for e in ask(services, "wombat refunds")["excerpts"]] == ["ins"]
    assert ask(services, "wombat refunds", "public")["excerpts"] == []
    assert ask(services, "wombat refunds", "operator")["excerpts"] == []


def test_operator_grounded_and_weight(services, many_pages):
    plain = ask(services, "ocelot topic")
    assert plain["operatorGrounded"] is False
    add_source(services, "fact", "fact", "agent", {"key": "ocelot topic fee", "value": "2% per ocelot topic"})
    res = ask(services, "ocelot topic fee")
    assert res["operatorGrounded"] is True
    assert res["excerpts"][0]["sourceId"] == "fact"
    assert res["excerpts"][0]["signals"]["weight"] == pytest.approx(1.15)


def test_retrieval_is_recorded_in_rank_order(services, many_pages):
    res = ask(services, "ocelot topic number 7")
    record = services.state.get_retrieval("default", res["retrievalId"])
    assert record is not None
    assert record.served == [(e["sourceId"], e["documentId"], e["fragmentId"]) for e in res["excerpts"]]


def test_corpus_size_counts_what_the_audience_may_see(services, many_pages):
    add_source(services, "ops", "instruction", "operator", {"text": "Escalate ocelot incidents to tier two."})
    assert ask(services, "ocelot")["corpusSize"] == 30
    assert ask(services, "ocelot", "operator")["corpusSize"] == 1


def test_agent_sees_only_its_selected_sources(services, many_pages):
    add_source(services, "ins", "instruction", "agent", {"text": "The ocelot policy is strict."})
    services.state.put_agent(Agent(id="a1", bot="default", status="active", source_ids=["ins"]))
    res = ask(services, "ocelot", agent="a1")
    assert {e["sourceId"] for e in res["excerpts"]} == {"ins"}
    services.state.put_agent(Agent(id="a2", bot="default", status="paused", source_ids=["ins"]))
    with pytest.raises(Exception) as err:
        ask(services, "ocelot", agent="a2")
    assert getattr(err.value, "code", None) == "agent_paused"


def test_disabled_source_leaves_every_search(services, many_pages):
    add_source(services, "ins", "instruction", "agent", {"text": "The capybara discount."})
    assert ask(services, "capybara")["excerpts"]
    services.state.update_source("default", "ins", status="disabled")
    assert ask(services, "capybara")["excerpts"] == []


@pytest.mark.parametrize("q,code", [("", Code.EMPTY_QUESTION), ("  \n ", Code.EMPTY_QUESTION),
                                    ("x" * 16_001, Code.QUESTION_TOO_LONG)])
def test_bad_questions(services, q, code):
    with pytest.raises(InvalidInput) as err:
        ask(services, q)
    assert err.value.code == code


def test_question_at_the_limit_is_answered(services, many_pages):
    q = ("ocelot " * 2300)[:16_000]
    assert len(ask(services, q)["excerpts"]) > 0


def test_nothing_found_means_nothing(services, many_pages):
    res = ask(services, "zxqv unknownword")
    assert res["excerpts"] == [] and res["wouldAnswer"] is False and res["confidence"] == 0.0


def test_articles_follow_their_state(services):
    add_source(services, "pub", "article", "public", {"title": "Refunds", "body": "Lynx refunds in 3 days.",
                                                      "state": "published"})
    add_source(services, "int", "article", "public", {"title": "Internal", "body": "Lynx escalation path.",
                                                      "state": "internal"})
    services.state.put_source(Source(id="draft", bot="default", type="article", name="d", visibility="public",
                                     config={"title": "Draft", "body": "Lynx draft text", "state": "draft"}))
    Refresher(services).refresh("default", "draft")
    assert {e["sourceId"] for e in ask(services, "lynx", "public")["excerpts"]} == {"pub"}
    assert {e["sourceId"] for e in ask(services, "lynx", "customer")["excerpts"]} == {"pub", "int"}
