"""Safe text extraction from uploaded files and fetched pages.

This is where hostile input arrives, so every limit is enforced while reading (reference 003,
"File uploads"; DESIGN.md §5 error codes). Failures are ``SourceFailure(code, message)``;
messages never contain extracted text.

Accepted: PDF, DOCX, XLSX, PPTX, HTML/XHTML, plain text, Markdown. Legacy ``.doc``/``.xls``/
``.ppt`` and anything else are ``unsupported_type``; more than 8 MB is ``file_too_large``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from knowledge.errors import SourceFailure

from .detect import detect_kind, normalize_content_type
from .html import extract_html
from .limits import HEAD_BYTES, MAX_UPLOAD_BYTES, check_upload_size, read_limited
from .ooxml import extract_ooxml
from .pdf import extract_pdf
from .result import KINDS, Extracted
from .text import extract_text

__all__ = [
    "HEAD_BYTES",
    "KINDS",
    "MAX_UPLOAD_BYTES",
    "Extracted",
    "detect_kind",
    "extract_bytes",
    "extract_file",
    "extract_html",
    "extract_result_json",
    "read_limited",
]


def _charset(content_type: str | None) -> str | None:
    for param in (content_type or "").split(";")[1:]:
        key, _, value = param.partition("=")
        if key.strip().lower() == "charset":
            return value.strip().strip("\"'") or None
    return None


def extract_bytes(data: bytes, *, filename: str | None = None, content_type: str | None = None) -> Extracted:
    """Text of one document given in memory. The size is checked before anything else; the
    kind comes from ``filename``/``content_type`` confirmed by the leading bytes."""
    check_upload_size(len(data))
    kind = detect_kind(filename, content_type, data[:HEAD_BYTES])
    if kind == "pdf":
        return extract_pdf(data)
    if kind in ("docx", "xlsx", "pptx"):
        return extract_ooxml(data, kind)
    if kind == "html":
        declared = _charset(content_type) if normalize_content_type(content_type) else None
        return extract_html(data, encoding=declared)
    return extract_text(data, markdown=kind == "markdown")


def extract_file(path: str | os.PathLike[str]) -> Extracted:
    """Text of a file on disk; reads at most 8 MB + 1 bytes whatever the file's size."""
    file_path = Path(path)
    with file_path.open("rb") as handle:
        data = read_limited(handle, MAX_UPLOAD_BYTES)
    return extract_bytes(data, filename=file_path.name)


def extract_result_json(path: str | os.PathLike[str]) -> dict[str, Any]:
    """What ``kb extract FILE --json`` prints: the text, or the error code and message.

    ``{"text", "chars", "kind", "title", "pages", "error": null}`` on success;
    ``{"text": "", "chars": 0, ..., "error": {"code", "message"}}`` on a ``SourceFailure``.
    I/O errors (missing file, permissions) are not source failures and propagate.
    """
    try:
        result = extract_file(path)
    except SourceFailure as failure:
        return {
            "text": "",
            "chars": 0,
            "kind": None,
            "title": None,
            "pages": None,
            "error": {"code": failure.code, "message": failure.message},
        }
    return {
        "text": result.text,
        "chars": len(result.text),
        "kind": result.kind,
        "title": result.title,
        "pages": result.pages,
        "error": None,
    }
