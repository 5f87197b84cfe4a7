"""StateStore contract, continued: the behaviour the scheduler, the reaper and the refresh
pipeline rely on beyond the core suite (due sources, stale staging, document replacement,
the withdraw/retire bookkeeping). Runs against every state adapter."""

from __future__ import annotations

import pytest

from knowledge.errors import Conflict, NotFound
from knowledge.model import Document, Source
from knowledge.schedule import is_due

NOW = 1_800_000_000.0


def src(sid: str, bot: str = "b1", **kw: object) -> Source:
    kw.setdefault("created_at", NOW)
    kw.setdefault("updated_at", NOW)
    return Source(id=sid, bot=bot, type="website", name=sid, **kw)  # type: ignore[arg-type]


def doc(did: str, path: str, **kw: object) -> Document:
    return Document(id=did, bot="b1", source_id="s1", title=did, path=path, **kw)  # type: ignore[arg-type]


def test_due_sources_follow_status_and_schedule(state_store):
    state_store.put_source(src("waiting", status="waiting", updated_at=NOW - 10))
    state_store.put_source(src("again", status="needs_refresh", updated_at=NOW - 30))
    # queued, but backing off (a throttled embedder): due only once the time has come
    state_store.put_source(src("backoff", status="waiting", updated_at=NOW - 40, next_refresh_at=NOW + 999))
    state_store.put_source(src("scheduled", status="ready", next_refresh_at=NOW - 1, updated_at=NOW - 20))
    state_store.put_source(src("later", status="ready", next_refresh_at=NOW + 60))
    state_store.put_source(src("unscheduled", status="ready"))
    state_store.put_source(src("off", status="disabled", next_refresh_at=NOW - 1))
    state_store.put_source(src("busy", status="indexing", next_refresh_at=NOW - 1))
    state_store.put_source(src("other-bot", bot="b2", status="failed", next_refresh_at=NOW - 5, updated_at=NOW - 5))

    due = state_store.due_sources(NOW)
    assert [(s.bot, s.id) for s in due] == [("b1", "again"), ("b1", "scheduled"), ("b1", "waiting"),
                                           ("b2", "other-bot")]
    assert [s.id for s in state_store.due_sources(NOW, limit=2)] == ["again", "scheduled"]

    # the index position follows every kind of write
    state_store.update_source("b1", "waiting", status="indexing")
    state_store.update_source("b1", "later", next_refresh_at=NOW - 2)
    state_store.update_source("b1", "off", status="ready", updated_at=NOW - 100)
    assert [s.id for s in state_store.due_sources(NOW)] == ["off", "again", "scheduled", "other-bot", "later"]
    assert "backoff" in [s.id for s in state_store.due_sources(NOW + 1000)]


STATUSES = ("waiting", "needs_refresh", "ready", "failed", "indexing", "disabled")
TIMES = (None, NOW - 60, NOW, NOW + 60)


def test_due_sources_are_exactly_what_the_schedule_rule_says(state_store):
    """Each store indexes the due rule its own way; both must agree with ``is_due``."""
    expected = set()
    for i, (status, at) in enumerate((s, t) for s in STATUSES for t in TIMES):
        sid = f"s{i}-{status}"
        state_store.put_source(src(sid, status=status, next_refresh_at=at, updated_at=NOW - i))
        if is_due(status, at, NOW):
            expected.add(sid)
    assert expected  # the matrix has both kinds
    assert {s.id for s in state_store.due_sources(NOW, limit=100)} == expected


def test_commit_replaces_documents_and_schedules_the_next_refresh(state_store):
    # a website refreshes on its interval from the end of its last run
    state_store.put_source(src("s1", status="indexing", refresh_every=3600, next_refresh_at=NOW - 5))
    state_store.acquire_lease("b1", "s1", "w1", NOW, 120)
    g1 = state_store.begin_generation("b1", "s1", "w1")
    state_store.commit_generation("b1", "s1", "w1", g1, checksum="c1",
                                  documents=[doc("a", "z.md"), doc("b", "a.md", url="https://x/b", fragments=3)],
                                  counters={"passages": 4}, now=NOW)
    assert [(d.id, d.path, d.url, d.fragments) for d in state_store.list_documents("b1", "s1")] == [
        ("b", "a.md", "https://x/b", 3), ("a", "z.md", None, 0)]
    state_store.acquire_lease("b1", "s1", "w1", NOW + 1, 120)
    g2 = state_store.begin_generation("b1", "s1", "w1")
    state_store.commit_generation("b1", "s1", "w1", g2, checksum="c2",
                                  documents=[doc("c", "c.md", error_code="malformed_file")],
                                  counters={"passages": 1, "documents_failed": 1}, now=NOW + 2,
                                  error_code="malformed_file")
    [only] = state_store.list_documents("b1", "s1")
    assert (only.id, only.error_code) == ("c", "malformed_file")
    s = state_store.get_source("b1", "s1")
    assert (s.status, s.error_code, s.documents_failed, s.last_indexed_at) == ("ready", "malformed_file", 1, NOW + 2)
    assert [x.id for x in state_store.due_sources(NOW + 3601)] == []
    assert [x.id for x in state_store.due_sources(NOW + 3602)] == ["s1"]

    # anything else has no schedule after a successful run (a past backoff is cleared)
    state_store.put_source(src("s2", status="waiting", next_refresh_at=NOW - 5))
    state_store.acquire_lease("b1", "s2", "w1", NOW, 120)
    g = state_store.begin_generation("b1", "s2", "w1")
    state_store.commit_generation("b1", "s2", "w1", g, checksum="c", documents=[], counters={}, now=NOW)
    assert state_store.get_source("b1", "s2").next_refresh_at is None
    assert "s2" not in [x.id for x in state_store.due_sources(NOW + 10**6)]


