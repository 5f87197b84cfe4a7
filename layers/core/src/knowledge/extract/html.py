"""HTML/XHTML to Markdown-ish text: headings, lists, paragraphs, table rows and link text.

The tree is walked with an explicit stack (no recursion), so deeply nested markup cannot
exhaust the interpreter stack; the text budget is charged as each block is emitted.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterator

from bs4 import BeautifulSoup, NavigableString, Tag

from .limits import MAX_HTML_ELEMENTS, MAX_UPLOAD_BYTES, TextBudget, too_large, upload_too_large
from .result import Extracted

#: Elements whose whole subtree is never text (reference 003 list, plus document metadata and
#: embedded media, which carry no readable text of the page).
DROPPED_TAGS = frozenset(
    {
        "script", "style", "nav", "header", "footer", "aside", "template", "noscript", "iframe",
        "form", "svg",
        "head", "title", "meta", "link", "base", "object", "embed", "canvas", "audio", "video",
    }
)  # fmt: skip
_HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
_BLOCKS = frozenset(
    {
        "p", "div", "section", "article", "main", "blockquote", "address", "figure", "figcaption",
        "dl", "dt", "dd", "details", "summary", "fieldset", "legend", "hr", "center", "body", "html",
        "caption", "table", "thead", "tbody", "tfoot", "dialog", "hgroup", "search", "menu",
    }
)  # fmt: skip
_CELLS = frozenset({"td", "th"})
_BREAK = "\ue000"  # private-use sentinel for <br>, removed from source text first
_SPACES = re.compile(r"\s+")
_START_TAG = re.compile(r"<[A-Za-z]")
_META_CHARSET = re.compile(rb"""<meta[^>]{0,512}?charset\s*=\s*["']?\s*([A-Za-z0-9_.:\-]{1,40})""", re.I)
_XML_ENCODING = re.compile(rb"""^\s*<\?xml[^>]{0,200}?encoding\s*=\s*["']([A-Za-z0-9_.:\-]{1,40})["']""")
#: Codecs that are "text" to Python but would reinterpret markup (or are meaningless here).
_REFUSED_CODECS = frozenset({"unicode_escape", "raw_unicode_escape", "punycode", "idna", "undefined"})
_BOMS = ((codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))


def _usable_codec(label: str | bytes | None) -> str | None:
    if not label:
        return None
    text = label.decode("ascii", "replace") if isinstance(label, bytes) else label
    try:
        info = codecs.lookup(text.strip())
    except LookupError:
        return None
    if info.name.replace("-", "_") in _REFUSED_CODECS:
        return None
    if info.name.startswith(("utf-16", "utf-32")):
        return "utf-8"  # a byte-oriented page cannot really be UTF-16 if it declares so in ASCII
    return info.name


def decode_html(data: bytes, declared: str | None = None) -> str:
    """Bytes to text: BOM, then declared charset (header, XML declaration, meta), then UTF-8,
    then windows-1252. Never raises on bad bytes (replacement characters instead)."""
    for bom, bom_codec in _BOMS:
        if data.startswith(bom):
            return data.decode(bom_codec, errors="replace")
    head = data[:4096]
    candidates: list[str | bytes | None] = [declared]
    for pattern in (_XML_ENCODING, _META_CHARSET):
        match = pattern.search(head)
        candidates.append(match.group(1) if match else None)
    for label in candidates:
        codec = _usable_codec(label)
        if codec is not None:
            try:
                return data.decode(codec, errors="replace")
            except (LookupError, UnicodeError):  # not a bytes->text codec after all
                continue
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("cp1252", errors="replace")


def _norm(text: str) -> str:
    lines = (_SPACES.sub(" ", part).strip() for part in text.split(_BREAK))
    return "\n".join(line for line in lines if line)


def _escape_line(text: str) -> str:
    """Body text must not turn into a Markdown heading for the chunker."""
    return "\\" + text if text.startswith("#") else text


