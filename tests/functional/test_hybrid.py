"""Embedding during refresh, semantic search beside BM25, fusion, and embedder failures."""

from __future__ import annotations

import math

import pytest

from knowledge.embed.hashing import HashingEmbedder
from knowledge.errors import Code, SourceFailure
from knowledge.refresh.packsync import install_pack, pack_source_id
from knowledge.refresh.pipeline import Refresher
from knowledge.refresh.reindex import reindex
from knowledge.retrieve.service import RetrievalOptions, RetrievalRequest, retrieve
from tests.conftest import page

PAGES = [
    page("help/withdraw.md", "# Withdraw\n\nSend XMR out of your vault to a subaddress.", audience="CUSTOMER"),
    page("help/deposit.md", "# Deposit\n\nCopy your deposit address to fund the vault.", audience="CUSTOMER"),
    page("admin/sweep.md", "# Sweep\n\nSend XMR out of the hot wallet to cold storage.", audience="OPERATOR"),
]


def ask(services, q, audience="customer", **options):
    return retrieve(services, RetrievalRequest("default", q, audience), options=RetrievalOptions(**options))


def test_refresh_embeds_and_retrieval_fuses_both_lists(services, write_pack):
    services.default_embedder = "hashing"
    install_pack(services, write_pack("coinvault", PAGES))
    reindex(services, "default")
    res = ask(services, "send XMR out")
    top = res["excerpts"][0]
    assert top["path"] == "help/withdraw.md"
    assert top["reason"] == "hybrid"
    assert top["signals"]["lexicalRank"] == 1 and top["signals"]["semanticRank"] == 1
    # semantic alone still never crosses the audience line
    semantic_only = ask(services, "send XMR out of the hot wallet to cold storage", lexical=False)
    assert semantic_only["excerpts"] and all(e["path"] != "admin/sweep.md" for e in semantic_only["excerpts"])
    assert all(e["reason"] == "semantic" for e in semantic_only["excerpts"])


def test_changing_the_embedder_rebuilds_instead_of_skipping(services, write_pack):
    install_pack(services, write_pack("coinvault", PAGES))
    reindex(services, "default")
    assert [o.status for o in reindex(services, "default").outcomes] == ["skipped"]
    settings = services.state.get_bot("default")
    settings.embedder = "hashing"
    services.state.put_bot(settings)
    assert [o.status for o in reindex(services, "default").outcomes] == ["indexed"]
    assert ask(services, "deposit address")["excerpts"][0]["signals"]["semanticRank"] == 1


class Throttled:
    name = "throttled-4"
    dimensions = 4

    def embed(self, texts):
        raise SourceFailure(Code.RATE_LIMITED, "slow down")


def test_a_failing_embedder_leaves_the_source_queued_and_the_old_version_live(services, write_pack, monkeypatch):
    install_pack(services, write_pack("coinvault", PAGES))
    reindex(services, "default")
    sid = pack_source_id("default", "coinvault")
    live = services.state.get_source("default", sid).live_generation
    monkeypatch.setattr(services, "embedder_for", lambda bot: Throttled())
    monkeypatch.setattr("knowledge.embed.factory.time.sleep", lambda s: None)
    outcome = Refresher(services).refresh("default", sid, force=True)
    assert (outcome.status, outcome.error_code) == ("queued", Code.RATE_LIMITED)
    src = services.state.get_source("default", sid)
    assert (src.status, src.error_code, src.live_generation) == ("waiting", Code.RATE_LIMITED, live)
    # backing off: not due now, due later
    now = services.clock.now()
    assert sid not in [s.id for s in services.state.due_sources(now)]
    assert sid in [s.id for s in services.state.due_sources(now + 10_000)]
    # still answering from the previous generation, never half-embedded
    assert ask(services, "deposit address")["excerpts"][0]["path"] == "help/deposit.md"
    assert services.index.count("default", "customer", [f"{sid}:{live + 1}"]) == 0


