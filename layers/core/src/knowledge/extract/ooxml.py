"""DOCX, XLSX and PPTX: text of the document parts only.

The package is first checked as a whole by :func:`archive.read_archive` (entries, ratio,
expanded size, all measured on bytes really inflated). Only the text parts are then parsed,
with defusedxml (no DTD, no entity declarations, no external references) and streaming
``iterparse`` so the node and text budgets are charged while parsing. Relationships are read
only to order sheets and slides: external targets, macros (``vbaProject.bin``), embedded
objects, images and everything else in the package are never opened, let alone fetched.
DOCX headers, footers, notes and comments are left out too: they repeat boilerplate rather
than carry answers.
"""

from __future__ import annotations

import functools
import io
import posixpath
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from xml.etree.ElementTree import Element, ParseError

from defusedxml import DefusedXmlException
from defusedxml.ElementTree import iterparse

from knowledge.errors import Code, SourceFailure

from .archive import read_archive
from .limits import MAX_TEXT_CHARS, TextBudget, malformed, too_large
from .result import Extracted

_CORE = "docProps/core.xml"
_DOCX_MAIN = "word/document.xml"
_DOCX_STYLES = "word/styles.xml"
_XLSX_MAIN = "xl/workbook.xml"
_XLSX_RELS = "xl/_rels/workbook.xml.rels"
_XLSX_STRINGS = "xl/sharedStrings.xml"
_PPTX_MAIN = "ppt/presentation.xml"
_PPTX_RELS = "ppt/_rels/presentation.xml.rels"
_SHEET_PART = re.compile(r"^xl/worksheets/[^/]+\.xml$")
_SLIDE_PART = re.compile(r"^ppt/slides/slide(\d+)\.xml$")
_HEADING_STYLE = re.compile(r"^heading\s*([1-6])$", re.I)
_SPACES = re.compile(r"[ \t\r\f\v]+")


# -- XML walking ------------------------------------------------------------------------


@functools.lru_cache(maxsize=1024)
def _local(tag: object) -> str:
    """Local name of a ``{namespace}name`` tag (cached: a document uses few distinct tags)."""
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""


def _attr(elem: Element, name: str) -> str | None:
    """Attribute by local name (OOXML transitional and strict use different namespaces)."""
    for key, value in elem.attrib.items():
        if _local(key) == name:
            return value
    return None


def _rel_id(elem: Element) -> str | None:
    """The namespaced ``r:id`` (``p:sldId`` also has a plain numeric ``id``)."""
    for key, value in elem.attrib.items():
        if key.startswith("{") and key.endswith("}id"):
            return value
    return None


def iter_xml(data: bytes, budget: TextBudget) -> Iterator[tuple[str, Element]]:
    """Stream ("start" | "end", element) pairs of one part, counting nodes as they open.

    Finished elements are detached from their parent, so memory stays flat however long the
    part is; consumers read what they need at each element's "end".
    """
    open_elements: list[Element] = []
    try:
        events = iterparse(
            io.BytesIO(data),
            events=("start", "end"),
            forbid_dtd=True,
            forbid_entities=True,
            forbid_external=True,
        )
        for event, elem in events:
            if event == "start":
                budget.add_node()
                open_elements.append(elem)
                yield event, elem
            else:
                yield event, elem
                open_elements.pop()
                if open_elements:
                    open_elements[-1].remove(elem)
    except DefusedXmlException as exc:
        raise malformed("the document declares a DTD or entities", reason="xml_dtd") from exc
    except ParseError as exc:
        raise malformed("the document XML is not well-formed", reason="xml_syntax") from exc


class _Blocks:
    """Text blocks charged against the budget as they are added; rows/items stay tight."""

    def __init__(self, budget: TextBudget) -> None:
        self.budget = budget
        self.items: list[tuple[str, str]] = []

    def add(self, kind: str, text: str, *, charged: bool = False) -> None:
        """``charged``: the characters were already counted while they were read."""
        text = text.strip()
        if not text:
            return
        self.budget.add_chars(2 if charged else len(text) + 2)
        if kind != "heading" and text.startswith("#"):
            text = "\\" + text
        self.items.append((kind, text))

    def text(self) -> str:
        out: list[str] = []
        previous = ""
        for kind, text in self.items:
            if out:
                out.append("\n" if kind == previous and kind in ("row", "item") else "\n\n")
            out.append(text)
            previous = kind
        return "".join(out)


