"""How a refresh run ends (DESIGN.md §6): ``commit`` flips the live generation to the one the
batches staged; ``fail`` (the workflow's Catch path) and ``abandon`` keep the previous live
generation, record the error or queue the source again; ``drop_own`` and ``drop_orphans``
delete generations no query may see. ``RefreshOutcome`` is what a run reports.

``commit`` is the one place that decides what a cancelled or lost run leaves: a cancelled
source keeps its previous generation and records ``cancelled``; a run whose lease went to
another owner drops only its own generation. A retried ``commit`` recognises the generation
it already made live.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import Code
from ..model import Document, Source, stable_id
from ..ports import Services
from ..schedule import requeue_at
from ..sources.base import clear_staged_crawl
from .leases import check_run
from .staging import clear_staging, get_json, job_generation, staging_prefix
from .workflow_errors import RefreshError, classify_failure

log = logging.getLogger(__name__)

#: Failures that leave the source queued (with the error shown) rather than failed: the
#: embedder is throttled or down, not the content wrong. Retried after a growing backoff.
REQUEUE_CODES = frozenset({Code.RATE_LIMITED, Code.EMBEDDING_FAILED})


@dataclass
class RefreshOutcome:
    source_id: str
    name: str
    status: str  # indexed | skipped | failed | queued | busy | disabled | lost
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

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RefreshOutcome:
        """The outcome a stage reported (``commit``, ``fail``) as ``as_dict`` wrote it."""
        return cls(str(data["sourceId"]), str(data.get("name") or data["sourceId"]), str(data["status"]),
                   documents=int(data.get("documents", 0)), passages=int(data.get("passages", 0)),
                   skipped=int(data.get("skipped", 0)), failed=int(data.get("failed", 0)),
                   error_code=data.get("errorCode"))


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


def drop_own(services: Services, bot: str, source_id: str, generation: int | None) -> None:
    """The lease went to another worker: drop only the generation this run staged."""
    if generation is not None:
        services.index.delete_generation(bot, source_id, generation)
        services.state.finish_generation(bot, source_id, generation)
    log.warning("refresh of %s/%s lost its lease; its staged generation was dropped", bot, source_id)


def abandon(services: Services, bot: str, source_id: str, owner: str, generation: int | None, code: str,
            message: str, *, requeue: bool = False) -> bool:
    """Keep the previous live generation, drop the partial one, record the error (or queue
    the source again after a backoff), release the lease — unless another owner holds it.
    False when the source row was not this run's to touch (deleted, or leased elsewhere)."""
    state = services.state
    if generation is not None:
        services.index.delete_generation(bot, source_id, generation)
        state.finish_generation(bot, source_id, generation)
    current = state.get_source(bot, source_id)
    touched = current is not None and current.lease_owner in (None, owner)
    if current is not None and touched:
        if current.status == "disabled":
            # disabled mid-run: it stays disabled (and out of every search)
            state.update_source(bot, source_id, cancel_requested=False)
        elif requeue:
            # still queued, error shown; retried after a backoff that grows with attempts
            state.update_source(bot, source_id, status="waiting", error_code=code, error_message=message,
                                cancel_requested=False,
                                next_refresh_at=requeue_at(current.attempts, services.clock.now()))
        else:
            state.update_source(bot, source_id, status="failed", error_code=code, error_message=message,
                                cancel_requested=False)
        state.release_lease(bot, source_id, owner)
    log.info("refresh of %s/%s failed: %s", bot, source_id, code)
    return touched


