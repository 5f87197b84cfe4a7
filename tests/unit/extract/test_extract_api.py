"""The public entry points: size limits first, files and streams read with a cap, JSON shape."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from knowledge.errors import Code, SourceFailure
from knowledge.extract import (
    MAX_UPLOAD_BYTES,
    Extracted,
    extract_bytes,
    extract_file,
    extract_html,
    extract_result_json,
    read_limited,
)

from .hostile import MB, build_pdf, docx, expect_failure, w_para


class EndlessStream(io.RawIOBase):
    """A stream that never ends and counts what was read from it."""

    def __init__(self) -> None:
        self.served = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        size = len(buffer)
        buffer[:size] = b"a" * size
        self.served += size
        return size


def test_oversize_upload_is_rejected_before_type_detection() -> None:
    data = b"\xd0\xcf\x11\xe0" + bytes(MAX_UPLOAD_BYTES)  # would be unsupported_type if looked at
    failure = expect_failure(Code.FILE_TOO_LARGE, lambda: extract_bytes(data, filename="old.doc"), max_mb=4)
    assert failure.details["max"] == MAX_UPLOAD_BYTES


def test_upload_at_exactly_the_limit_is_read() -> None:
    data = b"word " * (MAX_UPLOAD_BYTES // 5) + b"x" * (MAX_UPLOAD_BYTES % 5)
    assert len(data) == MAX_UPLOAD_BYTES
    with pytest.raises(SourceFailure) as caught:  # size passes; the text budget then applies
        extract_bytes(data, filename="notes.txt")
    assert caught.value.code == Code.EXPANDED_TOO_LARGE


def test_oversize_html_string_or_bytes_is_file_too_large() -> None:
    page = "<p>" + "x" * MAX_UPLOAD_BYTES + "</p>"
    expect_failure(Code.FILE_TOO_LARGE, lambda: extract_html(page))
    expect_failure(Code.FILE_TOO_LARGE, lambda: extract_html(page.encode()))


@pytest.mark.timeout(20)
def test_endless_stream_is_cut_off_while_reading() -> None:
    stream = EndlessStream()
    with pytest.raises(SourceFailure) as caught:
        read_limited(io.BufferedReader(stream, buffer_size=4096))
    assert caught.value.code == Code.FILE_TOO_LARGE
    assert stream.served <= MAX_UPLOAD_BYTES + 1 + 64 * 1024


def test_read_limited_returns_small_streams_whole() -> None:
    assert read_limited(io.BytesIO(b"abc"), limit=3) == b"abc"
    with pytest.raises(SourceFailure):
        read_limited(io.BytesIO(b"abcd"), limit=3)


@pytest.mark.timeout(20)
def test_huge_file_on_disk_is_not_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "huge.pdf"
    with path.open("wb") as handle:
        handle.write(b"%PDF-1.7\n")
        handle.truncate(2 * 1024 * MB)  # sparse: 2 GB on paper, nothing on disk
    failure = expect_failure(Code.FILE_TOO_LARGE, lambda: extract_file(path), max_mb=24)
    assert failure.code == Code.FILE_TOO_LARGE


def test_extract_file_uses_the_file_name(tmp_path: Path) -> None:
    path = tmp_path / "Policy.DOCX"
    path.write_bytes(docx(w_para("From disk")))
    assert extract_file(path) == Extracted(text="From disk", title=None, kind="docx", pages=None)
    legacy = tmp_path / "old.doc"
    legacy.write_bytes(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(512))
    with pytest.raises(SourceFailure) as caught:
        extract_file(legacy)
    assert caught.value.code == Code.UNSUPPORTED_TYPE


def test_extract_result_json_success_and_failure(tmp_path: Path) -> None:
    good = tmp_path / "guide.pdf"
    good.write_bytes(build_pdf(["Reset your password"], title="Guide"))
    result = extract_result_json(good)
    assert result == {
        "text": "Reset your password",
        "chars": len("Reset your password"),
        "kind": "pdf",
        "title": "Guide",
        "pages": 1,
        "error": None,
    }
    json.dumps(result)

    broken = tmp_path / "broken.pdf"
    broken.write_bytes(build_pdf(["Confidential words"])[:200])
    failed = extract_result_json(broken)
    assert failed["text"] == ""
    assert failed["chars"] == 0
    assert failed["error"]["code"] == Code.MALFORMED_FILE
    assert "Confidential" not in json.dumps(failed)


def test_extract_result_json_lets_io_errors_through(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        extract_result_json(tmp_path / "missing.txt")
