"""URL handling for the crawler: normalisation, origin checks and link extraction.

``normalize`` gives every page one spelling, so the same page is queued once: the fragment
goes, tracking parameters (``utm_*``, ``gclid``, ``fbclid``) go, and the rest is
canonicalised with w3lib (lower-case scheme and host, IDNA host, default port dropped,
``.``/``..`` segments resolved, percent-encoding normalised, query arguments sorted).

``PathFilter`` applies a website's ``include``/``exclude`` path patterns, written like
robots.txt paths: a pattern starts with ``/`` and matches a path (with its query) that
starts with it, ``*`` stands for any run of characters and a final ``$`` anchors the end.
Both sides are compared percent-decoded, so ``/caf%C3%A9`` and ``/café`` are one pattern.
Patterns are validated when the source is created (``lifecycle.validation``).

Origins are compared by scheme, host and port. A source's origins are ``https://`` ones,
except under the development switch (``kb serve --dev-allow-loopback PORT``), which lets a
source have ``http://127.0.0.1:PORT``. An https page yields only https links (never a
step down to http); an http page yields both; only links inside the origins (same scheme)
are followed. Whether an address may be reached at all is
the guard's decision (``guard.check_url``), taken again at every request.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from urllib.parse import unquote, urljoin, urlsplit, urlunsplit

from bs4 import BeautifulSoup
from w3lib.url import canonicalize_url, safe_url_string

_TRACKING_EXACT = frozenset({"gclid", "fbclid"})
_DEFAULT_PORTS = {"https": 443, "http": 80}


def _is_tracking(pair: str) -> bool:
    name = unquote(pair.split("=", 1)[0]).strip().lower()
    return name.startswith("utm_") or name in _TRACKING_EXACT


def _drop_default_port(url: str) -> str:
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        return url
    if port is not None and _DEFAULT_PORTS.get(parts.scheme) == port:
        host = parts.hostname or ""
        if ":" in host:
            host = f"[{host}]"
        return urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment))
    return url


def normalize(url: str) -> str:
    """One spelling per page: no fragment, no tracking parameters, canonical form."""
    url = url.strip()
    parts = urlsplit(url)
    kept = [pair for pair in parts.query.split("&") if pair and not _is_tracking(pair)]
    url = urlunsplit((parts.scheme, parts.netloc, parts.path, "&".join(kept), ""))
    canonical = canonicalize_url(safe_url_string(url), keep_fragments=False)
    canonical = _drop_default_port(canonical)
    parts = urlsplit(canonical)
    if not parts.path:
        canonical = urlunsplit((parts.scheme, parts.netloc, "/", parts.query, ""))
    return canonical


def parse_origin(origin: str) -> tuple[str, str, int] | None:
    """``https://Host[:port]`` (optionally with a trailing ``/``) -> ``(scheme, host, port)``."""
    try:
        parts = urlsplit(origin.strip())
    except ValueError:
        return None
    if parts.query or parts.fragment or parts.path not in ("", "/"):
        return None
    return parse_origin_of_url(origin)


def origin_of(url: str) -> str | None:
    """The bare origin ``https://host[:port]`` of an https (or http) ``url`` (default port
    omitted)."""
    key = parse_origin_of_url(url)
    if key is None:
        return None
    scheme, host, port = key
    shown = f"[{host}]" if ":" in host else host
    return f"{scheme}://{shown}" if port == _DEFAULT_PORTS[scheme] else f"{scheme}://{shown}:{port}"


def parse_origin_of_url(url: str) -> tuple[str, str, int] | None:
    """``(scheme, host, port)`` of an https or http ``url`` (IDNA host, default port), else
    None."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS or not parts.hostname or "@" in parts.netloc:
        return None
    host = parts.hostname
    if not host.isascii():
        try:
            host = host.encode("idna").decode("ascii").lower()
        except UnicodeError:
            return None
    return scheme, host, port or _DEFAULT_PORTS[scheme]


def in_origins(url: str, origins: Sequence[str]) -> bool:
    """True when ``url``'s scheme, host and port equal those of one of ``origins``."""
    key = parse_origin_of_url(url)
    if key is None:
        return False
    return any(parse_origin(origin) == key for origin in origins)


def extract_links(html: str, base_url: str) -> list[str]:
    """The https targets of ``<a href>`` links (http ones too on an http page), resolved
    against ``<base href>`` (if any) or ``base_url``, normalised, deduplicated, in document
    order."""
    return page_links(html, base_url)[0]


def _absolute(href: str, base: str, schemes: frozenset[str]) -> str | None:
    href = _clean_href(href)
    if not href:
        return None
    try:
        absolute = urljoin(base, href)
        if urlsplit(absolute).scheme.lower() not in schemes:
            return None
        return normalize(absolute)
    except ValueError:
        return None


def page_links(html: str, base_url: str) -> tuple[list[str], str | None]:
    """:func:`extract_links` and the page's ``<link rel="canonical">`` target (the first
    one, under the same scheme rule, normalised; None when there is none)."""
    try:
        page_scheme = urlsplit(base_url).scheme.lower()
    except ValueError:
        page_scheme = "https"
    schemes = frozenset({"https", "http"}) if page_scheme == "http" else frozenset({"https"})
    soup = BeautifulSoup(html, "lxml")
    base = base_url
    base_tag = soup.find("base", href=True)
    if base_tag is not None:
        href = base_tag.get("href")
        if isinstance(href, str) and href.strip():
            base = urljoin(base_url, _clean_href(href))
    links: list[str] = []
    seen: set[str] = set()
    for anchor in soup.find_all("a", href=True):
        href = anchor.get("href")
        link = _absolute(href, base, schemes) if isinstance(href, str) else None
        if link is not None and link not in seen:
            seen.add(link)
            links.append(link)
    canonical = None
    for tag in soup.find_all("link", href=True):
        rel = tag.get("rel")
        tokens = rel if isinstance(rel, list) else str(rel or "").split()
        if "canonical" in (t.lower() for t in tokens):
            href = tag.get("href")
            canonical = _absolute(href, base, schemes) if isinstance(href, str) else None
            break
    return links, canonical


def _compile(pattern: str) -> re.Pattern[str]:
    anchored = pattern.endswith("$")
    body = unquote(pattern[:-1] if anchored else pattern)
    regex = ".*".join(re.escape(part) for part in body.split("*"))
    return re.compile(regex + (r"\Z" if anchored else ""), re.DOTALL)


class PathFilter:
    """A website's include/exclude patterns (see the module docstring). A URL passes when
    it matches an include pattern (or there are none) and no exclude pattern."""

    def __init__(self, include: Sequence[str] = (), exclude: Sequence[str] = ()):
        self._include = [_compile(p) for p in include]
        self._exclude = [_compile(p) for p in exclude]

    def allows(self, url: str) -> bool:
        parts = urlsplit(url)
        target = unquote((parts.path or "/") + (f"?{parts.query}" if parts.query else ""))
        if self._include and not any(p.match(target) for p in self._include):
            return False
        return not any(p.match(target) for p in self._exclude)


def _clean_href(href: str) -> str:
    # Browsers drop surrounding whitespace/control characters and embedded tabs/newlines.
    href = href.strip(" \t\n\r\f\v\x00")
    return href.replace("\t", "").replace("\n", "").replace("\r", "")
