"""StateStore contract, lifecycle part: what disable, delete and dead workers rely on."""

from __future__ import annotations

from knowledge.model import Document, Source

NOW = 1_800_000_000.0


def src(sid="s1", bot="b1", **kw) -> Source:
    return Source(id=sid, bot=bot, type="instruction", name="Rule", created_at=NOW, updated_at=NOW, **kw)


def _commit(store, owner, generation, checksum="c"):
    docs = [Document(id="d1", bot="b1", source_id="s1", title="T", path="instruction", visibility="agent",
                     fragments=1)]
    return store.commit_generation("b1", "s1", owner, generation, checksum=checksum, documents=docs,
                                   counters={"passages": 1, "documents_processed": 1}, now=NOW,
                                   visibility_counts={"agent": 1})


def test_a_source_disabled_during_its_run_stays_disabled_after_the_commit(state_store):
    state_store.put_source(src())
    assert state_store.acquire_lease("b1", "s1", "w1", NOW, 120)
    generation = state_store.begin_generation("b1", "s1", "w1")
    state_store.update_source("b1", "s1", status="disabled")  # the operator disables it mid-run
    _commit(state_store, "w1", generation)
    s = state_store.get_source("b1", "s1")
    assert (s.status, s.live_generation, s.lease_owner) == ("disabled", generation, None)
    assert state_store.live_sources("b1") == []  # still out of every search


def test_an_enabled_source_becomes_ready_on_commit(state_store):
    state_store.put_source(src(status="waiting"))
    state_store.acquire_lease("b1", "s1", "w1", NOW, 120)
    generation = state_store.begin_generation("b1", "s1", "w1")
    _commit(state_store, "w1", generation)
    assert state_store.get_source("b1", "s1").status == "ready"


def test_delete_retires_every_generation_and_the_documents(state_store):
    state_store.put_source(src())
    state_store.acquire_lease("b1", "s1", "w1", NOW, 120)
    live = state_store.begin_generation("b1", "s1", "w1")
    _commit(state_store, "w1", live)
    state_store.acquire_lease("b1", "s1", "w2", NOW + 1, 120)
    staging = state_store.begin_generation("b1", "s1", "w2")  # a run in flight
    state_store.delete_source("b1", "s1")
    assert state_store.get_source("b1", "s1") is None
    assert state_store.list_documents("b1", "s1") == []
    orphans = state_store.orphan_generations()
    assert ("b1", "s1", live) in orphans and ("b1", "s1", staging) in orphans
    for generation in (live, staging):
        state_store.finish_generation("b1", "s1", generation)
    assert state_store.orphan_generations() == []


def test_a_reaped_lease_is_taken_by_the_next_worker_with_one_more_attempt(state_store):
    state_store.put_source(src())
    assert state_store.acquire_lease("b1", "s1", "dead", NOW, 120)
    state_store.begin_generation("b1", "s1", "dead")
    assert [s.id for s in state_store.expired_leases(NOW + 121)] == ["s1"]
    state_store.release_lease("b1", "s1", "dead")  # what the reaper does for the dead owner
    assert state_store.acquire_lease("b1", "s1", "next", NOW + 122, 120)
    s = state_store.get_source("b1", "s1")
    assert (s.lease_owner, s.attempts) == ("next", 2)
    assert not state_store.extend_lease("b1", "s1", "dead", NOW + 123, 120)