def _clean(text: str) -> str:
    return "\n".join(_SPACES.sub(" ", line).strip() for line in text.split("\n")).strip()


# -- shared parts -------------------------------------------------------------------------


def _core_title(parts: dict[str, bytes], budget: TextBudget) -> str | None:
    data = parts.get(_CORE)
    if data is None:
        return None
    for event, elem in iter_xml(data, budget):
        if event == "end" and _local(elem.tag) == "title":
            title = _clean(elem.text or "").replace("\n", " ")
            return title[:300] or None
    return None


def _relationships(data: bytes | None, base: str, budget: TextBudget) -> dict[str, str]:
    """Internal relationship targets by id, as part names; external ones are dropped."""
    targets: dict[str, str] = {}
    if data is None:
        return targets
    for event, elem in iter_xml(data, budget):
        if event != "end" or _local(elem.tag) != "Relationship":
            continue
        rel_id, target = _attr(elem, "Id"), _attr(elem, "Target")
        if not rel_id or not target or (_attr(elem, "TargetMode") or "").lower() == "external":
            continue
        path = target.lstrip("/") if target.startswith("/") else posixpath.join(base, target)
        targets[rel_id] = posixpath.normpath(path)
    return targets


def _number(name: str) -> int:
    digits = re.findall(r"\d+", name)
    return int(digits[-1]) if digits else 0


def _require(parts: dict[str, bytes], name: str, kind: str) -> bytes:
    data = parts.get(name)
    if data is None:
        raise malformed(f"the {kind.upper()} file has no main document part", reason="missing_part")
    return data


# -- DOCX -------------------------------------------------------------------------------


def _docx_heading_styles(data: bytes | None, budget: TextBudget) -> dict[str, int]:
    levels: dict[str, int] = {}
    if data is None:
        return levels
    style_id: str | None = None
    level: int | None = None
    for event, elem in iter_xml(data, budget):
        name = _local(elem.tag)
        if event == "start" and name == "style":
            style_id, level = _attr(elem, "styleId"), None
        elif event == "end" and name == "name" and style_id is not None:
            label = (_attr(elem, "val") or "").strip()
            match = _HEADING_STYLE.match(label)
            if match:
                level = int(match.group(1))
            elif label.lower() == "title":
                level = 1
        elif event == "end" and name == "outlineLvl" and style_id is not None and level is None:
            level = _outline_level(elem)
        elif event == "end" and name == "style":
            if style_id and level:
                levels[style_id] = level
            style_id = None
    return levels


def _outline_level(elem: Element) -> int | None:
    value = _attr(elem, "val") or ""
    return int(value) + 1 if value.isdigit() and int(value) < 6 else None


@dataclass
class _Paragraph:
    pieces: list[str] = field(default_factory=list)
    level: int | None = None
    is_list: bool = False


@dataclass
class _Shape:
    lines: list[str] = field(default_factory=list)
    is_title: bool = False


def _docx_text(parts: dict[str, bytes], budget: TextBudget) -> str:
    styles = _docx_heading_styles(parts.get(_DOCX_STYLES), budget)
    blocks = _Blocks(budget)
    paragraphs: list[_Paragraph] = []  # text boxes nest paragraphs inside paragraphs
    rows: list[list[str]] = []
    cells: list[list[str]] = []
    skip = 0
    for event, elem in iter_xml(_require(parts, _DOCX_MAIN, "docx"), budget):
        name = _local(elem.tag)
        if name == "Fallback":  # mc:AlternateContent repeats its content for old readers
            skip += 1 if event == "start" else -1
            continue
        if skip:
            continue
        if event == "start":
            if name == "p":
                paragraphs.append(_Paragraph())
            elif name == "tr":
                rows.append([])
            elif name == "tc":
                cells.append([])
            continue
        current = paragraphs[-1] if paragraphs else None
        if name == "t" and current is not None:
            current.pieces.append(elem.text or "")
            budget.add_chars(len(current.pieces[-1]))
        elif name in ("tab", "br", "cr") and current is not None:
            current.pieces.append("\t" if name == "tab" else "\n")
        elif name == "pStyle" and current is not None:
            style = _attr(elem, "val") or ""
            heading = _HEADING_STYLE.match(style)
            level = styles.get(style) or (int(heading.group(1)) if heading else None)
            current.level = level or (1 if style.lower() == "title" else current.level)
        elif name == "outlineLvl" and current is not None and current.level is None:
            current.level = _outline_level(elem)
        elif name == "numPr" and current is not None:
            current.is_list = True
        elif name == "p" and paragraphs:
            paragraph = paragraphs.pop()
            text = _clean("".join(paragraph.pieces))
            if not text:
                continue
            level = paragraph.level
            if cells:
                cells[-1].append(text.replace("\n", " "))
            elif level is not None:
                blocks.add("heading", "#" * level + " " + text.replace("\n", " "), charged=True)
            elif paragraph.is_list:
                blocks.add("item", "- " + text.replace("\n", " "), charged=True)
            else:
                blocks.add("para", text, charged=True)
        elif name == "tc" and cells:
            cell = " ".join(cells.pop())
            if rows:
                rows[-1].append(cell)
        elif name == "tr" and rows:
            row = rows.pop()
            if cells:  # nested table: flatten into the enclosing cell
                cells[-1].append(" ".join(c for c in row if c))
            elif any(row):
                blocks.add("row", " | ".join(row), charged=True)
    return blocks.text()


