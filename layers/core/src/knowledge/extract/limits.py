"""Extraction limits and the small helpers that enforce them while reading.

Every limit here is checked *during* the work it bounds (reading a stream, inflating an
archive entry, walking XML, appending extracted text), never only afterwards.
"""

from __future__ import annotations

from typing import BinaryIO, NoReturn

from knowledge.errors import Code, SourceFailure

#: Largest upload or fetched body accepted (reference 003, "File uploads").
MAX_UPLOAD_BYTES = 8 * 1024 * 1024
#: Largest number of PDF pages read.
MAX_PDF_PAGES = 100
#: Office archives: entries, compression ratio, total inflated bytes.
MAX_ARCHIVE_ENTRIES = 500
MAX_COMPRESSION_RATIO = 100
MAX_EXPANDED_BYTES = 32 * 1024 * 1024
#: Ratio checks start once this many bytes were inflated (per entry and overall): tiny parts
#: such as an empty relationship file legitimately compress far better than 100:1, and the
#: grace is too small to matter (500 entries x 64 KiB still fits the 32 MB budget).
RATIO_GRACE_BYTES = 64 * 1024
#: XML elements parsed over a whole Office document (all parts together).
MAX_XML_NODES = 200_000
#: Characters of extracted text, for every kind of input.
MAX_TEXT_CHARS = 500_000
#: HTML start tags (a cheap pre-parse bound so tag soup cannot build a huge tree).
MAX_HTML_ELEMENTS = 200_000
#: Bytes a caller should pass to ``detect_kind`` as ``head``.
HEAD_BYTES = 1024

_READ_CHUNK = 64 * 1024


def too_large(limit: str, message: str) -> NoReturn:
    """Raise ``expanded_too_large``; ``limit`` names the check that fired (in ``details``)."""
    raise SourceFailure(Code.EXPANDED_TOO_LARGE, message, details={"limit": limit})


def malformed(message: str, *, reason: str | None = None) -> SourceFailure:
    """Build (not raise) a ``malformed_file`` failure so callers can ``raise ... from exc``."""
    return SourceFailure(Code.MALFORMED_FILE, message, details={"reason": reason} if reason else None)


def upload_too_large() -> SourceFailure:
    return SourceFailure(
        Code.FILE_TOO_LARGE,
        f"the file is larger than {MAX_UPLOAD_BYTES} bytes",
        details={"limit": "upload_bytes", "max": MAX_UPLOAD_BYTES},
    )


def check_upload_size(size: int) -> None:
    if size > MAX_UPLOAD_BYTES:
        raise upload_too_large()


def read_limited(stream: BinaryIO, limit: int = MAX_UPLOAD_BYTES) -> bytes:
    """Read a whole stream, failing with ``file_too_large`` as soon as it passes ``limit``.

    At most ``limit + 1`` bytes are ever read, whatever the stream claims about its size.
    """
    parts: list[bytes] = []
    total = 0
    while True:
        chunk = stream.read(min(_READ_CHUNK, limit + 1 - total))
        if not chunk:
            break
        parts.append(chunk)
        total += len(chunk)
        if total > limit:
            raise upload_too_large()
    return b"".join(parts)


class TextBudget:
    """Counts characters of extracted text and XML nodes; raises the moment one overflows."""

    __slots__ = ("chars", "max_chars", "max_nodes", "nodes")

    def __init__(self, max_chars: int = MAX_TEXT_CHARS, max_nodes: int = MAX_XML_NODES) -> None:
        self.max_chars = max_chars
        self.max_nodes = max_nodes
        self.chars = 0
        self.nodes = 0

    def add_chars(self, count: int) -> None:
        self.chars += count
        if self.chars > self.max_chars:
            too_large("text_chars", f"the extracted text is longer than {self.max_chars} characters")

    def add_node(self) -> None:
        self.nodes += 1
        if self.nodes > self.max_nodes:
            too_large("xml_nodes", f"the document has more than {self.max_nodes} XML nodes")


def check_text_length(text: str, limit: int = MAX_TEXT_CHARS) -> str:
    if len(text) > limit:
        too_large("text_chars", f"the extracted text is longer than {limit} characters")
    return text
