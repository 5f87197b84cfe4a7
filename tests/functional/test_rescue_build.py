"""Learning, storing and loading a bot's rescue model, and its analyser (``rescue_build``).

No deployment learns the model by itself (the rescue is off on the answer path); the
benchmarks that measure it build one and switch the option on, as these tests do."""

from __future__ import annotations

import random
import sys
from collections.abc import Iterator

import pytest

from knowledge.refresh import rescue_build
from knowledge.refresh.packsync import install_pack
from knowledge.refresh.reindex import reindex
from knowledge.retrieve.service import RetrievalOptions, RetrievalRequest, retrieve
from tests.conftest import page
from tests.functional.test_rescue_in_retrieval import corpus

BOT = "default"


@pytest.fixture
def indexed(services, write_pack):
    install_pack(services, write_pack("coinvault", corpus(random.Random(4))))
    reindex(services, BOT)
    assert rescue_build.is_stale(services, BOT)
    return services


@pytest.fixture
def no_tantivy(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The rescue analyser's module cannot be imported (a runtime without tantivy)."""
    rescue_build._standalone_analyzer.cache_clear()
    monkeypatch.setitem(sys.modules, "knowledge.adapters.local.tantivy_index", None)
    yield
    rescue_build._standalone_analyzer.cache_clear()


def rescued_paths(services, q: str, rescue: bool = True) -> list[str]:
    result = retrieve(services, RetrievalRequest(BOT, q), record=False, options=RetrievalOptions(rescue=rescue))
    return [e["path"] for e in result["excerpts"] if e["reason"] == "rescue"]


def test_refreshes_learn_no_model_and_answers_do_not_use_one(indexed):
    assert not indexed.blobs.exists(rescue_build.blob_key(BOT))
    assert rescue_build.rebuild_if_stale(indexed, BOT)
    assert rescued_paths(indexed, "cashout", rescue=False) == []  # the answer path's default


def test_a_model_learned_on_request_is_stored_and_asked_when_switched_on(indexed):
    assert rescue_build.rebuild_if_stale(indexed, BOT)
    assert not rescue_build.is_stale(indexed, BOT)
    assert indexed.blobs.exists(rescue_build.blob_key(BOT))
    assert rescued_paths(indexed, "cashout") == ["help/target.md"]  # a page that never says "cashout"
    assert not rescue_build.rebuild_if_stale(indexed, BOT)  # current: nothing to do


def test_a_refresh_makes_the_model_stale_again(indexed, write_pack):
    rescue_build.rebuild(indexed, BOT)
    pages = corpus(random.Random(4))
    pages.append(page("help/new.md", "# New\n\nwithdraw payout", audience="CUSTOMER"))
    install_pack(indexed, write_pack("coinvault", pages))
    reindex(indexed, BOT)
    assert rescue_build.is_stale(indexed, BOT)
    assert rescue_build.rebuild_if_stale(indexed, BOT)
    assert not rescue_build.is_stale(indexed, BOT)


def test_the_rescue_analyser_is_the_embedded_index_analyser(services):
    index = services.index
    assert rescue_build.analyzer(index) == index.analyze  # embedded: the index's own
    standalone = rescue_build.analyzer(object())  # any other index (OpenSearch): no network
    assert standalone is not None and standalone is not index.analyze
    texts = ["How do I take my Monero out?", "Withdrawals are processed in batches of 1.5 XMR",
             "the and of", "ünïcödé wörds, CamelCase and snake_case " * 200]  # > 2048 chars too
    for text in texts:
        assert standalone(text) == index.analyze(text)


def test_without_the_analyser_nothing_is_built(indexed, no_tantivy):
    with pytest.raises(RuntimeError, match="not installed"):
        rescue_build.rebuild(indexed, BOT)
    assert rescue_build.is_stale(indexed, BOT)


def test_a_stored_model_is_not_asked_without_the_analyser_it_learned_with(indexed, monkeypatch):
    rescue_build.rebuild(indexed, BOT)
    model = rescue_build.load(indexed, BOT)  # stored and usable (asked with it: the test above)
    assert model is not None and model.enabled
    rescue_build._standalone_analyzer.cache_clear()
    monkeypatch.setitem(sys.modules, "knowledge.adapters.local.tantivy_index", None)
    try:
        result = retrieve(indexed, RetrievalRequest(BOT, "cashout"), record=False,
                          options=RetrievalOptions(rescue=True))
    finally:
        rescue_build._standalone_analyzer.cache_clear()
    assert result["excerpts"] and all(e["reason"] != "rescue" for e in result["excerpts"])
