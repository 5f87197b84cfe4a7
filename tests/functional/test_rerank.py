"""The optional reranker over the real embedded adapters, with a reranker of our own behind
the port (the local cross-encoder needs torch and a model directory; see
``test_local_cross_encoder_when_installed``): it reorders only for bots that turn it on, its
score is in the signals and the confidence components, ``retrieval-test`` can skip it, and a
failing reranker leaves the retrieval's own order."""

from __future__ import annotations

import json
import os

import pytest

from knowledge.api.auth import create_token
from knowledge.api.http import Request
from knowledge.api.ratelimit import TokenBucket
from knowledge.api.routes import dispatch
from knowledge.errors import BackendError
from knowledge.refresh.packsync import install_pack
from knowledge.refresh.reindex import reindex
from knowledge.rerank.local import LocalCrossEncoder, missing_requirement, relevance
from knowledge.retrieve.service import MAX_EXCERPTS, RetrievalOptions, RetrievalRequest, retrieve
from tests.conftest import page

SETTINGS = "/api/bots/default/settings"
KB = "/api/bots/default/knowledge"

PAGES = [page(f"help/fee-{i}.md", f"# Fee {i}\n\nThe withdrawal fee of plan {i} is listed here: tag{chr(97 + i)}. "
              + "fee " * (i % 4)) for i in range(1, 16)]


class Favourite:
    """Scores a passage 0.9 when it holds ``word``, else 0.1; records what it was asked."""

    name = "favourite"

    def __init__(self, word: str):
        self.word = word
        self.calls: list[tuple[str, int]] = []

    def score(self, question, texts):
        self.calls.append((question, len(texts)))
        return [0.9 if self.word in t else 0.1 for t in texts]


class Broken:
    name = "broken"

    def score(self, question, texts):
        raise BackendError("the reranking service is down")


def ask(services, q="withdrawal fee", **options):
    return retrieve(services, RetrievalRequest("default", q), record=False, options=RetrievalOptions(**options))


@pytest.fixture
def corpus(services, write_pack):
    install_pack(services, write_pack("coinvault", PAGES))
    reindex(services, "default")
    return services


def turn_on(services, on=True, top_k=3):
    settings = services.state.get_bot("default")
    settings.rerank, settings.top_k = on, top_k
    services.state.put_bot(settings)


def paths(res):
    return [e["path"] for e in res["excerpts"]]


def tag(path):
    return f"tag{chr(97 + int(path.split('-')[1].split('.')[0]))}"


def test_reranker_reorders_for_a_bot_that_turns_it_on_and_explains_itself(corpus):
    turn_on(corpus, False, top_k=12)
    twelfth = paths(ask(corpus))[11]
    turn_on(corpus, False)
    before = ask(corpus)
    assert len(before["excerpts"]) == 3 and twelfth not in paths(before)
    corpus.reranker = Favourite(tag(twelfth))  # ranked 12th by words: outside the bot's first 3
    assert ask(corpus)["excerpts"] == before["excerpts"]  # the bot has not turned it on
    assert corpus.reranker.calls == []
    turn_on(corpus)
    after = ask(corpus)
    assert paths(after)[0] == twelfth
    assert paths(after)[1:] == paths(before)[:2]  # ties keep the retrieval's order
    assert len(after["excerpts"]) == 3  # the bot's topK, from a deeper pool
    assert corpus.reranker.calls == [("withdrawal fee", 15)]  # every candidate up to the depth (20)
    assert [e["signals"]["rerank"] for e in after["excerpts"]] == [0.9, 0.1, 0.1]
    assert "rerank" not in before["excerpts"][0]["signals"]
    assert after["confidenceComponents"]["reranker"] == 0.9
    assert before["confidenceComponents"]["reranker"] is None
    # the options switch it off (retrieval-test's rerank: false)
    assert ask(corpus, rerank=False)["excerpts"] == before["excerpts"]
    turn_on(corpus, top_k=12)
    assert len(ask(corpus)["excerpts"]) <= MAX_EXCERPTS


