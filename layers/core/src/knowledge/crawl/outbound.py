"""Guarded outbound HTTP: the one way this service calls a URL someone else chose.

The crawler (:mod:`knowledge.crawl.fetcher`), upstream federation, the OpenAI-compatible
embedder and any later tenant-configured endpoint all connect through :class:`Transport`:

* the URL passes :func:`~knowledge.crawl.guard.check_url` on every request and every
  redirect hop: ``https`` only, the host resolved once and every address checked;
* the TCP connection is opened to one of exactly the checked addresses, and TLS is then
  negotiated with the URL's host as SNI and certificate name, so a second DNS lookup that
  answers differently is never made;
* one deadline covers the whole call (lookup, connect, TLS, request, headers, body, every
  hop): a server that drips a byte at a time runs into it (``fetch_timeout``);
* the body is read in chunks up to a cap per use and refused past it, declared or not
  (``file_too_large``), so a hostile endpoint cannot fill a function's memory;
* errors are fixed strings: never the response text, never the URL.

:class:`OutboundClient` is what a configured integration uses: one request, redirects
followed only within the URL's own origin (each hop re-checked; elsewhere or to ``http``
is ``blocked_address``), the status and body handed back for the caller to interpret.

:class:`~knowledge.settings.OutboundPolicy` (re-exported here) is built once by the
composition root and passed down. Its ``loopback_port`` is the development switch of
``kb serve --dev-allow-loopback PORT``; the AWS wiring never sets it. ``resolve``,
``ssl_context`` and ``connect`` let tests point the real code at a local server.

:func:`check_configured_url` is the rule applied when such a URL is *set* (a bot's
settings): ``invalid_config`` for anything but a bare ``https`` base URL, ``blocked_address``
for an IP literal in a blocked range. Resolution-time checks still run at every call.
"""

from __future__ import annotations

import http.client
import io
import socket
import ssl
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urljoin, urlsplit

from knowledge.crawl.guard import Resolver, blocked, check_url, literal_blocked, split_url, system_resolve
from knowledge.errors import Code, InvalidInput, SourceFailure
from knowledge.settings import PRODUCTION_OUTBOUND, OutboundPolicy

__all__ = [
    "PRODUCTION",
    "REDIRECT_STATUSES",
    "USER_AGENT",
    "OutboundClient",
    "OutboundPolicy",
    "Response",
    "Transport",
    "check_configured_url",
    "read_capped",
    "remaining",
]

USER_AGENT = "KnowledgeBot/1.0"
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
#: the longest URL a bot's settings may hold
MAX_CONFIGURED_URL_CHARS = 2048
INVALID_CONFIG = "invalid_config"
_CHUNK = 64 * 1024
_PATH_SAFE = "/%:@!$&'()*+,;=-._~"

#: decides, once the status and headers are in, whether the body is read (may raise)
WantBody = Callable[[int, http.client.HTTPMessage], bool]


#: what every production path uses (defined with the settings, re-exported here)
PRODUCTION = PRODUCTION_OUTBOUND

_default_context: ssl.SSLContext | None = None
_context_lock = threading.Lock()


def _system_context() -> ssl.SSLContext:
    """The system trust store, loaded once per process (verification on, hostname checked)."""
    global _default_context
    with _context_lock:
        if _default_context is None:
            _default_context = ssl.create_default_context()
        return _default_context


@dataclass(frozen=True)
class Response:
    """One HTTP response. ``body`` is empty when the caller chose not to read it."""

    url: str
    status: int
    headers: http.client.HTTPMessage
    body: bytes

    @property
    def content_type(self) -> str:
        return (self.headers.get("Content-Type") or "").strip()


# -- reading under a deadline ------------------------------------------------------------


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
            raise TimeoutError("deadline passed")
        self._sock.settimeout(remaining)
        return self._sock.recv_into(buffer)


class _ResponseSocket:
    """What ``http.client.HTTPResponse`` needs from a socket: ``makefile``."""

    def __init__(self, sock: socket.socket, deadline: float):
        self._sock = sock
        self._deadline = deadline

    def makefile(self, mode: str, *args: Any, **kwargs: Any) -> io.BufferedReader:
        return io.BufferedReader(_DeadlineReader(self._sock, self._deadline), _CHUNK)


