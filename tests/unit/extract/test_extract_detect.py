"""Type detection: declared by name and/or content type, confirmed by the first bytes."""

from __future__ import annotations

import pytest

from knowledge.errors import Code, SourceFailure
from knowledge.extract import detect_kind

PDF = b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n"
ZIP = b"PK\x03\x04\x14\x00\x00\x00"
OLE = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(24)
HTML = b"<!doctype html><html><body>hi</body></html>"
DOCX_CT = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"


@pytest.mark.parametrize(
    ("filename", "content_type", "head", "kind"),
    [
        ("report.pdf", None, PDF, "pdf"),
        ("REPORT.PDF", None, PDF, "pdf"),
        (None, "application/pdf", PDF, "pdf"),
        (None, None, PDF, "pdf"),
        ("scan.pdf", None, b"\xef\xbb\xbf\r\n" + PDF, "pdf"),
        ("notes.docx", None, ZIP, "docx"),
        (None, DOCX_CT, ZIP, "docx"),
        ("sheet.xlsx", "application/octet-stream", ZIP, "xlsx"),
        ("deck.pptx", None, ZIP, "pptx"),
        ("page.html", None, HTML, "html"),
        ("page.htm", None, HTML, "html"),
        ("page.xhtml", None, HTML, "html"),
        (None, "text/html; charset=utf-8", HTML, "html"),
        (None, "application/xhtml+xml", HTML, "html"),
        ("readme.txt", None, b"hello", "text"),
        (None, "text/plain", b"hello", "text"),
        ("guide.md", "text/plain", b"# Guide", "markdown"),  # the extension is more specific
        (None, "text/markdown", b"# Guide", "markdown"),
        ("download", "text/html", HTML, "html"),  # no extension: the content type decides
        ("a-text.txt", None, b"About %PDF-1.4 headers", "text"),  # mention is not a signature
    ],
)
def test_detects_supported_kinds(filename: str | None, content_type: str | None, head: bytes, kind: str) -> None:
    assert detect_kind(filename, content_type, head) == kind


@pytest.mark.parametrize(
    ("filename", "content_type", "head"),
    [
        ("old.doc", None, OLE),
        ("old.xls", None, OLE),
        ("old.ppt", None, OLE),
        ("old.doc", None, b"plain bytes"),  # by extension alone
        ("renamed.docx", None, OLE),  # by the OLE2 signature alone
        ("renamed.txt", None, OLE),
        (None, "application/msword", b"whatever"),
        (None, "application/vnd.ms-excel", ZIP),
        ("photo.png", None, b"\x89PNG\r\n\x1a\n"),
        ("program.exe", None, b"MZ\x90\x00"),
        ("data.json", "application/json", b"{}"),
        (None, None, b"hello"),
        (None, "application/octet-stream", ZIP),
        ("notes.docx", None, PDF),  # declared Office, content is a PDF
        ("report.pdf", None, ZIP),  # declared PDF, content is a ZIP
        ("page.html", None, ZIP),  # text kinds must not hide a binary format
        ("notes.txt", None, PDF),
        ("macro.docm", None, ZIP),
    ],
)
def test_rejects_unsupported_types(filename: str | None, content_type: str | None, head: bytes) -> None:
    with pytest.raises(SourceFailure) as caught:
        detect_kind(filename, content_type, head)
    assert caught.value.code == Code.UNSUPPORTED_TYPE


@pytest.mark.parametrize(("filename", "head"), [("empty.pdf", b""), ("junk.docx", b"not a zip at all")])
def test_declared_binary_without_any_signature_is_malformed(filename: str, head: bytes) -> None:
    with pytest.raises(SourceFailure) as caught:
        detect_kind(filename, None, head)
    assert caught.value.code == Code.MALFORMED_FILE
