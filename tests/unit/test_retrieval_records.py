"""Retrieval records on the embedded state store: written behind the question, read back at once,
kept through write failures, flushed on close and at exit, stored apart from the state."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from knowledge.adapters.local import group_commit, sqlite_state
from knowledge.adapters.local.group_commit import GroupCommitWriter
from knowledge.adapters.local.sqlite_state import SqliteStateStore
from knowledge.errors import BackendError, Code
from knowledge.model import RetrievalRecord

SRC = Path(__file__).resolve().parents[2] / "layers" / "core" / "src"


def record(n: int, bot: str = "b1", now: float | None = None) -> RetrievalRecord:
    now = time.time() if now is None else now
    return RetrievalRecord(id=f"r{n}", bot=bot, audience="customer", served=[("s", "d", f"f{n}")],
                           created_at=now, expires_at=now + 3600)


def test_a_record_is_readable_as_soon_as_the_question_returns(tmp_path: Path) -> None:
    store = SqliteStateStore(tmp_path / "state.db")
    for n in range(50):
        store.put_retrieval(record(n))
    got = store.get_retrieval("b1", "r49")
    assert got is not None and got.served == [("s", "d", "f49")]
    assert store.get_retrieval("b2", "r49") is None  # another bot's id is not found


def test_recording_does_not_invalidate_the_cached_state(tmp_path: Path) -> None:
    """Records live in their own file: committing them is not a change of state, so the
    per-thread caches (keyed on the main file's version) stay valid."""
    store = SqliteStateStore(tmp_path / "state.db")
    before = store.version()
    for n in range(10):
        store.put_retrieval(record(n))
    assert store._records.flush()
    assert store.version() == before
    assert Path(store.records_path).exists() and Path(store.records_path) != tmp_path / "state.db"


def test_close_commits_what_is_queued(tmp_path: Path) -> None:
    store = SqliteStateStore(tmp_path / "state.db")
    for n in range(20):
        store.put_retrieval(record(n))
    store.close()
    again = SqliteStateStore(tmp_path / "state.db")
    assert all(again.get_retrieval("b1", f"r{n}") is not None for n in range(20))


def test_records_queued_at_exit_are_committed(tmp_path: Path) -> None:
    script = textwrap.dedent(f"""
        import sys, time
        sys.path.insert(0, {str(SRC)!r})
        from knowledge.adapters.local.sqlite_state import SqliteStateStore
        from knowledge.model import RetrievalRecord
        store = SqliteStateStore({str(tmp_path / "state.db")!r})
        now = time.time()
        for n in range(200):
            store.put_retrieval(RetrievalRecord(f"r{{n}}", "b1", "customer", [], now, now + 60))
    """)
    subprocess.run([sys.executable, "-c", script], check=True, timeout=60)
    store = SqliteStateStore(tmp_path / "state.db")
    assert store.get_retrieval("b1", "r199") is not None
    assert store.get_retrieval("b1", "r0") is not None


def test_records_of_an_older_layout_are_adopted(tmp_path: Path) -> None:
    """A data dir from before the split kept records in the main file: they stay citable."""
    path = tmp_path / "state.db"
    db = sqlite3.connect(path)
    now = time.time()
    db.execute("CREATE TABLE retrievals (bot TEXT NOT NULL, id TEXT NOT NULL, audience TEXT NOT NULL, "
               "served TEXT NOT NULL, created_at REAL NOT NULL, expires_at REAL NOT NULL, PRIMARY KEY (bot, id))")
    db.execute("INSERT INTO retrievals VALUES ('b1', 'old', 'customer', '[[\"s\", \"d\", \"f\"]]', ?, ?)",
               (now, now + 3600))
    db.commit()
    db.close()
    store = SqliteStateStore(path)
    got = store.get_retrieval("b1", "old")
    assert got is not None and got.served == [("s", "d", "f")]
    tables = {r[0] for r in sqlite3.connect(path).execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert "retrievals" not in tables
    store.close()
    assert SqliteStateStore(path).get_retrieval("b1", "old") is not None  # adopted once, not lost on reopen


def test_expired_records_are_purged(tmp_path: Path) -> None:
    store = SqliteStateStore(tmp_path / "state.db")
    old = time.time() - 10_000
    store.put_retrieval(RetrievalRecord("gone", "b1", "customer", [], old - 100, old))
    assert store._records.flush()
    for n in range(sqlite_state._PURGE_EVERY + 1):
        store.put_retrieval(record(n))
    assert store.get_retrieval("b1", "gone") is None
    assert store.get_retrieval("b1", "r0") is not None


class FlakyWrite:
    """Fails ``failures`` times, then records what it is given."""

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.written: list[tuple[object, ...]] = []
        self.lock = threading.Lock()

    def __call__(self, rows: list[tuple[object, ...]]) -> None:
        with self.lock:
            if self.failures > 0:
                self.failures -= 1
                raise BackendError("disk full")
            self.written.extend(rows)


def test_a_failed_write_keeps_the_records_and_retries_in_order() -> None:
    write = FlakyWrite(failures=3)
    writer = GroupCommitWriter(write)
    for n in range(30):
        writer.put((n,))
    assert writer.flush(timeout=20)
    assert write.written == [(n,) for n in range(30)]


def test_questions_fail_once_too_many_records_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(group_commit, "MAX_PENDING", 5)
    write = FlakyWrite(failures=10**9)
    writer = GroupCommitWriter(write)
    writer.put((0,))
    deadline = time.monotonic() + 10
    while not writer._failing and time.monotonic() < deadline:
        time.sleep(0.01)
    assert writer._failing
    for n in range(1, 5):
        writer.put((n,))
    with pytest.raises(BackendError) as err:
        for n in range(5, 10):
            writer.put((n,))
    assert err.value.code == Code.INTERNAL
    assert not writer.flush(timeout=0.2)  # nothing could be written: flush says so instead of hanging
    write.failures = 0  # the disk recovers: what waited is written, in order
    assert writer.flush(timeout=20)
    assert write.written == [(n,) for n in range(5)]


def test_a_lone_record_is_committed_without_waiting_for_its_batch(tmp_path: Path) -> None:
    """The linger thread commits a partial batch: another connection sees the record soon."""
    store = SqliteStateStore(tmp_path / "state.db")
    store.put_retrieval(record(1))
    other = sqlite3.connect(store.records_path)
    deadline = time.monotonic() + 10
    found: list[tuple[str]] = []
    while not found and time.monotonic() < deadline:
        found = other.execute("SELECT id FROM retrievals").fetchall()
        time.sleep(0.02)
    assert found == [("r1",)]


def test_a_full_batch_is_committed_by_the_question_that_fills_it(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(group_commit, "LINGER_SECONDS", 3600.0)  # only a full batch can commit
    store = SqliteStateStore(tmp_path / "state.db")
    for n in range(group_commit.BATCH):
        store.put_retrieval(record(n))
    rows = sqlite3.connect(store.records_path).execute("SELECT count(*) FROM retrievals").fetchone()
    assert rows == (group_commit.BATCH,)


def test_a_writer_without_a_batch_never_commits_on_the_callers_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    """The gaps' writer: however many rows are queued, the callers only queue; the background
    thread (here held back) or a flush commits them."""
    monkeypatch.setattr(group_commit, "LINGER_SECONDS", 3600.0)
    callers: list[int] = []
    writer = GroupCommitWriter(lambda rows: callers.append(threading.get_ident()), batch=None)
    for n in range(3 * group_commit.BATCH):
        writer.put((n,))
    assert callers == []
    assert writer.flush(timeout=5)
    assert callers == [threading.get_ident()]  # one commit of everything, by the flush


def test_gaps_that_cannot_be_built_are_logged_and_the_others_kept(tmp_path: Path,
                                                                  caplog: pytest.LogCaptureFixture) -> None:
    from knowledge.model import GapRecord

    def broken() -> GapRecord:
        raise RuntimeError("a redaction bug")

    now = time.time()
    store = SqliteStateStore(tmp_path / "state.db")
    store.put_gap_later(broken)
    store.put_gap_later(lambda: GapRecord(id="g1", bot="b1", audience="customer", question="q", outcome="gated",
                                          topic=None, created_at=now, expires_at=now + 60))
    assert [g.id for g in store.list_gaps("b1", None, since=0.0, now=now)] == ["g1"]
    assert "a gap could not be built" in caplog.text
    store.put_gap_later(lambda: GapRecord(id="g2", bot="b1", audience="customer", question="q2",
                                          outcome="gated", topic=None, created_at=now, expires_at=now + 60))
    assert [g.id for g in store.list_gaps("b1", None, since=0.0, now=now)] == ["g1", "g2"]  # the writer goes on


def test_retrieval_ids_are_unique_hex_and_in_time_order(monkeypatch):
    from knowledge.retrieve import service

    clock = iter(range(1_790_000_000_000_000_000, 1_790_000_000_000_000_000 + 10**12, 7_000_000))
    monkeypatch.setattr(service.time, "time_ns", lambda: next(clock))
    ids = [service.new_retrieval_id() for _ in range(2_000)]
    assert len(set(ids)) == len(ids)
    assert all(len(i) == 32 and int(i, 16) >= 0 for i in ids)
    assert ids == sorted(ids)  # appended at the end of the store's key index, not on random pages
    same_ms = [service.new_retrieval_id() for _ in range(50)]  # time_ns moves on; 80 random bits tell apart
    assert len({i[12:] for i in same_ms}) == 50


def test_a_records_file_that_cannot_be_opened_is_retried_not_fatal(tmp_path: Path) -> None:
    """The linger thread opens its own connection: when the file cannot be opened (its folder
    gone, say) that is a backend error like a failed write. The thread keeps the records and
    retries; it does not die with a raw sqlite3 error and leave every later record waiting."""
    store = SqliteStateStore(tmp_path / "state.db")
    good = store.records_path
    store.records_path = str(tmp_path / "gone" / "records.db")  # no such folder
    store.put_retrieval(record(1))  # the linger thread starts, and cannot open the file
    deadline = time.monotonic() + 10
    while not store._records._failing and time.monotonic() < deadline:
        time.sleep(0.01)
    assert store._records._failing
    thread = store._records._thread
    assert thread is not None and thread.is_alive()
    store.records_path = good  # the folder is back
    deadline = time.monotonic() + 20
    found: list[tuple[str]] = []
    while not found and time.monotonic() < deadline:
        found = sqlite3.connect(good).execute("SELECT id FROM retrievals").fetchall()
        time.sleep(0.05)
    assert found == [("r1",)]


def test_a_state_file_that_cannot_be_opened_is_a_backend_error(tmp_path: Path) -> None:
    store = SqliteStateStore(tmp_path / "state.db")
    store.path = str(tmp_path / "gone" / "state.db")
    result: list[BaseException] = []

    def other_thread() -> None:  # a thread with no connection yet opens one
        try:
            store.get_bot("b1")
        except BaseException as exc:  # noqa: BLE001 - handed to the test thread to assert on
            result.append(exc)

    t = threading.Thread(target=other_thread)
    t.start()
    t.join(30)
    assert len(result) == 1 and isinstance(result[0], BackendError)
