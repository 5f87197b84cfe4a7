"""The refresh stages (DESIGN.md §6), as functions of ``Services`` and plain values.

Two runners use them. The in-process :class:`~knowledge.refresh.pipeline.Refresher` (embedded
mode) calls the building blocks — checksum, cap, chunk, embed, write, abandon — in one loop.
The Step Functions workflow (AWS mode) calls one stage per Lambda task, each a function here:

``take_lease`` (retried while another execution holds the lease) -> (website:
``crawl_pages`` in a loop) -> ``list_documents`` -> Map over the batches: ``process_batch``
-> ``commit``; any error -> ``fail``.

Between tasks, everything lives in the blob store under
``staging/<bot>/<source>/<generation>/``: ``manifest.json`` (checksum, vector space, document
and batch counts, failures of the listing), ``docs-<n>.json`` (the document contents of batch
``n``) and ``result-<n>.json`` (what batch ``n`` indexed: document rows, passages, failures,
passages per visibility), which ``commit`` sums. The task payloads stay small (ids and
numbers), far below the state machine's payload limit.

Every stage is idempotent: a Lambda retried after a lost reply, or a duplicate execution,
rewrites the same blobs and the same passage ids (OpenSearch document ids derive from bot,
generation and passage id), and ``commit`` recognises a generation it already made live.

Cancellation and lease loss are not errors: a stage that finds the source cancelled,
disabled, deleted or leased to another owner returns without side effects, and ``commit``
— the one place that decides — abandons the run (cancelled: the source keeps its previous
generation and records ``cancelled``) or drops only this run's generation (lost).
"""

from __future__ import annotations

import dataclasses
import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import Code, KnowledgeError, RateLimited, SourceFailure
from ..model import Document, Passage, Source, stable_id
from ..ports import Embedder, Services
from ..schedule import pickup_changes
from ..settings import LEASE_SECONDS
from ..sources.base import DocumentContent, SourceContent, content_checksum

# Chunking, embedding and the source readers (extractors, crawler) are imported where they
# are used: the functions that only lease, commit or schedule start without them.

log = logging.getLogger(__name__)

MAX_FRAGMENTS_PER_DOCUMENT = 500
MAX_DOCUMENTS_PER_SOURCE = 100
#: Shipped documentation packs are exempt from the per-source document cap (a product's
#: pack routinely has hundreds of pages); crawled and uploaded sources are not.
UNCAPPED_TYPES = frozenset({"pack"})
#: Failures that leave the source queued (with the error shown) rather than failed: the
#: embedder is throttled or down, not the content wrong. Retried after a growing backoff.
REQUEUE_CODES = frozenset({Code.RATE_LIMITED, Code.EMBEDDING_FAILED})
REQUEUE_MAX_SECONDS = 3600.0

#: Documents per Map item, and the most document text one batch blob holds: a batch is
#: chunked, embedded (32 texts per embedder call) and written well inside one Lambda run.
BATCH_DOCUMENTS = 20
BATCH_CHARS = 2_000_000
#: Texts embedded between two forced lease checks of a batch (cancel checkpoints).
EMBED_SLICE = 256
#: Texts per embedder call between two ``beat`` calls of ``embed_passages``.
EMBED_CALL = 32
#: A long stage (a crawl turn, a batch) extends its lease at least this often (DESIGN.md §6:
#: a third of the lease, so a heartbeat late by a slow fetch or embedder call still lands in time).
HEARTBEAT_SECONDS = LEASE_SECONDS / 3

STAGING_ROOT = "staging"


# -- outcome ------------------------------------------------------------------------------


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


# -- building blocks shared with the in-process Refresher ---------------------------------


def bot_embedder(services: Services, bot: str) -> Embedder | None:
    try:
        return services.embedder_for(bot)
    except ValueError as exc:  # a misconfigured embedder: shown on the source, retried later
        raise SourceFailure(Code.EMBEDDING_FAILED, "the bot's embedder is misconfigured") from exc


def space_of(embedder: Embedder | None) -> str | None:
    return embedder.name if embedder is not None else None


