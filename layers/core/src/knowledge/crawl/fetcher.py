"""HTTPS fetcher that connects only to addresses the guard has checked.

Every request (the first and each redirect hop) goes through :func:`guard.check_url`:
the host is resolved once, every address must be public, and the TCP connection is opened
to one of exactly those addresses (``socket.create_connection((ip, port))``). TLS is then
negotiated with ``server_hostname`` set to the URL's host, so SNI and certificate
verification are for the name, not the IP. There is no second DNS lookup to race.

Limits, each mapped to a stable :class:`~knowledge.errors.SourceFailure` code:

===================================================  ===================
what                                                 code
===================================================  ===================
non-https URL or redirect, credentials in the URL,   ``blocked_address``
a blocked (private, loopback, metadata...) address,
a URL or redirect outside the allowed ``origins``
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

Too many redirects is ``malformed_file`` rather than ``blocked_address`` because nothing
about the addresses is wrong: the site's response chain is what cannot be used.

Other 3xx/4xx/5xx responses come back as a :class:`FetchResult` with that status and an
empty body; the caller decides. Error messages are fixed strings that never contain
fetched text (nor URLs, which can come from fetched text).
"""

from __future__ import annotations

import http.client
import io
import os
import socket
import ssl
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urljoin, urlsplit, urlunsplit

from w3lib.url import safe_url_string

from knowledge.crawl.guard import Resolver, blocked, check_url, split_target, system_resolve
from knowledge.crawl.urls import in_origins
from knowledge.errors import Code, SourceFailure

USER_AGENT = "KnowledgeBot/1.0"
ACCEPTED_TYPES = frozenset({"text/html", "application/xhtml+xml", "text/plain", "text/markdown"})
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
ALLOW_LOOPBACK_ENV = "KB_TEST_ALLOW_LOOPBACK"
_CHUNK = 64 * 1024


@dataclass(frozen=True)
class FetchResult:
    url: str
    final_url: str
    status: int
    content_type: str  # the Content-Type header as received ("" when absent)
    body: bytes

    @property
    def media_type(self) -> str:
        return media_type(self.content_type)


def media_type(content_type: str) -> str:
    """``'Text/HTML; charset=UTF-8'`` -> ``'text/html'``."""
    return content_type.split(";", 1)[0].strip().lower()


class _DeadlineReader(io.RawIOBase):
    """Raw reader over a socket in which every ``recv`` may only wait until the deadline.

    Python's ``ssl`` enforces a socket timeout as a deadline for one operation, so setting
    the timeout to the time left before each read makes the whole response bounded: a
    server that drips one byte at a time runs into the overall deadline.
    """

    def __init__(self, sock: socket.socket, deadline: float):
        self._sock = sock
        self._deadline = deadline

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        remaining = self._deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError("fetch deadline passed")
        self._sock.settimeout(remaining)
        return self._sock.recv_into(buffer)


class _ResponseSocket:
    """What ``http.client.HTTPResponse`` needs from a socket: ``makefile``."""

    def __init__(self, sock: socket.socket, deadline: float):
        self._sock = sock
        self._deadline = deadline

    def makefile(self, mode: str, *args: Any, **kwargs: Any) -> io.BufferedReader:
        return io.BufferedReader(_DeadlineReader(self._sock, self._deadline), _CHUNK)


def _remaining(deadline: float) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        raise SourceFailure(Code.FETCH_TIMEOUT, "the site did not answer in time")
    return left


def _resolve_within(resolve: Resolver, deadline: float) -> Resolver:
    """Run ``resolve`` in a helper thread so a hanging lookup cannot outlive the deadline."""

    def bounded(host: str, port: int) -> list[str]:
        box: dict[str, Any] = {}

        def work() -> None:
            try:
                box["value"] = resolve(host, port)
            except Exception as exc:  # noqa: BLE001 - re-raised in the caller's thread below
                box["error"] = exc

        worker = threading.Thread(target=work, name="kb-resolve", daemon=True)
        worker.start()
        worker.join(_remaining(deadline))
        if worker.is_alive():
            raise SourceFailure(Code.FETCH_TIMEOUT, "host name lookup timed out")
        if "error" in box:
            raise box["error"]
        return list(box["value"])

    return bounded


