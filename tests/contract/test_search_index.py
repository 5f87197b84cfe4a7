"""SearchIndex contract: filters inside the search, per-partition statistics, generations."""

from __future__ import annotations

import pytest

from knowledge.model import Passage, PassageRef


def passage(pid, text, *, bot="b1", source="s1", gen=1, vis="public", doc="d1", ordinal=0):
    return Passage(id=pid, bot=bot, source_id=source, document_id=doc, generation=gen, ordinal=ordinal,
                   title="T", path="help/x.md", breadcrumb="P › T", text=text, visibility=vis)


INDEX = None


def ids(hits):
    INDEX.hydrate("b1", hits)
    return [h.passage.id for h in hits]


@pytest.fixture(autouse=True)
def _index(search_index):
    global INDEX
    INDEX = search_index


def test_filters_apply_inside_the_search(search_index):
    search_index.write("b1", [
        passage("pub", "withdraw monero now"),
        passage("agent", "withdraw monero agent notes", vis="agent"),
        passage("old", "withdraw monero old text", gen=1, source="s2"),
        passage("new", "withdraw monero new text", gen=2, source="s2"),
    ])
    search_index.write("b2", [passage("other-bot", "withdraw monero", bot="b2")])
    hits = search_index.search_lexical("b1", "customer", "withdraw monero", visibilities=["public"],
                                       source_gens=["s1:1", "s2:2"])
    assert sorted(ids(hits)) == ["new", "pub"]
    hits = search_index.search_lexical("b1", "customer", "withdraw monero", visibilities=["public", "agent"],
                                       source_gens=["s1:1"])
    assert sorted(ids(hits)) == ["agent", "pub"]
    assert search_index.search_lexical("b1", "customer", "monero", visibilities=["public"], source_gens=[]) == []


def test_limit_applies_after_filtering(search_index):
    # many invisible passages that match better must not crowd out the visible one
    search_index.write("b1", [passage(f"hidden{i}", "monero monero monero", source="hidden") for i in range(60)])
    search_index.write("b1", [passage("visible", "a page that mentions monero once among many other words")])
    hits = search_index.search_lexical("b1", "customer", "monero", visibilities=["public"], source_gens=["s1:1"],
                                       limit=5)
    assert ids(hits) == ["visible"]


def test_operator_partition_is_separate(search_index):
    search_index.write("b1", [passage("op", "rebalance the hot wallet", vis="operator"),
                              passage("cu", "rebalance your portfolio")])
    assert ids(search_index.search_lexical("b1", "operator", "rebalance", visibilities=["operator"],
                                           source_gens=["s1:1"])) == ["op"]
    assert ids(search_index.search_lexical("b1", "customer", "rebalance", visibilities=["public", "agent"],
                                           source_gens=["s1:1"])) == ["cu"]
    # document frequencies are per partition
    assert search_index.doc_freq("b1", "operator", "rebal") == (1, 1)


def test_english_analysis_stems_and_drops_stop_words(search_index):
    search_index.write("b1", [passage("p", "Withdrawals are processed in batches")])
    hits = search_index.search_lexical("b1", "customer", "the withdrawal processing", visibilities=["public"],
                                       source_gens=["s1:1"])
    assert ids(hits) == ["p"]
    assert "the" not in search_index.analyze("the withdrawal")


def test_hostile_query_syntax_is_just_words(search_index):
    search_index.write("b1", [passage("p", "fees and limits")])
    for q in ['fees AND "limits', "fees:(limits", "*", "fees^10 OR", "\\", "\x00"]:
        search_index.search_lexical("b1", "customer", q, visibilities=["public"], source_gens=["s1:1"])


def test_generation_delete_and_count(search_index):
    search_index.write("b1", [passage("a", "alpha", gen=1), passage("b", "alpha", gen=2, ordinal=1)])
    assert search_index.count("b1", "customer", ["s1:1", "s1:2"]) == 2
    search_index.delete_generation("b1", "s1", 1)
    assert search_index.count("b1", "customer", ["s1:1"]) == 0
    assert search_index.count("b1", "customer", ["s1:2"]) == 1


def test_stored_fields_round_trip(search_index):
    p = passage("a", "P › T\n\nalpha beta")
    p.url, p.weight, p.priority, p.indexed_at = "https://docs.example/x", 1.2, 7, 123.5
    search_index.write("b1", [p])
    [hit] = search_index.search_lexical("b1", "customer", "alpha", visibilities=["public"], source_gens=["s1:1"])
    # ranking fields come with the hit; the text only after hydration
    assert hit.ref == PassageRef.of(p)
    search_index.hydrate("b1", [hit])
    got = hit.passage
    assert (got.url, got.weight, got.priority, got.indexed_at, got.text, got.breadcrumb) == (
        "https://docs.example/x", 1.2, 7, 123.5, "P › T\n\nalpha beta", "P › T")
    assert hit.rank == 1 and hit.score > 0
