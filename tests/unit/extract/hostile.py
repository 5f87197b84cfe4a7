"""Builders for clean and hostile documents, generated in code (no committed binaries).

ZIP archives are assembled byte by byte so that header fields can say anything at all;
PDFs are written by hand with a correct cross-reference table so they can then be broken
in precise ways.
"""

from __future__ import annotations

import contextlib
import io
import struct
import sys
import tracemalloc
import zipfile
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from knowledge.errors import SourceFailure

MB = 1024 * 1024

# -- measuring ----------------------------------------------------------------------------


def expect_failure(code: str, call: Callable[[], object], *, max_mb: int = 64) -> SourceFailure:
    """Run ``call``; it must raise ``SourceFailure(code)`` with peak traced memory < ``max_mb``."""
    tracemalloc.start()
    tracemalloc.reset_peak()
    try:
        with pytest.raises(SourceFailure) as caught:
            call()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert caught.value.code == code, (caught.value.code, caught.value.message, caught.value.details)
    assert peak < max_mb * MB, f"peak traced memory {peak / MB:.1f} MB"
    return caught.value


_AUDIT_LOG: list[tuple[str, tuple[Any, ...]]] | None = None
_AUDIT_INSTALLED = False
_WATCHED_EVENTS = frozenset({"open", "socket.connect", "socket.getaddrinfo", "urllib.Request", "subprocess.Popen"})


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if _AUDIT_LOG is not None and event in _WATCHED_EVENTS:
        _AUDIT_LOG.append((event, args))


@contextlib.contextmanager
def audited() -> Iterator[list[tuple[str, tuple[Any, ...]]]]:
    """Record file opens, network connections, URL requests and subprocesses in the block."""
    global _AUDIT_LOG, _AUDIT_INSTALLED
    if not _AUDIT_INSTALLED:
        sys.addaudithook(_audit)  # audit hooks cannot be removed; it is inert outside the block
        _AUDIT_INSTALLED = True
    log: list[tuple[str, tuple[Any, ...]]] = []
    _AUDIT_LOG = log
    try:
        yield log
    finally:
        _AUDIT_LOG = None


# -- ZIP by hand -------------------------------------------------------------------------


@dataclass
class RawEntry:
    """One archive member: ``payload`` is written as is; every header field may lie."""

    name: str
    payload: bytes
    method: int
    crc: int
    compress_size: int
    file_size: int
    flags: int = 0
    offset_override: int | None = None  # point the central header somewhere else


def deflate(data: bytes, level: int = 9) -> bytes:
    packer = zlib.compressobj(level, zlib.DEFLATED, -zlib.MAX_WBITS)
    return packer.compress(data) + packer.flush()


def deflated_zeros(total: int, chunk: int = MB, *, zlib_header: bool = False) -> tuple[bytes, int]:
    """DEFLATE of ``total`` zero bytes without ever holding them; returns (data, crc).

    Raw DEFLATE (as in ZIP) unless ``zlib_header`` (as in a PDF ``/FlateDecode`` stream)."""
    packer = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS if zlib_header else -zlib.MAX_WBITS)
    block = bytes(chunk)
    out: list[bytes] = []
    crc = 0
    left = total
    while left:
        piece = block if left >= chunk else bytes(left)
        out.append(packer.compress(piece))
        crc = zlib.crc32(piece, crc)
        left -= len(piece)
    out.append(packer.flush())
    return b"".join(out), crc


def entry(name: str, content: bytes, *, stored: bool = False, **lies: int) -> RawEntry:
    """An honest entry (deflated unless ``stored``); keyword arguments overwrite header fields."""
    payload = content if stored else deflate(content)
    raw = RawEntry(
        name=name,
        payload=payload,
        method=zipfile.ZIP_STORED if stored else zipfile.ZIP_DEFLATED,
        crc=zlib.crc32(content),
        compress_size=len(payload),
        file_size=len(content),
    )
    for key, value in lies.items():
        setattr(raw, key, value)
    return raw


def build_zip(entries: list[RawEntry], *, declared_entries: int | None = None) -> bytes:
    """Local headers, data, central directory and end record; ``declared_entries`` lies in
    the end record about how many entries there are."""
    out = io.BytesIO()
    offsets: list[int] = []
    for item in entries:
        name = item.name.encode()
        offsets.append(out.tell())
        out.write(
            struct.pack(
                "<4sHHHHHIIIHH",
                b"PK\x03\x04",
                20,
                item.flags,
                item.method,
                0,
                0x21,
                item.crc,
                item.compress_size,
                item.file_size,
                len(name),
                0,
            )
        )
        out.write(name)
        out.write(item.payload)
    directory_start = out.tell()
    for item, offset in zip(entries, offsets, strict=True):
        name = item.name.encode()
        out.write(
            struct.pack(
                "<4sHHHHHHIIIHHHHHII",
                b"PK\x01\x02",
                20,
                20,
                item.flags,
                item.method,
                0,
                0x21,
                item.crc,
                item.compress_size,
                item.file_size,
                len(name),
                0,
                0,
                0,
                0,
                0,
                offset if item.offset_override is None else item.offset_override,
            )
        )
        out.write(name)
    directory_size = out.tell() - directory_start
    count = min(len(entries), 0xFFFF) if declared_entries is None else declared_entries
    out.write(struct.pack("<4sHHHHIIH", b"PK\x05\x06", 0, 0, count, count, directory_size, directory_start, 0))
    return out.getvalue()


