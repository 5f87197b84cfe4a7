"""The guarded outbound client and the configured calls built on it (upstream federation,
the OpenAI-compatible embedder), against a real HTTPS server on 127.0.0.1.

The server counts every TCP connection it accepts; the client's ``connect`` (from the
test policy) notes every address it dials and refuses anything but loopback, so nothing
leaves the machine whatever the code under test does. Hostile addresses are the crawler
guard's list (``hostile_addresses.py``), tried as literals and behind a name.
"""

from __future__ import annotations

import json
import logging
import threading
import tracemalloc
from collections.abc import Callable
from typing import Any

import pytest

import knowledge.retrieve.upstream as upstream
from knowledge.crawl.guard import parse_host_ip
from knowledge.crawl.outbound import OutboundClient, OutboundPolicy, check_configured_url
from knowledge.embed import build_embedder
from knowledge.embed.openai import OpenAIEmbedder
from knowledge.errors import Code, InvalidInput, SourceFailure
from tests.unit.crawl.conftest import TLS, Connections, Rebinding, Resolver, TestSite
from tests.unit.crawl.hostile_addresses import BLOCKED

pytestmark = pytest.mark.timeout(60)

RETRIEVE = "/api/bots/default/knowledge/retrieve"
EMBEDDINGS = "/v1/embeddings"
MB = 1024 * 1024


@pytest.fixture
def connections() -> Connections:
    return Connections()


@pytest.fixture
def make_policy(
    tls: TLS, resolver: Resolver, site: TestSite, connections: Connections
) -> Callable[..., OutboundPolicy]:
    """The policy a composition root would build, pointed at the test CA, resolver and
    connection recorder; ``loopback`` is the development switch for the site's port."""

    def build(*, loopback: bool = True, resolve: Callable[[str, int], list[str]] | None = None) -> OutboundPolicy:
        return OutboundPolicy(loopback_port=site.port if loopback else None, resolve=resolve or resolver,
                              ssl_context=tls.client_context, connect=connections)

    return build


def code_of(call: Callable[[], object]) -> str:
    with pytest.raises(SourceFailure) as caught:
        call()
    return caught.value.code


def upstream_codes(caplog: pytest.LogCaptureFixture) -> list[str]:
    """The codes upstream federation logged when it gave up (it never raises)."""
    prefix = "upstream retrieval skipped: "
    return [r.getMessage()[len(prefix):] for r in caplog.records if r.getMessage().startswith(prefix)]


def host_of(address: str) -> str:
    return f"[{address}]" if ":" in address else address


def answer_retrieve(site: TestSite, excerpts: list[dict[str, Any]] | None = None) -> None:
    payload = json.dumps({"audience": "customer", "excerpts": excerpts or [
        {"text": "Upstream passage about vault locks.", "path": "help/vault.md"}]}).encode()
    site.routes[RETRIEVE] = lambda h: site.respond(h, 200, payload, "application/json")


def answer_embeddings(site: TestSite) -> None:
    def embeddings(handler: Any) -> None:
        asked = json.loads(site.requests[-1].body)
        rows = [{"index": i, "embedding": [0.25] * asked["dimensions"]} for i, _ in enumerate(asked["input"])]
        site.respond(handler, 200, json.dumps({"data": rows[::-1]}).encode(), "application/json")

    site.routes[EMBEDDINGS] = embeddings


# -- the calls work under the development switch ----------------------------------------


def test_upstream_posts_to_the_checked_address_with_the_audience(
    site: TestSite, make_policy: Any, resolver: Resolver, connections: Connections
) -> None:
    answer_retrieve(site)
    config = {"url": site.origin() + "/", "token": "tok-123", "bot": "default"}
    excerpts = upstream.fetch(config, "vault lock", "customer", policy=make_policy())
    assert [e["path"] for e in excerpts] == ["help/vault.md"]
    seen = site.requests[-1]
    assert (seen.method, seen.path, seen.host) == ("POST", RETRIEVE, f"test.example:{site.port}")
    assert json.loads(seen.body) == {"q": "vault lock", "audience": "customer"}
    assert seen.authorization == "Bearer tok-123"
    assert connections.made == [("127.0.0.1", site.port)]
    assert resolver.calls == [("test.example", site.port)]


