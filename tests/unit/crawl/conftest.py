"""Fixtures for the crawler tests: a throw-away CA, a local HTTPS server on 127.0.0.1
and a name resolver that maps the test host names onto it.

Nothing here talks to any address but 127.0.0.1; names that map elsewhere (``evil.test``
-> 10.0.0.1) exist only to be refused by the guard before any connection is made.
"""

from __future__ import annotations

import datetime
import ipaddress
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from knowledge.crawl.fetcher import Fetcher
from knowledge.crawl.outbound import OutboundPolicy

CERT_NAMES = ("localhost", "test.example", "other.example", "evil.test")


@dataclass(frozen=True)
class TLS:
    server_context: ssl.SSLContext
    client_context: ssl.SSLContext


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


@pytest.fixture(scope="session")
def tls(tmp_path_factory: pytest.TempPathFactory) -> TLS:
    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_cert = (
        x509.CertificateBuilder()
        .subject_name(_name("kb crawl test CA"))
        .issuer_name(_name("kb crawl test CA"))
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    leaf_key = ec.generate_private_key(ec.SECP256R1())
    san = [x509.DNSName(n) for n in CERT_NAMES] + [x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
    leaf_cert = (
        x509.CertificateBuilder()
        .subject_name(_name("test.example"))
        .issuer_name(ca_cert.subject)
        .public_key(leaf_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName(san), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(leaf_key.public_key()), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )
    folder = tmp_path_factory.mktemp("tls")
    cert_file = folder / "leaf.pem"
    key_file = folder / "leaf.key"
    cert_file.write_bytes(leaf_cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        leaf_key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    server_context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_context.load_cert_chain(cert_file, key_file)
    client_context = ssl.create_default_context(
        cadata=ca_cert.public_bytes(serialization.Encoding.PEM).decode("ascii")
    )
    return TLS(server_context, client_context)


# ---------------------------------------------------------------------------------------
# the server

Route = Callable[["_Handler"], None]


@dataclass
class Seen:
    host: str
    path: str
    user_agent: str
    method: str = "GET"
    body: bytes = b""
    authorization: str = ""


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_GET(self) -> None:
        site: TestSite = self.server.site
        agent = self.headers.get("User-Agent", "")
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if self.command == "POST" and 0 < length <= 1_000_000 else b""
        site.requests.append(Seen(self.headers.get("Host", ""), self.path, agent, self.command, body,
                                  self.headers.get("Authorization", "")))
        route = site.routes.get(self.path) or site.routes.get(self.path.split("?", 1)[0])
        try:
            if route is not None:
                route(self)
            elif site.fallback is not None:
                site.fallback(self)
            else:
                site.respond(self, 404, b"missing", "text/plain")
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError, TimeoutError, OSError):
            self.close_connection = True

    do_POST = do_GET

    # helpers for routes
    def send_raw(self, data: bytes) -> None:
        self.wfile.write(data)
        self.wfile.flush()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    site: TestSite

    def verify_request(self, request: Any, client_address: Any) -> bool:
        self.site.connections += 1  # every TCP connection accepted, before TLS or HTTP
        return True

    def handle_error(self, request: Any, client_address: Any) -> None:
        # Clients that hang up mid-response (size and time limits) or refuse the
        # certificate are what these tests provoke; the tests assert the client side.
        return


@dataclass
class TestSite:
    __test__ = False  # a fixture's type, not a test class
    port: int
    routes: dict[str, Route] = field(default_factory=dict)
    requests: list[Seen] = field(default_factory=list)
    stopping: threading.Event = field(default_factory=threading.Event)
    fallback: Route | None = None
    connections: int = 0

    def url(self, path: str = "/", host: str = "test.example") -> str:
        return f"https://{host}:{self.port}{path}"

    def origin(self, host: str = "test.example") -> str:
        return f"https://{host}:{self.port}"

    def paths(self, host: str | None = None) -> list[str]:
        return [r.path for r in self.requests if host is None or r.host.split(":")[0] == host]

    # -- route builders (tests reach them through the ``site`` fixture) -----------------

    @staticmethod
    def respond(
        handler: _Handler,
        status: int,
        body: bytes,
        content_type: str | None = "text/html; charset=utf-8",
        headers: dict[str, str] | None = None,
        length: int | None = None,
    ) -> None:
        handler.send_response(status)
        if content_type is not None:
            handler.send_header("Content-Type", content_type)
        handler.send_header("Content-Length", str(len(body) if length is None else length))
        for name, value in (headers or {}).items():
            handler.send_header(name, value)
        handler.end_headers()
        handler.wfile.write(body)

    def page(
        self, body: str | bytes, content_type: str | None = "text/html; charset=utf-8", status: int = 200
    ) -> Route:
        data = body.encode("utf-8") if isinstance(body, str) else body
        return lambda h: self.respond(h, status, data, content_type)

    def redirect(self, location: str, status: int = 302) -> Route:
        return lambda h: self.respond(h, status, b"", "text/plain", {"Location": location})

    @staticmethod
    def html(*links: str, title: str = "t", text: str = "") -> str:
        anchors = "".join(f'<a href="{link}">link</a>' for link in links)
        return f"<html><head><title>{title}</title></head><body><p>{text}</p>{anchors}</body></html>"

    def endless(self, content_type: str, sent: list[int]) -> Route:
        """A 200 whose body never ends (no Content-Length, at most 128 MB); ``sent`` gets the
        size of every block written, so a test can show the client stopped reading."""

        def route(handler: _Handler) -> None:
            handler.send_raw(f"HTTP/1.0 200 OK\r\nContent-Type: {content_type}\r\n\r\n".encode())
            block = b"a" * 65536
            for _ in range(2048):
                if self.stopping.is_set():
                    return
                handler.send_raw(block)
                sent.append(len(block))

        return route

    def drip(self, handler: _Handler, chunks: list[bytes], interval: float) -> None:
        """Send ``chunks`` one at a time, ``interval`` seconds apart (stops with the server)."""
        for chunk in chunks:
            if self.stopping.is_set():
                return
            handler.send_raw(chunk)
            time.sleep(interval)



@pytest.fixture
def site(tls: TLS) -> Iterator[TestSite]:
    httpd = _Server(("127.0.0.1", 0), _Handler)
    httpd.socket = tls.server_context.wrap_socket(
        httpd.socket, server_side=True, do_handshake_on_connect=False
    )
    test_site = TestSite(port=httpd.server_address[1])
    httpd.site = test_site
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield test_site
    finally:
        test_site.stopping.set()
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


class Resolver:
    """Maps test names to addresses and counts the lookups; unknown names fail."""

    def __init__(self, table: dict[str, list[str]] | None = None):
        self.table = {
            "localhost": ["127.0.0.1"],
            "test.example": ["127.0.0.1"],
            "other.example": ["127.0.0.1"],
            "nocert.test": ["127.0.0.1"],
            "evil.test": ["10.0.0.1"],
            "meta.test": ["169.254.169.254"],
        }
        self.table.update(table or {})
        self.calls: list[tuple[str, int]] = []

    def __call__(self, host: str, port: int) -> list[str]:
        self.calls.append((host, port))
        if host not in self.table:
            raise socket.gaierror(socket.EAI_NONAME, "unknown test host")
        return list(self.table[host])


class Rebinding:
    """A resolver (for a DNS-rebinding test) that answers with ``first`` on the first lookup and ``then`` afterwards."""

    def __init__(self, first: str, then: str):
        self.answers = [first, then]
        self.calls = 0

    def __call__(self, host: str, port: int) -> list[str]:
        answer = self.answers[min(self.calls, 1)]
        self.calls += 1
        return [answer]


class Connections:
    """The ``connect`` of a test :class:`OutboundPolicy`: notes every address a client opens
    a TCP connection to, and never lets a test reach a non-local address, whatever the code
    under test does (``refuse`` makes every connection fail)."""

    def __init__(self, refuse: bool = False):
        self.made: list[tuple[str, int]] = []
        self.refuse = refuse

    def __call__(self, ip: str, port: int, timeout: float) -> socket.socket:
        self.made.append((ip, port))
        if self.refuse or (ip != "127.0.0.1" and ip != "::1"):
            raise ConnectionRefusedError("test: connection refused")
        return socket.create_connection((ip, port), timeout=timeout)


class RecordingFetcher(Fetcher):
    """A real Fetcher whose policy notes every address it opens a TCP connection to."""

    def __init__(self, policy: OutboundPolicy, recorder: Connections, **kwargs: Any):
        super().__init__(policy, **kwargs)
        self.recorder = recorder

    @property
    def connections(self) -> list[tuple[str, int]]:
        return self.recorder.made


@pytest.fixture
def resolver() -> Resolver:
    return Resolver()


@pytest.fixture
def make_fetcher(tls: TLS, resolver: Resolver, site: TestSite) -> Callable[..., RecordingFetcher]:
    """A fetcher for the ``site`` fixture: loopback allowed on the site's port only (the
    development switch), unless ``loopback=False``."""

    def build(
        *,
        resolve: Callable[[str, int], list[str]] | None = None,
        loopback: bool = True,
        refuse: bool = False,
        ssl_context: ssl.SSLContext | None = None,
        **kwargs: Any,
    ) -> RecordingFetcher:
        kwargs.setdefault("timeout", 5.0)
        recorder = Connections(refuse=refuse)
        policy = OutboundPolicy(loopback_port=site.port if loopback else None, resolve=resolve or resolver,
                                ssl_context=ssl_context or tls.client_context, connect=recorder)
        return RecordingFetcher(policy, recorder, **kwargs)

    return build


class StepClock:
    """A clock that advances one second each time the crawler looks at it."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        self.now += 1.0
        return self.now