class _Renderer:
    def __init__(self, budget: TextBudget) -> None:
        self.budget = budget
        self.blocks: list[tuple[str, str]] = []
        self.buffer: list[str] = []
        self.saved: list[list[str]] = []  # buffers suspended by a heading or a table cell
        self.heading: list[int] = []
        self.cells = 0
        self.rows: list[list[str]] = []
        self.lists: list[list[int]] = []  # [ordered (0/1), next number]
        self.prefix: str | None = None
        self.pre = 0
        self.first_h1: str | None = None

    # -- output ------------------------------------------------------------------------
    def emit(self, kind: str, text: str) -> None:
        if not text:
            return
        self.budget.add_chars(len(text) + 2)
        self.blocks.append((kind, text))

    def flush(self) -> None:
        if self.pre:  # preformatted text is emitted whole when its <pre> closes
            return
        raw = "".join(self.buffer)
        self.buffer = []
        text = _norm(raw)
        if self.prefix is not None:
            if text:
                indent = "   " * (len(self.lists) - 1) if self.lists else ""
                self.emit("item", indent + self.prefix + _escape_line(text).replace("\n", " "))
                self.prefix = None
            return
        if text:
            self.emit("para", "\n".join(_escape_line(line) for line in text.split("\n")))

    def text(self) -> str:
        out: list[str] = []
        previous = ""
        for kind, text in self.blocks:
            if out:
                out.append("\n" if kind == previous and kind in ("item", "row") else "\n\n")
            out.append(text)
            previous = kind
        return "".join(out)

    # -- events ------------------------------------------------------------------------
    def data(self, text: str) -> None:
        self.buffer.append(text)

    def start(self, tag: Tag) -> None:
        name = tag.name
        if name in _HEADINGS:
            self.flush()
            self.saved.append(self.buffer)
            self.buffer = []
            self.heading.append(_HEADINGS[name])
        elif self.heading or self.cells:
            if name in _BLOCKS or name in ("br", "li", "ul", "ol", "pre"):
                self.buffer.append(" ")
            if name in ("tr",) and self.cells:
                self.rows.append([])
            elif name in _CELLS:
                self.saved.append(self.buffer)
                self.buffer = []
                self.cells += 1
        elif name == "br":
            self.buffer.append(_BREAK)
        elif name in ("ul", "ol"):
            self.flush()
            start = tag.get("start")
            number = int(start) if isinstance(start, str) and start.strip().isdigit() else 1
            self.lists.append([1 if name == "ol" else 0, min(number, 10**9)])
        elif name == "li":
            self.flush()
            if self.lists and self.lists[-1][0]:
                self.prefix = f"{self.lists[-1][1]}. "
                self.lists[-1][1] += 1
            else:
                self.prefix = "- "
        elif name == "tr":
            self.flush()
            self.rows.append([])
        elif name in _CELLS:
            self.flush()
            self.saved.append(self.buffer)
            self.buffer = []
            self.cells += 1
        elif name == "pre":
            self.flush()
            self.pre += 1
        elif name in _BLOCKS:
            self.flush()

    def end(self, tag: Tag) -> None:
        name = tag.name
        if name in _HEADINGS and self.heading:
            level = self.heading.pop()
            text = _norm("".join(self.buffer)).replace("\n", " ")
            self.buffer = self.saved.pop()
            if self.heading or self.cells:
                self.buffer.append(" " + text + " ")
                return
            if text:
                if level == 1 and self.first_h1 is None:
                    self.first_h1 = text
                self.prefix = None
                self.emit("heading", "#" * level + " " + text)
        elif name in _CELLS and self.cells:
            text = _norm("".join(self.buffer)).replace("\n", " ")
            self.buffer = self.saved.pop()
            self.cells -= 1
            if self.rows:
                self.rows[-1].append(text)
            else:
                self.buffer.append(" " + text + " ")
        elif name == "tr" and self.rows:
            cells = self.rows.pop()
            if self.cells:  # a table nested in a cell: flatten into that cell
                self.buffer.append(" " + " ".join(c for c in cells if c) + " ")
            elif any(cells):
                self.emit("row", _escape_line(" | ".join(cells)))
        elif self.heading or self.cells:
            return
        elif name == "pre" and self.pre:
            raw = "".join(self.buffer).replace(_BREAK, "\n").strip("\n")
            self.buffer = []
            self.pre -= 1
            if raw.strip():
                self.emit("para", raw)
        elif name in ("ul", "ol"):
            self.flush()
            if self.lists:
                self.lists.pop()
        elif name == "li" or name in _BLOCKS:
            self.flush()


def _is_hidden(tag: Tag) -> bool:
    return tag.has_attr("hidden") or str(tag.get("aria-hidden", "")).lower() == "true"


def _walk(root: Tag) -> Iterator[tuple[str, Tag | NavigableString]]:
    """Yield ("start", tag), ("text", string), ("end", tag) without recursion."""
    stack: list[tuple[bool, Tag | NavigableString]] = [(False, root)]
    while stack:
        closing, node = stack.pop()
        if isinstance(node, Tag):
            if closing:
                yield "end", node
                continue
            if node.name in DROPPED_TAGS or _is_hidden(node):
                continue
            yield "start", node
            stack.append((True, node))
            children = (c for c in reversed(node.contents) if isinstance(c, Tag | NavigableString))
            stack.extend((False, child) for child in children)
        elif type(node) is NavigableString:  # comments, CDATA, doctypes etc. are subclasses
            yield "text", node


def _page_title(soup: BeautifulSoup) -> str | None:
    for tag in soup.find_all("title", limit=8):
        if isinstance(tag, Tag) and tag.find_parent("svg") is None:
            title = _norm(tag.get_text()).replace("\n", " ")
            if title:
                return title[:300]
    return None


def extract_html(html: str | bytes, *, encoding: str | None = None) -> Extracted:
    """Readable text of an HTML or XHTML page (also used by the crawler).

    ``encoding`` is the charset declared outside the document (HTTP ``Content-Type``), used
    when ``html`` is bytes. Raises ``file_too_large`` above 8 MB and ``expanded_too_large``
    for more than 200,000 elements or 500,000 characters of text.
    """
    if len(html) > MAX_UPLOAD_BYTES:
        raise upload_too_large()
    text = decode_html(html, encoding) if isinstance(html, bytes) else html
    text = text.replace(_BREAK, " ")
    for count, _ in enumerate(_START_TAG.finditer(text), start=1):
        if count > MAX_HTML_ELEMENTS:
            too_large("html_elements", f"the page has more than {MAX_HTML_ELEMENTS} elements")
    soup = BeautifulSoup(text, "lxml")
    renderer = _Renderer(TextBudget())
    for event, node in _walk(soup):
        if event == "text":
            renderer.data(str(node))
        elif event == "start":
            assert isinstance(node, Tag)
            renderer.start(node)
        else:
            assert isinstance(node, Tag)
            renderer.end(node)
    renderer.flush()
    title = _page_title(soup) or renderer.first_h1
    return Extracted(text=renderer.text(), title=title, kind="html")
