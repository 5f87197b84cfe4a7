"""File sources: the uploaded file becomes one document (reference 003, "File uploads").

The upload itself (at most 8 MB) is stored by the lifecycle under
``registry.upload_blob_key(bot, source_id)``; here it is extracted with the limits of
:mod:`knowledge.extract`. Extraction failures keep their code (``unsupported_type``,
``file_too_large``, ``expanded_too_large``, ``malformed_file``) and the pipeline stores it on
the source, keeping whatever an earlier upload indexed.
"""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING

from ..errors import Code, NotFound, SourceFailure
from ..model import TYPE_WEIGHT, Source, stable_id
from .base import DocumentContent, SourceContent, upload_blob_key

if TYPE_CHECKING:
    from ..ports import Services


def upload_key(source: Source) -> str:
    return upload_blob_key(source.bot, source.id)


def awaiting_first_upload(source: Source) -> bool:
    """From the row alone: a file source never leased and never indexed (nothing uploaded
    yet, or the refresh its upload started is on its way). ``awaiting_upload`` asks the blob
    store instead, where a caller may read it."""
    return source.type == "file" and source.attempts == 0 and source.live_generation is None


def awaiting_upload(services: Services, source: Source) -> bool:
    """A file source with nothing uploaded yet: not worth queueing (it would only fail)."""
    return source.type == "file" and not services.blobs.exists(upload_key(source))


def file_content(services: Services, source: Source) -> SourceContent:
    filename = str(source.config.get("filename") or "") or None
    content_type = str(source.config.get("contentType") or "") or None
    try:
        data = services.blobs.get(upload_key(source))
    except NotFound:
        raise SourceFailure(Code.MALFORMED_FILE, "no file uploaded") from None
    from ..extract import extract_bytes  # heavy (pypdf, bs4, lxml): only where a file is read

    extracted = extract_bytes(data, filename=filename, content_type=content_type)
    name = filename or source.name
    title = (extracted.title or "").strip() or name
    checksum = json.dumps(
        {
            "sha256": hashlib.sha256(data).hexdigest(),
            "filename": filename,
            "contentType": content_type,
            "name": source.name,
            "visibility": source.visibility,
        },
        sort_keys=True,
    ).encode("utf-8")
    if not extracted.text.strip():
        # e.g. a PDF of scanned images: nothing searchable, shown as a skipped document
        return SourceContent(checksum_bytes=checksum, documents=[], skipped=1)
    doc = DocumentContent(
        id=stable_id(source.id, "file"),
        title=title,
        path=name,
        body=extracted.text,
        visibility=source.visibility,
        weight=TYPE_WEIGHT["file"],
        crumbs=[source.name, title] if title != source.name else [title],
    )
    return SourceContent(checksum_bytes=checksum, documents=[doc])
