"""PDF to text with pypdf: strict parsing, no encryption, at most 100 pages, bounded work.

Resource bounds: pypdf's own limits are tightened for the duration of the call (per-stream
decompression, parsing work, page tree size; no external JBIG2 decoder), the page count is
decided before any text is extracted, the decoded page content is budgeted across the whole
document, and the text budget is charged page by page.
"""

from __future__ import annotations

import contextlib
import io
import re
import struct
import zlib
from collections.abc import Iterator
from typing import Any

import pypdf
from pypdf.errors import DependencyError, LimitReachedError, PyPdfError
from pypdf.generic import DictionaryObject

from knowledge.errors import Code, SourceFailure

from .limits import MAX_PDF_PAGES, MAX_UPLOAD_BYTES, TextBudget, malformed, too_large
from .result import Extracted

#: Decoded bytes of one stream, and of all page content streams together.
MAX_PDF_STREAM_BYTES = 8 * 1024 * 1024
MAX_PDF_CONTENT_BYTES = 24 * 1024 * 1024

_PYPDF_LIMITS: dict[str, Any] = {
    "maximum_declared_stream_length": MAX_UPLOAD_BYTES,
    "array_based_stream_maximum_output_length": MAX_PDF_STREAM_BYTES,
    "zlib_maximum_output_length": MAX_PDF_STREAM_BYTES,
    # no byte-by-byte "recovery" of corrupt Flate data: that is a partial parse (and slow)
    "zlib_maximum_recovery_input_length": 0,
    "lzw_maximum_output_length": MAX_PDF_STREAM_BYTES,
    "run_length_maximum_output_length": MAX_PDF_STREAM_BYTES,
    "brotli_maximum_output_length": MAX_PDF_STREAM_BYTES,
    "jbig2_maximum_output_length": MAX_PDF_STREAM_BYTES,
    "image_maximum_buffer_size": MAX_PDF_STREAM_BYTES,
    "stream_decoding_work_maximum_length": 4 * MAX_PDF_STREAM_BYTES,
    "stream_parsing_work_maximum_count": 1_000_000,
    "page_tree_maximum_entries": 10_000,
    "page_tree_maximum_page_entries": 200_000,
    "xform_maximum_invocations_per_extraction": 1_000,
    "jbig2dec_binary": None,  # never run an external program on uploaded data
}

#: What a hostile or broken file makes pypdf's parser raise besides its own error types:
#: its internals index, convert and unpack whatever bytes they find, so lookups, conversions
#: and arithmetic fail with the built-in errors below. All of them mean "malformed file".
_PARSER_ERRORS: tuple[type[BaseException], ...] = (
    PyPdfError,
    DependencyError,
    ValueError,  # includes UnicodeError, binascii.Error
    LookupError,  # KeyError, IndexError
    TypeError,
    AttributeError,
    ArithmeticError,  # ZeroDivisionError, OverflowError
    RecursionError,
    AssertionError,
    struct.error,
    zlib.error,
    EOFError,
)
_SPACES = re.compile(r"\s+")
_OBJECT_HEADER = re.compile(rb"[\x00\t\n\f\r ]*(\d{1,10})[\x00\t\n\f\r ]+(\d{1,5})[\x00\t\n\f\r ]+obj")


@contextlib.contextmanager
def _tight_limits() -> Iterator[None]:
    apply = getattr(pypdf, "apply_configuration", None)  # pypdf >= 7; older: its defaults
    if apply is None:
        yield
        return
    with apply(**_PYPDF_LIMITS):
        yield


def _declared_page_count(reader: pypdf.PdfReader) -> int | None:
    root = reader.trailer["/Root"].get_object()
    if not isinstance(root, DictionaryObject):
        raise malformed("the PDF has no document catalog", reason="no_root")
    pages = root["/Pages"].get_object()
    count = pages.get("/Count") if isinstance(pages, DictionaryObject) else None
    return int(count) if count is not None else None


def _check_xref(reader: pypdf.PdfReader, data: bytes) -> None:
    """Every in-use cross-reference entry must point at its own object header.

    pypdf repairs wrong offsets by searching the file even in strict mode; a file whose table
    lies is malformed here rather than read from guessed positions.
    """
    for generation, entries in reader.xref.items():
        for number, offset in entries.items():
            match = _OBJECT_HEADER.match(data, offset) if isinstance(offset, int) and offset >= 0 else None
            if match is None or (int(match.group(1)), int(match.group(2))) != (number, generation):
                raise malformed("the PDF cross-reference table is broken", reason="broken_xref")


def _clean_title(value: object) -> str | None:
    if not isinstance(value, str):
        return None
    title = _SPACES.sub(" ", value.replace("\x00", "")).strip()
    return title[:300] or None


def _read(data: bytes) -> Extracted:
    reader = pypdf.PdfReader(io.BytesIO(data), strict=True)
    _check_xref(reader, data)
    if reader.is_encrypted:
        raise malformed("encrypted PDFs are not accepted", reason="encrypted")
    declared = _declared_page_count(reader)
    if declared is not None and declared > MAX_PDF_PAGES:
        too_large("pdf_pages", f"the PDF has more than {MAX_PDF_PAGES} pages")
    page_count = len(reader.pages)
    if page_count > MAX_PDF_PAGES:
        too_large("pdf_pages", f"the PDF has more than {MAX_PDF_PAGES} pages")

    budget = TextBudget()
    content_bytes = 0
    texts: list[str] = []
    for page in reader.pages:
        contents = page.get_contents()
        if contents is not None:
            content_bytes += len(contents.get_data())
            if content_bytes > MAX_PDF_CONTENT_BYTES:
                too_large("pdf_content", "the PDF page content is too large to read")
        text = page.extract_text().replace("\x00", "").strip()
        if text:
            budget.add_chars(len(text) + 2)
            texts.append(text)
    metadata = reader.metadata
    title = _clean_title(metadata.title) if metadata is not None else None
    return Extracted(text="\n\n".join(texts), title=title, kind="pdf", pages=page_count)


def extract_pdf(data: bytes) -> Extracted:
    """Text of a PDF, or ``SourceFailure``: ``malformed_file`` for encrypted, broken or
    truncated files (never a partial result), ``expanded_too_large`` past the page, content
    or text limits."""
    with _tight_limits():
        try:
            return _read(data)
        except SourceFailure:
            raise
        except LimitReachedError as exc:
            if isinstance(exc.__cause__, zlib.error):  # corrupt Flate data, recovery refused
                raise malformed("the PDF has a corrupt stream", reason="bad_stream") from exc
            raise SourceFailure(
                Code.EXPANDED_TOO_LARGE,
                "the PDF exceeds a processing limit",
                details={"limit": "pdf_resources"},
            ) from exc
        except _PARSER_ERRORS as exc:
            raise malformed("the PDF could not be parsed", reason=type(exc).__name__) from exc