def commit(services: Services, bot: str, source_id: str, owner: str, job: dict[str, Any]) -> dict[str, Any]:
    """Flip the live generation with the checksum and counters (one conditional write),
    release the lease, drop the old generation and the staging files (a website's staged
    crawl included)."""
    state = services.state
    generation = job_generation(job)
    source = state.get_source(bot, source_id)
    name = source.name if source else source_id
    if source is not None and source.live_generation == generation:  # a retried commit
        return {**RefreshOutcome(source_id, name, "indexed", passages=source.passages).as_dict(), "repeated": True}
    status, source = check_run(services, bot, source_id, owner)
    if status == "cancelled":
        if abandon(services, bot, source_id, owner, generation, Code.CANCELLED, "cancelled by request"):
            _clear_crawl_of(services, source)
        clear_staging(services, bot, source_id, generation)
        return RefreshOutcome(source_id, name, "failed", error_code=Code.CANCELLED).as_dict()
    if status == "lost" or source is None:
        drop_own(services, bot, source_id, generation)
        clear_staging(services, bot, source_id, generation)
        return RefreshOutcome(source_id, name, "lost").as_dict()
    prefix = staging_prefix(bot, source_id, generation)
    manifest = get_json(services, prefix + "manifest.json")
    if manifest.get("skip"):
        state.finish_generation(bot, source_id, generation)
        state.update_source(bot, source_id, status="ready", error_code=None, error_message=None,
                            documents_unchanged=int(manifest.get("unchanged", 0)))
        _clear_crawl_of(services, source)
        state.release_lease(bot, source_id, owner)
        clear_staging(services, bot, source_id, generation)
        return RefreshOutcome(source_id, name, "skipped", passages=source.passages).as_dict()
    documents: list[Document] = []
    failures: list[tuple[str, str]] = [(str(p), str(c)) for p, c in manifest.get("failures", [])]
    visibility_counts: dict[str, int] = {}
    total = 0
    for number in range(int(manifest["batches"])):
        key = f"{prefix}result-{number}.json"
        if not services.blobs.exists(key):
            raise RefreshError(Code.INTERNAL, f"batch {number} was not processed")
        result = get_json(services, key)
        documents.extend(Document(**d) for d in result["documents"])
        failures.extend((str(p), str(c)) for p, c in result["failures"])
        total += int(result["passages"])
        for visibility, count in result["visibilityCounts"].items():
            visibility_counts[visibility] = visibility_counts.get(visibility, 0) + int(count)
    counters = {
        "passages": total,
        "documents_processed": len(documents),
        "fragments_processed": total,
        "documents_failed": len(failures),
        "documents_unchanged": int(manifest.get("unchanged", 0)),
    }
    error_code = failures[0][1] if failures else None
    rows = documents + failure_rows(bot, source_id, source.visibility, failures, documents)
    state.commit_generation(bot, source_id, owner, generation, checksum=str(manifest["checksum"]),
                            documents=rows, counters=counters, now=services.clock.now(),
                            visibility_counts=visibility_counts, error_code=error_code)
    drop_orphans(services)  # this source's old generation, and any a read-only caller left behind
    _clear_crawl_of(services, source)
    clear_staging(services, bot, source_id, generation)
    return RefreshOutcome(source_id, name, "indexed", documents=len(documents), passages=total,
                          skipped=int(manifest.get("skipped", 0)), failed=len(failures),
                          error_code=error_code).as_dict()


def _clear_crawl_of(services: Services, source: Source | None) -> None:
    """A website's staged crawl, read by this run's listing. Only while the source is still
    this run's: a later run may be crawling into the same place."""
    if source is not None and source.type == "website":
        clear_staged_crawl(services, source.bot, source.id)


def failure_rows(bot: str, source_id: str, visibility: str, failures: Sequence[tuple[str, str]],
                 documents: Sequence[Document]) -> list[Document]:
    """A row for every page or file part that failed without a document of its own, so
    ``GET sources/{id}/documents`` shows each one's code (they index nothing)."""
    have = {d.path for d in documents}
    rows = []
    for path, code in failures:
        if path in have:
            continue
        have.add(path)
        rows.append(Document(id=stable_id(source_id, path), bot=bot, source_id=source_id, title=path, path=path,
                             url=path if path.startswith("https://") else None, visibility=visibility,
                             fragments=0, error_code=code))
    return rows


def fail(services: Services, bot: str, source_id: str, owner: str, error: Any,
         workflow_state: dict[str, Any] | None = None) -> dict[str, Any]:
    """The Catch path: record the error code (or queue the source again for throttling and
    embedder outages), drop the partial generation, release the lease. Status ``lost`` when
    another owner holds the lease by now (e.g. reaped while this run stalled): its row is
    theirs, only this run's generation is dropped."""
    code, message = classify_failure(error)
    job = (workflow_state or {}).get("job") or {}
    generation = job.get("generation") if job.get("acquired") else None
    if not isinstance(generation, int) or isinstance(generation, bool):
        generation = None
    current = services.state.get_source(bot, source_id)
    if generation is not None and current is not None and current.live_generation == generation:
        generation = None  # committed before the failure (e.g. while clearing staging): keep it
    requeue = code in REQUEUE_CODES
    touched = abandon(services, bot, source_id, owner, generation, code, message, requeue=requeue)
    if touched:
        _clear_crawl_of(services, current)
    if generation is not None:
        clear_staging(services, bot, source_id, generation)
    lost = current is not None and not touched
    return {"sourceId": source_id, "status": "lost" if lost else "queued" if requeue else "failed",
            "errorCode": code}