def source_checksum(source: Source, embedder: Embedder | None, content: SourceContent) -> str:
    """Checksum over the type, the vector space (another embedder means a rebuild) and the
    content; compared with the one the previous successful commit stored."""
    space = embedder.name if embedder else "none"
    return content_checksum(f"{source.type}\x00{space}\x00".encode() + content.checksum_bytes)


def unchanged(source: Source, checksum: str) -> bool:
    return source.checksum == checksum and source.passages > 0 and source.live_generation is not None


def cap_documents(source_type: str, docs: list[DocumentContent],
                  failures: list[tuple[str, str]]) -> list[DocumentContent]:
    """At most MAX_DOCUMENTS_PER_SOURCE documents (packs excepted); the rest are recorded as
    ``expanded_too_large`` failures in ``failures``."""
    if source_type not in UNCAPPED_TYPES and len(docs) > MAX_DOCUMENTS_PER_SOURCE:
        failures.extend((d.path, Code.EXPANDED_TOO_LARGE) for d in docs[MAX_DOCUMENTS_PER_SOURCE:])
        return docs[:MAX_DOCUMENTS_PER_SOURCE]
    return docs


def chunk_document(bot: str, source_id: str, priority: int, generation: int, doc: DocumentContent,
                   now: float) -> list[Passage] | None:
    """The passages of one document, or None when it has too many fragments."""
    from ..chunking import chunk_markdown, single_passage

    chunks = [single_passage(doc.body, doc.crumbs)] if doc.whole else chunk_markdown(doc.body, doc.crumbs)
    if len(chunks) > MAX_FRAGMENTS_PER_DOCUMENT:
        return None
    return [
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
        for ordinal, chunk in enumerate(chunks)
    ]


@dataclass
class Tally:
    """What chunking a run of documents produced, booked the same way by both runners (the
    in-process Refresher and ``process_batch``): a row per document (its fragment count, or
    ``expanded_too_large``), the failures, and passages per visibility."""

    bot: str
    source_id: str
    priority: int
    generation: int
    now: float
    failures: list[tuple[str, str]] = field(default_factory=list)
    documents: list[Document] = field(default_factory=list)
    visibility_counts: dict[str, int] = field(default_factory=dict)
    passages: int = 0

    def chunk(self, doc: DocumentContent) -> list[Passage]:
        """The document's passages (none for an empty one or one with too many fragments)."""
        made = chunk_document(self.bot, self.source_id, self.priority, self.generation, doc, self.now)
        if made is None:
            self.failures.append((doc.path, Code.EXPANDED_TOO_LARGE))
            self.documents.append(document_row(self.bot, self.source_id, doc, 0, Code.EXPANDED_TOO_LARGE))
            return []
        if made:
            self.passages += len(made)
            self.visibility_counts[doc.visibility] = self.visibility_counts.get(doc.visibility, 0) + len(made)
            self.documents.append(document_row(self.bot, self.source_id, doc, len(made), None))
        return made


def document_row(bot: str, source_id: str, doc: DocumentContent, fragments: int, error: str | None) -> Document:
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
        etag=doc.etag,
        last_modified=doc.last_modified,
    )