def remaining(deadline: float) -> float:
    """Seconds left before ``deadline`` (``time.monotonic()``); ``fetch_timeout`` when none."""
    left = deadline - time.monotonic()
    if left <= 0:
        raise SourceFailure(Code.FETCH_TIMEOUT, "the endpoint did not answer in time")
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
        worker.join(remaining(deadline))
        if worker.is_alive():
            raise SourceFailure(Code.FETCH_TIMEOUT, "host name lookup timed out")
        if "error" in box:
            raise box["error"]
        return list(box["value"])

    return bounded


def read_capped(response: http.client.HTTPResponse, max_bytes: int) -> bytes:
    """The body, refused with ``file_too_large`` once it exceeds ``max_bytes`` (a declared
    length over the cap is refused before reading); never holds more than the cap + 64 KiB."""
    declared = response.getheader("Content-Length")
    if declared is not None:
        try:
            too_large = int(declared.strip()) > max_bytes
        except ValueError:
            too_large = False
        if too_large:
            raise SourceFailure(Code.FILE_TOO_LARGE, "the response exceeds the size limit")
    chunks: list[bytes] = []
    total = 0
    while True:
        chunk = response.read(min(_CHUNK, max_bytes + 1 - total))
        if not chunk:
            break
        total += len(chunk)
        if total > max_bytes:
            raise SourceFailure(Code.FILE_TOO_LARGE, "the response exceeds the size limit")
        chunks.append(chunk)
    return b"".join(chunks)


def _header_safe(text: str) -> bool:
    return all(ord(c) >= 0x20 and ord(c) != 0x7F for c in text)


# -- the transport -----------------------------------------------------------------------


