"""StateStore contract: every adapter must pass this suite unchanged."""

from __future__ import annotations

import pytest

from knowledge.errors import Conflict, NotFound
from knowledge.model import Agent, BotSettings, Document, RetrievalRecord, Source, Token

NOW = 1_800_000_000.0


def src(sid="s1", bot="b1", **kw) -> Source:
    return Source(id=sid, bot=bot, type=kw.pop("type", "pack"), name=kw.pop("name", "Pack"), created_at=NOW,
                  updated_at=NOW, **kw)


def test_source_round_trip_and_isolation(state_store):
    s = src(config={"slug": "p2p"}, priority=5, visibility="public")
    state_store.put_source(s)
    got = state_store.get_source("b1", "s1")
    assert got == s
    assert state_store.get_source("b2", "s1") is None
    assert state_store.list_sources("b2") == []
    assert [x.id for x in state_store.list_sources("b1")] == ["s1"]


def test_update_and_delete(state_store):
    state_store.put_source(src())
    updated = state_store.update_source("b1", "s1", status="failed", error_code="malformed_file")
    assert (updated.status, updated.error_code) == ("failed", "malformed_file")
    with pytest.raises(NotFound):
        state_store.update_source("b1", "missing", status="ready")
    state_store.delete_source("b1", "s1")
    assert state_store.get_source("b1", "s1") is None


def test_lease_is_exclusive_until_expiry(state_store):
    state_store.put_source(src())
    assert state_store.acquire_lease("b1", "s1", "w1", NOW, 120)
    assert not state_store.acquire_lease("b1", "s1", "w2", NOW + 60, 120)
    assert state_store.extend_lease("b1", "s1", "w1", NOW + 100, 120)
    assert not state_store.extend_lease("b1", "s1", "w2", NOW + 100, 120)
    assert not state_store.acquire_lease("b1", "s1", "w2", NOW + 200, 120)  # extended to NOW+220
    assert state_store.acquire_lease("b1", "s1", "w2", NOW + 221, 120)  # expired: taken over
    assert state_store.get_source("b1", "s1").attempts == 2
    assert not state_store.extend_lease("b1", "s1", "w1", NOW + 222, 120)  # the old owner lost it
    state_store.release_lease("b1", "s1", "w1")  # not the owner: no effect
    assert state_store.get_source("b1", "s1").lease_owner == "w2"
    state_store.release_lease("b1", "s1", "w2")
    assert state_store.get_source("b1", "s1").lease_owner is None


def test_expired_leases_listed(state_store):
    state_store.put_source(src("s1"))
    state_store.put_source(src("s2"))
    state_store.acquire_lease("b1", "s1", "w1", NOW, 120)
    state_store.acquire_lease("b1", "s2", "w2", NOW + 100, 120)
    assert [s.id for s in state_store.expired_leases(NOW + 150)] == ["s1"]


def test_generation_flip_is_conditioned_on_the_lease(state_store):
    state_store.put_source(src())
    state_store.acquire_lease("b1", "s1", "w1", NOW, 120)
    g1 = state_store.begin_generation("b1", "s1", "w1")
    docs = [Document(id="d1", bot="b1", source_id="s1", title="T", path="help/a.md", visibility="public",
                     fragments=2)]
    assert state_store.commit_generation("b1", "s1", "w1", g1, checksum="c1", documents=docs,
                                         counters={"passages": 2, "documents_processed": 1}, now=NOW,
                                         visibility_counts={"public": 2}) is None
    s = state_store.get_source("b1", "s1")
    assert (s.live_generation, s.checksum, s.passages, s.status, s.lease_owner) == (g1, "c1", 2, "ready", None)
    assert [d.path for d in state_store.list_documents("b1", "s1")] == ["help/a.md"]
    [live] = state_store.live_sources("b1")
    assert (live.source_gen, live.visibility_counts) == (f"s1:{g1}", {"public": 2})

    # a writer whose lease was taken over cannot flip anything
    state_store.acquire_lease("b1", "s1", "w1", NOW, 120)
    g2 = state_store.begin_generation("b1", "s1", "w1")
    assert g2 > g1
    state_store.acquire_lease("b1", "s1", "w2", NOW + 500, 120)
    with pytest.raises(Conflict):
        state_store.commit_generation("b1", "s1", "w1", g2, checksum="c2", documents=[], counters={}, now=NOW)
    assert state_store.get_source("b1", "s1").checksum == "c1"
    assert (("b1", "s1", g2) in state_store.orphan_generations())

    g3 = state_store.begin_generation("b1", "s1", "w2")
    assert state_store.commit_generation("b1", "s1", "w2", g3, checksum="c3", documents=[], counters={},
                                         now=NOW) == g1
    assert ("b1", "s1", g1) in state_store.orphan_generations()
    state_store.finish_generation("b1", "s1", g1)
    assert ("b1", "s1", g1) not in state_store.orphan_generations()