def embed_passages(embedder: Embedder, passages: Sequence[Passage], beat: Callable[[], None] | None = None) -> None:
    """Give every passage its vector (``EMBED_CALL`` texts per call, throttling retried),
    calling ``beat`` after each call so a long embedding keeps its lease (``beat`` decides
    whether a heartbeat is due)."""
    from ..embed import embed_in_batches

    for start in range(0, len(passages), EMBED_CALL):
        part = passages[start : start + EMBED_CALL]
        vectors = embed_in_batches(embedder, [p.text for p in part])
        for passage, vector in zip(part, vectors, strict=True):
            passage.vector = vector
        if beat is not None:
            beat()


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
            message: str, *, requeue: bool = False) -> None:
    """Keep the previous live generation, drop the partial one, record the error (or queue
    the source again after a backoff), release the lease — unless another owner holds it."""
    state = services.state
    if generation is not None:
        services.index.delete_generation(bot, source_id, generation)
        state.finish_generation(bot, source_id, generation)
    current = state.get_source(bot, source_id)
    if current is not None and current.lease_owner in (None, owner):
        if current.status == "disabled":
            # disabled mid-run: it stays disabled (and out of every search)
            state.update_source(bot, source_id, cancel_requested=False)
        elif requeue:
            # still queued, error shown; retried after a backoff that grows with attempts
            delay = min(REQUEUE_MAX_SECONDS, 30.0 * 2 ** min(current.attempts, 7))
            state.update_source(bot, source_id, status="waiting", error_code=code, error_message=message,
                                cancel_requested=False, next_refresh_at=services.clock.now() + delay)
        else:
            state.update_source(bot, source_id, status="failed", error_code=code, error_message=message,
                                cancel_requested=False)
        state.release_lease(bot, source_id, owner)
    log.info("refresh of %s/%s failed: %s", bot, source_id, code)


# -- errors the workflow sees ---------------------------------------------------------------


class RefreshError(Exception):
    """A stage failed with a stored error code: ``"<code>: <message>"`` (messages never hold
    fetched text). The state machine catches it and runs ``fail``."""

    def __init__(self, code: str, message: str):
        super().__init__(f"{code}: {message}")
        self.code = code


def workflow_error(exc: KnowledgeError) -> Exception:
    """The exception a Lambda task raises for a project error. Step Functions matches errors by
    their class name: ``RateLimited`` (the project's own class, whatever raised it) is retried
    with backoff, ``RefreshError`` is caught and runs ``fail``."""
    status = exc.details.get("status") if isinstance(exc.details, dict) else None
    if isinstance(exc, RateLimited):
        return exc
    if exc.code == Code.RATE_LIMITED or status == 429:
        return RateLimited(exc.message, code=Code.RATE_LIMITED)
    return RefreshError(exc.code, exc.message)


KNOWN_CODES = frozenset(v for k, v in vars(Code).items() if k.isupper() and isinstance(v, str))


def classify_failure(error: Any) -> tuple[str, str]:
    """(code, message) of a caught workflow error ``{"Error", "Cause"}``. A Lambda error's
    Cause is its JSON error object; its message starts with the code when a stage raised it."""
    if not isinstance(error, dict):
        return Code.INTERNAL, "refresh failed unexpectedly"
    name = str(error.get("Error") or "")
    cause = error.get("Cause")
    message = ""
    if isinstance(cause, str):
        try:
            parsed = json.loads(cause)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict):
            message = str(parsed.get("errorMessage") or "")
    if name == RateLimited.__name__:
        return Code.RATE_LIMITED, "the embedder or search backend kept throttling the refresh"
    code, _, text = message.partition(": ")
    if name == RefreshError.__name__ and code in KNOWN_CODES:
        return code, (text or code)[:500]
    if name == "States.Timeout":
        return Code.INTERNAL, "a refresh step timed out"
    return Code.INTERNAL, f"refresh failed unexpectedly ({name[:80] or 'unknown error'})"


# -- the Step Functions stages ----------------------------------------------------------------


def staging_prefix(bot: str, source_id: str, generation: int) -> str:
    return f"{STAGING_ROOT}/{bot}/{source_id}/{generation}/"