def test_the_upstream_bot_cannot_climb_out_of_its_path(site: TestSite, make_policy: Any) -> None:
    config = {"url": site.origin(), "token": "t", "bot": "../../admin?x="}
    assert upstream.fetch(config, "q", "customer", policy=make_policy()) == []
    assert site.paths() == ["/api/bots/..%2F..%2Fadmin%3Fx%3D/knowledge/retrieve"]


def test_embedder_posts_to_the_checked_address(site: TestSite, make_policy: Any, connections: Connections) -> None:
    answer_embeddings(site)
    embedder = OpenAIEmbedder(site.url("/v1"), "sk-test", dimensions=4, policy=make_policy())
    assert embedder.embed(["a", "b"]) == [[0.25] * 4, [0.25] * 4]
    seen = site.requests[-1]
    assert (seen.method, seen.path, seen.authorization) == ("POST", EMBEDDINGS, "Bearer sk-test")
    assert json.loads(seen.body)["input"] == ["a", "b"]
    assert connections.made == [("127.0.0.1", site.port)]


def test_every_call_resolves_again(site: TestSite, make_policy: Any, resolver: Resolver,
                                   caplog: pytest.LogCaptureFixture) -> None:
    answer_retrieve(site)
    answer_embeddings(site)
    policy = make_policy()
    config = {"url": site.origin(), "token": "t"}
    embedder = OpenAIEmbedder(site.url("/v1"), "k", dimensions=2, policy=policy)
    assert upstream.fetch(config, "q", "customer", policy=policy)
    assert embedder.embed(["x"])
    assert len(resolver.calls) == 2
    # the name now points inside the network: both calls refuse, nothing is contacted
    resolver.table["test.example"] = ["10.0.0.1"]
    before = site.connections
    with caplog.at_level(logging.DEBUG, logger=upstream.__name__):
        assert upstream.fetch(config, "q", "customer", policy=policy) == []
    assert upstream_codes(caplog) == [Code.BLOCKED_ADDRESS]
    assert code_of(lambda: embedder.embed(["x"])) == Code.BLOCKED_ADDRESS
    assert site.connections == before


def test_a_second_lookup_cannot_move_the_connection(site: TestSite, make_policy: Any,
                                                    connections: Connections) -> None:
    # the guard sees a public address; a second lookup would say 127.0.0.1. The client
    # connects to what it checked (refused by the test: nothing leaves the machine).
    rebinding = Rebinding("93.184.216.34", "127.0.0.1")
    client = OutboundClient(make_policy(loopback=False, resolve=rebinding), timeout=5, max_bytes=1000)
    assert code_of(lambda: client.request("POST", site.url("/x"), body=b"{}")) == Code.FETCH_TIMEOUT
    assert connections.made == [("93.184.216.34", site.port)]
    assert rebinding.calls == 1
    assert site.connections == 0


# -- hostile addresses, literal and by name, against each configured call ---------------


@pytest.mark.parametrize(("label", "address"), BLOCKED, ids=[b[0] for b in BLOCKED])
def test_upstream_never_contacts_a_hostile_address(
    label: str, address: str, site: TestSite, make_policy: Any, resolver: Resolver, connections: Connections,
    caplog: pytest.LogCaptureFixture,
) -> None:
    answer_retrieve(site)
    resolver.table["hostile.test"] = [str(parse_host_ip(address))]
    policy = make_policy(loopback=False)
    with caplog.at_level(logging.DEBUG, logger=upstream.__name__):
        for url in (f"https://{host_of(address)}:{site.port}", f"https://hostile.test:{site.port}"):
            assert upstream.fetch({"url": url, "token": "t"}, "q", "customer", policy=policy) == []
    assert upstream_codes(caplog) == [Code.BLOCKED_ADDRESS, Code.BLOCKED_ADDRESS]
    assert connections.made == []
    assert site.connections == 0


