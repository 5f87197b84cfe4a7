"""The refresh pipeline (DESIGN.md §6): plan -> fetch/extract -> chunk -> embed -> stage -> commit.

A refresh writes every passage under a new generation no query can see, then one state
write flips the source's live generation (with the checksum and counters, conditioned on
the lease), then the old generation is dropped. Any failure keeps the previous live
generation, stores an error code on the source and drops the partial generation.

The checksum is compared with the value stored by the *previous* successful commit and
written only by the commit itself, after the passages were replaced — never before
(reference 000: comparing the new checksum with itself skipped every re-ingest).

The building blocks (checksum, document cap, chunking, embedding, abandoning a run) live in
:mod:`knowledge.refresh.indexing` and :mod:`knowledge.refresh.finish`, shared with the Step
Functions stages of the AWS mode; the ``Refresher`` runs them in one process under one lease.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable

from ..errors import Code, KnowledgeError, SourceFailure
from ..model import Document, Passage
from ..ports import Embedder, Services
from ..settings import HEARTBEAT_SECONDS, LEASE_SECONDS
from ..sources.base import SourceContent
from ..sources.registry import load_content
from .finish import REQUEUE_CODES, RefreshOutcome, abandon, drop_orphans, drop_own, failure_rows
from .indexing import Tally, bot_embedder, cap_documents, embed_passages, source_checksum, space_of, unchanged
from .leases import check_run

log = logging.getLogger(__name__)

__all__ = ["WRITE_BATCH", "Progress", "Refresher"]

#: Passages written (and committed in tantivy) per batch: fewer, larger commits ingest faster;
#: a batch still takes seconds, far inside a lease.
WRITE_BATCH = 8000

Progress = Callable[..., None]


class _Cancelled(Exception):
    pass


class _LeaseLost(Exception):
    """Another worker (or the reaper) owns the source now: touch nothing of it."""


class Refresher:
    """Runs one source's refresh under a lease owned by this worker."""

    def __init__(self, services: Services, *, owner: str | None = None, progress: Progress | None = None):
        self.services = services
        self.owner = owner or f"worker-{uuid.uuid4().hex[:12]}"
        self.progress = progress or (lambda *a, **k: None)
        self._last_beat = 0.0
        self._seen_version: object = None
        self._last_check = 0.0
        self._embedder: Embedder | None = None

    # -- public ---------------------------------------------------------------------------

    def refresh(self, bot: str, source_id: str, *, force: bool = False) -> RefreshOutcome:
        state, clock = self.services.state, self.services.clock
        source = state.get_source(bot, source_id)
        if source is None:
            raise KnowledgeError(f"source {source_id} not found", code=Code.NOT_FOUND)
        if source.status == "disabled":
            return RefreshOutcome(source.id, source.name, "disabled", error_code=source.error_code)
        if not state.acquire_lease(bot, source_id, self.owner, clock.now(), LEASE_SECONDS):
            return RefreshOutcome(source.id, source.name, "busy")
        self._last_beat = clock.now()
        generation: int | None = None
        try:
            self._embedder = bot_embedder(self.services, bot)
            content = load_content(self.services, source)
            # the vector space is part of what passages are: another embedder means a rebuild
            checksum = source_checksum(source, self._embedder, content)
            if not force and unchanged(source, checksum):
                state.update_source(bot, source_id, status="ready", error_code=None, error_message=None,
                                    documents_unchanged=content.unchanged)
                state.release_lease(bot, source_id, self.owner)
                self.progress("skipped", source=source.name)
                return RefreshOutcome(source.id, source.name, "skipped", passages=source.passages)
            state.update_source(bot, source_id, status="indexing", error_code=None, error_message=None,
                                documents_processed=0, fragments_processed=0, documents_failed=0)
            generation = state.begin_generation(bot, source_id, self.owner)
            outcome = self._build(source.bot, source.id, source.name, source.type, source.priority,
                                  generation, content, checksum)
            self._drop_retired(bot, source_id)
            return outcome
        except _Cancelled:
            self._abandon(bot, source_id, generation, Code.CANCELLED, "cancelled by request")
            return RefreshOutcome(source.id, source.name, "failed", error_code=Code.CANCELLED)
        except _LeaseLost:
            self._drop_own(bot, source_id, generation)
            return RefreshOutcome(source.id, source.name, "lost")
        except SourceFailure as exc:
            requeue = exc.code in REQUEUE_CODES
            self._abandon(bot, source_id, generation, exc.code, exc.message, requeue=requeue)
            return RefreshOutcome(source.id, source.name, "queued" if requeue else "failed", error_code=exc.code)
        except Exception as exc:
            if isinstance(exc, KnowledgeError) and exc.code == Code.LEASE_LOST:
                # the lease went to another worker (e.g. reaped while this one stalled): the
                # source row is theirs now; only this worker's staged generation is dropped
                self._drop_own(bot, source_id, generation)
                return RefreshOutcome(source.id, source.name, "lost")
            # Unexpected: keep the old generation, mark the source failed, and re-raise so the
            # caller (worker loop / Lambda) logs it and can retry; nothing is swallowed.
            code = exc.code if isinstance(exc, KnowledgeError) else Code.INTERNAL
            self._abandon(bot, source_id, generation, code, "refresh failed unexpectedly")
            raise

    # -- stages ---------------------------------------------------------------------------

    def _build(
        self,
        bot: str,
        source_id: str,
        name: str,
        source_type: str,
        priority: int,
        generation: int,
        content: SourceContent,
        checksum: str,
    ) -> RefreshOutcome:
        state, clock = self.services.state, self.services.clock
        now = clock.now()
        failures = list(content.failed)
        docs = cap_documents(source_type, content.documents, failures)
        tally = Tally(bot, source_id, priority, generation, now, failures=failures)
        documents = tally.documents
        batch: list[Passage] = []

        for number, doc in enumerate(docs, start=1):
            self._checkpoint(bot, source_id, beat=False)
            chunks = tally.chunk(doc)
            if not chunks:
                continue
            batch.extend(chunks)
            if len(batch) >= WRITE_BATCH:
                self._stage(bot, source_id, batch, documents, tally.passages, len(failures))
                batch = []
            self.progress("document", source=name, number=number, total=len(docs), passages=tally.passages)
        if batch:
            self._stage(bot, source_id, batch, documents, tally.passages, len(failures))
        self._checkpoint(bot, source_id, beat=True)
        total_passages, visibility_counts = tally.passages, tally.visibility_counts

        counters = {
            "passages": total_passages,
            "documents_processed": len(documents),
            "fragments_processed": total_passages,
            "documents_failed": len(failures),
            "documents_unchanged": content.unchanged,
        }
        state.commit_generation(
            bot,
            source_id,
            self.owner,
            generation,
            checksum=checksum,
            documents=documents + failure_rows(bot, source_id, self._visibility(bot, source_id), failures,
                                               documents),
            counters=counters,
            now=clock.now(),
            visibility_counts=visibility_counts,
            error_code=failures[0][1] if failures else None,
        )
        self.progress("committed", source=name, passages=total_passages)
        return RefreshOutcome(
            source_id,
            name,
            "indexed",
            documents=len(documents),
            passages=total_passages,
            skipped=content.skipped,
            failed=len(failures),
            error_code=failures[0][1] if failures else None,
            failures=failures,
        )

    def _changed(self, beat: bool) -> bool:
        """Whether the source row may have changed since the last look. A store that can
        say cheaply whether anything committed (SQLite) is asked every document; others
        are re-read at most every half second."""
        if beat:
            return True
        current = self.services.state.version()
        if current is not None:
            changed = current != self._seen_version
            self._seen_version = current
            return changed
        now = time.monotonic()
        if now - self._last_check >= 0.5:
            self._last_check = now
            return True
        return False

    def _visibility(self, bot: str, source_id: str) -> str:
        source = self.services.state.get_source(bot, source_id)
        return source.visibility if source else "agent"

    def _checkpoint(self, bot: str, source_id: str, *, beat: bool) -> None:
        """Between documents and before every write: stop when cancelled, disabled or
        deleted; give up when the lease went to someone else; heartbeat when due."""
        clock = self.services.clock
        if not self._changed(beat) and clock.now() - self._last_beat < HEARTBEAT_SECONDS:
            return
        extend = beat or clock.now() - self._last_beat >= HEARTBEAT_SECONDS
        status, _ = check_run(self.services, bot, source_id, self.owner, beat=extend)
        if status == "cancelled":
            raise _Cancelled()
        if status == "lost":
            raise _LeaseLost()
        if extend:
            self._last_beat = clock.now()

    def _stage(self, bot: str, source_id: str, batch: list[Passage], documents: list[Document],
               passages: int, failed: int) -> None:
        state = self.services.state
        self._checkpoint(bot, source_id, beat=True)
        embedder = self._embedder
        if embedder is not None:
            # embedding takes a while: heartbeat (and look for a cancel) between slices
            embed_passages(embedder, batch, beat=lambda: self._checkpoint(bot, source_id, beat=False))
            self._checkpoint(bot, source_id, beat=True)
        self.services.index.write(bot, batch, space=space_of(embedder))
        # a write can stall past the lease (the reaper then hands the source to another
        # worker): the counters below are only ours to write while the lease still is
        if not state.extend_lease(bot, source_id, self.owner, self.services.clock.now(), LEASE_SECONDS):
            raise _LeaseLost()
        state.update_source(bot, source_id, documents_processed=len(documents), fragments_processed=passages,
                            documents_failed=failed)

    # -- cleanup --------------------------------------------------------------------------

    def _drop_retired(self, bot: str, source_id: str) -> None:
        drop_orphans(self.services, only=(bot, source_id))

    def _drop_own(self, bot: str, source_id: str, generation: int | None) -> None:
        drop_own(self.services, bot, source_id, generation)

    def _abandon(self, bot: str, source_id: str, generation: int | None, code: str, message: str,
                 *, requeue: bool = False) -> None:
        abandon(self.services, bot, source_id, self.owner, generation, code, message, requeue=requeue)
