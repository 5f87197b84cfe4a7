"""DOCX/XLSX/PPTX: clean packages read their text parts; hostile packages fail typed,
within bounded time and memory, without opening files or sockets."""

from __future__ import annotations

import io
import os
import zipfile
import zlib
from collections.abc import Callable
from pathlib import Path

import pytest

from knowledge.errors import Code
from knowledge.extract import Extracted, extract_bytes
from knowledge.extract.limits import MAX_ARCHIVE_ENTRIES, MAX_TEXT_CHARS, MAX_XML_NODES

from .hostile import (
    DECL,
    MB,
    RawEntry,
    audited,
    build_zip,
    core_xml,
    deflate,
    deflated_zeros,
    docx,
    docx_document,
    docx_parts,
    entry,
    expect_failure,
    office_zip,
    presentation,
    rels,
    shared_strings,
    sheet_xml,
    slide_xml,
    w_para,
    workbook,
)

W_NS = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'


def _docx(data: bytes) -> Callable[[], Extracted]:
    return lambda: extract_bytes(data, filename="upload.docx")


def _raw_docx(*extra: RawEntry, document: bytes | None = None, stored: bool = False) -> bytes:
    """A docx assembled by hand: the usual parts, then ``extra`` entries."""
    parts = docx_parts(w_para("Hello"))
    if document is not None:
        parts["word/document.xml"] = document
    entries = [entry(name, content, stored=stored) for name, content in parts.items()]
    return build_zip(entries + list(extra))


# -- clean baselines ------------------------------------------------------------------------


def test_docx_text_headings_lists_tables_and_title() -> None:
    styles = (
        DECL + f'<w:styles {W_NS}><w:style w:type="paragraph" w:styleId="Berschrift2">'
        '<w:name w:val="heading 2"/></w:style></w:styles>'
    ).encode()
    body = (
        w_para("Refund policy", "Heading1")
        + w_para("Customers may ask for a refund within 14 days.")
        + w_para("Localized heading", "Berschrift2")
        + w_para("first step", numbered=True)
        + w_para("second step", numbered=True)
        + "<w:tbl><w:tr><w:tc>" + w_para("Plan") + "</w:tc><w:tc>" + w_para("Days") + "</w:tc></w:tr>"
        + "<w:tr><w:tc>" + w_para("Basic") + "</w:tc><w:tc>" + w_para("14") + "</w:tc></w:tr></w:tbl>"
        + '<w:p><w:r><w:t>Tab</w:t><w:tab/><w:t>bed</w:t><w:br/><w:t>next line</w:t>'
        + "<w:delText>deleted words</w:delText><w:instrText>HYPERLINK</w:instrText></w:r></w:p>"
        + '<w:p><w:r><mc:AlternateContent xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006">'
        + "<mc:Choice><w:txbxContent>" + w_para("Box text") + "</w:txbxContent></mc:Choice>"
        + "<mc:Fallback><w:txbxContent>" + w_para("Box text") + "</w:txbxContent></mc:Fallback>"
        + "</mc:AlternateContent></w:r></w:p>"
        + w_para("#1 customer promise")
    )  # fmt: skip
    data = docx(body, {"word/styles.xml": styles, "docProps/core.xml": core_xml("Policies")})
    result = extract_bytes(data, filename="policy.docx")
    assert result.kind == "docx"
    assert result.title == "Policies"
    assert result.text.split("\n") == [
        "# Refund policy",
        "",
        "Customers may ask for a refund within 14 days.",
        "",
        "## Localized heading",
        "",
        "- first step",
        "- second step",
        "",
        "Plan | Days",
        "Basic | 14",
        "",
        "Tab bed",
        "next line",
        "",
        "Box text",
        "",
        "\\#1 customer promise",
    ]


