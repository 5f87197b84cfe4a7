"""Documentation packs: ``<slug>.ndjson.gz``, one page per line (DESIGN.md §5).

Rules (reference 000, "audience is a hard boundary", "Two things are never in the index"):
- A stamped pack (any page declares ``audience``): the stamp decides; an unstamped page in
  it is OPERATOR — the safe direction.
- A legacy pack (no page declares): ``help/`` pages are CUSTOMER, everything else
  (Admin, Reference, Install, Operate, Configure and any other section) is OPERATOR.
- Release notes (a ``release-notes/`` path segment or ``type: release-notes``) and pages
  with an empty body are never indexed.
- Pages under ``help/`` weigh 1.2; the rest of the pack 1.0.
"""

from __future__ import annotations

import gzip
import io
import json
import re
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import PurePosixPath

from ..errors import Code, SourceFailure
from ..model import HELP_PAGE_WEIGHT, TYPE_WEIGHT, stable_id
from .base import DocumentContent, SourceContent
from .frontmatter import split_frontmatter

PACK_SUFFIX = ".ndjson.gz"
MAX_PACK_EXPANDED = 512 * 1024 * 1024
MAX_LINE_BYTES = 16 * 1024 * 1024
MAX_PAGES = 20_000
_SLUG = re.compile(r"^[a-z0-9][a-z0-9._-]{0,99}$")


def slug_of(filename: str) -> str:
    """``p2p.ndjson.gz`` -> ``p2p``; raises InvalidInput-like SourceFailure for other names."""
    name = PurePosixPath(filename).name
    if not name.endswith(PACK_SUFFIX):
        raise SourceFailure(Code.UNSUPPORTED_TYPE, "a pack file is named <slug>.ndjson.gz")
    slug = name[: -len(PACK_SUFFIX)]
    if not _SLUG.match(slug):
        raise SourceFailure(Code.MALFORMED_FILE, "pack slug must be lower-case letters, digits, . _ -")
    return slug


def valid_slug(slug: str) -> bool:
    return bool(_SLUG.match(slug))


def product_title(slug: str) -> str:
    return " ".join(w.capitalize() if w.islower() else w for w in re.split(r"[-_]+", slug) if w)


def section_title(segment: str) -> str:
    return " ".join(w.capitalize() for w in re.split(r"[-_]+", segment) if w)


@dataclass(frozen=True)
class PackPage:
    path: str
    title: str
    body: str  # without frontmatter
    meta: dict[str, str]
    url: str | None


def iter_lines(data: bytes) -> Iterator[bytes]:
    """Decompress a gzip stream line by line with the expanded size bounded while reading."""
    try:
        stream = gzip.GzipFile(fileobj=io.BytesIO(data))
        total = 0
        while True:
            line = stream.readline(MAX_LINE_BYTES + 1)
            if not line:
                return
            total += len(line)
            if total > MAX_PACK_EXPANDED:
                raise SourceFailure(Code.EXPANDED_TOO_LARGE, "pack expands past its limit")
            if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
                raise SourceFailure(Code.EXPANDED_TOO_LARGE, "a pack line is over 16 MB")
            yield line
    except (OSError, EOFError, zlib.error) as exc:
        raise SourceFailure(Code.MALFORMED_FILE, "pack is not a valid gzip stream") from exc


def read_pack(data: bytes) -> tuple[list[PackPage], list[tuple[str, str]]]:
    """Parse a pack. Returns (pages, failures) — a bad line is a failed document, not a
    failed pack; a pack that is not gzip at all fails whole (``malformed_file``)."""
    pages: list[PackPage] = []
    failures: list[tuple[str, str]] = []
    for number, raw in enumerate(iter_lines(data), start=1):
        if not raw.strip():
            continue
        if len(pages) + len(failures) >= MAX_PAGES:
            raise SourceFailure(Code.EXPANDED_TOO_LARGE, f"pack has more than {MAX_PAGES} pages")
        try:
            obj = json.loads(raw)
        except (UnicodeDecodeError, json.JSONDecodeError):
            failures.append((f"line {number}", Code.MALFORMED_FILE))
            continue
        if not isinstance(obj, dict) or not isinstance(obj.get("path"), str) or not obj.get("path"):
            failures.append((f"line {number}", Code.MALFORMED_FILE))
            continue
        body_raw = obj.get("body")
        if not isinstance(body_raw, str):
            failures.append((obj["path"], Code.MALFORMED_FILE))
            continue
        meta, body = split_frontmatter(body_raw)
        title = meta.get("title") or (obj.get("title") if isinstance(obj.get("title"), str) else "") or ""
        if not title:
            title = section_title(PurePosixPath(obj["path"]).stem)  # rare: untitled pages only
        url = obj.get("url") if isinstance(obj.get("url"), str) else None
        pages.append(PackPage(path=obj["path"].lstrip("/"), title=title, body=body, meta=meta, url=url))
    return pages, failures


def _parts(path: str) -> list[str]:
    """Path segments of a page path (string split: this runs for every page of every pack)."""
    return [p for p in path.split("/") if p and p != "."]


def is_release_notes(page: PackPage) -> bool:
    if page.meta.get("type", "").strip().lower() == "release-notes":
        return True
    return "release-notes" in _parts(page.path)


def is_help_page(path: str) -> bool:
    parts = _parts(path)
    return bool(parts) and parts[0].lower() == "help"


def page_audiences(pages: list[PackPage]) -> list[str]:
    """CUSTOMER or OPERATOR for every page, by the stamp or, in a legacy pack, inferred."""
    stamped = any("audience" in p.meta for p in pages)
    out = []
    for page in pages:
        if stamped:
            stamp = page.meta.get("audience", "").strip().upper()
            out.append("CUSTOMER" if stamp == "CUSTOMER" else "OPERATOR")
        else:
            out.append("CUSTOMER" if is_help_page(page.path) else "OPERATOR")
    return out


def pack_documents(source_id: str, slug: str, data: bytes) -> SourceContent:
    pages, failures = read_pack(data)
    audiences = page_audiences(pages)
    product = product_title(slug)
    documents: list[DocumentContent] = []
    skipped = 0
    seen: set[str] = set()
    for page, audience in zip(pages, audiences, strict=True):
        if is_release_notes(page) or not page.body.strip():
            skipped += 1
            continue
        if page.path in seen:
            failures.append((page.path, Code.MALFORMED_FILE))
            continue
        seen.add(page.path)
        parts = _parts(page.path)
        sections = [section_title(p) for p in parts[:-1]]
        documents.append(
            DocumentContent(
                id=stable_id(source_id, page.path),
                title=page.title,
                path=page.path,
                body=page.body,
                visibility="public" if audience == "CUSTOMER" else "operator",
                weight=TYPE_WEIGHT["pack"] * (HELP_PAGE_WEIGHT if is_help_page(page.path) else 1.0),
                crumbs=[product, *sections, page.title],
                url=page.url,
            )
        )
    return SourceContent(checksum_bytes=data, documents=documents, failed=failures, skipped=skipped)