@pytest.mark.parametrize(("label", "address"), BLOCKED, ids=[b[0] for b in BLOCKED])
def test_embedder_never_contacts_a_hostile_address(
    label: str, address: str, site: TestSite, make_policy: Any, resolver: Resolver, connections: Connections
) -> None:
    answer_embeddings(site)
    resolver.table["hostile.test"] = [str(parse_host_ip(address))]
    policy = make_policy(loopback=False)
    # a literal is refused when the URL is set ...
    with pytest.raises(InvalidInput) as caught:
        OpenAIEmbedder(f"https://{host_of(address)}:{site.port}/v1", "k", dimensions=2, policy=policy)
    assert caught.value.code == Code.BLOCKED_ADDRESS
    with pytest.raises(ValueError, match="blocked_address"):
        build_embedder("openai", {"baseUrl": f"https://{host_of(address)}/v1", "apiKey": "k"}, policy=policy)
    # ... a name when it is called (DNS can change after the URL was accepted)
    embedder = OpenAIEmbedder(f"https://hostile.test:{site.port}/v1", "k", dimensions=2, policy=policy)
    assert code_of(lambda: embedder.embed(["x"])) == Code.BLOCKED_ADDRESS
    assert connections.made == []
    assert site.connections == 0


def test_loopback_is_refused_without_the_switch_and_on_other_ports(
    site: TestSite, make_policy: Any, connections: Connections, caplog: pytest.LogCaptureFixture
) -> None:
    answer_retrieve(site)
    answer_embeddings(site)
    production = make_policy(loopback=False)
    with caplog.at_level(logging.DEBUG, logger=upstream.__name__):
        for url in (site.origin(), site.origin("localhost"), f"https://127.0.0.1:{site.port}"):
            assert upstream.fetch({"url": url, "token": "t"}, "q", "customer", policy=production) == []
    assert upstream_codes(caplog) == [Code.BLOCKED_ADDRESS] * 3
    embedder = OpenAIEmbedder(site.url("/v1"), "k", dimensions=2, policy=production)
    assert code_of(lambda: embedder.embed(["x"])) == Code.BLOCKED_ADDRESS
    other_port = OutboundPolicy(loopback_port=site.port + 1 if site.port < 65535 else 1, resolve=production.resolve,
                                ssl_context=production.ssl_context, connect=connections)
    embedder = OpenAIEmbedder(site.url("/v1"), "k", dimensions=2, policy=other_port)
    assert code_of(lambda: embedder.embed(["x"])) == Code.BLOCKED_ADDRESS
    assert connections.made == []
    assert site.connections == 0


# -- redirects --------------------------------------------------------------------------


def test_a_redirect_within_the_origin_is_followed_and_rechecked(
    site: TestSite, make_policy: Any, resolver: Resolver
) -> None:
    answer_retrieve(site)
    site.routes["/old" + RETRIEVE] = site.redirect(site.url(RETRIEVE), 308)
    excerpts = upstream.fetch({"url": site.url("/old"), "token": "t"}, "q", "customer", policy=make_policy())
    assert len(excerpts) == 1
    assert [(r.method, r.path) for r in site.requests] == [("POST", "/old" + RETRIEVE), ("POST", RETRIEVE)]
    assert json.loads(site.requests[-1].body) == {"q": "q", "audience": "customer"}  # 308 repeats the POST
    assert len(resolver.calls) == 2  # each hop checked on its own
    # a 303 turns the POST into a GET without its body, still within the origin
    site.routes["/see" + RETRIEVE] = site.redirect(RETRIEVE, 303)
    assert upstream.fetch({"url": site.url("/see"), "token": "t"}, "q", "customer", policy=make_policy())
    assert [(r.method, r.path, r.body) for r in site.requests[-2:]] == [
        ("POST", "/see" + RETRIEVE, b'{"q": "q", "audience": "customer"}'), ("GET", RETRIEVE, b"")]


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_a_redirect_to_another_origin_or_to_http_is_refused(
    status: int, site: TestSite, make_policy: Any, connections: Connections, caplog: pytest.LogCaptureFixture
) -> None:
    answer_retrieve(site)
    answer_embeddings(site)
    targets = {
        "/to-other": site.url(RETRIEVE, host="other.example"),  # same address, another origin
        "/to-http": f"http://test.example:{site.port}{RETRIEVE}",  # the switch allows http here, not a downgrade
        "/to-metadata": "https://169.254.169.254/latest/meta-data/",
        "/to-private": f"https://evil.test:{site.port}/",
    }
    for prefix, target in targets.items():
        site.routes[prefix + RETRIEVE] = site.redirect(target, status)
        site.routes[prefix + EMBEDDINGS] = site.redirect(target, status)
    policy = make_policy()
    with caplog.at_level(logging.DEBUG, logger=upstream.__name__):
        for prefix in targets:
            assert upstream.fetch({"url": site.url(prefix), "token": "t"}, "q", "customer", policy=policy) == []
            embedder = OpenAIEmbedder(site.url(prefix + "/v1"), "k", dimensions=2, policy=policy)
            assert code_of(lambda e=embedder: e.embed(["x"])) == Code.BLOCKED_ADDRESS
    assert upstream_codes(caplog) == [Code.BLOCKED_ADDRESS] * len(targets)
    assert {r.path for r in site.requests} == {p + s for p in targets for s in (RETRIEVE, EMBEDDINGS)}
    assert set(connections.made) == {("127.0.0.1", site.port)}  # only the first hop ever connected