def test_question_embedded_in_each_space_present(services, write_pack, monkeypatch):
    services.default_embedder = "hashing"
    install_pack(services, write_pack("coinvault", PAGES))
    reindex(services, "default")
    # the bot moves to another embedder; until its sources are re-embedded the old vectors answer
    old = services.embedder_for("default")
    assert isinstance(old, HashingEmbedder)
    monkeypatch.setattr(services, "embedder_for", lambda bot: HashingEmbedder(64))
    res = ask(services, "deposit address", lexical=False)
    assert res["excerpts"][0]["path"] == "help/deposit.md"


class SlowEmbedder(HashingEmbedder):
    """Each call takes ten (fake) seconds: a long embedding must keep its lease alive."""

    def __init__(self, clock):
        super().__init__(32)
        self.clock = clock

    def embed(self, texts):
        self.clock.advance(10)
        return super().embed(texts)


def test_a_long_embedding_keeps_its_lease(services, write_pack, monkeypatch, clock):
    pages = [page(f"help/p{i}.md", f"# Page {i}\n\nwombat fact number {i}", audience="CUSTOMER") for i in range(900)]
    install_pack(services, write_pack("zoo", pages))
    embedder = SlowEmbedder(clock)
    monkeypatch.setattr(services, "embedder_for", lambda bot: embedder)
    report = reindex(services, "default")  # 900 passages = 29 calls = 290 s > the 120 s lease
    assert [o.status for o in report.outcomes] == ["indexed"]
    assert ask(services, "wombat fact number 7")["excerpts"]


def test_semantic_confidence_components_and_the_model_they_are_decided_by(services, write_pack, monkeypatch):
    from knowledge.retrieve import confidence as conf

    services.default_embedder = "hashing"
    install_pack(services, write_pack("coinvault", PAGES))
    reindex(services, "default")
    hybrid = ask(services, "send XMR out")
    lexical = ask(services, "send XMR out", semantic=False)
    c = hybrid["confidenceComponents"]
    assert c["agreement"] is not None and -1.0 <= c["similarity"] <= 1.0
    assert lexical["confidenceComponents"]["similarity"] is None
    # nearness: the top excerpt's own cosine (at most the list's first); distinct: a difference of cosines
    top_cosine = hybrid["excerpts"][0]["signals"].get("semanticScore")
    if top_cosine is not None:
        assert c["nearness"] == pytest.approx(top_cosine, abs=1e-4)
    assert c["nearness"] <= c["similarity"] and 0.0 <= c["distinct"] <= 2.0 and 0.0 <= c["concord"] <= 1.0
    assert all(lexical["confidenceComponents"][k] is None for k in ("nearness", "distinct", "concord"))
    # no model was fitted for the hashing embedder: its components are shown and drop out, the
    # lexical model deciding on the hybrid answer's own lexical components (its word-match list
    # weighs every word alike beside the semantic one, so they differ from the lexical-only answer's)
    lexical_model = conf.score(conf.Components(**{k: v for k, v in c.items() if k not in conf.SEMANTIC}))
    assert hybrid["confidence"] == pytest.approx(lexical_model, abs=1e-3) and hybrid["confidence"] > 0
    assert lexical["confidence"] > 0
    # with a model for this embedder, the semantic components decide with the lexical ones
    name = services.embedder_for("default").name
    monkeypatch.setattr(conf, "EMBEDDER_MODELS", {name: (-10.0, {"similarity": 1.0})})
    fitted = ask(services, "send XMR out")
    assert fitted["confidence"] == round(1 / (1 + math.exp(10.0 - fitted["confidenceComponents"]["similarity"])), 4)
    assert fitted["wouldAnswer"] is False and lexical["wouldAnswer"] is True


SENTENCE_PAGES = [
    page("help/bitcoin.md", "# Bitcoin deposits\n\nBitcoin deposits are credited after three network confirmations. "
         "Your deposit address stays the same for every deposit you make. Deposits below the minimum of "
         "0.0001 BTC are not credited to your balance.", audience="CUSTOMER"),
    page("help/monero.md", "# Monero deposits\n\nMonero deposits need ten confirmations. Use the subaddress "
         "shown on the deposit screen.", audience="CUSTOMER"),
    page("help/fees.md", "# Fees\n\nWithdrawals carry a network fee. Deposits are free.", audience="CUSTOMER"),
]