class Transport:
    """One guarded HTTP/1.1 exchange at a time, under an :class:`OutboundPolicy`."""

    def __init__(self, policy: OutboundPolicy | None = None, *, user_agent: str = USER_AGENT):
        self.policy = policy or PRODUCTION
        self._resolve: Resolver = self.policy.resolve or system_resolve
        self._ssl = self.policy.ssl_context
        self._user_agent = user_agent

    def check(self, url: str, deadline: float) -> list[str]:
        """The guard's addresses for ``url`` (the lookup bounded by ``deadline``)."""
        return check_url(url, _resolve_within(self._resolve, deadline), loopback_port=self.policy.loopback_port)

    def exchange(
        self,
        url: str,
        addresses: list[str],
        deadline: float,
        *,
        method: str = "GET",
        headers: Mapping[str, str] | None = None,
        body: bytes | None = None,
        want_body: WantBody,
        max_bytes: int,
    ) -> Response:
        """Send one request to one of ``addresses`` (checked for ``url``) and read the reply.

        Connection, TLS, parsing and time failures become ``fetch_timeout`` or
        ``malformed_file``; a body over ``max_bytes`` is ``file_too_large``."""
        scheme, host, port = split_url(url, loopback_port=self.policy.loopback_port)
        head = self._head(url, host, port, method, headers or {}, body)  # ValueError before any connection
        try:
            sock = self._connect(addresses, port, deadline)
            try:
                conn: socket.socket = self._handshake(sock, host, deadline) if scheme == "https" else sock
            except BaseException:
                sock.close()
                raise
            with conn:
                conn.settimeout(remaining(deadline))
                conn.sendall(head + (body or b""))
                return self._response(conn, url, deadline, method=method, want_body=want_body,
                                      max_bytes=max_bytes)
        except SourceFailure:
            raise
        except TimeoutError:
            raise SourceFailure(Code.FETCH_TIMEOUT, "the endpoint did not answer in time") from None
        except (ssl.SSLError, ssl.CertificateError):
            raise SourceFailure(Code.MALFORMED_FILE, "tls negotiation with the endpoint failed") from None
        except (http.client.HTTPException, ValueError):
            raise SourceFailure(Code.MALFORMED_FILE, "the response could not be parsed") from None
        except OSError:
            raise SourceFailure(Code.FETCH_TIMEOUT, "the connection to the endpoint failed") from None

    # -- internals ------------------------------------------------------------------------

    def _open_socket(self, ip: str, port: int, timeout: float) -> socket.socket:
        """Open the TCP connection to a checked address (the only place that connects)."""
        if self.policy.connect is not None:
            return self.policy.connect(ip, port, timeout)
        return socket.create_connection((ip, port), timeout=timeout)

    def _connect(self, addresses: list[str], port: int, deadline: float) -> socket.socket:
        last: OSError | None = None
        for ip in addresses:
            try:
                return self._open_socket(ip, port, remaining(deadline))
            except TimeoutError:
                raise
            except OSError as exc:
                last = exc
        raise last or OSError("no address to connect to")

    def _handshake(self, sock: socket.socket, host: str, deadline: float) -> ssl.SSLSocket:
        context = self._ssl or _system_context()
        tls = context.wrap_socket(sock, server_hostname=host, do_handshake_on_connect=False)
        tls.settimeout(remaining(deadline))
        tls.do_handshake()
        return tls

    def _head(
        self, url: str, host: str, port: int, method: str, headers: Mapping[str, str], body: bytes | None
    ) -> bytes:
        """The request line and headers; ``ValueError`` for a method or header that could
        smuggle another header or request (control characters, a ``:`` in a name)."""
        parts = urlsplit(url)
        target = quote(parts.path or "/", safe=_PATH_SAFE)
        if parts.query:
            target += "?" + quote(parts.query, safe=_PATH_SAFE + "?")
        shown = f"[{host}]" if ":" in host else host
        default_port = 443 if parts.scheme.lower() == "https" else 80
        fields = {"Host": shown if port == default_port else f"{shown}:{port}", "User-Agent": self._user_agent}
        fields.update(headers)
        fields["Accept-Encoding"] = "identity"
        fields["Connection"] = "close"
        if body is not None:
            fields["Content-Length"] = str(len(body))
        if not method.isalpha() or not method.isascii():
            raise ValueError("the request method must be a token")
        for name, value in fields.items():
            if not name or ":" in name or not _header_safe(name) or not _header_safe(value):
                raise ValueError("request headers must not contain control characters")
        head = f"{method} {target} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in fields.items()) + "\r\n"
        try:
            return head.encode("latin-1")
        except UnicodeEncodeError:
            raise ValueError("request headers must be latin-1 text") from None

    def _response(
        self, conn: socket.socket, url: str, deadline: float, *, method: str, want_body: WantBody, max_bytes: int
    ) -> Response:
        response = http.client.HTTPResponse(_ResponseSocket(conn, deadline), method=method)  # type: ignore[arg-type]
        try:
            response.begin()
            status = response.status
            data = read_capped(response, max_bytes) if want_body(status, response.headers) else b""
            return Response(url, status, response.headers, data)
        finally:
            response.close()


# -- the client of configured integrations -----------------------------------------------


def _success(status: int, headers: http.client.HTTPMessage) -> bool:
    return 200 <= status < 300


