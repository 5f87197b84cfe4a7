"""Sitemaps (sitemaps.org protocol 0.9): where they are, and what they list.

A site names its sitemaps in ``Sitemap:`` lines of its robots.txt (read anywhere in the
file, inside a group or not); ``/sitemap.xml`` is tried as well. A sitemap is either a
``<urlset>`` of ``<url><loc>`` entries, each with an optional ``<lastmod>``, or a
``<sitemapindex>`` of ``<sitemap><loc>`` entries naming further sitemaps. Either may be
gzip-compressed (``.xml.gz``; recognised by its magic bytes, not its name).

Limits, each a :class:`~knowledge.errors.SourceFailure` with a stable code:

* the body as transferred is bounded by the fetcher (``file_too_large``);
* a compressed body may inflate to at most :data:`MAX_SITEMAP_BYTES`, checked while
  inflating, so a gzip bomb stops there (``file_too_large``);
* the XML is parsed with defusedxml: no DTD, no entity expansion, no external reference
  (``malformed_file``, as is anything that is not a sitemap);
* at most :data:`MAX_ENTRIES` entries of one file are read; the rest are ignored.
"""

from __future__ import annotations

import re
import zlib
from dataclasses import dataclass
from datetime import UTC, datetime
from xml.etree.ElementTree import Element, ParseError

from defusedxml import DefusedXmlException
from defusedxml.ElementTree import fromstring

from knowledge.errors import Code, SourceFailure

#: Largest sitemap, once inflated (the fetcher's limit on a page body).
MAX_SITEMAP_BYTES = 8 * 1024 * 1024
#: Entries read from one sitemap file (the protocol's own limit).
MAX_ENTRIES = 50_000
#: ``Sitemap:`` lines of one robots.txt that are kept.
MAX_ROBOTS_SITEMAPS = 10

_GZIP_MAGIC = b"\x1f\x8b"
_SITEMAP_LINE = re.compile(r"^\s*site-?map\s*:\s*(\S+)", re.IGNORECASE)
_YEAR_MONTH = re.compile(r"^(\d{4})(?:-(\d{2}))?$")


@dataclass(frozen=True)
class Sitemap:
    """One parsed sitemap: ``urls`` of a ``<urlset>`` as ``(loc, lastmod)`` with ``lastmod``
    in seconds since the epoch (None when absent or unreadable), or ``children`` of a
    ``<sitemapindex>``."""

    urls: list[tuple[str, float | None]]
    children: list[str]
    index: bool = False


def robots_sitemaps(robots_txt: str) -> list[str]:
    """The URLs of the ``Sitemap:`` lines of a robots.txt, in file order, deduplicated."""
    found: list[str] = []
    for line in robots_txt.splitlines():
        match = _SITEMAP_LINE.match(line)  # a commented-out line starts with "#" and is skipped
        if match and match.group(1) not in found:
            found.append(match.group(1))
            if len(found) >= MAX_ROBOTS_SITEMAPS:
                break
    return found


def inflate(body: bytes) -> bytes:
    """``body`` itself, or its gzip content when it is gzip-compressed (bounded)."""
    if not body.startswith(_GZIP_MAGIC):
        if len(body) > MAX_SITEMAP_BYTES:
            raise SourceFailure(Code.FILE_TOO_LARGE, "the sitemap exceeds the size limit")
        return body
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        data = inflater.decompress(body, MAX_SITEMAP_BYTES + 1)
    except zlib.error:
        raise SourceFailure(Code.MALFORMED_FILE, "the sitemap is not valid gzip") from None
    if len(data) > MAX_SITEMAP_BYTES or inflater.unconsumed_tail:
        raise SourceFailure(Code.FILE_TOO_LARGE, "the sitemap exceeds the size limit once inflated")
    return data


def parse_lastmod(value: str | None) -> float | None:
    """A W3C datetime (``2024``, ``2024-05``, ``2024-05-01``, ``2024-05-01T10:00:00+02:00``)
    as seconds since the epoch; times without a zone are read as UTC."""
    if not value:
        return None
    value = value.strip()
    short = _YEAR_MONTH.match(value)
    try:
        if short:
            moment = datetime(int(short.group(1)), int(short.group(2) or 1), 1, tzinfo=UTC)
        else:
            moment = datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
            if moment.tzinfo is None:
                moment = moment.replace(tzinfo=UTC)
        return moment.timestamp()
    except (ValueError, OverflowError):
        return None


def _local(tag: object) -> str:
    name = tag if isinstance(tag, str) else ""
    return name.rsplit("}", 1)[-1].lower()


def _child_text(element: Element, name: str) -> str | None:
    for child in element:
        if _local(child.tag) == name:
            return (child.text or "").strip() or None
    return None


def parse_sitemap(body: bytes) -> Sitemap:
    """Parse one sitemap file (gzip or not); see the module docstring for the limits."""
    data = inflate(body)
    try:
        root = fromstring(data, forbid_dtd=True)
    except (ParseError, DefusedXmlException, ValueError):
        raise SourceFailure(Code.MALFORMED_FILE, "the sitemap is not well-formed XML") from None
    kind = _local(root.tag)
    if kind == "urlset":
        urls: list[tuple[str, float | None]] = []
        for entry in root:
            if _local(entry.tag) != "url":
                continue
            loc = _child_text(entry, "loc")
            if loc:
                urls.append((loc, parse_lastmod(_child_text(entry, "lastmod"))))
                if len(urls) >= MAX_ENTRIES:
                    break
        return Sitemap(urls, [])
    if kind == "sitemapindex":
        children: list[str] = []
        for entry in root:
            if _local(entry.tag) != "sitemap":
                continue
            loc = _child_text(entry, "loc")
            if loc and loc not in children:
                children.append(loc)
                if len(children) >= MAX_ENTRIES:
                    break
        return Sitemap([], children, index=True)
    raise SourceFailure(Code.MALFORMED_FILE, "the document is not a sitemap")


def newest_first(entries: list[tuple[str, float | None]]) -> list[tuple[str, float | None]]:
    """Entries by ``lastmod``, newest first; those without one after, in their own order."""
    dated = [e for e in entries if e[1] is not None]
    undated = [e for e in entries if e[1] is None]
    dated.sort(key=lambda e: -(e[1] or 0.0))
    return dated + undated