def test_xlsx_sheets_in_workbook_order_with_shared_and_inline_strings() -> None:
    parts = {
        "xl/workbook.xml": workbook([("Prices", "rId2"), ("Notes", "rId1")]),
        "xl/_rels/workbook.xml.rels": rels(
            {"rId1": "worksheets/sheet1.xml", "rId2": "/xl/worksheets/sheet2.xml"},
            external={"rId9": "https://example.com/remote.xlsx"},
        ),
        "xl/sharedStrings.xml": shared_strings(["Plan", "Price", "Basic", "Remember to renew"]),
        "xl/worksheets/sheet1.xml": sheet_xml([["s:3"], ["i:inline note", "b:1"]]),
        "xl/worksheets/sheet2.xml": sheet_xml([["s:0", "s:1"], ["s:2", "9.5"], ["s:99"]]),
        "docProps/core.xml": core_xml("Price list"),
    }
    result = extract_bytes(office_zip(parts), filename="prices.xlsx")
    assert result.kind == "xlsx"
    assert result.title == "Price list"
    assert result.text == (
        "## Prices\n\nPlan | Price\nBasic | 9.5\n\n## Notes\n\nRemember to renew\ninline note | TRUE"
    )


def test_pptx_slides_in_presentation_order_with_titles_and_tables() -> None:
    parts = {
        "ppt/presentation.xml": presentation(["rId3", "rId2"]),
        "ppt/_rels/presentation.xml.rels": rels(
            {"rId2": "slides/slide1.xml", "rId3": "slides/slide2.xml"},
            external={"rId7": "http://127.0.0.1:9/never-fetched"},
        ),
        "ppt/slides/slide1.xml": slide_xml(None, ["Closing words"]),
        "ppt/slides/slide2.xml": slide_xml("Welcome", ["First point", "Second point"], [["A", "B"], ["1", "2"]]),
        "ppt/notesSlides/notesSlide1.xml": slide_xml(None, ["speaker notes"]),
    }
    result = extract_bytes(office_zip(parts), filename="deck.pptx")
    assert result.kind == "pptx"
    assert result.pages == 2
    assert result.title == "Welcome"
    assert result.text == (
        "## Welcome\n\nFirst point\nSecond point\n\nA | B\n1 | 2\n\n## Slide 2\n\nClosing words"
    )


def test_pptx_without_presentation_order_falls_back_to_slide_numbers() -> None:
    parts = {
        "ppt/presentation.xml": presentation([]),
        "ppt/slides/slide10.xml": slide_xml("Ten", []),
        "ppt/slides/slide2.xml": slide_xml("Two", []),
    }
    result = extract_bytes(office_zip(parts), filename="deck.pptx")
    assert result.text == "## Two\n\n## Ten"


