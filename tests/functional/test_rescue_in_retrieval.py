"""The corpus-learned rescue inside retrieval, switched on: learned after ingest, appended, audience-safe;
off on the answer path."""

from __future__ import annotations

import random

import pytest

from knowledge.model import key64
from knowledge.refresh import rescue_build
from knowledge.refresh.packsync import install_pack
from knowledge.refresh.reindex import reindex
from knowledge.retrieve.rescue import RescueModel
from knowledge.retrieve.service import RetrievalOptions, RetrievalRequest, retrieve
from tests.conftest import page

FILLER = [
    "staking", "pool", "validator", "epoch", "reward", "delegate", "commission", "slashing", "uptime", "node",
    "ledger", "block", "governance", "proposal", "vote", "quorum", "treasury", "bridge", "oracle", "liquidity",
    "market", "spread", "order", "book",
]


def corpus(rng: random.Random) -> list[dict]:
    pages = []
    vocabulary = FILLER + [f"term{n}" for n in range(200)]
    for i in range(60):  # varied filler so there are enough usable terms (each in a few pages)
        words = rng.sample(vocabulary, 16)
        pages.append(page(f"help/f{i}.md", "# Page\n\n" + " ".join(words * 2), audience="CUSTOMER"))
    for i in range(8):  # teach that "cashout" sits with "withdraw" (kept under 18% of passages)
        pages.append(page(f"help/c{i}.md", f"# Cash\n\ncashout withdraw payout withdraw cashout note{i}",
                          audience="CUSTOMER"))
    pages.append(page("help/target.md", "# Moving coins\n\nwithdraw payout withdraw subaddress payout",
                      audience="CUSTOMER"))
    pages.append(page("admin/ops.md", "# Ops\n\nwithdraw payout withdraw hotwallet payout", audience="OPERATOR"))
    pages.append(page("admin/cold.md", "# Cold\n\ncoldstorage sweep schedule", audience="OPERATOR"))
    return pages


@pytest.fixture
def indexed(services, write_pack):
    install_pack(services, write_pack("coinvault", corpus(random.Random(4))))
    reindex(services, "default")
    assert rescue_build.rebuild_if_stale(services, "default")  # what kb ingest does after its summary
    return services


def ask(services, q, audience="customer", **kw):
    """With the rescue switched on (as the benchmarks that measure it do) unless ``kw`` says."""
    return retrieve(services, RetrievalRequest("default", q, audience), options=RetrievalOptions(**{"rescue": True,
                                                                                                   **kw}))


def test_the_answer_path_appends_no_rescued_passage(indexed):
    """Off where answers are given (the API's retrieve and retrieval-test): it did not earn its
    place (bench/RESULTS.md); the same question with it switched on gets one."""
    res = retrieve(indexed, RetrievalRequest("default", "cashout", "customer"))
    assert res["excerpts"] and all(e["reason"] != "rescue" for e in res["excerpts"])
    assert res["confidenceComponents"]["rescue"] is None
    assert [e["reason"] for e in ask(indexed, "cashout")["excerpts"]].count("rescue") == 1


def test_the_learned_model_is_current(indexed):
    assert not rescue_build.is_stale(indexed, "default")
    model = rescue_build.load(indexed, "default")
    assert model is not None and model.enabled


def test_a_passage_the_words_missed_is_appended(indexed):
    res = ask(indexed, "cashout")
    rescued = [e for e in res["excerpts"] if e["reason"] == "rescue"]
    assert len(rescued) == 1
    assert rescued[0] is res["excerpts"][-1] and rescued[0]["rank"] == len(res["excerpts"])
    # "cashout" never appears on the target page; the corpus taught that it sits with "withdraw"
    assert rescued[0]["path"] == "help/target.md"
    assert rescued[0]["score"] == 0.0  # its own word-match score: none
    assert rescued[0]["signals"]["rescueSimilarity"] >= 0.6
    # the regular excerpts are exactly what they are without the rescue: appended, never reordering
    plain = ask(indexed, "cashout", rescue=False)
    assert [e["fragmentId"] for e in res["excerpts"][:-1]] == [e["fragmentId"] for e in plain["excerpts"]]
    assert res["confidence"] == plain["confidence"]


def test_nothing_found_stays_nothing(indexed):
    assert ask(indexed, "zzzunknownword")["excerpts"] == []


def test_the_rescue_respects_the_audience(indexed, monkeypatch):
    """Whatever the model proposes, only passages the asker may see are accepted."""
    gens = [s.source_gen for s in indexed.state.live_sources("default")]
    corpus_keys = {key: vis for key, vis, _ in indexed.index.iter_passages("default", gens)}
    verdicts = {}

    def spy(self, probe, keys, allowed, **kw):
        verdicts.update({key: allowed(key) for key in corpus_keys})
        return None

    monkeypatch.setattr(RescueModel, "pick", spy)
    ask(indexed, "hotwallet", audience="operator")
    assert {corpus_keys[k] for k, ok in verdicts.items() if ok} == {"operator"}
    verdicts.clear()
    ask(indexed, "cashout", audience="customer")
    accepted = {corpus_keys[k] for k, ok in verdicts.items() if ok}
    assert accepted == {"public"}
    assert sum(verdicts.values()) < len([v for v in corpus_keys.values() if v == "public"])  # served ones refused