# -- XLSX -------------------------------------------------------------------------------


def _shared_strings(data: bytes | None, budget: TextBudget) -> list[str]:
    strings: list[str] = []
    if data is None:
        return strings
    stored = 0
    pieces: list[str] = []
    phonetic = 0
    for event, elem in iter_xml(data, budget):
        name = _local(elem.tag)
        if name == "rPh":  # phonetic guide runs are not part of the cell text
            phonetic += 1 if event == "start" else -1
        elif event == "start" and name == "si":
            pieces = []
        elif event == "end" and name == "t" and not phonetic:
            pieces.append(elem.text or "")
        elif event == "end" and name == "si":
            value = "".join(pieces)
            stored += len(value)
            if stored > MAX_TEXT_CHARS:
                too_large("text_chars", f"the workbook holds more than {MAX_TEXT_CHARS} characters")
            strings.append(value)
    return strings


def _sheet_order(parts: dict[str, bytes], budget: TextBudget) -> list[tuple[str, str]]:
    """(name, part) of each worksheet in workbook order; numeric part order as a fallback."""
    targets = _relationships(parts.get(_XLSX_RELS), "xl", budget)
    order: list[tuple[str, str]] = []
    for event, elem in iter_xml(_require(parts, _XLSX_MAIN, "xlsx"), budget):
        if event == "end" and _local(elem.tag) == "sheet":
            part = targets.get(_rel_id(elem) or "")
            if part and part in parts and _SHEET_PART.match(part):
                order.append((_attr(elem, "name") or "", part))
    if not order:
        names = sorted((p for p in parts if _SHEET_PART.match(p)), key=_number)
        order = [(f"Sheet {_number(p)}", p) for p in names]
    return order


def _cell_value(kind: str, value: str, inline: list[str], strings: list[str]) -> str:
    if kind == "s":
        index = int(value) if value.strip().isdigit() else -1
        return strings[index] if 0 <= index < len(strings) else ""
    if kind == "inlineStr":
        return "".join(inline)
    if kind == "b":
        return {"1": "TRUE", "0": "FALSE"}.get(value.strip(), value)
    return value


def _xlsx_text(parts: dict[str, bytes], budget: TextBudget) -> str:
    sheets = _sheet_order(parts, budget)
    strings = _shared_strings(parts.get(_XLSX_STRINGS), budget)
    blocks = _Blocks(budget)
    for sheet_name, part in sheets:
        blocks.add("heading", "## " + (_clean(sheet_name).replace("\n", " ") or "Sheet"))
        row: list[str] = []
        kind, value = "n", ""
        inline: list[str] = []
        for event, elem in iter_xml(parts[part], budget):
            name = _local(elem.tag)
            if event == "start":
                if name == "row":
                    row = []
                elif name == "c":
                    kind, value, inline = _attr(elem, "t") or "n", "", []
                continue
            if name == "v":
                value = elem.text or ""
            elif name == "t":
                inline.append(elem.text or "")
            elif name == "c":
                cell = _clean(_cell_value(kind, value, inline, strings)).replace("\n", " ")
                if cell:
                    budget.add_chars(len(cell) + 3)
                    row.append(cell)
            elif name == "row" and row:
                blocks.add("row", " | ".join(row), charged=True)
    return blocks.text()


