"""The value every extractor returns."""

from __future__ import annotations

from dataclasses import dataclass

KINDS: tuple[str, ...] = ("pdf", "docx", "xlsx", "pptx", "html", "text", "markdown")


@dataclass(frozen=True)
class Extracted:
    """Text a file or page became.

    ``text`` is Markdown-ish: HTML and Office headings become ``#`` lines so the chunker can
    split on them. ``pages`` is the PDF page count (or the PPTX slide count), else ``None``.
    """

    text: str
    title: str | None
    kind: str
    pages: int | None = None