def test_a_refresh_makes_the_model_stale(indexed, write_pack):
    pages = corpus(random.Random(4))
    pages.append(page("help/new.md", "# New\n\nwithdraw payout", audience="CUSTOMER"))
    install_pack(indexed, write_pack("coinvault", pages))
    from knowledge.refresh.packsync import pack_source_id
    from knowledge.refresh.pipeline import Refresher

    Refresher(indexed).refresh("default", pack_source_id("default", "coinvault"))
    assert rescue_build.is_stale(indexed, "default")
    assert rescue_build.rebuild_if_stale(indexed, "default")
    assert not rescue_build.is_stale(indexed, "default")


def test_a_rescued_passage_the_words_ranked_low_is_loaded_from_the_lexical_hit(indexed, monkeypatch):
    """A passage word matching found below the served excerpts is loaded from its hit (the
    search applied the same filters), without a second lookup under the filters."""
    q = "staking pool validator epoch reward delegate commission slashing uptime node ledger"
    plain = ask(indexed, q, rescue=False)
    served = {e["fragmentId"] for e in plain["excerpts"]}
    lexical = indexed.index.search_lexical("default", "customer", q, visibilities=("public", "agent"),
                                           source_gens=[s.source_gen for s in indexed.state.live_sources("default")])
    low = [h for h in lexical[5:] if h.ref.key not in {key64(f) for f in served}]
    assert low, "the question must match more pages than are served"
    target = low[-1].ref.key

    def pick(self, probe, keys, allowed, **kw):
        return (target, 0.9) if allowed(target) else None

    def no_lookup(*_a, **_k):
        raise AssertionError("the lexical hit was already at hand")

    monkeypatch.setattr(RescueModel, "pick", pick)
    monkeypatch.setattr(indexed.index, "find_key", no_lookup)
    res = ask(indexed, q)
    rescued = res["excerpts"][-1]
    assert rescued["reason"] == "rescue" and key64(rescued["fragmentId"]) == target
    assert rescued["signals"]["lexicalRank"] == low[-1].rank and rescued["score"] > 0
    assert [e["fragmentId"] for e in res["excerpts"][:-1]] == [e["fragmentId"] for e in plain["excerpts"]]


def test_learning_the_model_keeps_settings_changed_meanwhile(indexed, write_pack, monkeypatch):
    pages = corpus(random.Random(4))
    pages.append(page("help/new.md", "# New\n\nwithdraw payout", audience="CUSTOMER"))
    install_pack(indexed, write_pack("coinvault", pages))
    reindex(indexed, "default")
    real_build, real_get = RescueModel.build, indexed.state.get_bot
    before = real_get("default")
    learning = []

    def build_while_an_operator_edits(*args, **kwargs):
        learning.append(True)
        settings = real_get("default")
        settings.floor = 0.9  # an operator raises the floor while the model is being learned
        indexed.state.put_bot(settings)
        return real_build(*args, **kwargs)

    def read_from_before_the_edit(bot):
        # a settings read that raced the operator's write (read just before it landed)
        return before if learning else real_get(bot)

    monkeypatch.setattr(RescueModel, "build", build_while_an_operator_edits)
    monkeypatch.setattr(indexed.state, "get_bot", read_from_before_the_edit)
    assert rescue_build.rebuild_if_stale(indexed, "default")
    monkeypatch.undo()
    assert indexed.state.get_bot("default").floor == 0.9
    assert not rescue_build.is_stale(indexed, "default")


@pytest.mark.parametrize(("top_k", "expected"), [(5, 6), (11, 12), (12, 12)])
def test_the_rescue_adds_one_beyond_top_k_but_never_a_thirteenth(indexed, monkeypatch, top_k, expected):
    q = "staking pool validator epoch reward delegate commission slashing uptime node ledger"
    settings = indexed.state.get_bot("default")
    settings.top_k = top_k
    indexed.state.put_bot(settings)
    plain = ask(indexed, q, rescue=False)
    assert len(plain["excerpts"]) == top_k
    served = {key64(e["fragmentId"]) for e in plain["excerpts"]}
    gens = [s.source_gen for s in indexed.state.live_sources("default")]
    spare = next(key for key, vis, _ in indexed.index.iter_passages("default", gens)
                 if vis == "public" and key not in served)

    def pick(self, probe, keys, allowed, **kw):
        return (spare, 0.9) if allowed(spare) else None

    monkeypatch.setattr(RescueModel, "pick", pick)
    res = ask(indexed, q)
    assert len(res["excerpts"]) == expected
    assert [e["reason"] == "rescue" for e in res["excerpts"]].count(True) == expected - top_k
