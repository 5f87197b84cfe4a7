"""Plain text and Markdown: taken as they are, decoded as UTF-8 with replacement."""

from __future__ import annotations

import re

from .limits import MAX_TEXT_CHARS, check_text_length, malformed, too_large
from .result import Extracted

#: More NUL bytes than this fraction of the input means binary data, not text.
_MAX_NUL_FRACTION = 0.01
#: More replacement characters than this fraction (of a non-trivial input) means binary data.
_MAX_REPLACEMENT_FRACTION = 0.25
_HEADING = re.compile(r"^#\s+(.+?)\s*#*\s*$", re.MULTILINE)


def decode_text(data: bytes) -> str:
    """UTF-8 (BOM stripped) with replacement; rejects NUL-heavy or mostly undecodable input."""
    nuls = data.count(b"\x00")
    if nuls and nuls > len(data) * _MAX_NUL_FRACTION:
        raise malformed("the file looks binary, not text", reason="nul_bytes")
    text = data.decode("utf-8-sig", errors="replace")
    if len(text) >= 64 and text.count("\ufffd") > len(text) * _MAX_REPLACEMENT_FRACTION:
        raise malformed("the file is not UTF-8 text", reason="not_utf8")
    return text.replace("\x00", "").replace("\r\n", "\n").replace("\r", "\n")


def extract_text(data: bytes, *, markdown: bool = False) -> Extracted:
    # UTF-8 needs at most 4 bytes a character: anything longer cannot fit, skip decoding it
    if len(data) > 4 * MAX_TEXT_CHARS + 3:
        too_large("text_chars", f"the text is longer than {MAX_TEXT_CHARS} characters")
    text = decode_text(data)
    check_text_length(text, MAX_TEXT_CHARS)
    title = None
    if markdown:
        match = _HEADING.search(text)
        if match:
            title = match.group(1).strip() or None
    return Extracted(text=text.strip("\n"), title=title, kind="markdown" if markdown else "text")
