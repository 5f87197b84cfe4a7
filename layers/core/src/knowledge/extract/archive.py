"""Bounded reading of ZIP containers (the OOXML package).

Every entry is inflated here, in full, before any XML is parsed, with a running byte budget:
the archive may hold at most 500 entries, inflate to at most 32 MB, and neither one entry nor
the whole archive may inflate more than 100 times the compressed bytes actually consumed.
Sizes written in the local or central headers are never trusted for any of these decisions
(they are only compared with the truth afterwards, a mismatch meaning a corrupt file).
Entries whose data overlap (the "overlapping files" bomb) are rejected.
"""

from __future__ import annotations

import io
import itertools
import struct
import zipfile
import zlib
from collections.abc import Callable

from .limits import (
    MAX_ARCHIVE_ENTRIES,
    MAX_COMPRESSION_RATIO,
    MAX_EXPANDED_BYTES,
    RATIO_GRACE_BYTES,
    malformed,
    too_large,
)

_LOCAL_HEADER = struct.Struct("<4sHHHHHIIIHH")
_LOCAL_SIGNATURE = b"PK\x03\x04"
_END_SIGNATURE = b"PK\x05\x06"
_END_SEARCH = 22 + 0xFFFF  # the record plus the longest possible archive comment
_INPUT_CHUNK = 64 * 1024
_OUTPUT_CHUNK = 256 * 1024
_FLAG_ENCRYPTED = 0x1


class _Totals:
    __slots__ = ("consumed", "inflated")

    def __init__(self) -> None:
        self.inflated = 0
        self.consumed = 0


def _check_ratio(inflated: int, consumed: int, scope: str) -> None:
    if inflated > RATIO_GRACE_BYTES and inflated > MAX_COMPRESSION_RATIO * max(consumed, 1):
        too_large("compression_ratio", f"{scope} compresses more than {MAX_COMPRESSION_RATIO}:1")


def _check_total(inflated: int) -> None:
    if inflated > MAX_EXPANDED_BYTES:
        too_large("expanded_bytes", f"the archive expands to more than {MAX_EXPANDED_BYTES} bytes")


def _data_start(data: bytes, info: zipfile.ZipInfo) -> int:
    offset = info.header_offset
    if offset < 0 or offset + _LOCAL_HEADER.size > len(data):
        raise malformed("a ZIP entry points outside the file", reason="bad_offset")
    fields = _LOCAL_HEADER.unpack_from(data, offset)
    if fields[0] != _LOCAL_SIGNATURE:
        raise malformed("a ZIP entry has no local header", reason="bad_local_header")
    name_length, extra_length = fields[9], fields[10]
    start = offset + _LOCAL_HEADER.size + name_length + extra_length
    if start > len(data):
        raise malformed("a ZIP entry is truncated", reason="truncated")
    return start


def _inflate(data: bytes, start: int, keep: bool, totals: _Totals) -> tuple[bytes | None, int, int, int]:
    """Inflate one raw DEFLATE stream from ``start``; returns (content, crc, inflated, consumed)."""
    view = memoryview(data)
    inflater = zlib.decompressobj(-zlib.MAX_WBITS)
    pieces: list[bytes] = []
    crc = 0
    inflated = 0
    fed = 0
    pending: bytes | memoryview = b""
    try:
        while not inflater.eof:
            if not pending:
                if start + fed >= len(data):
                    raise malformed("a ZIP entry is truncated", reason="truncated")
                pending = view[start + fed : start + fed + _INPUT_CHUNK]
                fed += len(pending)
            allowance = min(_OUTPUT_CHUNK, MAX_EXPANDED_BYTES - totals.inflated - inflated + 1)
            piece = inflater.decompress(pending, allowance)
            pending = inflater.unconsumed_tail
            inflated += len(piece)
            consumed = fed - len(pending) - len(inflater.unused_data)
            _check_total(totals.inflated + inflated)
            _check_ratio(inflated, consumed, "an archive entry")
            _check_ratio(totals.inflated + inflated, totals.consumed + consumed, "the archive")
            crc = zlib.crc32(piece, crc)
            if keep:
                pieces.append(piece)
    except zlib.error as exc:
        raise malformed("a ZIP entry is not valid DEFLATE data", reason="bad_deflate") from exc
    consumed = fed - len(inflater.unconsumed_tail) - len(inflater.unused_data)
    return (b"".join(pieces) if keep else None), crc, inflated, consumed


def _declared_entries(data: bytes) -> int:
    """Entry count the end-of-central-directory record claims (0 when absent or ZIP64)."""
    at = data.rfind(_END_SIGNATURE, max(0, len(data) - _END_SEARCH))
    if at < 0 or at + 12 > len(data):
        return 0
    (total,) = struct.unpack_from("<H", data, at + 10)
    return 0 if total == 0xFFFF else int(total)


def read_archive(data: bytes, wanted: Callable[[str], bool]) -> dict[str, bytes]:
    """Check a whole ZIP archive against the limits and return the entries ``wanted`` selects.

    Raises ``expanded_too_large`` (entries, ratio, expanded bytes) or ``malformed_file``
    (not a ZIP, encrypted or unsupported entries, corrupt data, overlapping entries).
    """
    if _declared_entries(data) > MAX_ARCHIVE_ENTRIES:  # cheap early refusal; recounted below
        too_large("archive_entries", f"the archive has more than {MAX_ARCHIVE_ENTRIES} entries")
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        infos = archive.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, OSError, EOFError, struct.error) as exc:
        raise malformed("the file is not a readable ZIP archive", reason="bad_zip") from exc
    if len(infos) > MAX_ARCHIVE_ENTRIES:
        too_large("archive_entries", f"the archive has more than {MAX_ARCHIVE_ENTRIES} entries")

    names: set[str] = set()
    for info in infos:
        if info.filename in names:
            raise malformed("the archive has duplicate entries", reason="duplicate_entry")
        names.add(info.filename)

    totals = _Totals()
    spans: list[tuple[int, int]] = []
    found: dict[str, bytes] = {}
    for info in infos:
        if info.flag_bits & _FLAG_ENCRYPTED:
            raise malformed("the archive has encrypted entries", reason="encrypted_entry")
        start = _data_start(data, info)
        keep = not info.is_dir() and wanted(info.filename)
        if info.compress_type == zipfile.ZIP_STORED:
            # stored data has no end marker: its length must come from the central header,
            # but it is only believed as far as the bytes really present
            length = info.compress_size
            if start + length > len(data):
                raise malformed("a ZIP entry is truncated", reason="truncated")
            _check_total(totals.inflated + length)
            content: bytes | None = data[start : start + length] if keep else None
            crc = zlib.crc32(data[start : start + length])
            inflated = consumed = length
        elif info.compress_type == zipfile.ZIP_DEFLATED:
            content, crc, inflated, consumed = _inflate(data, start, keep, totals)
        else:
            raise malformed("the archive uses an unsupported compression method", reason="method")
        if inflated != info.file_size or crc != info.CRC:
            raise malformed("a ZIP entry does not match its header", reason="size_or_crc_mismatch")
        totals.inflated += inflated
        totals.consumed += consumed
        spans.append((info.header_offset, start + consumed))
        if content is not None:
            found[info.filename] = content

    spans.sort()
    for (_, previous_end), (next_start, _) in itertools.pairwise(spans):
        if next_start < previous_end:
            raise malformed("the archive has overlapping entries", reason="overlapping_entries")
    return found
