"""Turn a source of any type into its documents (the fetch/extract stage)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..errors import Code, SourceFailure
from ..model import TYPE_WEIGHT, Source, stable_id
from .base import DocumentContent, SourceContent, pack_blob_key
from .packs import pack_documents

if TYPE_CHECKING:
    from ..ports import Services

#: Article state -> visibility of its passages; drafts produce nothing searchable.
ARTICLE_VISIBILITY = {"published": "public", "internal": "agent"}


def _config_bytes(source: Source) -> bytes:
    return json.dumps(
        {"config": source.config, "visibility": source.visibility, "name": source.name}, sort_keys=True
    ).encode("utf-8")


def load_content(services: Services, source: Source, *, beat: Callable[[], None] | None = None) -> SourceContent:
    """The source's documents. ``beat`` is called between the reads of a long listing (a
    staged crawl's pages) so the caller can keep its lease; it may raise to stop."""
    kind = source.type
    if kind == "pack":
        slug = str(source.config.get("slug", ""))
        data = services.blobs.get(pack_blob_key(slug))
        return pack_documents(source.id, slug, data)
    if kind == "article":
        return _article(source)
    if kind == "instruction":
        return _whole(source, str(source.config.get("text", "")), title=source.name, path="instruction")
    if kind == "fact":
        key = str(source.config.get("key", ""))
        value = str(source.config.get("value", ""))
        return _whole(source, f"{key}: {value}" if key else value, title=key or source.name, path=f"fact/{key}")
    if kind == "faq":
        return _faq(source)
    if kind == "website":
        from .website import website_content  # the crawler (bs4, protego) loads only when crawling

        return website_content(services, source, beat=beat)
    if kind == "file":
        from .files import file_content  # the extractors (pypdf, bs4, lxml) load only when extracting

        return file_content(services, source)
    raise SourceFailure(Code.UNSUPPORTED_TYPE, f"source type {kind} cannot be indexed yet")


def _whole(source: Source, text: str, *, title: str, path: str) -> SourceContent:
    docs = []
    skipped = 0
    if text.strip():
        docs.append(
            DocumentContent(
                id=stable_id(source.id, path),
                title=title,
                path=path,
                body=text,
                visibility=source.visibility,
                weight=TYPE_WEIGHT[source.type],
                crumbs=[source.name] if source.name == title else [source.name, title],
                whole=True,
            )
        )
    else:
        skipped = 1
    return SourceContent(checksum_bytes=_config_bytes(source), documents=docs, skipped=skipped)


def _article(source: Source) -> SourceContent:
    state = str(source.config.get("state", "draft"))
    visibility = ARTICLE_VISIBILITY.get(state)
    body = str(source.config.get("body", ""))
    title = str(source.config.get("title") or source.name)
    if visibility is None or not body.strip():
        # drafts and stubs: nothing searchable ("here is our refund policy:" and nothing)
        return SourceContent(checksum_bytes=_config_bytes(source), documents=[], skipped=1)
    doc = DocumentContent(
        id=stable_id(source.id, "article"),
        title=title,
        path="article",
        body=body,
        visibility=visibility,
        weight=TYPE_WEIGHT["article"],
        crumbs=[title],
        whole=True,
    )
    return SourceContent(checksum_bytes=_config_bytes(source), documents=[doc])


def _faq(source: Source) -> SourceContent:
    docs = []
    skipped = 0
    entries = source.config.get("entries") or []
    for number, entry in enumerate(entries, start=1):
        question = str(entry.get("question", "")).strip() if isinstance(entry, dict) else ""
        answer = str(entry.get("answer", "")).strip() if isinstance(entry, dict) else ""
        if not question or not answer:
            skipped += 1
            continue
        path = f"faq/{number}"
        docs.append(
            DocumentContent(
                id=stable_id(source.id, path),
                title=question,
                path=path,
                body=f"{question}\n\n{answer}",
                visibility=source.visibility,
                weight=TYPE_WEIGHT["faq"],
                crumbs=[source.name, question],
                whole=True,
            )
        )
    return SourceContent(checksum_bytes=_config_bytes(source), documents=docs, skipped=skipped)
