"""The embedded mode's refresh runner (DESIGN.md §6): the Step Functions workflow's stages,
called in this process in the state machine's order (``infra/workflow.py``)::

    take_lease --not acquired--> busy | disabled | (missing: NotFound)
      | website: crawl_pages turn after turn (waiting each turn's Crawl-delay) until done
    list_documents -> process_batch for each batch -> commit
    any error -> fail

So every rule of a run (what an unchanged source skips, when a cancel or a lost lease stops it,
what a commit or a failure records, when the source is next due) is written once, in the
stages, and both deployments follow it. What the state machine adds around a task and this
runner does not: retrying a throttled task (the fail stage queues the source again after a
backoff instead, and the scheduler picks it up), waiting for a lease another run holds (``busy``
is returned; the source stays queued), and running batches four at a time. The run's batch
files stay in this process (``staging.InProcessStaging``) instead of going to the blob store.

A refresh writes every passage under a new generation no query can see, then one state write
(``commit``) flips the source's live generation with the checksum and counters, conditioned
on the lease; any failure keeps the previous live generation, records an error code on the
source and drops the partial generation. The checksum is compared with the value stored by
the *previous* successful commit and written only by the commit itself, after the passages
were replaced (reference 000: comparing the new checksum with itself skipped every re-ingest).
"""

from __future__ import annotations

import copy
import time
import uuid
from collections.abc import Callable
from typing import Any

from ..errors import NotFound, RateLimited, SourceFailure
from ..ports import Services
from . import batches, crawl_turn, finish, leases
from .finish import RefreshOutcome
from .staging import InProcessStaging, staging_prefix
from .workflow_errors import caught_error

__all__ = ["LOCAL_BATCH_CHARS", "LOCAL_BATCH_DOCUMENTS", "Progress", "Refresher"]

#: Batch sizes of the embedded runner: each batch is one commit of the search index, and
#: fewer, larger commits ingest faster (about 8,000 passages of NFCorpus-sized text); a batch
#: still takes seconds, far inside a lease.
LOCAL_BATCH_DOCUMENTS = 10_000
LOCAL_BATCH_CHARS = 8_000_000
#: Length of one crawl turn in this process, between two looks at the lease (a turn can run
#: over by one fetch and one Crawl-delay; the fetcher heartbeats before every request).
CRAWL_TURN_SECONDS = 30.0

Progress = Callable[..., None]


class Refresher:
    """Runs one source's refresh at a time through the workflow's stages, as lease owner
    ``owner``; ``progress(event, **data)`` hears ``document``, ``skipped`` and ``committed``."""

    def __init__(self, services: Services, *, owner: str | None = None, progress: Progress | None = None,
                 sleep: Callable[[float], None] = time.sleep):
        self.services = services
        self.owner = owner or f"worker-{uuid.uuid4().hex[:12]}"
        self.progress = progress or (lambda *a, **k: None)
        self.sleep = sleep

    def refresh(self, bot: str, source_id: str, *, force: bool = False) -> RefreshOutcome:
        services, owner = self.services, self.owner
        job = leases.take_lease(services, bot, source_id, owner, force=force)
        source = services.state.get_source(bot, source_id)
        if source is None:
            raise NotFound(f"source {source_id} not found")
        if not job["acquired"]:
            # disabled (its error shown), or another run holds the lease
            return RefreshOutcome(source.id, source.name, str(job["reason"]),
                                  error_code=source.error_code if job["reason"] == "disabled" else None)
        name = source.name
        # the run's batch files stay in this process (the stages read and write them as on AWS):
        # the same services, whatever was set on them, with the blob store wrapped
        services = copy.copy(services)
        services.blobs = InProcessStaging(services.blobs, staging_prefix(bot, source_id, int(job["generation"])))
        try:
            if job["sourceType"] == "website":
                self._crawl(bot, source_id, job)
            listing = batches.list_documents(services, bot, source_id, owner, job,
                                             batch_documents=LOCAL_BATCH_DOCUMENTS, batch_chars=LOCAL_BATCH_CHARS)
            if listing.get("skipped"):
                self.progress("skipped", source=name)
            total, passages_before = int(listing.get("documents", 0)), 0
            for batch in listing["batches"]:
                start = int(batch["start"])

                def told(done: int, passages: int, start: int = start, before: int = passages_before) -> None:
                    self.progress("document", source=name, number=start + done, total=total,
                                  passages=before + passages)

                done = batches.process_batch(services, bot, source_id, owner, job, batch, on_document=told)
                passages_before += int(done.get("passages", 0))
            result = finish.commit(services, bot, source_id, owner, job)
        except Exception as exc:
            failed = finish.fail(services, bot, source_id, owner, caught_error(exc), {"job": job})
            if failed["status"] == "lost" or isinstance(exc, (SourceFailure, RateLimited)):
                # the source's own failure (unreadable, unreachable, throttled), recorded on its row
                return RefreshOutcome(source_id, name, str(failed["status"]), error_code=failed["errorCode"])
            # unexpected: recorded on the row, and raised for the caller (worker loop, CLI) to log
            raise
        outcome = RefreshOutcome.from_dict(result)
        if outcome.status == "indexed":
            self.progress("committed", source=name, passages=outcome.passages)
        return outcome

    def _crawl(self, bot: str, source_id: str, job: dict[str, Any]) -> None:
        """The website loop of the state machine (StartCrawl -> CrawlPages -> CrawlDone? ->
        CrawlDelay): turns until the crawl is done or stopped, waiting each turn's delay."""
        cursor: Any = None
        while True:
            turn = crawl_turn.crawl_pages(self.services, bot, source_id, self.owner, cursor,
                                          deadline=time.monotonic() + CRAWL_TURN_SECONDS)
            if turn.done:
                return
            cursor = turn.cursor
            if turn.wait_seconds > 0:
                self.sleep(turn.wait_seconds)

