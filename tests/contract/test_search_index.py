"""SearchIndex contract: filters inside the search, per-partition statistics, generations."""

from __future__ import annotations

import pytest

from knowledge.model import Passage, PassageRef, key64


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
    assert search_index.doc_freqs("b1", "operator", ["rebal", "portfolio"]) == ({"rebal": 1, "portfolio": 0}, 1)


def test_english_analysis_stems_and_drops_stop_words(search_index):
    search_index.write("b1", [passage("p", "Withdrawals are processed in batches")])
    hits = search_index.search_lexical("b1", "customer", "the withdrawal processing", visibilities=["public"],
                                       source_gens=["s1:1"])
    assert ids(hits) == ["p"]
    assert "the" not in search_index.analyze("the withdrawal")


def test_hostile_query_syntax_is_just_words(search_index):
    search_index.write("b1", [passage("p", "fees and limits")])
    # query-language syntax is never interpreted: the words in it match, the rest is nothing
    for q in ['fees AND "limits', "fees:(limits", "fees^10 OR", "limits)"]:
        hits = search_index.search_lexical("b1", "customer", q, visibilities=["public"], source_gens=["s1:1"])
        assert ids(hits) == ["p"], q
    for q in ["*", "\\", "\x00", "AND OR NOT", ":^()"]:
        hits = search_index.search_lexical("b1", "customer", q, visibilities=["public"], source_gens=["s1:1"])
        assert hits == [], q


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


# -- what the corpus-learned rescue reads: the whole live corpus, and one passage by key -----------


def corpus_of(search_index, bot, source_gens):
    return sorted(search_index.iter_passages(bot, source_gens))


def test_iter_passages_streams_every_live_passage_of_both_partitions(search_index, monkeypatch):
    from knowledge.adapters.aws import opensearch_index

    monkeypatch.setattr(opensearch_index, "SCAN_PAGE", 3)  # several pages, the last one exactly full
    live = [passage(f"pub{i}", f"public text {i}", ordinal=i) for i in range(4)]
    live += [passage("agent", "agent notes", vis="agent"), passage("op", "operator runbook", vis="operator"),
             passage("other-src", "second source", source="s2", gen=3)]
    search_index.write("b1", live)
    search_index.write("b1", [passage("old", "previous generation", gen=2, source="s2"),
                              passage("op-old", "previous operator text", gen=2, source="s2", vis="operator")])
    search_index.write("b2", [passage("pub0", "another bot, same passage id", bot="b2")])
    expected = sorted((key64(p.id), p.visibility, p.text) for p in live)
    got = corpus_of(search_index, "b1", ["s1:1", "s2:3"])
    assert got == expected  # no passage twice, none missed across pages, nothing of b2 or s2:2
    assert corpus_of(search_index, "b1", ["s2:2"]) == sorted(
        [(key64("old"), "public", "previous generation"), (key64("op-old"), "operator", "previous operator text")])
    assert corpus_of(search_index, "b1", []) == []
    assert corpus_of(search_index, "never-written", ["s1:1"]) == []


def test_find_key_applies_the_filters_of_a_search(search_index):
    p = passage("pub", "P › T\n\nwithdraw monero")
    p.url, p.weight, p.priority, p.indexed_at = "https://docs.example/w", 1.5, 3, 99.0
    search_index.write("b1", [p, passage("agent", "agent notes", vis="agent"),
                              passage("op", "operator runbook", vis="operator"),
                              passage("old", "previous generation", gen=2, source="s2")])
    search_index.write("b2", [passage("theirs", "another bot", bot="b2")])
    customer = {"visibilities": ["public", "agent"], "source_gens": ["s1:1"]}

    found = search_index.find_key("b1", "customer", key64("pub"), **customer)
    assert found is not None
    assert (found.id, found.bot, found.source_id, found.generation, found.visibility) == ("pub", "b1", "s1", 1,
                                                                                         "public")
    assert (found.text, found.url, found.weight, found.priority, found.indexed_at, found.breadcrumb) == (
        "P › T\n\nwithdraw monero", "https://docs.example/w", 1.5, 3, 99.0, "P › T")
    assert search_index.find_key("b1", "customer", key64("agent"), **customer).visibility == "agent"
    # each filter refuses on its own
    assert search_index.find_key("b1", "customer", key64("agent"), visibilities=["public"],
                                 source_gens=["s1:1"]) is None
    assert search_index.find_key("b1", "customer", key64("old"), **customer) is None  # generation not live
    assert search_index.find_key("b1", "customer", key64("old"), visibilities=["public"],
                                 source_gens=["s2:2"]).id == "old"
    assert search_index.find_key("b1", "customer", key64("op"), **customer) is None  # other partition
    assert search_index.find_key("b1", "operator", key64("op"), visibilities=["operator"],
                                 source_gens=["s1:1"]).id == "op"
    assert search_index.find_key("b1", "customer", key64("theirs"), **customer) is None  # other bot
    assert search_index.find_key("b1", "customer", key64("missing"), **customer) is None
    assert search_index.find_key("b1", "customer", key64("pub"), visibilities=[], source_gens=["s1:1"]) is None
    assert search_index.find_key("b1", "customer", key64("pub"), visibilities=["public"], source_gens=[]) is None
    assert search_index.find_key("b9", "operator", key64("op"), visibilities=["operator"],
                                 source_gens=["s1:1"]) is None  # nothing ever written


