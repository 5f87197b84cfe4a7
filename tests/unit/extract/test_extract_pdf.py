"""PDF extraction: text of clean files; typed failures for hostile ones, bounded."""

from __future__ import annotations

import re
import zlib
from collections.abc import Callable

import pypdf
import pytest

from knowledge.errors import Code
from knowledge.extract import Extracted, extract_bytes
from knowledge.extract.limits import MAX_PDF_PAGES

from .hostile import MB, build_pdf, deflated_zeros, encrypted_pdf, expect_failure, flate_stream


def _pdf(data: bytes) -> Callable[[], Extracted]:
    return lambda: extract_bytes(data, filename="upload.pdf")


def test_clean_pdf_text_title_and_pages() -> None:
    result = extract_bytes(build_pdf(["Refunds take (3) days", "Second page"], title="Refund policy"), filename="a.pdf")
    assert result.kind == "pdf"
    assert result.pages == 2
    assert result.title == "Refund policy"
    assert result.text == "Refunds take (3) days\n\nSecond page"


def test_flate_compressed_content_is_read() -> None:
    stream = flate_stream(zlib.compress(b"BT /F1 12 Tf 72 720 Td (Compressed words) Tj ET"))
    result = extract_bytes(build_pdf(["ignored"], contents={0: stream}), content_type="application/pdf")
    assert result.text == "Compressed words"


def test_exactly_the_page_limit_is_accepted() -> None:
    result = extract_bytes(build_pdf([f"page {i}" for i in range(MAX_PDF_PAGES)]), filename="a.pdf")
    assert result.pages == MAX_PDF_PAGES


@pytest.mark.timeout(20)
@pytest.mark.parametrize("declared_count", [None, 1])  # honest, and a /Count that lies low
def test_101_pages_rejected_before_any_text_is_extracted(
    monkeypatch: pytest.MonkeyPatch, declared_count: int | None
) -> None:
    calls: list[int] = []
    original = pypdf.PageObject.extract_text

    def spy(self: pypdf.PageObject, *args: object, **kwargs: object) -> str:
        calls.append(1)
        return original(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(pypdf.PageObject, "extract_text", spy)
    data = build_pdf(["words"] * (MAX_PDF_PAGES + 1), declared_count=declared_count)
    failure = expect_failure(Code.EXPANDED_TOO_LARGE, _pdf(data))
    assert failure.details["limit"] == "pdf_pages"
    assert calls == []


@pytest.mark.timeout(20)
@pytest.mark.parametrize("algorithm", ["AES-256", "AES-128", "RC4-128", "RC4-40"])
@pytest.mark.parametrize("user_password", ["asdfzxcv", ""])
def test_encrypted_pdfs_are_malformed(user_password: str, algorithm: str) -> None:
    data = encrypted_pdf(user_password, algorithm)
    failure = expect_failure(Code.MALFORMED_FILE, _pdf(data))
    assert failure.details["reason"] == "encrypted"
    assert "Secret" not in failure.message


@pytest.mark.timeout(20)
def test_broken_xref_offsets_are_malformed_not_repaired() -> None:
    clean = build_pdf(["Hello world", "Second page"])
    shifted = re.sub(rb"(\d{10}) 00000 n", lambda m: b"%010d 00000 n" % (int(m.group(1)) + 7), clean)
    failure = expect_failure(Code.MALFORMED_FILE, _pdf(shifted))
    assert failure.details["reason"] == "broken_xref"


@pytest.mark.timeout(20)
def test_startxref_pointing_nowhere_is_malformed() -> None:
    clean = build_pdf(["Hello world"])
    broken = re.sub(rb"startxref\n\d+", b"startxref\n999999", clean)
    expect_failure(Code.MALFORMED_FILE, _pdf(broken))


@pytest.mark.timeout(20)
@pytest.mark.parametrize("keep", [0.9, 0.5, 0.1])
def test_truncated_pdfs_are_malformed(keep: float) -> None:
    clean = build_pdf(["Hello world", "Second page"])
    expect_failure(Code.MALFORMED_FILE, _pdf(clean[: int(len(clean) * keep)]))


@pytest.mark.timeout(20)
def test_garbage_after_header_is_malformed() -> None:
    expect_failure(Code.MALFORMED_FILE, _pdf(b"%PDF-1.7\n" + bytes(range(256)) * 40))


@pytest.mark.timeout(20)
def test_corrupt_flate_stream_is_malformed_not_recovered() -> None:
    data = build_pdf(["x"], contents={0: flate_stream(b"this is not zlib data" * 50)})
    failure = expect_failure(Code.MALFORMED_FILE, _pdf(data))
    assert failure.details["reason"] == "bad_stream"


@pytest.mark.timeout(30)
def test_decompression_bomb_content_stream_is_bounded() -> None:
    compressed, _ = deflated_zeros(200 * MB, zlib_header=True)
    data = build_pdf(["x"], contents={0: flate_stream(compressed)})
    failure = expect_failure(Code.EXPANDED_TOO_LARGE, _pdf(data))
    assert failure.details["limit"] in ("pdf_resources", "pdf_content")


@pytest.mark.timeout(30)
def test_many_pages_of_large_content_are_bounded_overall() -> None:
    compressed, _ = deflated_zeros(7 * MB, zlib_header=True)  # under the per-stream cap
    data = build_pdf(["x"] * 5, contents={i: flate_stream(compressed) for i in range(5)})
    failure = expect_failure(Code.EXPANDED_TOO_LARGE, _pdf(data))
    assert failure.details["limit"] == "pdf_content"