def _put_json(services: Services, key: str, value: Any) -> None:
    services.blobs.put(key, json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8"))


def _get_json(services: Services, key: str) -> Any:
    return json.loads(services.blobs.get(key))


def _generation(job: dict[str, Any]) -> int:
    generation = job.get("generation")
    if not isinstance(generation, int) or isinstance(generation, bool):
        raise RefreshError(Code.INTERNAL, "the job carries no generation")
    return generation


def _check(services: Services, bot: str, source_id: str, owner: str, *,
           beat: bool = True) -> tuple[str, Source | None]:
    """("ok", source) while this run may go on (and, with ``beat``, its lease was extended);
    ("cancelled", ...) when the source was cancelled, disabled or deleted; ("lost", ...) when
    another owner holds the lease."""
    state = services.state
    current = state.get_source(bot, source_id)
    if current is None or current.cancel_requested or current.status == "disabled":
        return "cancelled", current
    if current.lease_owner != owner:
        return "lost", current
    if beat and not state.extend_lease(bot, source_id, owner, services.clock.now(), LEASE_SECONDS):
        return "lost", current
    return "ok", current


class LeaseKeeper:
    """Heartbeats one run's lease through a long stage: ``beat()`` extends it once
    ``HEARTBEAT_SECONDS`` (a third of the lease) passed on the services' clock since the last
    extension, or every ``every_calls`` calls or when forced (a cancel checkpoint), and raises ``_Stop`` with
    ``"cancelled"`` or ``"lost"`` when the run must end. Without it a stage longer than the
    lease (a crawl turn runs up to 150 s; the lease lasts 120 s) would be reaped mid-run."""

    def __init__(self, services: Services, bot: str, source_id: str, owner: str, *,
                 every_calls: int | None = None):
        self.services, self.bot, self.source_id, self.owner = services, bot, source_id, owner
        self.every_calls = every_calls
        self.calls = 0
        self.last = services.clock.now()
        self.beats = 0

    def beat(self, *, force: bool = False) -> None:
        self.calls += 1
        forced = force or (self.every_calls is not None and self.calls % self.every_calls == 0)
        if not forced and self.services.clock.now() - self.last < HEARTBEAT_SECONDS:
            return
        status, _ = _check(self.services, self.bot, self.source_id, self.owner)
        if status != "ok":
            raise _Stop(status)
        self.last = self.services.clock.now()
        self.beats += 1


class _HeartbeatingFetcher:
    """A crawl's page fetcher that heartbeats the lease before every request (robots.txt
    included): the crawler's loop makes one request per page after at most a Crawl-delay
    (10 s), so the lease is extended within a third of its length plus one request."""

    def __init__(self, inner: Any, keeper: LeaseKeeper):
        self.inner, self.keeper = inner, keeper

    def fetch(self, url: str, **kwargs: Any) -> Any:
        self.keeper.beat()
        return self.inner.fetch(url, **kwargs)

    def fetch_robots(self, url: str, **kwargs: Any) -> Any:
        self.keeper.beat()
        return self.inner.fetch_robots(url, **kwargs)


def take_lease(services: Services, bot: str, source_id: str, owner: str, *, force: bool = False) -> dict[str, Any]:
    """Lease the source for ``owner`` (the execution name) and hand out a new generation.

    ``{"acquired": false, "reason": "disabled|missing"}`` ends the execution quietly: there
    is nothing to refresh. ``"reason": "busy"`` means another execution holds the lease (a
    run asked to stop for an edit, or one still working): the state machine tries again
    with a backoff that outlasts a lease (``lease_busy``) and ends quietly only after that,
    so an edit made during a refresh is indexed once the running one lets go. Retried by
    the same owner (a lost reply), the lease is still its own and the step goes on."""
    state, now = services.state, services.clock.now()
    source = state.get_source(bot, source_id)
    if source is None:
        return {"acquired": False, "reason": "missing", "sourceType": None}
    if source.status == "disabled":
        return {"acquired": False, "reason": "disabled", "sourceType": source.type}
    if not state.acquire_lease(bot, source_id, owner, now, LEASE_SECONDS) and not (
        source.lease_owner == owner and state.extend_lease(bot, source_id, owner, now, LEASE_SECONDS)
    ):
        return {"acquired": False, "reason": "busy", "sourceType": source.type}
    generation = state.begin_generation(bot, source_id, owner)
    if source.type == "website":  # the crawl takes a while: show it
        state.update_source(bot, source_id, status="indexing", error_code=None, error_message=None,
                            documents_processed=0, fragments_processed=0, documents_failed=0)
    return {"acquired": True, "sourceType": source.type, "generation": generation, "force": bool(force)}


@dataclass(frozen=True)
class CrawlResult:
    done: bool
    cursor: Any
    wait_seconds: int
    pages: int = 0
    failures: int = 0
    stopped: str | None = None

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"done": self.done, "cursor": self.cursor, "waitSeconds": self.wait_seconds,
                               "pages": self.pages, "failures": self.failures}
        if self.stopped:
            out["stopped"] = self.stopped
        return out


