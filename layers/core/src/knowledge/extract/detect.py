"""Decide what kind of document some bytes are: declared type, confirmed by magic bytes."""

from __future__ import annotations

import posixpath

from knowledge.errors import Code, SourceFailure

from .limits import HEAD_BYTES

PDF_MAGIC = b"%PDF-"
ZIP_MAGIC = b"PK\x03\x04"
OLE2_MAGIC = b"\xd0\xcf\x11\xe0"

_EXTENSIONS: dict[str, str] = {
    ".pdf": "pdf",
    ".docx": "docx",
    ".xlsx": "xlsx",
    ".pptx": "pptx",
    ".html": "html",
    ".htm": "html",
    ".xhtml": "html",
    ".xht": "html",
    ".txt": "text",
    ".text": "text",
    ".md": "markdown",
    ".markdown": "markdown",
}

_CONTENT_TYPES: dict[str, str] = {
    "application/pdf": "pdf",
    "application/x-pdf": "pdf",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "docx",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": "xlsx",
    "application/vnd.openxmlformats-officedocument.presentationml.presentation": "pptx",
    "text/html": "html",
    "application/xhtml+xml": "html",
    "text/plain": "text",
    "text/markdown": "markdown",
    "text/x-markdown": "markdown",
}

#: Legacy binary Office formats (and their templates): always ``unsupported_type``.
_LEGACY_EXTENSIONS = frozenset({".doc", ".dot", ".xls", ".xlt", ".ppt", ".pot", ".pps"})
_LEGACY_CONTENT_TYPES = frozenset(
    {"application/msword", "application/vnd.ms-excel", "application/vnd.ms-powerpoint"}
)
#: Content types that say nothing about the format.
_GENERIC_CONTENT_TYPES = frozenset(
    {"", "application/octet-stream", "binary/octet-stream", "application/unknown", "application/binary"}
)

_BINARY_KINDS = {"pdf": PDF_MAGIC, "docx": ZIP_MAGIC, "xlsx": ZIP_MAGIC, "pptx": ZIP_MAGIC}


def _unsupported(message: str) -> SourceFailure:
    return SourceFailure(Code.UNSUPPORTED_TYPE, message)


def normalize_content_type(content_type: str | None) -> str:
    return (content_type or "").split(";", 1)[0].strip().lower()


def extension_of(filename: str | None) -> str:
    if not filename:
        return ""
    base = posixpath.basename(filename.replace("\\", "/"))
    _, ext = posixpath.splitext(base)
    return ext.lower()


def is_pdf_head(head: bytes) -> bool:
    """``%PDF-`` at the start or (as readers tolerate) within the first kilobyte."""
    return PDF_MAGIC in head[:HEAD_BYTES]


def detect_kind(filename: str | None, content_type: str | None, head: bytes) -> str:
    """Kind of a document from its name and/or content type, confirmed by its first bytes.

    ``head`` should be at least the first :data:`HEAD_BYTES` bytes. Raises
    ``SourceFailure(unsupported_type)`` for legacy Office files (by extension, content type or
    the OLE2 signature), unknown types and declared types contradicted by the signature of
    another format; ``SourceFailure(malformed_file)`` when a declared PDF/Office file lacks
    any signature at all (empty or garbage bytes).
    """
    ext = extension_of(filename)
    ctype = normalize_content_type(content_type)
    if head.startswith(OLE2_MAGIC) or ext in _LEGACY_EXTENSIONS or ctype in _LEGACY_CONTENT_TYPES:
        raise _unsupported("legacy binary Office files are not supported; save as DOCX, XLSX or PPTX")

    kind = _EXTENSIONS.get(ext)
    if kind is None and ctype not in _GENERIC_CONTENT_TYPES:
        kind = _CONTENT_TYPES.get(ctype)
    if kind is None:
        if not ext and ctype in _GENERIC_CONTENT_TYPES and head.startswith(PDF_MAGIC):
            return "pdf"  # nothing declared at all: an unambiguous signature is enough
        raise _unsupported("the file type is not supported")

    is_pdf = is_pdf_head(head)
    is_zip = head.startswith(ZIP_MAGIC)
    magic = _BINARY_KINDS.get(kind)
    if magic is not None:
        confirmed = is_pdf if kind == "pdf" else is_zip
        if confirmed:
            return kind
        if is_pdf or is_zip:
            raise _unsupported("the file content does not match its declared type")
        raise SourceFailure(Code.MALFORMED_FILE, f"the file does not look like a {kind.upper()} file")
    # html / text / markdown: must not be one of the binary formats in disguise
    if head.startswith(PDF_MAGIC) or is_zip:
        raise _unsupported("the file content does not match its declared type")
    return kind
