"""The listing and batch stages of the Step Functions refresh (DESIGN.md §6):
``list_documents`` loads the source's documents, skips an unchanged source, else stages them
in batches for the Map state; ``process_batch`` chunks, embeds and writes one batch under the
run's generation (invisible until ``commit``) and records what it indexed.

Both are idempotent: a Lambda retried after a lost reply, or a duplicate execution, rewrites
the same blobs and the same passage ids (OpenSearch document ids derive from bot, generation
and passage id).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..model import Passage
from ..ports import Services
from ..settings import LEASE_SECONDS
from ..sources.base import DocumentContent
from .indexing import (
    EMBED_CALL,
    Tally,
    bot_embedder,
    cap_documents,
    embed_passages,
    source_checksum,
    space_of,
    unchanged,
)
from .leases import LeaseKeeper, RunStopped, check_run
from .staging import fields_of, get_json, job_generation, put_json, staging_prefix

#: Documents per Map item, and the most document text one batch blob holds: a batch is
#: chunked, embedded (32 texts per embedder call) and written well inside one Lambda run.
#: (The embedded runner passes larger sizes: it has no Lambda time limit, and each batch is
#: one commit of the search index, so fewer, larger batches ingest faster.)
BATCH_DOCUMENTS = 20
BATCH_CHARS = 2_000_000
#: Texts embedded between two forced lease checks of a batch (cancel checkpoints).
EMBED_SLICE = 256


def _batches(docs: Sequence[DocumentContent], max_documents: int, max_chars: int) -> list[tuple[int, int]]:
    """(start, count) of consecutive documents: at most ``max_documents`` and about
    ``max_chars`` of text each (a single larger document is a batch of its own)."""
    out: list[tuple[int, int]] = []
    start, size = 0, 0
    for i, doc in enumerate(docs):
        count = i - start
        if count and (count >= max_documents or size + len(doc.body) > max_chars):
            out.append((start, count))
            start, size = i, 0
        size += len(doc.body)
    if len(docs) > start:
        out.append((start, len(docs) - start))
    return out


def list_documents(services: Services, bot: str, source_id: str, owner: str, job: dict[str, Any], *,
                   batch_documents: int | None = None, batch_chars: int | None = None) -> dict[str, Any]:
    """Fetch/extract: load the source's documents (a pack from S3, a staged crawl, an
    upload...), skip when unchanged, else stage them in batches (of at most
    ``batch_documents`` documents and about ``batch_chars`` of text; BATCH_DOCUMENTS and
    BATCH_CHARS unless given) for the Map state."""
    from ..sources.registry import load_content

    generation = job_generation(job)
    status, source = check_run(services, bot, source_id, owner)
    if status != "ok" or source is None:
        return {"batches": [], "documents": 0, "stopped": status}
    embedder = bot_embedder(services, bot)
    # a long listing (thousands of staged pages or batches) heartbeats like a batch does
    keeper = LeaseKeeper(services, bot, source_id, owner)
    try:
        content = load_content(services, source, beat=keeper.beat)
    except RunStopped as stop:
        return {"batches": [], "documents": 0, "stopped": str(stop)}
    checksum = source_checksum(source, embedder, content)
    prefix = staging_prefix(bot, source_id, generation)
    manifest: dict[str, Any] = {"checksum": checksum, "space": space_of(embedder), "skipped": content.skipped,
                                "unchanged": content.unchanged}
    if not job.get("force") and unchanged(source, checksum):
        put_json(services, prefix + "manifest.json", {**manifest, "skip": True, "batches": 0, "documents": 0,
                                                      "failures": []})
        return {"batches": [], "documents": 0, "skipped": True}
    services.state.update_source(bot, source_id, status="indexing", error_code=None, error_message=None,
                                 documents_processed=0, fragments_processed=0, documents_failed=0)
    failures = list(content.failed)
    docs = cap_documents(source.type, content.documents, failures)
    batches = _batches(docs, batch_documents or BATCH_DOCUMENTS, batch_chars or BATCH_CHARS)
    try:
        for number, (start, count) in enumerate(batches):
            keeper.beat()
            put_json(services, f"{prefix}docs-{number}.json",
                     [fields_of(d) for d in docs[start : start + count]])
    except RunStopped as stop:
        return {"batches": [], "documents": 0, "stopped": str(stop)}
    manifest.update(skip=False, batches=len(batches), documents=len(docs), failures=[list(f) for f in failures])
    put_json(services, prefix + "manifest.json", manifest)
    return {
        "batches": [{"batch": n, "start": start, "count": count} for n, (start, count) in enumerate(batches)],
        "documents": len(docs),
    }


def process_batch(services: Services, bot: str, source_id: str, owner: str, job: dict[str, Any],
                  batch: dict[str, Any], *,
                  on_document: Callable[[int, int], None] | None = None) -> dict[str, Any]:
    """Chunk, embed and write one batch under the job's generation (invisible until commit),
    heartbeating, and record what it indexed for ``commit``. Before each document a cheap
    checkpoint (``LeaseKeeper.look``) stops a cancelled run; ``on_document(done, passages)``
    is told after each one (the embedded runner's progress line)."""
    generation = job_generation(job)
    number = int(batch["batch"])
    status, source = check_run(services, bot, source_id, owner)
    if status != "ok" or source is None:
        return {"batch": number, "stopped": status}
    prefix = staging_prefix(bot, source_id, generation)
    docs = [DocumentContent(**d) for d in get_json(services, f"{prefix}docs-{number}.json")]
    embedder = bot_embedder(services, bot)
    now = services.clock.now()
    tally = Tally(bot, source_id, source.priority, generation, now)
    passages: list[Passage] = []
    # a heartbeat every third of the lease, and a checkpoint every EMBED_SLICE texts: a run
    # cancelled (or edited) mid-batch lets go of the lease within one slice, so the
    # follow-up refresh waiting for it starts soon
    keeper = LeaseKeeper(services, bot, source_id, owner, every_calls=max(1, EMBED_SLICE // EMBED_CALL))
    try:
        for done, doc in enumerate(docs, start=1):
            keeper.look()
            passages.extend(tally.chunk(doc))
            if on_document is not None:
                on_document(done, tally.passages)
    except RunStopped as stop:
        return {"batch": number, "stopped": str(stop)}
    documents, failures, visibility_counts = tally.documents, tally.failures, tally.visibility_counts
    try:
        if embedder is not None and passages:
            embed_passages(embedder, passages, keeper.beat)
        keeper.beat(force=True)  # the checkpoint before the write: a cancel seen here writes nothing
    except RunStopped as stop:
        return {"batch": number, "stopped": str(stop)}
    if passages:
        services.index.write(bot, passages, space=space_of(embedder))
    if not services.state.extend_lease(bot, source_id, owner, services.clock.now(), LEASE_SECONDS):
        return {"batch": number, "stopped": "lost"}
    result = {
        "batch": number,
        "documents": [fields_of(d) for d in documents],
        "passages": len(passages),
        "failures": [list(f) for f in failures],
        "visibilityCounts": visibility_counts,
    }
    put_json(services, f"{prefix}result-{number}.json", result)
    return {"batch": number, "documents": len(documents), "passages": len(passages), "failed": len(failures)}