# -- PPTX -------------------------------------------------------------------------------


def _slide_order(parts: dict[str, bytes], budget: TextBudget) -> list[str]:
    targets = _relationships(parts.get(_PPTX_RELS), "ppt", budget)
    order: list[str] = []
    for event, elem in iter_xml(_require(parts, _PPTX_MAIN, "pptx"), budget):
        if event == "end" and _local(elem.tag) == "sldId":
            part = targets.get(_rel_id(elem) or "")
            if part and part in parts and _SLIDE_PART.match(part) and part not in order:
                order.append(part)
    if not order:
        order = sorted((p for p in parts if _SLIDE_PART.match(p)), key=_number)
    return order


def _slide_blocks(data: bytes, number: int, blocks: _Blocks, budget: TextBudget) -> str | None:
    title: str | None = None
    body = _Blocks(budget)
    shapes: list[_Shape] = []
    rows: list[list[str]] = []
    cells: list[list[str]] = []
    paragraph: list[str] | None = None
    for event, elem in iter_xml(data, budget):
        name = _local(elem.tag)
        if event == "start":
            if name == "sp":
                shapes.append(_Shape())
            elif name == "p":
                paragraph = []
            elif name == "tr":
                rows.append([])
            elif name == "tc":
                cells.append([])
            continue
        if name == "ph" and shapes:
            shapes[-1].is_title = (_attr(elem, "type") or "") in ("title", "ctrTitle")
        elif name == "t" and paragraph is not None:
            paragraph.append(elem.text or "")
            budget.add_chars(len(paragraph[-1]))
        elif name == "br" and paragraph is not None:
            paragraph.append("\n")
        elif name == "p" and paragraph is not None:
            text = _clean("".join(paragraph))
            paragraph = None
            if not text:
                continue
            if cells:
                cells[-1].append(text.replace("\n", " "))
            elif shapes:
                shapes[-1].lines.append(text)
            else:
                body.add("para", text, charged=True)
        elif name == "tc" and cells:
            cell = " ".join(cells.pop())
            if rows:
                rows[-1].append(cell)
        elif name == "tr" and rows:
            row = rows.pop()
            if any(row):
                body.add("row", " | ".join(row), charged=True)
        elif name == "sp" and shapes:
            shape = shapes.pop()
            text = "\n".join(shape.lines)
            if shape.is_title and title is None:
                title = text.replace("\n", " ")
            else:
                body.add("para", text, charged=True)
    blocks.add("heading", "## " + (title or f"Slide {number}"))
    blocks.items.extend(body.items)  # already charged against the budget
    return title


def _pptx_text(parts: dict[str, bytes], budget: TextBudget) -> tuple[str, str | None, int]:
    blocks = _Blocks(budget)
    first_title: str | None = None
    slides = _slide_order(parts, budget)
    for number, part in enumerate(slides, start=1):
        title = _slide_blocks(parts[part], number, blocks, budget)
        first_title = first_title or title
    return blocks.text(), first_title, len(slides)


# -- entry points -------------------------------------------------------------------------


def _wanted(kind: str) -> Callable[[str], bool]:
    if kind == "docx":
        fixed = {_DOCX_MAIN, _DOCX_STYLES, _CORE}
        return fixed.__contains__
    if kind == "xlsx":
        fixed = {_XLSX_MAIN, _XLSX_RELS, _XLSX_STRINGS, _CORE}
        return lambda name: name in fixed or bool(_SHEET_PART.match(name))
    fixed = {_PPTX_MAIN, _PPTX_RELS, _CORE}
    return lambda name: name in fixed or bool(_SLIDE_PART.match(name))


def extract_ooxml(data: bytes, kind: str) -> Extracted:
    """Text of a DOCX, XLSX or PPTX package (``kind``), within every archive and XML limit."""
    if kind not in ("docx", "xlsx", "pptx"):
        raise SourceFailure(Code.UNSUPPORTED_TYPE, "not an Office Open XML kind")
    parts = read_archive(data, _wanted(kind))
    budget = TextBudget()
    title = _core_title(parts, budget)
    pages: int | None = None
    if kind == "docx":
        text = _docx_text(parts, budget)
    elif kind == "xlsx":
        text = _xlsx_text(parts, budget)
    else:
        text, slide_title, pages = _pptx_text(parts, budget)
        title = title or slide_title
    return Extracted(text=text, title=title, kind=kind, pages=pages)