def test_a_failing_reranker_leaves_the_retrieval_order(corpus, caplog):
    turn_on(corpus, False)
    before = ask(corpus)
    corpus.reranker = Broken()
    turn_on(corpus)
    after = ask(corpus)
    assert paths(after) == paths(before) and len(paths(after)) == 3
    assert all("rerank" not in e["signals"] for e in after["excerpts"])
    assert after["confidenceComponents"]["reranker"] is None
    assert "the reranker failed (internal_error)" in caplog.text


def test_rerank_setting_and_retrieval_test_flag_over_the_routes(corpus):
    limiter = TokenBucket(per_minute=1000)
    rw = create_token(corpus, "default", ["knowledge:read", "knowledge:write", "knowledge:admin"])

    def call(method, path, body=None):
        req = Request(method, path, {"authorization": f"Bearer {rw}"}, {}, json.dumps(body).encode() if body else b"")
        resp = dispatch(corpus, req, limiter=limiter)
        return resp.status, resp.body

    status, body = call("GET", SETTINGS)
    assert status == 200 and body["rerank"] is False
    status, body = call("PATCH", SETTINGS, {"rerank": "yes"})
    assert (status, body["error"]["code"]) == (400, "invalid_setting")
    status, body = call("PATCH", SETTINGS, {"rerank": True})
    assert status == 200 and body["rerank"] is True and corpus.state.get_bot("default").rerank is True
    first = paths(ask(corpus, rerank=False))[0]
    last = paths(ask(corpus, rerank=False))[-1]
    corpus.reranker = Favourite(tag(last))
    status, body = call("POST", f"{KB}/retrieval-test", {"q": "withdrawal fee"})
    assert status == 200 and body["excerpts"][0]["path"] == last != first
    assert body["confidenceComponents"]["reranker"] == 0.9
    status, body = call("POST", f"{KB}/retrieval-test", {"q": "withdrawal fee", "rerank": False})
    assert status == 200 and body["excerpts"][0]["path"] == first
    assert body["confidenceComponents"]["reranker"] is None


def test_cross_encoder_scores_become_relevances():
    assert relevance(0.25) == 0.25  # a probability already
    assert relevance(0.0) == 0.0 and relevance(1.0) == 1.0
    assert relevance(4.0) == pytest.approx(0.982, abs=1e-3)  # a logit
    assert relevance(-4.0) == pytest.approx(0.018, abs=1e-3)
    assert relevance(-1e9) == pytest.approx(0.0) and relevance(1e9) == pytest.approx(1.0)


def test_local_reranker_setting_fails_loudly_when_it_cannot_load(tmp_path, monkeypatch):
    from knowledge.settings import LocalSettings

    monkeypatch.setenv("KB_RERANK_MODEL", str(tmp_path / "no-such-model"))
    with pytest.raises(ValueError, match="KB_RERANK_MODEL"):
        LocalSettings.from_env(tmp_path / "data")
    assert missing_requirement(None) is not None
    monkeypatch.delenv("KB_RERANK_MODEL")
    assert LocalSettings.from_env(tmp_path / "data").rerank_model is None
    with pytest.raises(BackendError):  # the adapter itself refuses a missing model at first use
        LocalCrossEncoder(str(tmp_path / "no-such-model")).score("q", ["text"])


MODEL = os.environ.get("KB_TEST_RERANK_MODEL")


@pytest.mark.skipif(not MODEL or missing_requirement(MODEL) is not None,
                    reason="needs torch, sentence-transformers and a cross-encoder directory (KB_TEST_RERANK_MODEL)")
def test_local_cross_encoder_when_installed():
    reranker = LocalCrossEncoder(str(MODEL))
    scores = reranker.score("how do I withdraw bitcoin", [
        "To withdraw bitcoin, open Wallet, choose Withdraw and paste the address.",
        "Our office is closed on public holidays.",
    ])
    assert all(0.0 <= s <= 1.0 for s in scores) and scores[0] > scores[1]
