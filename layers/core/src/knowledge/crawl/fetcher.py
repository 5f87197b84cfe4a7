"""The crawler's HTTPS fetcher: a GET through the guarded transport of
:mod:`knowledge.crawl.outbound`, which it shares with every other outbound call.

Every request (the first and each redirect hop) goes through :func:`guard.check_url`:
the host is resolved once, every address must be public, and the TCP connection is opened
to one of exactly those addresses. TLS is then negotiated with ``server_hostname`` set to
the URL's host, so SNI and certificate verification are for the name, not the IP. There is
no second DNS lookup to race. The :class:`~knowledge.crawl.outbound.OutboundPolicy` passed
in (the composition root's) carries the development switch; nothing else turns it on.

Limits, each mapped to a stable :class:`~knowledge.errors.SourceFailure` code:

===================================================  ===================
what                                                 code
===================================================  ===================
non-https URL or redirect, credentials in the URL,   ``blocked_address``
a blocked (private, loopback, metadata...) address,
a URL or redirect outside the allowed ``origins``,
a redirect that changes the scheme
a redirect target robots.txt forbids (``may_follow``)  ``robots_denied``
more than ``max_redirects`` redirects, a redirect    ``malformed_file``
without ``Location``, an unparseable HTTP response,
a TLS failure (handshake or certificate)
the whole fetch (all hops, DNS, connect, TLS,        ``fetch_timeout``
headers and body) exceeds ``timeout`` seconds, the
host does not resolve or no address accepts a
connection
a body over ``max_bytes`` (declared or streamed)     ``file_too_large``
a 2xx response that is not HTML, XHTML, text or      ``unsupported_type``
Markdown, or that is content-encoded
HTTP 429                                             ``rate_limited``
===================================================  ===================

Conditional requests: ``conditions`` (``If-None-Match``/``If-Modified-Since``, see
:func:`validators`) go with the first request only, never with a redirect hop; a ``304``
comes back as a :class:`FetchResult` with that status, an empty body and the URL unchanged.
The ``ETag`` and ``Last-Modified`` of a 2xx response are returned when they are short
printable text (at most ``MAX_VALIDATOR_CHARS`` characters), so they can be sent back.

Too many redirects is ``malformed_file`` rather than ``blocked_address`` because nothing
about the addresses is wrong: the site's response chain is what cannot be used.

Other 3xx/4xx/5xx responses come back as a :class:`FetchResult` with that status and an
empty body; the caller decides. Error messages are fixed strings that never contain
fetched text (nor URLs, which can come from fetched text).
"""

from __future__ import annotations

import http.client
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from urllib.parse import urljoin, urlsplit, urlunsplit

from w3lib.url import safe_url_string

from knowledge.crawl.guard import blocked, split_url
from knowledge.crawl.outbound import REDIRECT_STATUSES, USER_AGENT, OutboundPolicy, Transport
from knowledge.crawl.urls import in_origins
from knowledge.errors import Code, SourceFailure

__all__ = ["ACCEPTED_TYPES", "USER_AGENT", "FetchResult", "Fetcher", "media_type"]

ACCEPTED_TYPES = frozenset({"text/html", "application/xhtml+xml", "text/plain", "text/markdown"})


@dataclass(frozen=True)
class FetchResult:
    url: str
    final_url: str
    status: int
    content_type: str  # the Content-Type header as received ("" when absent)
    body: bytes
    etag: str | None = None
    last_modified: str | None = None

    @property
    def media_type(self) -> str:
        return media_type(self.content_type)


#: Longer ETag/Last-Modified values are not kept (nor sent back).
MAX_VALIDATOR_CHARS = 200


def _validator(value: str | None) -> str | None:
    if value is None:
        return None
    value = value.strip()
    if not value or len(value) > MAX_VALIDATOR_CHARS or not all(" " <= c <= "~" for c in value):
        return None
    return value


def validators(etag: str | None, last_modified: str | None) -> dict[str, str]:
    """The conditional request headers for a page fetched earlier with these validators."""
    headers: dict[str, str] = {}
    if _validator(etag) is not None:
        headers["If-None-Match"] = str(etag)
    if _validator(last_modified) is not None:
        headers["If-Modified-Since"] = str(last_modified)
    return headers


def media_type(content_type: str) -> str:
    """``'Text/HTML; charset=UTF-8'`` -> ``'text/html'``."""
    return content_type.split(";", 1)[0].strip().lower()


