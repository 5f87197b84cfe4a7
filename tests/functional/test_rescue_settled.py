"""Which bots get their rescue model relearned, and with which analyser (``rescue_build``).

``rebuild_settled`` is what the AWS scheduler's tick runs; here it runs over the embedded
adapters, whose state and index satisfy the same ports. The AWS path itself (moto +
osmem-server, a real tick, a real retrieve) is in ``tests/e2e/test_aws_workflow.py``."""

from __future__ import annotations

import json
import logging
import random
import sys
from collections.abc import Iterator

import pytest

from knowledge.model import BotSettings
from knowledge.refresh import rescue_build
from knowledge.refresh.packsync import install_pack, pack_source_id
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


def rescued_paths(services, q: str) -> list[str]:
    result = retrieve(services, RetrievalRequest(BOT, q), record=False, options=RetrievalOptions(rescue=True))
    return [e["path"] for e in result["excerpts"] if e["reason"] == "rescue"]


def test_a_stale_bot_is_rebuilt_only_once_no_source_of_it_is_being_indexed(indexed):
    state, now = indexed.state, indexed.clock.now()
    source_id = pack_source_id(BOT, "coinvault")
    assert state.acquire_lease(BOT, source_id, "worker-1", now, 600)
    assert rescue_build.rebuild_settled(indexed) == []
    assert rescue_build.is_stale(indexed, BOT) and not indexed.blobs.exists(rescue_build.blob_key(BOT))

    indexed.clock.advance(601)  # the worker died: its expired lease no longer holds the bot back
    assert rescue_build.rebuild_settled(indexed, busy={BOT}) == []  # e.g. a refresh started just now
    assert rescue_build.rebuild_settled(indexed, keep_going=lambda: False) == []  # out of time
    assert rescue_build.is_stale(indexed, BOT)

    assert rescue_build.rebuild_settled(indexed) == [BOT]
    assert not rescue_build.is_stale(indexed, BOT)
    assert rescued_paths(indexed, "cashout") == ["help/target.md"]
    assert rescue_build.rebuild_settled(indexed) == []  # current: nothing to do


def test_a_bot_with_nothing_live_is_rebuilt_only_when_it_had_a_model(indexed):
    indexed.state.put_bot(BotSettings(bot="fresh"))  # never had a source: nothing to learn or forget
    indexed.state.put_bot(BotSettings(bot="emptied", rescue_version="from-a-corpus-since-deleted"))
    assert sorted(rescue_build.rebuild_settled(indexed)) == [BOT, "emptied"]
    assert not indexed.blobs.exists(rescue_build.blob_key("fresh"))
    assert indexed.state.get_bot("fresh").rescue_version is None
    model = rescue_build.load(indexed, "emptied")
    assert model is not None and not model.enabled  # the old model is replaced by an empty, disabled one


def test_a_failing_rebuild_is_logged_and_the_other_bots_go_on(indexed, monkeypatch, caplog):
    indexed.state.put_bot(BotSettings(bot="aaa-first", rescue_version="stale"))
    real = rescue_build.rebuild

    def flaky(services, bot):
        if bot == "aaa-first":
            raise OSError("search domain unreachable")
        return real(services, bot)

    monkeypatch.setattr(rescue_build, "rebuild", flaky)
    with caplog.at_level(logging.ERROR, logger=rescue_build.__name__):
        assert rescue_build.rebuild_settled(indexed) == [BOT]
    assert "rescue rebuild of aaa-first failed" in caplog.text
    assert indexed.state.get_bot("aaa-first").rescue_version == "stale"  # tried again next time


def test_the_rescue_analyser_is_the_embedded_index_analyser(services):
    index = services.index
    assert rescue_build.analyzer(index) == index.analyze  # embedded: the index's own, as before
    standalone = rescue_build.analyzer(object())  # any other index (OpenSearch): no network
    assert standalone is not None and standalone is not index.analyze
    texts = ["How do I take my Monero out?", "Withdrawals are processed in batches of 1.5 XMR",
             "the and of", "ünïcödé wörds, CamelCase and snake_case " * 200]  # > 2048 chars too
    for text in texts:
        assert standalone(text) == index.analyze(text)


def test_without_the_analyser_nothing_is_built_and_retrieval_goes_on_without_the_rescue(
        indexed, no_tantivy, caplog):
    with caplog.at_level(logging.WARNING, logger=rescue_build.__name__):
        assert rescue_build.rebuild_settled(indexed) == []
    assert "not installed" in caplog.text
    assert rescue_build.is_stale(indexed, BOT)
    with pytest.raises(RuntimeError, match="not installed"):
        rescue_build.rebuild(indexed, BOT)


def test_a_stored_model_is_not_asked_without_the_analyser_it_learned_with(indexed, monkeypatch):
    assert rescue_build.rebuild_settled(indexed) == [BOT]
    assert rescued_paths(indexed, "cashout") == ["help/target.md"]
    rescue_build._standalone_analyzer.cache_clear()
    monkeypatch.setitem(sys.modules, "knowledge.adapters.local.tantivy_index", None)
    try:
        result = retrieve(indexed, RetrievalRequest(BOT, "cashout"), record=False)
    finally:
        rescue_build._standalone_analyzer.cache_clear()
    assert result["excerpts"] and all(e["reason"] != "rescue" for e in result["excerpts"])


def test_a_refresh_makes_the_bot_stale_again_and_settled_rebuilds_it(indexed, write_pack):
    assert rescue_build.rebuild_settled(indexed) == [BOT]
    pages = corpus(random.Random(4))
    pages.append(page("help/new.md", "# New\n\nwithdraw payout", audience="CUSTOMER"))
    install_pack(indexed, write_pack("coinvault", pages))
    reindex(indexed, BOT)
    assert rescue_build.is_stale(indexed, BOT)
    assert rescue_build.rebuild_settled(indexed) == [BOT]
    assert not rescue_build.is_stale(indexed, BOT)


def test_a_bot_another_run_is_rebuilding_is_skipped_until_its_claim_lapses(indexed):
    claim = rescue_build.claim_key(BOT)
    indexed.blobs.put(claim, json.dumps({"at": indexed.clock.now() - 60}).encode())  # an overlapping tick
    assert rescue_build.rebuild_settled(indexed) == []
    assert rescue_build.is_stale(indexed, BOT)
    indexed.clock.advance(rescue_build.CLAIM_SECONDS)  # its owner was stopped before it could drop it
    assert rescue_build.rebuild_settled(indexed) == [BOT]
    assert not indexed.blobs.exists(claim)  # dropped once the model is stored


def test_a_rebuild_claims_the_bot_while_it_runs_and_drops_the_claim_even_when_it_fails(indexed, monkeypatch):
    seen = []

    def failing(services, bot):
        seen.append(json.loads(services.blobs.get(rescue_build.claim_key(bot))))
        raise ValueError("learning failed")

    monkeypatch.setattr(rescue_build, "rebuild", failing)
    assert rescue_build.rebuild_settled(indexed) == []
    assert seen == [{"at": indexed.clock.now()}]
    assert not indexed.blobs.exists(rescue_build.claim_key(BOT))
    monkeypatch.undo()
    indexed.blobs.put(rescue_build.claim_key(BOT), b"not json")  # unreadable: not a claim
    assert rescue_build.rebuild_settled(indexed) == [BOT]