def test_too_many_redirects_and_a_redirect_without_location(site: TestSite, make_policy: Any) -> None:
    for n in range(5):
        site.routes[f"/hop{n}"] = site.redirect(site.url(f"/hop{n + 1}"), 307)
    site.routes["/hop5"] = site.page("{}", "application/json")
    site.routes["/nowhere"] = lambda h: site.respond(h, 302, b"", "text/plain")
    policy = make_policy()
    assert code_of(lambda: OutboundClient(policy, timeout=5, max_bytes=100).request("GET", site.url("/hop0"))) == (
        Code.MALFORMED_FILE)
    assert site.paths() == ["/hop0", "/hop1", "/hop2"]
    assert OutboundClient(policy, timeout=5, max_bytes=100, max_redirects=5).request(
        "GET", site.url("/hop0")).body == b"{}"
    assert code_of(lambda: OutboundClient(policy, timeout=5, max_bytes=100).request("GET", site.url("/nowhere"))) == (
        Code.MALFORMED_FILE)


# -- size and time ----------------------------------------------------------------------


def test_an_oversized_answer_fails_with_a_code_in_bounded_memory(site: TestSite, make_policy: Any) -> None:
    sent: list[int] = []
    site.fallback = site.endless("application/json", sent)
    client = OutboundClient(make_policy(), timeout=30, max_bytes=1 * MB)
    tracemalloc.start()
    try:
        assert code_of(lambda: client.request("POST", site.url("/big"), body=b"{}")) == Code.FILE_TOO_LARGE
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8 * MB  # a reader without the cap would have held up to 128 MB
    assert sum(sent) < 64 * MB


def test_oversized_answers_fail_each_configured_call(
    site: TestSite, make_policy: Any, caplog: pytest.LogCaptureFixture
) -> None:
    sent: list[int] = []
    site.routes[RETRIEVE] = site.endless("application/json", sent)
    site.routes[EMBEDDINGS] = site.endless("application/json", sent)
    policy = make_policy()
    with caplog.at_level(logging.DEBUG, logger=upstream.__name__):
        assert upstream.fetch({"url": site.origin(), "token": "t"}, "q", "customer", policy=policy) == []
    assert upstream_codes(caplog) == [Code.FILE_TOO_LARGE]
    embedder = OpenAIEmbedder(site.url("/v1"), "k", dimensions=2, policy=policy)
    with pytest.raises(SourceFailure) as caught:
        embedder.embed(["x"])
    assert (caught.value.code, caught.value.details) == (Code.EMBEDDING_FAILED, {"cause": Code.FILE_TOO_LARGE})