@dataclass
class _Response:
    status: int
    headers: http.client.HTTPMessage
    body: bytes


class Fetcher:
    """Fetches one https URL at a time under the guard's address rules.

    ``allow_loopback`` is for tests that serve pages from 127.0.0.1; when None it is read
    once here from ``KB_TEST_ALLOW_LOOPBACK == "1"``. Nothing else can turn it on.
    """

    def __init__(
        self,
        resolve: Resolver | None = None,
        timeout: float = 15.0,
        max_bytes: int = 8 * 1024 * 1024,
        max_redirects: int = 3,
        allow_loopback: bool | None = None,
        ssl_context: ssl.SSLContext | None = None,
    ):
        if allow_loopback is None:
            allow_loopback = os.environ.get(ALLOW_LOOPBACK_ENV) == "1"
        self._resolve: Resolver = resolve or system_resolve
        self._timeout = float(timeout)
        self._max_bytes = int(max_bytes)
        self._max_redirects = int(max_redirects)
        self._allow_loopback = bool(allow_loopback)
        self._ssl = ssl_context or ssl.create_default_context()

    # -- public -----------------------------------------------------------------------

    def fetch(
        self,
        url: str,
        *,
        origins: Sequence[str] | None = None,
        may_follow: Callable[[str], bool] | None = None,
    ) -> FetchResult:
        """GET ``url``. ``origins`` (bare https origins) confines the URL and every
        redirect; ``may_follow`` vets each redirect target (False -> ``robots_denied``)."""
        return self._fetch(url, origins=origins, may_follow=may_follow, any_type=False)

    def fetch_robots(self, url: str, *, origins: Sequence[str] | None = None) -> FetchResult:
        """GET a robots.txt: like :meth:`fetch` but any content type is accepted."""
        return self._fetch(url, origins=origins, may_follow=None, any_type=True)

    # -- internals --------------------------------------------------------------------

    def _open_socket(self, ip: str, port: int, timeout: float) -> socket.socket:
        """Open the TCP connection to a checked address (the only place that connects)."""
        return socket.create_connection((ip, port), timeout=timeout)

    def _fetch(
        self,
        url: str,
        *,
        origins: Sequence[str] | None,
        may_follow: Callable[[str], bool] | None,
        any_type: bool,
    ) -> FetchResult:
        deadline = time.monotonic() + self._timeout
        try:
            current = _request_url(url)
        except ValueError:
            raise blocked("malformed url") from None
        redirects = 0
        while True:
            if origins is not None and not in_origins(current, origins):
                raise blocked("url is outside the allowed origins")
            addresses = check_url(
                current, _resolve_within(self._resolve, deadline), allow_loopback=self._allow_loopback
            )
            response = self._exchange(current, addresses, deadline, any_type=any_type)
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
                split_target(target)  # scheme, credentials and host shape, before anything else
                if origins is not None and not in_origins(target, origins):
                    raise blocked("redirect leaves the allowed origins")
                if may_follow is not None and not may_follow(target):
                    raise SourceFailure(Code.ROBOTS_DENIED, "robots.txt forbids the redirect target")
                current = target
                continue
            if response.status == 429:
                raise SourceFailure(Code.RATE_LIMITED, "the site throttled the request")
            content_type = response.headers.get("Content-Type", "") or ""
            return FetchResult(url, current, response.status, content_type.strip(), response.body)

    def _exchange(self, url: str, addresses: list[str], deadline: float, *, any_type: bool) -> _Response:
        host, port = split_target(url)
        try:
            sock = self._connect(addresses, port, deadline)
            try:
                tls = self._handshake(sock, host, deadline)
            except BaseException:
                sock.close()
                raise
            with tls:
                return self._request(tls, url, host, port, deadline, any_type=any_type)
        except SourceFailure:
            raise
        except TimeoutError:
            raise SourceFailure(Code.FETCH_TIMEOUT, "the site did not answer in time") from None
        except (ssl.SSLError, ssl.CertificateError):
            raise SourceFailure(Code.MALFORMED_FILE, "tls negotiation with the site failed") from None
        except (http.client.HTTPException, ValueError):
            raise SourceFailure(Code.MALFORMED_FILE, "the response could not be parsed") from None
        except OSError:
            raise SourceFailure(Code.FETCH_TIMEOUT, "the connection to the site failed") from None

    def _connect(self, addresses: list[str], port: int, deadline: float) -> socket.socket:
        last: OSError | None = None
        for ip in addresses:
            try:
                return self._open_socket(ip, port, _remaining(deadline))
            except TimeoutError:
                raise
            except OSError as exc:
                last = exc
        raise last or OSError("no address to connect to")

    def _handshake(self, sock: socket.socket, host: str, deadline: float) -> ssl.SSLSocket:
        tls = self._ssl.wrap_socket(sock, server_hostname=host, do_handshake_on_connect=False)
        tls.settimeout(_remaining(deadline))
        tls.do_handshake()
        return tls

    def _request(
        self, tls: ssl.SSLSocket, url: str, host: str, port: int, deadline: float, *, any_type: bool
    ) -> _Response:
        parts = urlsplit(url)
        target = parts.path or "/"
        if parts.query:
            target += "?" + parts.query
        shown = f"[{host}]" if ":" in host else host
        authority = shown if port == 443 else f"{shown}:{port}"
        accept = "*/*" if any_type else "text/html, application/xhtml+xml, text/plain, text/markdown"
        request = (
            f"GET {target} HTTP/1.1\r\n"
            f"Host: {authority}\r\n"
            f"User-Agent: {USER_AGENT}\r\n"
            f"Accept: {accept}\r\n"
            "Accept-Encoding: identity\r\n"
            "Connection: close\r\n"
            "\r\n"
        ).encode("ascii")
        tls.settimeout(_remaining(deadline))
        tls.sendall(request)

        response = http.client.HTTPResponse(_ResponseSocket(tls, deadline), method="GET")  # type: ignore[arg-type]
        try:
            response.begin()
            status = response.status
            if status in REDIRECT_STATUSES or status == 429 or not 200 <= status < 300:
                return _Response(status, response.headers, b"")
            self._check_type(response.headers, any_type)
            return _Response(status, response.headers, self._read_body(response))
        finally:
            response.close()

    def _check_type(self, headers: http.client.HTTPMessage, any_type: bool) -> None:
        encoding = (headers.get("Content-Encoding") or "identity").strip().lower()
        if encoding not in ("identity", ""):
            raise SourceFailure(Code.UNSUPPORTED_TYPE, "content-encoded responses are not accepted")
        if any_type:
            return
        if media_type(headers.get("Content-Type") or "") not in ACCEPTED_TYPES:
            raise SourceFailure(Code.UNSUPPORTED_TYPE, "content type is not supported")

    def _read_body(self, response: http.client.HTTPResponse) -> bytes:
        declared = response.getheader("Content-Length")
        if declared is not None:
            try:
                if int(declared.strip()) > self._max_bytes:
                    raise SourceFailure(Code.FILE_TOO_LARGE, "the response exceeds the size limit")
            except ValueError:
                pass
        chunks: list[bytes] = []
        total = 0
        while True:
            chunk = response.read(min(_CHUNK, self._max_bytes + 1 - total))
            if not chunk:
                break
            total += len(chunk)
            if total > self._max_bytes:
                raise SourceFailure(Code.FILE_TOO_LARGE, "the response exceeds the size limit")
            chunks.append(chunk)
        return b"".join(chunks)


def _request_url(url: str) -> str:
    """Percent-encode what needs it (IDNA host too) and drop the fragment."""
    safe = safe_url_string(url.strip())
    parts = urlsplit(safe)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, parts.query, ""))