# -- Office Open XML ----------------------------------------------------------------------

W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
R = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
S = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
P = "http://schemas.openxmlformats.org/presentationml/2006/main"
A = "http://schemas.openxmlformats.org/drawingml/2006/main"
PKG_RELS = "http://schemas.openxmlformats.org/package/2006/relationships"
DECL = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'


def core_xml(title: str) -> bytes:
    return (
        DECL + '<cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/'
        'metadata/core-properties" xmlns:dc="http://purl.org/dc/elements/1.1/">'
        f"<dc:title>{title}</dc:title></cp:coreProperties>"
    ).encode()


def docx_document(body: str) -> bytes:
    return (DECL + f'<w:document xmlns:w="{W}" xmlns:r="{R}"><w:body>{body}</w:body></w:document>').encode()


def w_para(text: str, style: str | None = None, *, numbered: bool = False) -> str:
    props = ""
    if style or numbered:
        props = "<w:pPr>"
        props += f'<w:pStyle w:val="{style}"/>' if style else ""
        props += '<w:numPr><w:ilvl w:val="0"/><w:numId w:val="1"/></w:numPr>' if numbered else ""
        props += "</w:pPr>"
    return f"<w:p>{props}<w:r><w:t xml:space=\"preserve\">{text}</w:t></w:r></w:p>"


def office_zip(parts: dict[str, bytes], *, stored: bool = False) -> bytes:
    """A package written by :mod:`zipfile` itself (honest headers)."""
    out = io.BytesIO()
    method = zipfile.ZIP_STORED if stored else zipfile.ZIP_DEFLATED
    with zipfile.ZipFile(out, "w", method) as archive:
        for name, content in parts.items():
            archive.writestr(name, content)
    return out.getvalue()


def docx_parts(body: str, extra: dict[str, bytes] | None = None) -> dict[str, bytes]:
    parts = {
        "[Content_Types].xml": (DECL + '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>').encode(),
        "_rels/.rels": (
            DECL + f'<Relationships xmlns="{PKG_RELS}"><Relationship Id="rId1" '
            'Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" '
            'Target="word/document.xml"/></Relationships>'
        ).encode(),
        "word/document.xml": docx_document(body),
    }
    parts.update(extra or {})
    return parts


def docx(body: str, extra: dict[str, bytes] | None = None) -> bytes:
    return office_zip(docx_parts(body, extra))


def rels(targets: dict[str, str], *, external: dict[str, str] | None = None) -> bytes:
    items = "".join(f'<Relationship Id="{rid}" Type="x" Target="{target}"/>' for rid, target in targets.items())
    items += "".join(
        f'<Relationship Id="{rid}" Type="x" Target="{target}" TargetMode="External"/>'
        for rid, target in (external or {}).items()
    )
    return (DECL + f'<Relationships xmlns="{PKG_RELS}">{items}</Relationships>').encode()


def sheet_xml(rows: list[list[str]]) -> bytes:
    """Cells: ``s:N`` shared string, ``i:text`` inline string, ``b:1`` boolean, else a number."""
    out = []
    for r, row in enumerate(rows, start=1):
        cells = []
        for cell in row:
            kind, _, value = cell.partition(":") if ":" in cell else ("n", "", cell)
            if kind == "s":
                cells.append(f'<c t="s"><v>{value}</v></c>')
            elif kind == "i":
                cells.append(f'<c t="inlineStr"><is><t>{value}</t></is></c>')
            elif kind == "b":
                cells.append(f'<c t="b"><v>{value}</v></c>')
            else:
                cells.append(f"<c><v>{value}</v></c>")
        out.append(f'<row r="{r}">{"".join(cells)}</row>')
    return (DECL + f'<worksheet xmlns="{S}"><sheetData>{"".join(out)}</sheetData></worksheet>').encode()


def shared_strings(values: list[str]) -> bytes:
    items = "".join(f"<si><t>{v}</t></si>" for v in values)
    return (DECL + f'<sst xmlns="{S}" count="{len(values)}">{items}</sst>').encode()


def workbook(sheets: list[tuple[str, str]]) -> bytes:
    items = "".join(f'<sheet name="{name}" sheetId="{i}" r:id="{rid}"/>' for i, (name, rid) in enumerate(sheets, 1))
    return (DECL + f'<workbook xmlns="{S}" xmlns:r="{R}"><sheets>{items}</sheets></workbook>').encode()


