"""What every source type turns into before chunking: a list of document contents."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..settings import INGEST_VERSION

if TYPE_CHECKING:
    from ..ports import Services


def pack_blob_key(slug: str) -> str:
    """Where a documentation pack's file lies in the blob store."""
    return f"packs/{slug}.ndjson.gz"


def upload_blob_key(bot: str, source_id: str) -> str:
    """Where a file source's uploaded bytes lie in the blob store."""
    return f"uploads/{bot}/{source_id}"


def crawl_prefix(bot: str, source_id: str) -> str:
    """Where a website source's crawl stages its steps until the listing reads them."""
    return f"staging/{bot}/{source_id}/crawl/"


def clear_staged_crawl(services: Services, bot: str, source_id: str) -> int:
    """Delete a website source's staged crawl (a new crawl starts with it; a run's end deletes
    what it read); returns how many blobs went."""
    keys = services.blobs.list(crawl_prefix(bot, source_id))
    for key in keys:
        services.blobs.delete(key)
    return len(keys)


def pages_prefix(bot: str, source_id: str) -> str:
    """Where a website source keeps its pages for conditional re-fetch (one file per URL)."""
    return f"staging/{bot}/{source_id}/pages/"


#: where a presigned upload lands first (``incoming/<bot>/<source>``): its object-created
#: event hands it to the same checks as a direct upload, which then write ``uploads/``
INCOMING_PREFIX = "incoming/"


def incoming_upload_key(bot: str, source_id: str) -> str:
    """The key a presigned upload of a file source's bytes is allowed to write."""
    return f"{INCOMING_PREFIX}{bot}/{source_id}"


def incoming_upload_of_key(key: str) -> tuple[str, str] | None:
    """``(bot, source_id)`` of an ``incoming/<bot>/<source>`` key (None for any other key)."""
    parts = key.split("/")
    if len(parts) != 3 or f"{parts[0]}/" != INCOMING_PREFIX or not parts[1] or not parts[2]:
        return None
    return parts[1], parts[2]


@dataclass
class DocumentContent:
    """One document of a source, ready to be chunked.

    ``crumbs`` are the leading breadcrumb parts (product, sections, page title); the chunker
    appends the heading path. ``whole`` documents (articles, FAQ entries, instructions,
    facts) become exactly one passage whatever their length."""

    id: str
    title: str
    path: str
    body: str
    visibility: str
    weight: float
    crumbs: list[str] = field(default_factory=list)
    url: str | None = None
    whole: bool = False
    etag: str | None = None  # a crawled page's validators, stored on its document row
    last_modified: str | None = None


@dataclass
class SourceContent:
    """A source's documents plus the bytes its checksum is computed over."""

    checksum_bytes: bytes
    documents: list[DocumentContent]
    failed: list[tuple[str, str]] = field(default_factory=list)  # (path, error code)
    skipped: int = 0
    unchanged: int = 0  # pages the site said had not changed (kept without extracting)


def content_checksum(data: bytes) -> str:
    """SHA-256 over INGEST_VERSION plus the content bytes (reference 000, "Checksums").

    The version is mixed in because the bytes alone cannot express a change in how they
    become passages: raising it makes every stored checksum mismatch exactly once."""
    h = hashlib.sha256()
    h.update(INGEST_VERSION.encode("utf-8"))
    h.update(b"\x00")
    h.update(data)
    return h.hexdigest()
