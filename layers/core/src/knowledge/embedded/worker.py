"""In-process refresh workflow for the embedded mode: a queue and one worker thread that
run the same stages the Step Functions workflow runs in AWS, plus a scheduler tick that
reaps expired leases and picks up due sources."""

from __future__ import annotations

import logging
import queue
import threading
import time
import uuid
from dataclasses import dataclass
from typing import Any

from ..errors import KnowledgeError
from ..model import Source
from ..ports import Services
from ..refresh.pipeline import Refresher
from ..refresh.reaper import reap_expired_leases
from ..refresh.reindex import reindex
from ..refresh.scheduling import start_due_refreshes
from ..schedule import runnable
from ..sources.files import awaiting_upload

log = logging.getLogger(__name__)

MAX_JOBS_KEPT = 1000


@dataclass
class Job:
    id: str
    kind: str  # reindex | refresh
    bot: str
    source_id: str | None = None
    force: bool = False
    reason: str = "manual"  # manual | pack | schedule | reindex
    status: str = "queued"
    result: dict[str, Any] | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "kind": self.kind, "bot": self.bot, "sourceId": self.source_id,
                "status": self.status, "result": self.result}


class InProcessWorkflow:
    def __init__(self, services: Services, *, background: bool = True, tick_seconds: float = 5.0):
        self.services = services
        self.background = background
        self.tick_seconds = tick_seconds
        self._queue: queue.Queue[Job | None] = queue.Queue()
        self._jobs: dict[str, Job] = {}
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._touched: set[str] = set()
        self._lock = threading.Lock()

    # -- Workflow port --------------------------------------------------------------------

    def start_reindex(self, bot: str, *, force: bool = False) -> dict[str, Any]:
        return self._submit(Job(id=uuid.uuid4().hex[:12], kind="reindex", bot=bot, force=force))

    def start_refresh(self, bot: str, source_id: str, *, force: bool = False, reason: str = "manual",
                      token: str | None = None) -> dict[str, Any]:
        """Queue a refresh. ``token`` names Step Functions executions on AWS (deduplicating
        them); jobs of the in-process queue have ids of their own and no use for it."""
        return self._submit(Job(id=uuid.uuid4().hex[:12], kind="refresh", bot=bot, source_id=source_id, force=force,
                                reason=reason))

    def job(self, job_id: str) -> Job | None:
        return self._jobs.get(job_id)

    def cancel_refresh(self, bot: str, source_id: str) -> int:
        """Drop the queued (not yet running) refresh jobs of one source; returns how many.
        A running job is stopped through the source's ``cancel_requested`` flag instead."""
        dropped = 0
        with self._lock:
            for job in self._jobs.values():
                if job.kind == "refresh" and job.status == "queued" and (job.bot, job.source_id) == (bot, source_id):
                    job.status = "cancelled"
                    dropped += 1
        return dropped

    def pending(self, bot: str, source_id: str) -> bool:
        with self._lock:
            return any(j.status in ("queued", "running") and (j.bot, j.source_id) == (bot, source_id)
                       for j in self._jobs.values())

    # -- running --------------------------------------------------------------------------

    def _submit(self, job: Job) -> dict[str, Any]:
        with self._lock:
            self._prune()
            self._jobs[job.id] = job
        if self.background:
            self._queue.put(job)
        else:
            self._run(job)
        return job.as_dict()

    def _prune(self) -> None:
        """Forget the oldest finished jobs once there are many (dicts keep insertion order)."""
        if len(self._jobs) < MAX_JOBS_KEPT:
            return
        for job_id in [k for k, j in self._jobs.items() if j.status not in ("queued", "running")]:
            del self._jobs[job_id]
            if len(self._jobs) < MAX_JOBS_KEPT // 2:
                break

    def _run(self, job: Job) -> None:
        with self._lock:
            if job.status != "queued":  # cancelled while waiting in the queue
                return
            job.status = "running"
        try:
            if job.kind == "reindex":
                job.result = reindex(self.services, job.bot, force=job.force).as_dict()
            else:
                assert job.source_id is not None
                job.result = Refresher(self.services).refresh(job.bot, job.source_id, force=job.force).as_dict()
            self._touched.add(job.bot)
            job.status = "done"
        except Exception:  # the worker must survive a failing job; the source row keeps the code
            log.exception("job %s failed", job.id)
            job.status = "failed"

    def start(self) -> None:
        if self._threads:
            return
        worker = threading.Thread(target=self._worker, name="kb-worker", daemon=True)
        ticker = threading.Thread(target=self._ticker, name="kb-scheduler", daemon=True)
        self._threads = [worker, ticker]
        for t in self._threads:
            t.start()

    def stop(self, timeout: float = 10.0) -> bool:
        """Stop the worker and the scheduler: the job running now finishes, queued jobs are
        not started (their sources stay queued in the state store and are picked up by the
        next start's scheduler). False when a thread was still busy after ``timeout`` seconds:
        the process may then end under it; its lease expires and the reaper requeues it."""
        self._stop.set()
        self._queue.put(None)
        deadline = time.monotonic() + timeout
        stopped = True
        for t in self._threads:
            t.join(max(0.0, deadline - time.monotonic()))
            if t.is_alive():
                log.warning("%s still busy after %.0f s; its work is retried after the restart", t.name, timeout)
                stopped = False
        self._threads = []
        return stopped

    def _worker(self) -> None:
        while not self._stop.is_set():
            job = self._queue.get()
            if job is None:
                return
            self._run(job)
            if self._queue.empty() and not self._stop.is_set():
                self.compact_touched()

    def compact_touched(self) -> None:
        """Once the queue drains, for every bot a job ran for: compact its search index where
        the refreshes left it in pieces."""
        while self._touched:
            bot = self._touched.pop()
            try:
                for done in self.services.index.compact(bot):
                    log.info("compacted %s/%s: %s segments -> %s, %s passages in %s s", bot, done["partition"],
                             done["segmentsBefore"], done["segmentsAfter"], done["passages"], done["seconds"])
            except KnowledgeError:  # only slower searches, never wrong ones: log, keep serving
                log.exception("search index compaction of %s failed", bot)

    def _ticker(self) -> None:
        while not self._stop.wait(self.tick_seconds):
            self.tick()

    def tick(self) -> None:
        """Reap dead workers' leases and queue sources that are waiting or due, as the AWS
        scheduler does (``scheduling.start_due_refreshes``), leaving alone those already
        queued here and file sources still waiting for their upload."""
        try:
            services = self.services
            reap_expired_leases(services)
            with self._lock:
                queued = {(j.bot, j.source_id) for j in self._jobs.values() if j.status in ("queued", "running")}

            def startable(source: Source) -> bool:
                return (runnable(source) and (source.bot, source.id) not in queued
                        and not awaiting_upload(services, source))

            start_due_refreshes(services, startable, workflow=self)
        except Exception:  # a failing tick is logged and retried on the next tick
            log.exception("scheduler tick failed")