def test_the_sentence_component_reads_the_best_single_sentence_of_the_first_excerpts(services, write_pack,
                                                                                    monkeypatch):
    from knowledge.retrieve import confidence as conf

    services.default_embedder = "hashing"
    install_pack(services, write_pack("coinvault", SENTENCE_PAGES))
    reindex(services, "default")
    answered = ask(services, "how many network confirmations before bitcoin deposits are credited", sentences=True)
    look_alike = ask(services, "can a bitcoin deposit be reversed or cancelled once sent", sentences=True)
    assert answered["excerpts"][0]["path"] == look_alike["excerpts"][0]["path"] == "help/bitcoin.md"
    a, b = answered["confidenceComponents"], look_alike["confidenceComponents"]
    # one sentence of the page says it: nearer than the page as a whole, and nearer than a
    # question on the same topic that no sentence answers
    assert a["sentence"] > b["sentence"] and a["sentence"] > a["nearness"]
    assert a["sentcov"] == 1.0  # every known word of it in that one sentence
    # grounded: the top excerpt's cosine for the share of the question the corpus knows
    assert b["unseen"] > 0 and b["grounded"] == pytest.approx(b["nearness"] * (1 - b["unseen"]), abs=1e-3)
    assert a["grounded"] == pytest.approx(a["nearness"] * (1 - a["unseen"]), abs=1e-3)
    embedder = services.embedder_for("default")
    sentences = [s for e in answered["excerpts"][:conf.SENTENCE_EXCERPTS]
                 for s in conf.sentences(e["text"], conf.SENTENCES_PER_EXCERPT)]
    q = embedder.embed(["how many network confirmations before bitcoin deposits are credited"])[0]
    assert a["sentence"] == pytest.approx(conf.best_cosine(q, embedder.embed(sentences)), abs=1e-4)

    # on the answer path the sentences are embedded only for an embedder whose model weighs them
    calls: list[int] = []
    real = type(embedder).embed
    monkeypatch.setattr(type(embedder), "embed", lambda self, texts: calls.append(len(texts)) or real(self, texts))
    plain = ask(services, "how many network confirmations before bitcoin deposits are credited")
    assert plain["confidenceComponents"]["sentence"] is None and calls == [1]  # the question alone
    assert plain["confidenceComponents"]["sentcov"] is None  # no model weighs it either
    monkeypatch.setattr(conf, "EMBEDDER_MODELS", {embedder.name: (-4.0, {"similarity": 1.0, "sentence": 6.0})})
    calls.clear()
    weighed = ask(services, "how many network confirmations before bitcoin deposits are credited")
    assert weighed["confidenceComponents"]["sentence"] == pytest.approx(a["sentence"])
    assert calls[0] == 1 and 1 < calls[1] <= conf.SENTENCE_EXCERPTS * conf.SENTENCES_PER_EXCERPT  # one batch
    c = weighed["confidenceComponents"]
    assert weighed["confidence"] == round(1 / (1 + math.exp(4.0 - c["similarity"] - 6.0 * c["sentence"])), 4)
    # without an embedder the component is absent
    lexical = ask(services, "how many network confirmations before bitcoin deposits are credited",
                  semantic=False, sentences=True)
    assert lexical["confidenceComponents"]["sentence"] is None and lexical["confidenceComponents"]["sentcov"] > 0
    assert lexical["confidenceComponents"]["grounded"] is None and lexical["confidenceComponents"]["reach"] > 0


def test_everyday_words_are_weighed_only_in_a_word_match_answer(services, write_pack, monkeypatch):
    # beside a semantic list every question word weighs alike (analysis.COMMON_WEIGHT is for
    # lexical-only answers): the blend was measured so, and NFCorpus's hybrid figure with it
    services.default_embedder = "hashing"
    install_pack(services, write_pack("coinvault", PAGES))
    reindex(services, "default")
    asked: list[bool] = []
    search = services.index.search_lexical

    def spy(*args, **kwargs):
        asked.append(kwargs.get("weighted", True))
        return search(*args, **kwargs)

    monkeypatch.setattr(services.index, "search_lexical", spy)
    assert ask(services, "get XMR back out")["excerpts"][0]["reason"] == "hybrid"
    assert ask(services, "get XMR back out", semantic=False)["excerpts"][0]["reason"] == "lexical"
    assert asked == [False, True]