@pytest.mark.timeout(20)
def test_macros_embedded_objects_and_external_relationships_are_never_opened(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-MARKER")
    document_rels = rels(
        {"rId5": "embeddings/oleObject1.bin", "rId6": "vbaProject.bin"},
        external={"rId7": "http://127.0.0.1:9/x.png", "rId8": secret.as_uri()},
    )
    data = docx(
        w_para("Visible text"),
        {
            "word/_rels/document.xml.rels": document_rels,
            "word/vbaProject.bin": b"\xd0\xcf\x11\xe0" + b"Attribute VB_Name" * 10,
            "word/embeddings/oleObject1.bin": b"\xd0\xcf\x11\xe0" + bytes(100),
        },
    )
    with audited() as events:
        result = extract_bytes(data, filename="macro.docx")
    assert result.text == "Visible text"
    assert not [e for e in events if e[0] != "open"], events
    assert not [e for e in events if e[0] == "open" and "secret" in str(e[1][0])], events


def test_exactly_the_entry_limit_is_accepted() -> None:
    padding = [entry(f"customXml/item{i}.xml", b"<a/>", stored=True) for i in range(MAX_ARCHIVE_ENTRIES - 3)]
    data = _raw_docx(*padding)
    assert len(zipfile.ZipFile(io.BytesIO(data)).infolist()) == MAX_ARCHIVE_ENTRIES
    assert extract_bytes(data, filename="a.docx").text == "Hello"


# -- archive limits ---------------------------------------------------------------------------


@pytest.mark.timeout(20)
@pytest.mark.parametrize(
    "lie",
    [
        {"file_size": 1024},  # claims a small part
        {"file_size": 1024, "compress_size": 0x7FFF0000},  # and a huge compressed size
        {"file_size": 0, "compress_size": 0},  # claims an empty part
    ],
)
def test_zip_bomb_with_lying_headers_is_stopped_while_inflating(lie: dict[str, int]) -> None:
    payload, crc = deflated_zeros(64 * MB)
    bomb = RawEntry("word/document.xml", payload, zipfile.ZIP_DEFLATED, crc, len(payload), 64 * MB)
    for key, value in lie.items():
        setattr(bomb, key, value)
    parts = docx_parts(w_para("x"))
    del parts["word/document.xml"]
    data = build_zip([entry(n, c) for n, c in parts.items()] + [bomb])
    failure = expect_failure(Code.EXPANDED_TOO_LARGE, _docx(data))
    assert failure.details["limit"] == "compression_ratio"


@pytest.mark.timeout(20)
def test_single_entry_over_100_to_1_is_rejected() -> None:
    data = _raw_docx(entry("word/media/blank.bin", bytes(MB)))
    failure = expect_failure(Code.EXPANDED_TOO_LARGE, _docx(data))
    assert failure.details["limit"] == "compression_ratio"


@pytest.mark.timeout(20)
def test_many_small_high_ratio_entries_trip_the_overall_ratio() -> None:
    small = [entry(f"word/media/z{i}.bin", bytes(60 * 1024)) for i in range(40)]  # each under the grace
    failure = expect_failure(Code.EXPANDED_TOO_LARGE, _docx(_raw_docx(*small)))
    assert failure.details["limit"] == "compression_ratio"


@pytest.mark.timeout(60)
def test_more_than_32_mb_expanded_is_rejected_even_at_a_modest_ratio() -> None:
    # one bit of entropy a byte: compresses about 7:1, far under the ratio limit
    block = os.urandom(MB).translate(bytes(ord("a") + (i & 1) for i in range(256)))
    packed = deflate(block, level=1)
    assert len(block) < 20 * len(packed)
    crc = zlib.crc32(block)
    big = [
        RawEntry(f"word/media/part{i}.bin", packed, zipfile.ZIP_DEFLATED, crc, len(packed), MB)
        for i in range(34)
    ]
    data = _raw_docx(*big)
    assert len(data) < 8 * MB
    failure = expect_failure(Code.EXPANDED_TOO_LARGE, _docx(data))
    assert failure.details["limit"] == "expanded_bytes"


@pytest.mark.timeout(20)
@pytest.mark.parametrize("count", [MAX_ARCHIVE_ENTRIES + 1, 10_000])
def test_too_many_entries(count: int) -> None:
    data = _raw_docx(*[entry(f"customXml/item{i}.xml", b"", stored=True) for i in range(count)])
    failure = expect_failure(Code.EXPANDED_TOO_LARGE, _docx(data))
    assert failure.details["limit"] == "archive_entries"


@pytest.mark.timeout(20)
def test_entry_count_is_taken_from_the_directory_not_the_end_record() -> None:
    items = [entry(name, content) for name, content in docx_parts(w_para("Hello")).items()]
    items += [entry(f"customXml/item{i}.xml", b"", stored=True) for i in range(MAX_ARCHIVE_ENTRIES)]
    data = build_zip(items, declared_entries=3)
    failure = expect_failure(Code.EXPANDED_TOO_LARGE, _docx(data))
    assert failure.details["limit"] == "archive_entries"


# -- malformed archives ---------------------------------------------------------------------


@pytest.mark.timeout(20)
@pytest.mark.parametrize(
    "data",
    [
        b"PK\x03\x04" + b"definitely not a zip" * 20,
        b"PK\x03\x04",
        docx(w_para("Hello"))[:-30],  # truncated end of central directory
    ],
)
def test_not_a_zip_is_malformed(data: bytes) -> None:
    expect_failure(Code.MALFORMED_FILE, _docx(data))


@pytest.mark.timeout(20)
def test_truncated_entry_data_is_malformed() -> None:
    honest = entry("word/document.xml", docx_document(w_para("Hello " * 2000)))
    data = build_zip([RawEntry(honest.name, honest.payload[:50], honest.method, honest.crc, 50, honest.file_size)])
    expect_failure(Code.MALFORMED_FILE, _docx(data))


@pytest.mark.timeout(20)
def test_size_or_crc_mismatch_is_malformed() -> None:
    document = docx_document(w_para("Hello"))
    for field, value in (("crc", 1234), ("file_size", len(document) + 1)):
        bad = entry("word/document.xml", document)
        setattr(bad, field, value)
        failure = expect_failure(Code.MALFORMED_FILE, _docx(build_zip([bad])))
        assert failure.details["reason"] == "size_or_crc_mismatch"


@pytest.mark.timeout(20)
def test_encrypted_entries_unsupported_methods_and_duplicates_are_malformed() -> None:
    document = docx_document(w_para("Hello"))
    encrypted = entry("word/document.xml", document, flags=0x1)
    bzip2 = entry("word/document.xml", document, method=12)
    duplicate = [entry("word/document.xml", document), entry("word/document.xml", document)]
    for entries, reason in (([encrypted], "encrypted_entry"), ([bzip2], "method"), (duplicate, "duplicate_entry")):
        failure = expect_failure(Code.MALFORMED_FILE, _docx(build_zip(entries)))
        assert failure.details["reason"] == reason


@pytest.mark.timeout(20)
def test_overlapping_entries_are_malformed() -> None:
    document = docx_document(w_para("Hello " * 100))
    first = entry("word/document.xml", document)
    copies = [entry(f"word/copy{i}.xml", document, offset_override=0) for i in range(5)]
    failure = expect_failure(Code.MALFORMED_FILE, _docx(build_zip([first, *copies])))
    assert failure.details["reason"] in ("overlapping_entries", "bad_local_header")


def test_missing_main_part_is_malformed() -> None:
    data = office_zip({"word/other.xml": docx_document(w_para("x"))})
    failure = expect_failure(Code.MALFORMED_FILE, _docx(data))
    assert failure.details["reason"] == "missing_part"
    expect_failure(Code.MALFORMED_FILE, lambda: extract_bytes(data, filename="a.xlsx"))
    expect_failure(Code.MALFORMED_FILE, lambda: extract_bytes(data, filename="a.pptx"))


@pytest.mark.timeout(20)
def test_bad_xml_is_malformed() -> None:
    data = docx("<w:p><w:r><w:t>unclosed</w:r></w:p>")
    failure = expect_failure(Code.MALFORMED_FILE, _docx(data))
    assert failure.details["reason"] == "xml_syntax"


# -- XML attacks and XML limits ---------------------------------------------------------------

BILLION_LAUGHS = (
    '<?xml version="1.0"?>\n<!DOCTYPE lolz [\n<!ENTITY lol "lol">\n'
    + "".join(
        f'<!ENTITY lol{i} "{("&lol" + (str(i - 1) if i > 1 else "") + ";") * 10}">\n' for i in range(1, 10)
    )
    + f']>\n<w:document {W_NS}><w:body><w:p><w:r><w:t>&lol9;</w:t></w:r></w:p></w:body></w:document>'
)


@pytest.mark.timeout(20)
@pytest.mark.parametrize("part", ["word/document.xml", "docProps/core.xml", "word/styles.xml"])
def test_billion_laughs_is_malformed(part: str) -> None:
    parts = docx_parts(w_para("Hello"))
    parts[part] = BILLION_LAUGHS.encode()
    failure = expect_failure(Code.MALFORMED_FILE, _docx(office_zip(parts)), max_mb=16)
    assert failure.details["reason"] == "xml_dtd"


@pytest.mark.timeout(20)
@pytest.mark.parametrize(
    "doctype",
    [
        '<!DOCTYPE d [<!ENTITY xxe SYSTEM "{file}">]>',
        '<!DOCTYPE d [<!ENTITY xxe SYSTEM "http://127.0.0.1:9/xxe">]>',
        '<!DOCTYPE d [<!ENTITY % remote SYSTEM "http://127.0.0.1:9/evil.dtd"> %remote;]>',
        '<!DOCTYPE d SYSTEM "http://127.0.0.1:9/evil.dtd">',
    ],
)
def test_external_entities_are_never_resolved(tmp_path: Path, doctype: str) -> None:
    secret = tmp_path / "passwd"
    secret.write_text("root:x:0:0:SECRET-MARKER")
    document = (
        '<?xml version="1.0"?>\n' + doctype.format(file=secret.as_uri())
        + f"\n<w:document {W_NS}><w:body><w:p><w:r><w:t>&xxe;</w:t></w:r></w:p></w:body></w:document>"
    )  # fmt: skip
    parts = docx_parts("")
    parts["word/document.xml"] = document.encode()
    data = office_zip(parts)
    with audited() as events:
        failure = expect_failure(Code.MALFORMED_FILE, _docx(data))
    assert failure.details["reason"] == "xml_dtd"
    assert "SECRET" not in failure.message
    assert not [e for e in events if e[0] != "open"], events  # no socket, URL request or process
    assert not [e for e in events if e[0] == "open" and "passwd" in str(e[1][0])], events


@pytest.mark.timeout(30)
def test_too_many_xml_nodes() -> None:
    runs = "<w:r/>" * (MAX_XML_NODES + 1)
    document = docx_document(f"<w:p>{runs}</w:p>")
    data = _raw_docx(document=document, stored=True)  # stored: the ratio check must not fire first
    failure = expect_failure(Code.EXPANDED_TOO_LARGE, _docx(data))
    assert failure.details["limit"] == "xml_nodes"


@pytest.mark.timeout(30)
def test_too_much_docx_text_even_in_one_paragraph() -> None:
    document = docx_document(w_para("a" * (MAX_TEXT_CHARS + 1)))
    failure = expect_failure(Code.EXPANDED_TOO_LARGE, _docx(_raw_docx(document=document, stored=True)))
    assert failure.details["limit"] == "text_chars"
    assert "aaaa" not in failure.message


@pytest.mark.timeout(30)
def test_too_much_xlsx_text_from_repeated_shared_strings() -> None:
    parts = {
        "xl/workbook.xml": workbook([("S", "rId1")]),
        "xl/_rels/workbook.xml.rels": rels({"rId1": "worksheets/sheet1.xml"}),
        "xl/sharedStrings.xml": shared_strings(["x" * 10_000]),
        "xl/worksheets/sheet1.xml": sheet_xml([["s:0"] * 60]),  # one row, 600,000 characters
    }
    data = office_zip(parts, stored=True)
    failure = expect_failure(Code.EXPANDED_TOO_LARGE, lambda: extract_bytes(data, filename="a.xlsx"))
    assert failure.details["limit"] == "text_chars"


@pytest.mark.timeout(30)
def test_too_much_pptx_text() -> None:
    parts = {
        "ppt/presentation.xml": presentation([]),
        **{f"ppt/slides/slide{i}.xml": slide_xml(None, ["y" * 60_000]) for i in range(1, 10)},
    }
    data = office_zip(parts, stored=True)
    failure = expect_failure(Code.EXPANDED_TOO_LARGE, lambda: extract_bytes(data, filename="a.pptx"))
    assert failure.details["limit"] == "text_chars"