def test_crawled_pages_keep_their_validators_and_the_unchanged_count(state_store):
    state_store.put_source(src(type="website", name="Site"))
    state_store.acquire_lease("b1", "s1", "w1", NOW, 120)
    g1 = state_store.begin_generation("b1", "s1", "w1")
    docs = [
        Document(id="d1", bot="b1", source_id="s1", title="A", path="/a", url="https://s.example/a", fragments=1,
                 etag='W/"a-1"', last_modified="Mon, 01 Jan 2024 00:00:00 GMT"),
        Document(id="d2", bot="b1", source_id="s1", title="B", path="/b", url="https://s.example/b", fragments=1),
    ]
    state_store.commit_generation("b1", "s1", "w1", g1, checksum="c1", documents=docs,
                                  counters={"passages": 2, "documents_processed": 2, "documents_unchanged": 1},
                                  now=NOW)
    assert state_store.list_documents("b1", "s1") == docs
    assert state_store.get_source("b1", "s1").documents_unchanged == 1
    # a refresh skipped by checksum says how many pages the site reported unchanged
    assert state_store.update_source("b1", "s1", documents_unchanged=2).documents_unchanged == 2
    assert state_store.get_source("b1", "s1").documents_unchanged == 2


def test_begin_generation_needs_the_lease(state_store):
    state_store.put_source(src())
    with pytest.raises(Conflict):
        state_store.begin_generation("b1", "s1", "nobody")


def test_disabled_sources_are_not_live(state_store):
    state_store.put_source(src(status="disabled", live_generation=3))
    state_store.put_source(src("s2", live_generation=1))
    assert [x.source_id for x in state_store.live_sources("b1")] == ["s2"]


def test_withdraw_generation(state_store):
    state_store.put_source(src(live_generation=4, passages=9))
    assert state_store.withdraw_generation("b1", "s1", status="disabled", error_code="out_of_scope") == 4
    s = state_store.get_source("b1", "s1")
    assert (s.live_generation, s.passages, s.status, s.error_code) == (None, 0, "disabled", "out_of_scope")
    assert ("b1", "s1", 4) in state_store.orphan_generations()


def test_bots_agents_tokens_retrievals(state_store):
    state_store.put_bot(BotSettings(bot="b1", products=["p2p", "provider:binance"], scope_to_products=False))
    assert state_store.get_bot("b1").products == ["p2p", "provider:binance"]
    assert state_store.get_bot("b1").scope_to_products is False
    assert state_store.get_bot("nobody") == BotSettings(bot="nobody")
    assert state_store.get_bot("nobody").top_k == 10
    state_store.put_bot(BotSettings(bot="k", top_k=4, floor=0.5, rerank=True))
    stored = state_store.get_bot("k")
    assert (stored.top_k, stored.floor, stored.rerank) == (4, 0.5, True) and type(stored.top_k) is int
    assert state_store.get_bot("nobody").rerank is False

    # the rescue's version is written alone: what an operator set stays, even for a new bot
    state_store.set_rescue_version("b1", "digest-1")
    assert state_store.get_bot("b1").rescue_version == "digest-1"
    assert state_store.get_bot("b1").products == ["p2p", "provider:binance"]
    assert state_store.get_bot("b1").scope_to_products is False
    state_store.set_rescue_version("fresh", "digest-2")
    assert state_store.get_bot("fresh") == BotSettings(bot="fresh", rescue_version="digest-2")
    assert "fresh" in state_store.list_bots()
    state_store.set_rescue_version("b1", None)
    assert state_store.get_bot("b1").rescue_version is None

    state_store.put_agent(Agent(id="a1", bot="b1", status="active", source_ids=["s1", "s2"]))
    assert state_store.get_agent("b1", "a1").source_ids == ["s1", "s2"]
    assert state_store.get_agent("b2", "a1") is None

    state_store.put_token(Token(token_hash="h", bot="b1", scopes=("knowledge:read",), created_at=NOW))
    assert state_store.get_token("h").scopes == ("knowledge:read",)
    assert state_store.get_token("other") is None

    rec = RetrievalRecord(id="r1", bot="b1", audience="customer", served=[("s", "d", "f")], created_at=NOW,
                          expires_at=NOW + 10)
    state_store.put_retrieval(rec)
    assert state_store.get_retrieval("b1", "r1") == rec
    assert state_store.get_retrieval("b2", "r1") is None


def test_the_retrieval_view_is_the_settings_and_live_sources_as_of_now(state_store):
    def view(bot="b1"):
        settings, live = state_store.retrieval_view(bot)
        return settings, sorted(s.source_gen for s in live)

    assert view() == (BotSettings(bot="b1"), [])
    state_store.put_bot(BotSettings(bot="b1", floor=0.5))
    state_store.put_source(src(live_generation=2))
    state_store.put_source(src("s2", status="disabled", live_generation=1))
    assert view() == (BotSettings(bot="b1", floor=0.5), ["s1:2"])
    assert view() == (state_store.get_bot("b1"), sorted(s.source_gen for s in state_store.live_sources("b1")))
    # every change shows at once: settings, a source going live, one disabled
    state_store.put_bot(BotSettings(bot="b1", floor=0.2))
    state_store.update_source("b1", "s2", status="ready")
    assert view() == (BotSettings(bot="b1", floor=0.2), ["s1:2", "s2:1"])
    state_store.update_source("b1", "s1", status="disabled")
    assert view() == (BotSettings(bot="b1", floor=0.2), ["s2:1"])
    assert view("b2") == (BotSettings(bot="b2"), [])
    # what the caller gets is its own: changing it changes nothing stored
    settings, live = state_store.retrieval_view("b1")
    settings.products.append("p2p")
    live.clear()
    assert view() == (BotSettings(bot="b1", floor=0.2), ["s2:1"])
    state_store.get_bot("b1").products.append("p2p")
    assert state_store.get_bot("b1").products == []