def crawl_pages(services: Services, bot: str, source_id: str, owner: str, cursor: Any, *, deadline: float,
                fetcher: Any = None) -> CrawlResult:
    """One turn of the crawl loop: fetch pages until ``deadline`` (a ``time.monotonic()``
    value), heartbeating the lease before every request (``LeaseKeeper``), stage them
    (``sources.website.crawl_step``) and say how long to wait."""
    import math

    from ..sources import website

    status, source = _check(services, bot, source_id, owner)
    if status != "ok" or source is None:
        return CrawlResult(True, None, 0, stopped=status)
    keeper = LeaseKeeper(services, bot, source_id, owner)
    beating = _HeartbeatingFetcher(fetcher or website.default_fetcher(services.outbound), keeper)
    try:
        step = website.crawl_step(services, source, cursor, deadline=deadline, fetcher=beating)
    except _Stop as stop:  # cancelled or lost mid-turn: what this turn fetched is not staged
        return CrawlResult(True, None, 0, stopped=str(stop))
    if not services.state.extend_lease(bot, source_id, owner, services.clock.now(), LEASE_SECONDS):
        return CrawlResult(True, None, 0, stopped="lost")
    wait = max(0, math.ceil(float(step.wait_seconds or 0)))
    pages, failures = step.pages, step.failures
    return CrawlResult(bool(step.done), step.cursor, wait,
                       pages=pages if isinstance(pages, int) else len(pages or ()),
                       failures=failures if isinstance(failures, int) else len(failures or ()))


def _batches(docs: Sequence[DocumentContent]) -> list[tuple[int, int]]:
    """(start, count) of consecutive documents: at most BATCH_DOCUMENTS and about
    BATCH_CHARS of text each (a single larger document is a batch of its own)."""
    out: list[tuple[int, int]] = []
    start, size = 0, 0
    for i, doc in enumerate(docs):
        count = i - start
        if count and (count >= BATCH_DOCUMENTS or size + len(doc.body) > BATCH_CHARS):
            out.append((start, count))
            start, size = i, 0
        size += len(doc.body)
    if len(docs) > start:
        out.append((start, len(docs) - start))
    return out


def list_documents(services: Services, bot: str, source_id: str, owner: str, job: dict[str, Any]) -> dict[str, Any]:
    """Fetch/extract: load the source's documents (a pack from S3, a staged crawl, an
    upload...), skip when unchanged, else stage them in batches for the Map state."""
    from ..sources.registry import load_content

    generation = _generation(job)
    status, source = _check(services, bot, source_id, owner)
    if status != "ok" or source is None:
        return {"batches": [], "documents": 0, "stopped": status}
    embedder = bot_embedder(services, bot)
    # a long listing (thousands of staged pages or batches) heartbeats like a batch does
    keeper = LeaseKeeper(services, bot, source_id, owner)
    try:
        content = load_content(services, source, beat=keeper.beat)
    except _Stop as stop:
        return {"batches": [], "documents": 0, "stopped": str(stop)}
    checksum = source_checksum(source, embedder, content)
    prefix = staging_prefix(bot, source_id, generation)
    manifest: dict[str, Any] = {"checksum": checksum, "space": space_of(embedder), "skipped": content.skipped,
                                "unchanged": content.unchanged}
    if not job.get("force") and unchanged(source, checksum):
        _put_json(services, prefix + "manifest.json", {**manifest, "skip": True, "batches": 0, "documents": 0,
                                                       "failures": []})
        return {"batches": [], "documents": 0, "skipped": True}
    services.state.update_source(bot, source_id, status="indexing", error_code=None, error_message=None,
                                 documents_processed=0, fragments_processed=0, documents_failed=0)
    failures = list(content.failed)
    docs = cap_documents(source.type, content.documents, failures)
    batches = _batches(docs)
    try:
        for number, (start, count) in enumerate(batches):
            keeper.beat()
            _put_json(services, f"{prefix}docs-{number}.json",
                      [dataclasses.asdict(d) for d in docs[start : start + count]])
    except _Stop as stop:
        return {"batches": [], "documents": 0, "stopped": str(stop)}
    manifest.update(skip=False, batches=len(batches), documents=len(docs), failures=[list(f) for f in failures])
    _put_json(services, prefix + "manifest.json", manifest)
    return {
        "batches": [{"batch": n, "start": start, "count": count} for n, (start, count) in enumerate(batches)],
        "documents": len(docs),
    }