# -- compaction: a layout change, never a change of answers --------------------------------------


def _answers(search_index, gens):
    """Everything a question can get from the index: hits (ids, refs, scores), loaded passages,
    statistics, counts, the rescue's corpus and lookups by key."""
    out = []
    for q in ("withdraw monero", "fee limits", "wallet", "operator runbook rotate"):
        for partition, vis in (("customer", ["public", "agent"]), ("customer", ["public"]),
                               ("operator", ["operator"])):
            hits = search_index.search_lexical("b1", partition, q, visibilities=vis, source_gens=gens)
            search_index.hydrate("b1", hits)
            out.append([(h.ref, round(h.score, 4), h.rank, h.passage) for h in hits])
    out.append(search_index.doc_freqs("b1", "customer", ["monero", "wallet", "fee"]))
    out.append([search_index.count("b1", p, gens) for p in ("customer", "operator")])
    out.append(corpus_of(search_index, "b1", gens))
    out.append(search_index.find_key("b1", "customer", key64("s2-3"), visibilities=["public", "agent"],
                                     source_gens=gens))
    return out


def test_compaction_changes_no_answer(search_index):
    words = ["withdraw", "monero", "fee", "limits", "wallet", "rotate", "runbook", "operator", "network"]
    for source in ("s1", "s2", "s3", "s4"):  # one write (commit) per source, as a refresh does
        search_index.write("b1", [
            passage(f"{source}-{i}", " ".join(words[(i + j) % len(words)] for j in range(3 + i % 5)),
                    source=source, doc=f"{source}-d{i // 3}", ordinal=i,
                    vis=("public", "agent", "operator")[i % 3])
            for i in range(12)])
    search_index.write("b1", [passage("s4-old", "withdraw monero fee", source="s4", gen=0)])
    search_index.write("b2", [passage("theirs", "withdraw monero wallet", bot="b2")])
    search_index.delete_generation("b1", "s4", 0)
    gens = ["s1:1", "s2:1", "s3:1", "s4:1"]
    before = _answers(search_index, gens)
    assert any(before[0])  # the questions do find something
    search_index.compact("b1", force=True)
    assert _answers(search_index, gens) == before
    hits = search_index.search_lexical("b2", "customer", "monero", visibilities=["public"], source_gens=["s1:1"])
    search_index.hydrate("b2", hits)
    assert [h.passage.id for h in hits] == ["theirs"]  # another bot's index is not touched


def test_word_search_scores_are_on_the_embedded_index_scale(search_index, tmp_path):
    """The confidence reads a best score against the most a question could score (BM25's
    ``(k1 + 1)`` x IDF); OpenSearch's Lucene BM25 leaves ``k1 + 1`` out, so its adapter puts it
    back. Every adapter's score for the same passages and question is within a quarter or so of
    the embedded index's (their document-length statistics differ a little)."""
    from knowledge.adapters.local.tantivy_index import TantivySearchIndex

    texts = ["the monero wallet pays fees", "bitcoin deposits arrive after three confirmations",
             "staking rewards are paid weekly", "withdrawal limits depend on verification",
             "two factor authentication protects the account", "tax statements list every trade"]
    reference = TantivySearchIndex(tmp_path / "reference")
    for index in (search_index, reference):
        index.write("b1", [passage(f"p{i}", t, doc=f"d{i}") for i, t in enumerate(texts)])
    for q in ("monero", "monero wallet fees", "authentication"):
        (got, *_), (want, *_) = (
            index.search_lexical("b1", "customer", q, visibilities=["public"], source_gens=["s1:1"])
            for index in (search_index, reference))
        assert 0.75 <= got.score / want.score <= 1.35, (q, got.score, want.score)
