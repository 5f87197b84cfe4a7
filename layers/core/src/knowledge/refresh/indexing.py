"""What the listing and batch stages (:mod:`knowledge.refresh.batches`) do to a source's
documents (DESIGN.md §6): resolve the bot's embedder, checksum the content (and tell an
unchanged source), cap the document count, chunk each document into passages while booking
what it produced (``Tally``), and embed passages.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ..errors import Code, SourceFailure
from ..model import Document, Passage, Source
from ..ports import Embedder, Services
from ..sources.base import DocumentContent, SourceContent, content_checksum

# Chunking and embedding are imported where they are used: importing this module (the
# pipeline, the batch stages) loads neither until a document is chunked or embedded.

MAX_FRAGMENTS_PER_DOCUMENT = 500
MAX_DOCUMENTS_PER_SOURCE = 100
#: Shipped documentation packs are exempt from the per-source document cap (a product's
#: pack routinely has hundreds of pages); crawled and uploaded sources are not.
UNCAPPED_TYPES = frozenset({"pack"})
#: Texts per embedder call between two ``beat`` calls of ``embed_passages``.
EMBED_CALL = 32


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
    """What chunking a batch of documents produced (``process_batch``): a row per document
    (its fragment count, or ``expanded_too_large``), the failures, and passages per
    visibility."""

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
