"""Knowing when not to answer, over the real embedded adapters: the example packs' questions
they cannot answer fall under the floor, answerable ones stay above it, every component is
in the response, and words whose stem is not a prefix count (issue 14's cases)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from knowledge.refresh.packsync import install_pack
from knowledge.refresh.reindex import reindex
from knowledge.retrieve.service import RetrievalRequest, retrieve
from tests.conftest import page

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
COMPONENTS = {"coverage", "strength", "focus", "unseen", "agreement", "similarity", "rescue", "reranker", "rare",
              "missing", "title", "depth", "nearness", "distinct", "concord", "nqc", "wig", "sentcov", "sentence",
              "reach", "grounded", "softcov", "matched", "known"}


def ask(services, q, audience="customer"):
    return retrieve(services, RetrievalRequest("default", q, audience), record=False)


@pytest.fixture(scope="module")
def examples(tmp_path_factory):
    """The example packs ingested as ``make run`` does (one bot, all three packs)."""
    from knowledge.settings import LocalSettings
    from knowledge.wiring import build_local_services

    spec = importlib.util.spec_from_file_location("example_build_packs_conf", EXAMPLES / "build_packs.py")
    assert spec is not None and spec.loader is not None
    builder = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(builder)
    tmp = tmp_path_factory.mktemp("examples")
    services = build_local_services(LocalSettings(data_dir=tmp / "data"))
    for path in builder.build_all(EXAMPLES / "packs", tmp / "packs"):
        install_pack(services, path)
    reindex(services, "default")
    yield services
    services.state.close()


@pytest.mark.parametrize("q", [
    "Is there a student discount?",  # "student" appears (student cards are not accepted as ID)
    "Where is your office located?",
    "Can I change my username?",
    "Can I pay with PayPal?",
])
def test_questions_the_packs_cannot_answer_fall_under_the_floor(examples, q):
    res = ask(examples, q)
    assert res["wouldAnswer"] is False and res["confidence"] < res["floor"] == 0.35
    components = res["confidenceComponents"]
    assert set(components) == COMPONENTS
    assert components["reranker"] is None and components["agreement"] is None  # neither is configured
    assert components["similarity"] is None and components["nearness"] is None and components["distinct"] is None
    assert components["concord"] is None


@pytest.mark.parametrize(("q", "audience", "page_path"), [
    ("How many confirmations before my Monero deposit shows up in my balance?", "customer", "help/deposits/monero.md"),
    ("What is my daily withdrawal limit once my ID is verified?", "customer", "help/limits.md"),
    ("Which documents do I have to upload to prove who I am?", "customer", "help/verification.md"),
    ("How do I re-run reward crediting for one epoch that failed?", "operator", "admin/reward-distribution.md"),
])
def test_answerable_questions_stay_above_the_floor(examples, q, audience, page_path):
    res = ask(examples, q, audience)
    assert res["confidence"] >= res["floor"] == 0.35
    # limits and processing times are gated: answered from documentation alone, they are not
    assert res["wouldAnswer"] is (res["topic"] is None)
    assert res["topic"] is None or res["gate"]["passed"] is False
    assert res["excerpts"][0]["path"] == page_path
    components = res["confidenceComponents"]
    assert components["unseen"] == 0.0 and 0 < components["strength"] <= 1 and 0 < components["coverage"] <= 1
    assert 0 <= components["title"] <= 1 and 0 < components["rare"] <= 1 and 0 <= components["missing"] <= 1


def test_a_page_whose_title_names_the_question_counts_for_it(articles):
    titled = ask(articles, "shipping warranty")  # the shipping page's title holds "shipping"
    body = ask(articles, "delivery warranty")  # the same page, both words in its body only
    assert titled["excerpts"][0]["path"] == body["excerpts"][0]["path"] == "help/shipping.md"
    assert titled["confidenceComponents"]["title"] > 0 and body["confidenceComponents"]["title"] == 0.0


def test_an_unknown_content_word_lowers_the_confidence(examples):
    known = ask(examples, "How long does a Monero deposit take?")
    unknown = ask(examples, "How long does a Monero deposit take with PayPal?")
    assert unknown["confidenceComponents"]["unseen"] > known["confidenceComponents"]["unseen"] == 0.0
    assert unknown["confidence"] < known["confidence"]


@pytest.fixture
def articles(services, write_pack):
    filler = " ".join(f"Filler sentence number {i} about nothing in particular." for i in range(150))
    pages = [
        page("help/shipping.md", "# Shipping\n\nOur warranty policy covers every delivery we make.",
             audience="CUSTOMER"),
        page("help/hall.md", f"# The hall\n\n{filler} The old tapestry hangs in the great hall. {filler}",
             audience="CUSTOMER"),
    ]
    pages += [page(f"help/other{i}.md", f"# Other {i}\n\nOpening times and returns, note {i}.", audience="CUSTOMER")
              for i in range(6)]
    install_pack(services, write_pack("shop", pages))
    reindex(services, "default")
    return services


def test_words_whose_stem_is_not_a_prefix_answer_above_the_floor(articles):
    # warranty -> warranti, policy -> polici, delivery -> deliveri
    res = ask(articles, "warranty policy delivery")
    assert res["excerpts"][0]["path"] == "help/shipping.md"
    assert res["confidenceComponents"]["coverage"] == 1.0
    assert res["wouldAnswer"] is True and res["confidence"] > res["floor"]


def test_a_long_articles_window_holds_the_word(articles):
    res = ask(articles, "tapestry")
    [top] = [e for e in res["excerpts"] if e["path"] == "help/hall.md"]
    assert "tapestry" in top["text"] and len(top["text"]) <= 800
    assert res["wouldAnswer"] is True and res["confidence"] > res["floor"]


def test_only_stop_words_find_nothing(articles):
    res = ask(articles, "How can I do it? Can you?")
    assert res["excerpts"] == [] and res["wouldAnswer"] is False and res["confidence"] == 0.0


def test_strength_reads_the_best_score_at_the_weights_the_search_gave(articles):
    # "policy" and "cover" are everyday words, searched at analysis.COMMON_WEIGHT: the most the
    # question's terms could score counts them at that weight too, so a passage holding every
    # term once reads as strong as it did before the weights
    import math

    from knowledge import analysis
    from knowledge.retrieve import confidence as conf

    q = "warranty policy covers"
    res = ask(articles, q)
    terms = articles.index.analyze(q)
    assert [analysis.weight(t) for t in terms] == [1.0, analysis.COMMON_WEIGHT, analysis.COMMON_WEIGHT]
    dfs, n = articles.index.doc_freqs("default", "customer", terms)
    most = (conf.BM25_K1 + 1) * sum(math.log(1 + (n - dfs[t] + 0.5) / (dfs[t] + 0.5)) * analysis.weight(t)
                                    for t in terms)
    best = max(e["signals"]["lexicalScore"] for e in res["excerpts"])  # the search's own score
    assert res["confidenceComponents"]["strength"] == pytest.approx(best / most, abs=1e-3)


def test_matched_and_known_count_an_identifier_as_the_one_word_it_is(examples):
    # "WithdrawalLimit" is searched with its parts ("withdraw", "limit"), which the packs hold;
    # counted as evidence it is the one word it is, and the packs never wrote it ("PayPal" is
    # not "pay" and "pal")
    identifier = ask(examples, "Is there a WithdrawalLimit?")["confidenceComponents"]
    words = ask(examples, "Is there a withdrawal limit?")["confidenceComponents"]
    assert identifier["known"] == identifier["matched"] == 0.0
    assert words["known"] > 0.0 and words["matched"] > 0.0