def slide_xml(title: str | None, paragraphs: list[str], table: list[list[str]] | None = None) -> bytes:
    shapes = ""
    if title is not None:
        shapes += (
            '<p:sp><p:nvSpPr><p:cNvPr id="2" name="Title"/><p:cNvSpPr/><p:nvPr><p:ph type="title"/>'
            f"</p:nvPr></p:nvSpPr><p:txBody><a:p><a:r><a:t>{title}</a:t></a:r></a:p></p:txBody></p:sp>"
        )
    body = "".join(f"<a:p><a:r><a:t>{text}</a:t></a:r></a:p>" for text in paragraphs)
    shapes += f'<p:sp><p:nvSpPr><p:cNvPr id="3" name="Body"/></p:nvSpPr><p:txBody>{body}</p:txBody></p:sp>'
    if table:
        cell = "<a:tc><a:txBody><a:p><a:r><a:t>{}</a:t></a:r></a:p></a:txBody></a:tc>"
        rows = "".join("<a:tr>" + "".join(cell.format(c) for c in row) + "</a:tr>" for row in table)
        shapes += (
            "<p:graphicFrame><a:graphic><a:graphicData>"
            f"<a:tbl>{rows}</a:tbl></a:graphicData></a:graphic></p:graphicFrame>"
        )
    tree = f"<p:cSld><p:spTree>{shapes}</p:spTree></p:cSld>"
    return (DECL + f'<p:sld xmlns:p="{P}" xmlns:a="{A}" xmlns:r="{R}">{tree}</p:sld>').encode()


def presentation(slide_rids: list[str]) -> bytes:
    items = "".join(f'<p:sldId id="{256 + i}" r:id="{rid}"/>' for i, rid in enumerate(slide_rids))
    listing = f"<p:sldIdLst>{items}</p:sldIdLst>"
    return (DECL + f'<p:presentation xmlns:p="{P}" xmlns:r="{R}">{listing}</p:presentation>').encode()


# -- PDF by hand -------------------------------------------------------------------------


def _pdf_string(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def build_pdf(
    page_texts: list[str],
    *,
    title: str | None = None,
    declared_count: int | None = None,
    contents: dict[int, bytes] | None = None,
) -> bytes:
    """A valid PDF with one Helvetica text line per page and a correct xref table.

    ``contents`` replaces the (already encoded, with its dictionary entries) content stream
    of the given page indexes: ``{0: b"<< /Filter /FlateDecode /Length 9 >>\\nstream..."}``.
    """
    count = len(page_texts)
    first_page = 4
    info_number = first_page + 2 * count
    objects: dict[int, bytes] = {
        1: b"<< /Type /Catalog /Pages 2 0 R >>",
        2: (
            "<< /Type /Pages /Kids ["
            + " ".join(f"{first_page + 2 * i} 0 R" for i in range(count))
            + f"] /Count {count if declared_count is None else declared_count} >>"
        ).encode(),
        3: b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
    }
    for index, text in enumerate(page_texts):
        page_number = first_page + 2 * index
        objects[page_number] = (
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            f"/Resources << /Font << /F1 3 0 R >> >> /Contents {page_number + 1} 0 R >>"
        ).encode()
        if contents and index in contents:
            objects[page_number + 1] = contents[index]
        else:
            stream = f"BT /F1 12 Tf 72 720 Td ({_pdf_string(text)}) Tj ET".encode("latin-1")
            objects[page_number + 1] = (
                b"<< /Length " + str(len(stream)).encode() + b" >>\nstream\n" + stream + b"\nendstream"
            )
    if title is not None:
        objects[info_number] = f"<< /Title ({_pdf_string(title)}) >>".encode("latin-1")

    out = io.BytesIO()
    out.write(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets: dict[int, int] = {}
    for number in sorted(objects):
        offsets[number] = out.tell()
        out.write(f"{number} 0 obj\n".encode() + objects[number] + b"\nendobj\n")
    size = max(objects) + 1
    xref_at = out.tell()
    out.write(f"xref\n0 {size}\n".encode())
    out.write(b"0000000000 65535 f \n")
    for number in range(1, size):
        if number in offsets:
            out.write(f"{offsets[number]:010d} 00000 n \n".encode())
        else:
            out.write(b"0000000000 65535 f \n")
    info = f" /Info {info_number} 0 R" if title is not None else ""
    out.write(f"trailer\n<< /Size {size} /Root 1 0 R{info} >>\nstartxref\n{xref_at}\n%%EOF\n".encode())
    return out.getvalue()


def flate_stream(compressed: bytes) -> bytes:
    return (
        b"<< /Filter /FlateDecode /Length "
        + str(len(compressed)).encode()
        + b" >>\nstream\n"
        + compressed
        + b"\nendstream"
    )


def encrypted_pdf(user_password: str, algorithm: str = "AES-256") -> bytes:
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(build_pdf(["Secret quarterly numbers"]))))
    writer.encrypt(user_password=user_password, owner_password="owner-secret", algorithm=algorithm)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()