class Fetcher:
    """Fetches one URL at a time under the guard's address rules and ``policy`` (the
    composition root's; the default is production's: no loopback, https only)."""

    def __init__(
        self,
        policy: OutboundPolicy | None = None,
        *,
        timeout: float = 15.0,
        max_bytes: int = 8 * 1024 * 1024,
        max_redirects: int = 3,
    ):
        self._transport = Transport(policy)
        self._loopback_port = self._transport.policy.loopback_port
        self._timeout = float(timeout)
        self._max_bytes = int(max_bytes)
        self._max_redirects = int(max_redirects)

    # -- public -----------------------------------------------------------------------

    def fetch(
        self,
        url: str,
        *,
        origins: Sequence[str] | None = None,
        may_follow: Callable[[str], bool] | None = None,
        conditions: Mapping[str, str] | None = None,
    ) -> FetchResult:
        """GET ``url``. ``origins`` (bare https origins) confines the URL and every
        redirect; ``may_follow`` vets each redirect target (False -> ``robots_denied``);
        ``conditions`` are conditional headers for the first request (a 304 comes back)."""
        return self._fetch(url, origins=origins, may_follow=may_follow, any_type=False, conditions=conditions)

    def fetch_robots(self, url: str, *, origins: Sequence[str] | None = None) -> FetchResult:
        """GET a robots.txt: like :meth:`fetch` but any content type is accepted."""
        return self._fetch(url, origins=origins, may_follow=None, any_type=True)

    # -- internals --------------------------------------------------------------------

    def _fetch(
        self,
        url: str,
        *,
        origins: Sequence[str] | None,
        may_follow: Callable[[str], bool] | None,
        any_type: bool,
        conditions: Mapping[str, str] | None = None,
    ) -> FetchResult:
        deadline = time.monotonic() + self._timeout
        try:
            current = _request_url(url)
        except ValueError:
            raise blocked("malformed url") from None
        accept = "*/*" if any_type else "text/html, application/xhtml+xml, text/plain, text/markdown"

        def want_body(status: int, headers: http.client.HTTPMessage) -> bool:
            if status in REDIRECT_STATUSES or status == 429 or not 200 <= status < 300:
                return False
            _check_type(headers, any_type)
            return True

        redirects = 0
        first_headers = {"Accept": accept, **validators(
            (conditions or {}).get("If-None-Match"), (conditions or {}).get("If-Modified-Since"))}
        while True:
            if origins is not None and not in_origins(current, origins):
                raise blocked("url is outside the allowed origins")
            addresses = self._transport.check(current, deadline)
            headers = first_headers if redirects == 0 else {"Accept": accept}
            response = self._transport.exchange(current, addresses, deadline, headers=headers,
                                                want_body=want_body, max_bytes=self._max_bytes)
            if response.status in REDIRECT_STATUSES:
                location = response.headers.get("Location")
                if not location or not location.strip():
                    raise SourceFailure(Code.MALFORMED_FILE, "redirect without a location")
                redirects += 1
                if redirects > self._max_redirects:
                    raise SourceFailure(Code.MALFORMED_FILE, "too many redirects")
                try:
                    target = _request_url(urljoin(current, location.strip()))
                except ValueError:
                    raise blocked("malformed redirect target") from None
                # scheme, credentials and host shape, before anything else; never https -> http
                if split_url(target, loopback_port=self._loopback_port).scheme != urlsplit(current).scheme.lower():
                    raise blocked("redirect changes the scheme")
                if origins is not None and not in_origins(target, origins):
                    raise blocked("redirect leaves the allowed origins")
                if may_follow is not None and not may_follow(target):
                    raise SourceFailure(Code.ROBOTS_DENIED, "robots.txt forbids the redirect target")
                current = target
                continue
            if response.status == 429:
                raise SourceFailure(Code.RATE_LIMITED, "the site throttled the request")
            etag = last_modified = None
            if 200 <= response.status < 300:
                etag = _validator(response.headers.get("ETag"))
                last_modified = _validator(response.headers.get("Last-Modified"))
            return FetchResult(url, current, response.status, response.content_type, response.body, etag,
                               last_modified)


def _check_type(headers: http.client.HTTPMessage, any_type: bool) -> None:
    encoding = (headers.get("Content-Encoding") or "identity").strip().lower()
    if encoding not in ("identity", ""):
        raise SourceFailure(Code.UNSUPPORTED_TYPE, "content-encoded responses are not accepted")
    if any_type:
        return
    if media_type(headers.get("Content-Type") or "") not in ACCEPTED_TYPES:
        raise SourceFailure(Code.UNSUPPORTED_TYPE, "content type is not supported")


def _request_url(url: str) -> str:
    """Percent-encode what needs it (IDNA host too) and drop the fragment."""
    safe = safe_url_string(url.strip())
    parts = urlsplit(safe)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, parts.query, ""))