class OutboundClient:
    """One guarded request to a configured endpoint, with its own time budget and size cap.

    ``timeout`` is the total budget in seconds (every hop included), ``max_bytes`` the
    largest body read (only 2xx bodies are read), ``max_redirects`` how many redirects
    within the request URL's own origin are followed (307/308 repeat the request, 301/302/303
    become a GET without body). A redirect to another origin, or from ``https`` to
    ``http``, is ``blocked_address``; too many, or one without ``Location``, is
    ``malformed_file``.

    Each use picks its own limits: upstream federation 2.5 s and 2 MB, the embedder 30 s and
    a cap sized to the vectors asked for; an answer-time reader would take, say,
    ``OutboundClient(services.outbound, timeout=1.0, max_bytes=64 * 1024)``."""

    def __init__(
        self,
        policy: OutboundPolicy | None = None,
        *,
        timeout: float,
        max_bytes: int,
        max_redirects: int = 2,
        user_agent: str = USER_AGENT,
    ):
        if timeout <= 0 or max_bytes < 0 or max_redirects < 0:
            raise ValueError("timeout must be positive; max_bytes and max_redirects must not be negative")
        self.transport = Transport(policy, user_agent=user_agent)
        self.timeout = float(timeout)
        self.max_bytes = int(max_bytes)
        self.max_redirects = int(max_redirects)

    def request(
        self,
        method: str,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        body: bytes | None = None,
    ) -> Response:
        """The final response (any status; the body only for 2xx), or ``SourceFailure``."""
        deadline = time.monotonic() + self.timeout
        policy = self.transport.policy
        current = url
        origin = split_url(current, loopback_port=policy.loopback_port)
        redirects = 0
        while True:
            addresses = self.transport.check(current, deadline)
            response = self.transport.exchange(current, addresses, deadline, method=method, headers=headers,
                                               body=body, want_body=_success, max_bytes=self.max_bytes)
            if response.status not in REDIRECT_STATUSES:
                return response
            location = (response.headers.get("Location") or "").strip()
            if not location:
                raise SourceFailure(Code.MALFORMED_FILE, "redirect without a location")
            try:
                target = urljoin(current, location)
            except ValueError:
                raise blocked("malformed redirect target") from None
            if split_url(target, loopback_port=policy.loopback_port) != origin:
                raise blocked("redirect leaves the endpoint's origin")
            redirects += 1
            if redirects > self.max_redirects:
                raise SourceFailure(Code.MALFORMED_FILE, "too many redirects")
            if response.status in (301, 302, 303) and method not in ("GET", "HEAD"):
                method, body = "GET", None
                headers = {k: v for k, v in (headers or {}).items() if k.lower() != "content-type"}
            current = target.split("#", 1)[0]


# -- configuration time ------------------------------------------------------------------


def check_configured_url(value: Any, policy: OutboundPolicy | None = None) -> str:
    """Validate a base URL as it is stored in a bot's settings (upstream ``url``, embedder
    ``baseUrl``); returns it without a trailing ``/``.

    ``invalid_config`` (:class:`~knowledge.errors.InvalidInput`): not a string, too long,
    spaces or control characters, not ``https`` (``http`` only on the development loopback
    port), user information, a query or fragment, no valid host. ``blocked_address``: the
    host is an IP literal in a blocked range. Names are not resolved here: DNS can change,
    so every call checks again."""
    loopback_port = (policy or PRODUCTION).loopback_port
    if not isinstance(value, str) or not value.strip() or len(value) > MAX_CONFIGURED_URL_CHARS:
        raise InvalidInput(f"the URL must be a non-empty string of at most {MAX_CONFIGURED_URL_CHARS} characters",
                           code=INVALID_CONFIG)
    url = value.strip()
    if any(c.isspace() or ord(c) < 0x20 or ord(c) == 0x7F for c in url):
        raise InvalidInput("the URL must not contain spaces or control characters", code=INVALID_CONFIG)
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        raise InvalidInput("the URL is not valid", code=INVALID_CONFIG) from None
    scheme = parts.scheme.lower()
    dev_http = scheme == "http" and loopback_port is not None and (port or 80) == loopback_port
    if scheme != "https" and not dev_http:
        raise InvalidInput("the URL must be an https:// address", code=INVALID_CONFIG)
    if parts.username is not None or parts.password is not None or "@" in parts.netloc:
        raise InvalidInput("the URL must not carry user information", code=INVALID_CONFIG)
    if parts.query or parts.fragment or "?" in url or "#" in url:
        raise InvalidInput("the URL must not have a query or fragment", code=INVALID_CONFIG)
    try:
        _, host, resolved_port = split_url(url, loopback_port=loopback_port)
    except SourceFailure:
        raise InvalidInput("the URL has no valid host", code=INVALID_CONFIG) from None
    if literal_blocked(host, resolved_port, loopback_port=loopback_port):
        raise InvalidInput("the URL's address is not allowed", code=Code.BLOCKED_ADDRESS)
    return url.rstrip("/")
