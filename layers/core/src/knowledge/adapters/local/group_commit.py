"""Group commit for the embedded store's retrieval records: one commit for many records,
written in order, retried while the file cannot be written, flushed at exit."""

from __future__ import annotations

import atexit
import logging
import threading
import time
import weakref
from collections.abc import Callable
from typing import Any, ClassVar

from ...errors import BackendError

log = logging.getLogger(__name__)

BATCH = 32  # retrieval records committed together by the question that fills the batch
LINGER_SECONDS = 0.1  # a record waits at most about this long for its batch to fill
MAX_PENDING = 10_000  # records queued while the file cannot be written, before questions fail
IDLE_SECONDS = 2.0  # the linger thread ends when idle; the next record starts another


class GroupCommitWriter:
    """Group commit for retrieval records. A commit costs more than the rest of recording, and
    questions come in bursts: a question queues its record and returns; the question that fills
    a batch of ``BATCH`` commits the batch in one transaction, and a background thread commits
    a partial batch once its oldest record has waited ``LINGER_SECONDS`` (it wakes once per
    linger, not per question, so it hardly competes for the GIL).

    The store reads its own writes: ``get_retrieval`` and ``close`` flush first, and so does
    interpreter exit. A record is lost only if the process is killed while it waits (at most a
    linger). When the file cannot be written, records keep their order and are retried with
    backoff; past ``MAX_PENDING`` waiting records, questions fail as they did when each record
    was written synchronously."""

    _live: ClassVar[weakref.WeakSet[GroupCommitWriter]] = weakref.WeakSet()

    def __init__(self, write: Callable[[list[tuple[Any, ...]]], None], batch: int | None = BATCH):
        """``batch``: the queued rows at which the question that queues the last one commits
        them; None: only the background thread (and ``flush``) ever commits."""
        self._write = write
        self._batch = batch
        self._cond = threading.Condition()
        self._write_lock = threading.Lock()  # one commit at a time, so batches stay in order
        self._pending: list[tuple[Any, ...]] = []
        self._oldest = 0.0
        self._thread: threading.Thread | None = None
        self._failing = False
        GroupCommitWriter._live.add(self)

    def put(self, row: tuple[Any, ...]) -> None:
        with self._cond:
            if self._failing and len(self._pending) >= MAX_PENDING:
                raise BackendError("state store write failed")
            if not self._pending:
                self._oldest = time.monotonic()
                self._cond.notify()  # the linger thread times the new batch (one wake per batch)
            self._pending.append(row)
            full = self._batch is not None and len(self._pending) >= self._batch and not self._failing
            if not full and self._thread is None:
                self._thread = threading.Thread(target=self._linger, name="kb-retrieval-records", daemon=True)
                self._thread.start()
        if full:
            self._drain()  # a failure keeps the rows; the linger thread retries them

    def _drain(self) -> bool:
        """Commit everything queued; False (rows kept, in order) when the write failed."""
        with self._write_lock:
            with self._cond:
                batch, self._pending = self._pending, []
            if not batch:
                return True
            try:
                self._write(batch)
            except BackendError:
                with self._cond:
                    self._pending[:0] = batch
                    if not self._failing:
                        log.error("retrieval records cannot be written; %d waiting, retrying", len(self._pending))
                    self._failing = True
                return False
            with self._cond:
                self._failing = False
            return True

    def flush(self, timeout: float = 30.0) -> bool:
        """Commit every queued record now (False when that failed until ``timeout``)."""
        deadline = time.monotonic() + timeout
        backoff = 0.02
        while True:
            if self._drain():
                with self._cond:
                    if not self._pending:
                        return True
                continue  # more arrived meanwhile
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            time.sleep(min(backoff, left))
            backoff = min(backoff * 2, 1.0)

    def _linger(self) -> None:
        backoff = LINGER_SECONDS
        while True:
            with self._cond:
                if not self._pending:
                    self._cond.wait(IDLE_SECONDS)
                    if not self._pending:
                        self._thread = None  # idle: the next put starts another
                        return
                    continue
                wait = self._oldest + LINGER_SECONDS - time.monotonic()
            if wait > 0:
                time.sleep(wait)
                continue
            if self._drain():
                backoff = LINGER_SECONDS
            else:
                time.sleep(backoff)
                backoff = min(backoff * 2, 2.0)

    @classmethod
    def flush_all(cls) -> None:
        for writer in list(cls._live):
            writer.flush(timeout=5.0)


atexit.register(GroupCommitWriter.flush_all)
