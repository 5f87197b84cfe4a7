"""The refresh pipeline (DESIGN.md §6): plan -> fetch/extract -> chunk -> embed -> stage -> commit.

A refresh writes every passage under a new generation no query can see, then one state
write flips the source's live generation (with the checksum and counters, conditioned on
the lease), then the old generation is dropped. Any failure keeps the previous live
generation, stores an error code on the source and drops the partial generation.

The checksum is compared with the value stored by the *previous* successful commit and
written only by the commit itself, after the passages were replaced — never before
(reference 000: comparing the new checksum with itself skipped every re-ingest).
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..chunking import chunk_markdown, single_passage
from ..embed import embed_in_batches
from ..errors import Code, KnowledgeError, SourceFailure
from ..model import Document, Passage
from ..ports import Embedder
from ..settings import LEASE_SECONDS
from ..sources.base import SourceContent, content_checksum
from ..sources.registry import load_content
from ..wiring import Services

log = logging.getLogger(__name__)

MAX_FRAGMENTS_PER_DOCUMENT = 500
MAX_DOCUMENTS_PER_SOURCE = 100
#: Shipped documentation packs are exempt from the per-source document cap (a product's
#: pack routinely has hundreds of pages); crawled and uploaded sources are not.
UNCAPPED_TYPES = frozenset({"pack"})
#: Passages written (and committed in tantivy) per batch: fewer, larger commits ingest faster;
#: a batch still takes seconds, far inside a lease.
WRITE_BATCH = 8000
#: Failures that leave the source queued (with the error shown) rather than failed: the
#: embedder is throttled or down, not the content wrong. Retried after a growing backoff.
REQUEUE_CODES = frozenset({Code.RATE_LIMITED, Code.EMBEDDING_FAILED})
REQUEUE_MAX_SECONDS = 3600.0

Progress = Callable[..., None]


@dataclass
class RefreshOutcome:
    source_id: str
    name: str
    status: str  # indexed | skipped | failed | busy | disabled
    documents: int = 0
    passages: int = 0
    skipped: int = 0
    failed: int = 0
    error_code: str | None = None
    failures: list[tuple[str, str]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "sourceId": self.source_id,
            "name": self.name,
            "status": self.status,
            "documents": self.documents,
            "passages": self.passages,
            "skipped": self.skipped,
            "failed": self.failed,
            "errorCode": self.error_code,
        }


#: Heartbeat at least this often while working (the lease lasts LEASE_SECONDS).
HEARTBEAT_SECONDS = LEASE_SECONDS / 4


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
            self._embedder = self._bot_embedder(bot)
            content = load_content(self.services, source)
            # the vector space is part of what passages are: another embedder means a rebuild
            space = self._embedder.name if self._embedder else "none"
            checksum = content_checksum(f"{source.type}\x00{space}\x00".encode() + content.checksum_bytes)
            if (
                not force
                and source.checksum == checksum
                and source.passages > 0
                and source.live_generation is not None
            ):
                state.update_source(bot, source_id, status="ready", error_code=None, error_message=None)
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
        documents: list[Document] = []
        batch: list[Passage] = []
        total_passages = 0
        visibility_counts: dict[str, int] = {}
        docs = content.documents
        if source_type not in UNCAPPED_TYPES and len(docs) > MAX_DOCUMENTS_PER_SOURCE:
            failures.extend((d.path, Code.EXPANDED_TOO_LARGE) for d in docs[MAX_DOCUMENTS_PER_SOURCE:])
            docs = docs[:MAX_DOCUMENTS_PER_SOURCE]

        for number, doc in enumerate(docs, start=1):
            self._checkpoint(bot, source_id, beat=False)
            chunks = [single_passage(doc.body, doc.crumbs)] if doc.whole else chunk_markdown(doc.body, doc.crumbs)
            if len(chunks) > MAX_FRAGMENTS_PER_DOCUMENT:
                failures.append((doc.path, Code.EXPANDED_TOO_LARGE))
                documents.append(self._document(bot, source_id, doc, 0, Code.EXPANDED_TOO_LARGE))
                continue
            if not chunks:
                continue
            for ordinal, chunk in enumerate(chunks):
                batch.append(
                    Passage(
                        id=f"{doc.id}-{ordinal}",
                        bot=bot,
                        source_id=source_id,
                        document_id=doc.id,
                        generation=generation,
                        ordinal=ordinal,
                        title=doc.title,
                        path=doc.path,
                        breadcrumb=chunk.breadcrumb,
                        text=chunk.text,
                        visibility=doc.visibility,
                        weight=doc.weight,
                        priority=priority,
                        indexed_at=now,
                        url=doc.url,
                    )
                )
            visibility_counts[doc.visibility] = visibility_counts.get(doc.visibility, 0) + len(chunks)
            total_passages += len(chunks)
            documents.append(self._document(bot, source_id, doc, len(chunks), None))
            if len(batch) >= WRITE_BATCH:
                self._stage(bot, source_id, batch, documents, total_passages, len(failures))
                batch = []
            self.progress("document", source=name, number=number, total=len(docs), passages=total_passages)
        if batch:
            self._stage(bot, source_id, batch, documents, total_passages, len(failures))
        self._checkpoint(bot, source_id, beat=True)

        counters = {
            "passages": total_passages,
            "documents_processed": len(documents),
            "fragments_processed": total_passages,
            "documents_failed": len(failures),
        }
        state.commit_generation(
            bot,
            source_id,
            self.owner,
            generation,
            checksum=checksum,
            documents=documents,
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

    def _bot_embedder(self, bot: str) -> Embedder | None:
        try:
            return self.services.embedder_for(bot)
        except ValueError as exc:  # a misconfigured embedder: shown on the source, retried later
            raise SourceFailure(Code.EMBEDDING_FAILED, "the bot's embedder is misconfigured") from exc

    def _changed(self, beat: bool) -> bool:
        """Whether the source row may have changed since the last look. A store that can
        say cheaply whether anything committed (SQLite) is asked every document; others
        are re-read at most every half second."""
        if beat:
            return True
        version = getattr(self.services.state, "version", None)
        if version is not None:
            current = version()
            changed = current != self._seen_version
            self._seen_version = current
            return changed
        now = time.monotonic()
        if now - self._last_check >= 0.5:
            self._last_check = now
            return True
        return False

    def _checkpoint(self, bot: str, source_id: str, *, beat: bool) -> None:
        """Between documents and before every write: stop when cancelled, disabled or
        deleted; give up when the lease went to someone else; heartbeat when due."""
        state, clock = self.services.state, self.services.clock
        now = clock.now()
        if not self._changed(beat) and now - self._last_beat < HEARTBEAT_SECONDS:
            return
        current = state.get_source(bot, source_id)
        if current is None or current.cancel_requested or current.status == "disabled":
            raise _Cancelled()
        if current.lease_owner != self.owner:
            raise _LeaseLost()
        now = clock.now()
        if beat or now - self._last_beat >= HEARTBEAT_SECONDS:
            if not state.extend_lease(bot, source_id, self.owner, now, LEASE_SECONDS):
                raise _LeaseLost()
            self._last_beat = now

    def _stage(self, bot: str, source_id: str, batch: list[Passage], documents: list[Document],
               passages: int, failed: int) -> None:
        state = self.services.state
        self._checkpoint(bot, source_id, beat=True)
        embedder = self._embedder
        if embedder is not None:
            vectors = embed_in_batches(embedder, [p.text for p in batch])
            for passage, vector in zip(batch, vectors, strict=True):
                passage.vector = vector
            self._checkpoint(bot, source_id, beat=True)  # embedding takes time: still ours?
        self.services.index.write(bot, batch, space=embedder.name if embedder else None)
        # a write can stall past the lease (the reaper then hands the source to another
        # worker): the counters below are only ours to write while the lease still is
        if not state.extend_lease(bot, source_id, self.owner, self.services.clock.now(), LEASE_SECONDS):
            raise _LeaseLost()
        state.update_source(bot, source_id, documents_processed=len(documents), fragments_processed=passages,
                            documents_failed=failed)

    @staticmethod
    def _document(bot: str, source_id: str, doc: Any, fragments: int, error: str | None) -> Document:
        return Document(
            id=doc.id,
            bot=bot,
            source_id=source_id,
            title=doc.title,
            path=doc.path,
            url=doc.url,
            visibility=doc.visibility,
            fragments=fragments,
            error_code=error,
        )

    # -- cleanup --------------------------------------------------------------------------

    def _drop_retired(self, bot: str, source_id: str) -> None:
        drop_orphans(self.services, only=(bot, source_id))

    def _drop_own(self, bot: str, source_id: str, generation: int | None) -> None:
        if generation is not None:
            self.services.index.delete_generation(bot, source_id, generation)
            self.services.state.finish_generation(bot, source_id, generation)
        log.warning("refresh of %s/%s lost its lease; its staged generation was dropped", bot, source_id)

    def _abandon(self, bot: str, source_id: str, generation: int | None, code: str, message: str,
                 *, requeue: bool = False) -> None:
        state = self.services.state
        if generation is not None:
            self.services.index.delete_generation(bot, source_id, generation)
            state.finish_generation(bot, source_id, generation)
        current = state.get_source(bot, source_id)
        if current is not None and current.lease_owner in (None, self.owner):
            if current.status == "disabled":
                # disabled mid-run: it stays disabled (and out of every search)
                state.update_source(bot, source_id, cancel_requested=False)
            elif requeue:
                # still queued, error shown; retried after a backoff that grows with attempts
                delay = min(REQUEUE_MAX_SECONDS, 30.0 * 2 ** min(current.attempts, 7))
                state.update_source(bot, source_id, status="waiting", error_code=code, error_message=message,
                                    cancel_requested=False, next_refresh_at=self.services.clock.now() + delay)
            else:
                state.update_source(bot, source_id, status="failed", error_code=code, error_message=message,
                                    cancel_requested=False)
            state.release_lease(bot, source_id, self.owner)
        log.info("refresh of %s/%s failed: %s", bot, source_id, code)


def drop_orphans(services: Services, only: tuple[str, str] | None = None) -> int:
    """Delete from the index every generation no query may see (retired, or staged by a
    writer that no longer holds the lease). Run after each commit and on start-up."""
    dropped = 0
    for bot, source_id, generation in services.state.orphan_generations():
        if only is not None and (bot, source_id) != only:
            continue
        services.index.delete_generation(bot, source_id, generation)
        services.state.finish_generation(bot, source_id, generation)
        dropped += 1
    return dropped