def process_batch(services: Services, bot: str, source_id: str, owner: str, job: dict[str, Any],
                  batch: dict[str, Any]) -> dict[str, Any]:
    """Chunk, embed and write one batch under the job's generation (invisible until commit),
    heartbeating, and record what it indexed for ``commit``."""
    generation = _generation(job)
    number = int(batch["batch"])
    status, source = _check(services, bot, source_id, owner)
    if status != "ok" or source is None:
        return {"batch": number, "stopped": status}
    prefix = staging_prefix(bot, source_id, generation)
    docs = [DocumentContent(**d) for d in _get_json(services, f"{prefix}docs-{number}.json")]
    embedder = bot_embedder(services, bot)
    now = services.clock.now()
    tally = Tally(bot, source_id, source.priority, generation, now)
    passages: list[Passage] = []
    for doc in docs:
        passages.extend(tally.chunk(doc))
    documents, failures, visibility_counts = tally.documents, tally.failures, tally.visibility_counts

    # a heartbeat every third of the lease, and a checkpoint every EMBED_SLICE texts: a run
    # cancelled (or edited) mid-batch lets go of the lease within one slice, so the
    # follow-up refresh waiting for it starts soon
    keeper = LeaseKeeper(services, bot, source_id, owner, every_calls=max(1, EMBED_SLICE // EMBED_CALL))
    try:
        if embedder is not None and passages:
            embed_passages(embedder, passages, keeper.beat)
        keeper.beat(force=True)  # the checkpoint before the write: a cancel seen here writes nothing
    except _Stop as stop:
        return {"batch": number, "stopped": str(stop)}
    if passages:
        services.index.write(bot, passages, space=space_of(embedder))
    if not services.state.extend_lease(bot, source_id, owner, services.clock.now(), LEASE_SECONDS):
        return {"batch": number, "stopped": "lost"}
    result = {
        "batch": number,
        "documents": [dataclasses.asdict(d) for d in documents],
        "passages": len(passages),
        "failures": [list(f) for f in failures],
        "visibilityCounts": visibility_counts,
    }
    _put_json(services, f"{prefix}result-{number}.json", result)
    return {"batch": number, "documents": len(documents), "passages": len(passages), "failed": len(failures)}


class _Stop(Exception):
    pass


def _clear_staging(services: Services, bot: str, source_id: str, generation: int) -> None:
    for key in services.blobs.list(staging_prefix(bot, source_id, generation)):
        services.blobs.delete(key)


def commit(services: Services, bot: str, source_id: str, owner: str, job: dict[str, Any]) -> dict[str, Any]:
    """Flip the live generation with the checksum and counters (one conditional write),
    release the lease, drop the old generation and the staging files."""
    state = services.state
    generation = _generation(job)
    source = state.get_source(bot, source_id)
    name = source.name if source else source_id
    if source is not None and source.live_generation == generation:  # a retried commit
        return {**RefreshOutcome(source_id, name, "indexed", passages=source.passages).as_dict(), "repeated": True}
    status, source = _check(services, bot, source_id, owner)
    if status == "cancelled":
        abandon(services, bot, source_id, owner, generation, Code.CANCELLED, "cancelled by request")
        _clear_staging(services, bot, source_id, generation)
        return RefreshOutcome(source_id, name, "failed", error_code=Code.CANCELLED).as_dict()
    if status == "lost" or source is None:
        drop_own(services, bot, source_id, generation)
        return RefreshOutcome(source_id, name, "lost").as_dict()
    prefix = staging_prefix(bot, source_id, generation)
    manifest = _get_json(services, prefix + "manifest.json")
    if manifest.get("skip"):
        state.finish_generation(bot, source_id, generation)
        state.update_source(bot, source_id, status="ready", error_code=None, error_message=None,
                            documents_unchanged=int(manifest.get("unchanged", 0)))
        state.release_lease(bot, source_id, owner)
        _clear_staging(services, bot, source_id, generation)
        return RefreshOutcome(source_id, name, "skipped", passages=source.passages).as_dict()
    documents: list[Document] = []
    failures: list[tuple[str, str]] = [(str(p), str(c)) for p, c in manifest.get("failures", [])]
    visibility_counts: dict[str, int] = {}
    total = 0
    for number in range(int(manifest["batches"])):
        key = f"{prefix}result-{number}.json"
        if not services.blobs.exists(key):
            raise RefreshError(Code.INTERNAL, f"batch {number} was not processed")
        result = _get_json(services, key)
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
    _clear_staging(services, bot, source_id, generation)
    return RefreshOutcome(source_id, name, "indexed", documents=len(documents), passages=total,
                          skipped=int(manifest.get("skipped", 0)), failed=len(failures),
                          error_code=error_code).as_dict()


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
    embedder outages), drop the partial generation, release the lease."""
    code, message = classify_failure(error)
    job = (workflow_state or {}).get("job") or {}
    generation = job.get("generation") if job.get("acquired") else None
    if not isinstance(generation, int) or isinstance(generation, bool):
        generation = None
    current = services.state.get_source(bot, source_id)
    if generation is not None and current is not None and current.live_generation == generation:
        generation = None  # committed before the failure (e.g. while clearing staging): keep it
    requeue = code in REQUEUE_CODES
    abandon(services, bot, source_id, owner, generation, code, message, requeue=requeue)
    if generation is not None:
        _clear_staging(services, bot, source_id, generation)
    return {"sourceId": source_id, "status": "queued" if requeue else "failed", "errorCode": code}


# -- pack drops and schedules (AWS mode) ---------------------------------------------------


def release_expired_leases(services: Services) -> list[Source]:
    """The reaper's state half: a source whose worker died (its lease expired) goes back to
    ``waiting``. The generation that worker was staging is invisible to every query and is
    dropped from the index by the next commit of that source (``drop_orphans``), so this
    needs no access to the index."""
    state, now = services.state, services.clock.now()
    reaped = []
    for source in state.expired_leases(now):
        owner = source.lease_owner
        if owner is None:
            continue
        state.release_lease(source.bot, source.id, owner)
        if source.status != "disabled":
            state.update_source(source.bot, source.id, status="waiting", updated_at=now)
        reaped.append(source)
        log.warning("reaped expired lease of %s/%s (attempt %d)", source.bot, source.id, source.attempts)
    return reaped


def start_due_refreshes(services: Services, runnable: Callable[[Source], bool]) -> list[dict[str, Any]]:
    """Start the refresh of every due source. The due time and the attempt count name the
    execution: a tick overlapping the previous one starts nothing twice, and a source
    that is still due after a run (requeued with a new due time) gets a new execution."""
    started = []
    workflow = services.require_workflow()
    now = services.clock.now()
    for source in services.state.due_sources(now):
        if not runnable(source):
            continue
        due = source.next_refresh_at if source.next_refresh_at is not None else source.updated_at
        token = f"{due:.3f}:{source.attempts}"
        changes = pickup_changes(source, now)  # as the embedded scheduler: a failing run is not due every tick
        if changes:
            services.state.update_source(source.bot, source.id, **changes)
        started.append(workflow.start_refresh(source.bot, source.id, reason="schedule", token=token))
    return started