def test_stale_staging_and_orphans(state_store):
    state_store.put_source(src("s1"))
    state_store.acquire_lease("b1", "s1", "dead-worker", NOW, 120)
    g = state_store.begin_generation("b1", "s1", "dead-worker")
    assert state_store.stale_staging(NOW + 60) == []
    assert state_store.orphan_generations() == []  # its writer still holds the lease
    assert state_store.stale_staging(NOW + 121) == [("b1", "s1", g)]
    [expired] = state_store.expired_leases(NOW + 121)
    assert (expired.id, expired.lease_owner) == ("s1", "dead-worker")
    state_store.release_lease("b1", "s1", "dead-worker")
    assert state_store.orphan_generations() == [("b1", "s1", g)]
    state_store.finish_generation("b1", "s1", g)
    assert state_store.orphan_generations() == []
    assert state_store.stale_staging(NOW + 121) == []


def test_generation_numbers_are_never_reused(state_store):
    state_store.put_source(src("s1"))
    state_store.acquire_lease("b1", "s1", "w1", NOW, 120)
    g1 = state_store.begin_generation("b1", "s1", "w1")
    state_store.finish_generation("b1", "s1", g1)  # abandoned
    state_store.put_source(src("s1"))  # replaced by an edit: the counter must survive
    state_store.acquire_lease("b1", "s1", "w2", NOW + 1, 120)
    assert state_store.begin_generation("b1", "s1", "w2") > g1


def test_delete_source_retires_its_generations(state_store):
    state_store.put_source(src("s1"))
    state_store.acquire_lease("b1", "s1", "w1", NOW, 120)
    g = state_store.begin_generation("b1", "s1", "w1")
    state_store.commit_generation("b1", "s1", "w1", g, checksum="c", documents=[doc("a", "a.md")], counters={},
                                  now=NOW)
    assert state_store.orphan_generations() == []  # the live generation is never an orphan
    state_store.delete_source("b1", "s1")
    assert state_store.get_source("b1", "s1") is None
    assert state_store.list_documents("b1", "s1") == []
    assert state_store.orphan_generations() == [("b1", "s1", g)]


def test_withdraw_and_update_errors(state_store):
    state_store.put_source(src("s1", live_generation=2, passages=5, visibility_counts={"agent": 5}))
    assert state_store.withdraw_generation("b1", "s1") == 2
    s = state_store.get_source("b1", "s1")
    assert (s.live_generation, s.passages, s.visibility_counts) == (None, 0, {})
    assert state_store.withdraw_generation("b1", "s1") is None
    with pytest.raises(NotFound):
        state_store.withdraw_generation("b1", "missing")
    with pytest.raises(ValueError):
        state_store.update_source("b1", "s1", colour="red")
    with pytest.raises(ValueError):
        state_store.update_source("b1", "s1", id="s2")
    with pytest.raises(NotFound):
        state_store.update_source("b1", "missing", next_refresh_at=NOW)
    with pytest.raises(NotFound):
        state_store.begin_generation("b1", "missing", "w1")
    assert not state_store.acquire_lease("b1", "missing", "w1", NOW, 120)


def test_commit_of_missing_or_unleased_source(state_store):
    with pytest.raises(NotFound):
        state_store.commit_generation("b1", "missing", "w1", 1, checksum="c", documents=[], counters={}, now=NOW)
    state_store.put_source(src("s1"))
    with pytest.raises(Conflict):
        state_store.commit_generation("b1", "s1", "w1", 1, checksum="c", documents=[], counters={}, now=NOW)


def test_listing_order_and_values(state_store):
    state_store.put_source(src("b", created_at=NOW + 1, config={"url": "https://x", "depth": 2, "ratio": 0.1},
                               priority=-100, refresh_every=3600, cancel_requested=True))
    state_store.put_source(src("a", created_at=NOW + 1, last_indexed_at=0.1 + 0.2))
    state_store.put_source(src("c", created_at=NOW))
    assert [s.id for s in state_store.list_sources("b1")] == ["c", "a", "b"]
    b = state_store.get_source("b1", "b")
    assert (b.config, b.priority, b.refresh_every, b.cancel_requested) == (
        {"url": "https://x", "depth": 2, "ratio": 0.1}, -100, 3600, True)
    assert state_store.get_source("b1", "a").last_indexed_at == 0.1 + 0.2
    assert state_store.list_bots() == ["b1"]