def test_a_declared_length_over_the_cap_is_refused_before_reading(site: TestSite, make_policy: Any) -> None:
    release = threading.Event()

    def liar(handler: Any) -> None:
        handler.send_raw(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000000000\r\n\r\n{")
        release.wait(10)

    site.fallback = liar
    try:
        client = OutboundClient(make_policy(), timeout=20, max_bytes=1000)
        assert code_of(lambda: client.request("GET", site.url("/"))) == Code.FILE_TOO_LARGE
    finally:
        release.set()


def test_a_slow_server_runs_out_of_the_time_budget(
    site: TestSite, make_policy: Any, caplog: pytest.LogCaptureFixture
) -> None:
    # 40 bytes a tenth of a second apart: no single read waits long, only the total is too long
    def slow(handler: Any) -> None:
        handler.send_raw(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 40\r\n\r\n")
        site.drip(handler, [b" "] * 40, 0.1)

    site.fallback = slow
    policy = make_policy()
    assert code_of(lambda: OutboundClient(policy, timeout=0.5, max_bytes=1000).request("GET", site.url("/"))) == (
        Code.FETCH_TIMEOUT)
    with caplog.at_level(logging.DEBUG, logger=upstream.__name__):
        assert upstream.fetch({"url": site.origin(), "token": "t"}, "q", "customer", timeout=0.5, policy=policy) == []
    assert upstream_codes(caplog) == [Code.FETCH_TIMEOUT]
    embedder = OpenAIEmbedder(site.url("/v1"), "k", dimensions=2, timeout=0.5, policy=policy)
    with pytest.raises(SourceFailure) as caught:
        embedder.embed(["x"])
    assert (caught.value.code, caught.value.details) == (Code.EMBEDDING_FAILED, {"cause": Code.FETCH_TIMEOUT})


def test_a_server_that_never_answers_runs_out_of_the_budget(site: TestSite, make_policy: Any) -> None:
    release = threading.Event()
    site.fallback = lambda h: release.wait(10)
    try:
        client = OutboundClient(make_policy(), timeout=0.5, max_bytes=1000)
        assert code_of(lambda: client.request("POST", site.url("/"), body=b"{}")) == Code.FETCH_TIMEOUT
    finally:
        release.set()


# -- statuses, secrets and the certificate ---------------------------------------------


@pytest.mark.parametrize(("status", "code"), [(429, Code.RATE_LIMITED), (503, Code.RATE_LIMITED),
                                              (401, Code.EMBEDDING_FAILED), (404, Code.EMBEDDING_FAILED)])
def test_embedder_statuses_map_to_codes(status: int, code: str, site: TestSite, make_policy: Any) -> None:
    site.routes[EMBEDDINGS] = site.page("SECRET-RESPONSE-TEXT", "text/plain", status=status)
    embedder = OpenAIEmbedder(site.url("/v1"), "sk-SECRET-KEY", dimensions=2, policy=make_policy())
    with pytest.raises(SourceFailure) as caught:
        embedder.embed(["SECRET-INPUT-TEXT"])
    assert caught.value.code == code
    shown = str(caught.value) + repr(caught.value.details)
    assert "SECRET" not in shown


def test_failures_never_show_the_response_the_key_or_the_url(
    site: TestSite, make_policy: Any, caplog: pytest.LogCaptureFixture
) -> None:
    marker = "SECRET-MARKER"
    site.routes[RETRIEVE] = lambda h: h.send_raw(f"HTTP/1.1 {marker}\r\n\r\n".encode())
    site.routes[EMBEDDINGS] = site.page(f'{{"data": "{marker}"}}', "application/json")
    site.routes["/r" + EMBEDDINGS] = site.redirect(f"https://{marker.lower()}.example/")
    policy = make_policy()
    with caplog.at_level(logging.DEBUG):
        assert upstream.fetch({"url": site.origin(), "token": marker}, marker, "customer", policy=policy) == []
        for base in (site.url("/v1"), site.url("/r/v1")):
            with pytest.raises(SourceFailure) as caught:
                OpenAIEmbedder(base, marker, dimensions=2, policy=policy).embed([marker])
            assert marker.lower() not in (str(caught.value) + repr(caught.value.details)).lower()
    assert upstream_codes(caplog) == [Code.MALFORMED_FILE]
    assert marker.lower() not in caplog.text.lower()


def test_header_injection_through_a_token_is_refused_before_connecting(
    site: TestSite, make_policy: Any, connections: Connections
) -> None:
    answer_retrieve(site)
    assert upstream.fetch({"url": site.origin(), "token": "t\r\nX-Admin: 1"}, "q", "customer",
                          policy=make_policy()) == []
    embedder = OpenAIEmbedder(site.url("/v1"), "k\nX-Admin: 1", dimensions=2, policy=make_policy())
    assert code_of(lambda: embedder.embed(["x"])) == Code.EMBEDDING_FAILED
    assert connections.made == []
    assert site.connections == 0


def test_the_certificate_is_checked_against_the_name(site: TestSite, make_policy: Any,
                                                     resolver: Resolver) -> None:
    answer_embeddings(site)
    # nocert.test resolves to the same server, but the certificate does not name it
    embedder = OpenAIEmbedder(site.url("/v1", host="nocert.test"), "k", dimensions=2, policy=make_policy())
    with pytest.raises(SourceFailure) as caught:
        embedder.embed(["x"])
    assert (caught.value.code, caught.value.details) == (Code.EMBEDDING_FAILED, {"cause": Code.MALFORMED_FILE})
    assert site.requests == []


# -- the development switch over plain http ---------------------------------------------


def test_plain_http_reaches_loopback_only_on_the_switched_port(tls: TLS, resolver: Resolver) -> None:
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Plain(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers["Content-Length"]))
            payload = json.dumps({"excerpts": [{"text": "plain"}]}).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Plain)
    accepted: list[Any] = []
    server.verify_request = lambda request, address: accepted.append(address) or True  # type: ignore[method-assign]
    port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        dev = OutboundPolicy(loopback_port=port, resolve=resolver)
        for url in (f"http://127.0.0.1:{port}", f"http://localhost:{port}"):
            assert upstream.fetch({"url": url, "token": "t"}, "q", "customer", policy=dev) == [{"text": "plain"}]
        assert len(accepted) == 2
        other = OutboundPolicy(loopback_port=port + 1 if port < 65535 else 1, resolve=resolver)
        for policy in (None, OutboundPolicy(resolve=resolver), other):
            assert upstream.fetch({"url": f"http://127.0.0.1:{port}", "token": "t"}, "q", "customer",
                                  policy=policy) == []
        # a name that resolves elsewhere never gets plain http, even on the switched port
        resolver.table["public.test"] = ["93.184.216.34"]
        assert upstream.fetch({"url": f"http://public.test:{port}", "token": "t"}, "q", "customer", policy=dev) == []
        assert len(accepted) == 2
    finally:
        server.shutdown()
        server.server_close()


# -- configuration time -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "code"),
    [
        ("http://api.example.com/v1", "invalid_config"),
        ("ftp://api.example.com/", "invalid_config"),
        ("file:///etc/passwd", "invalid_config"),
        ("api.example.com/v1", "invalid_config"),
        ("//api.example.com/v1", "invalid_config"),
        ("https://user:pw@api.example.com/v1", "invalid_config"),
        ("https://api.example.com/v1?key=1", "invalid_config"),
        ("https://api.example.com/v1#frag", "invalid_config"),
        ("https://api.example.com:99999/", "invalid_config"),
        ("https://exa mple.com/", "invalid_config"),
        ("https://api.example.com/\r\nX: 1", "invalid_config"),
        ("https:///v1", "invalid_config"),
        ("https://256.0.0.1/", "invalid_config"),
        ("", "invalid_config"),
        (None, "invalid_config"),
        (42, "invalid_config"),
        ("https://" + "a" * 2050 + ".example/", "invalid_config"),
        ("https://127.0.0.1/v1", "blocked_address"),
        ("https://0x7f.1/v1", "blocked_address"),
        ("https://169.254.169.254/latest", "blocked_address"),
        ("https://[fd00:ec2::254]/", "blocked_address"),
        ("https://[::ffff:10.0.0.1]:8443/", "blocked_address"),
        ("https://10.1/", "blocked_address"),
    ],
)
def test_configured_urls_are_refused_when_set(url: Any, code: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        check_configured_url(url)
    assert caught.value.code == code
    if code == "invalid_config" or url is None:
        return
    with pytest.raises(InvalidInput):
        OpenAIEmbedder(url, "k")


def test_configured_urls_that_pass_and_what_the_switch_changes() -> None:
    assert check_configured_url("https://API.example.com/v1/") == "https://API.example.com/v1"
    assert check_configured_url("https://8.8.8.8:8443") == "https://8.8.8.8:8443"
    assert check_configured_url("https://internal.example/v1") == "https://internal.example/v1"  # names: at call time
    dev = OutboundPolicy(loopback_port=8000)
    assert check_configured_url("http://127.0.0.1:8000", dev) == "http://127.0.0.1:8000"
    assert check_configured_url("http://localhost:8000/v1", dev) == "http://localhost:8000/v1"
    assert check_configured_url("https://127.0.0.1:8000", dev) == "https://127.0.0.1:8000"
    for url, code in (("http://127.0.0.1:8001", "invalid_config"), ("https://127.0.0.1:8001", "blocked_address"),
                      ("https://10.0.0.1:8000", "blocked_address"), ("http://127.0.0.1:8000/?a=1", "invalid_config")):
        with pytest.raises(InvalidInput) as caught:
            check_configured_url(url, dev)
        assert caught.value.code == code
    with pytest.raises(ValueError):
        OutboundPolicy(loopback_port=0)
    with pytest.raises(ValueError):
        OutboundPolicy(loopback_port=70000)
