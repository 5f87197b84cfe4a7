"""The fetcher against a real local HTTPS server (127.0.0.1, certificate made per run)."""

from __future__ import annotations

import functools
import ssl
import threading
from collections.abc import Callable
from typing import Any

import pytest

from knowledge.crawl.fetcher import USER_AGENT, Fetcher
from knowledge.crawl.outbound import OutboundPolicy
from knowledge.errors import Code, SourceFailure
from tests.unit.crawl.conftest import Rebinding

pytestmark = pytest.mark.timeout(60)

MAKE = Callable[..., Any]


def failure_code(call: Callable[[], object]) -> str:
    with pytest.raises(SourceFailure) as caught:
        call()
    return caught.value.code


def test_fetch_returns_the_page_and_identifies_itself(site: Any, make_fetcher: MAKE, resolver: Any) -> None:
    site.routes["/hello"] = site.page("<p>hi</p>", "text/html; charset=utf-8")
    fetcher = make_fetcher()
    result = fetcher.fetch(site.url("/hello?x=1#frag"))
    assert result.status == 200
    assert result.body == b"<p>hi</p>"
    assert result.content_type == "text/html; charset=utf-8"
    assert result.media_type == "text/html"
    assert result.final_url == site.url("/hello?x=1")
    seen = site.requests[-1]
    assert seen.path == "/hello?x=1"
    assert seen.user_agent == USER_AGENT == "KnowledgeBot/1.0"
    assert seen.host == f"test.example:{site.port}"
    # connected to the address the guard checked, after exactly one lookup
    assert fetcher.connections == [("127.0.0.1", site.port)]
    assert resolver.calls == [("test.example", site.port)]


def test_every_request_resolves_again(site: Any, make_fetcher: MAKE, resolver: Any) -> None:
    site.routes["/"] = site.page("ok")
    fetcher = make_fetcher()
    fetcher.fetch(site.url("/"))
    fetcher.fetch(site.url("/"))
    assert len(resolver.calls) == 2
    resolver.table["test.example"] = ["10.0.0.1"]
    assert failure_code(lambda: fetcher.fetch(site.url("/"))) == Code.BLOCKED_ADDRESS
    assert fetcher.connections == [("127.0.0.1", site.port)] * 2


def test_dns_rebinding_cannot_redirect_the_connection(site: Any, make_fetcher: MAKE) -> None:
    # The guard sees a public address; a second lookup would say 127.0.0.1. The fetcher
    # must connect to what it checked (the test refuses that connection: nothing leaves
    # the machine) and never look the name up again.
    rebinding = Rebinding("93.184.216.34", "127.0.0.1")
    fetcher = make_fetcher(resolve=rebinding, loopback=False)
    assert failure_code(lambda: fetcher.fetch(site.url("/"))) == Code.FETCH_TIMEOUT
    assert fetcher.connections == [("93.184.216.34", site.port)]
    assert rebinding.calls == 1
    assert site.requests == []


def test_rebinding_to_loopback_first_is_refused_before_connecting(site: Any, make_fetcher: MAKE) -> None:
    rebinding = Rebinding("127.0.0.1", "93.184.216.34")
    fetcher = make_fetcher(resolve=rebinding, loopback=False)
    assert failure_code(lambda: fetcher.fetch(site.url("/"))) == Code.BLOCKED_ADDRESS
    assert fetcher.connections == []


def test_loopback_comes_only_from_the_policy_and_only_for_its_port(
    site: Any, tls: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    site.routes["/"] = site.page("ok")
    url = f"https://127.0.0.1:{site.port}/"
    # the old test variable does nothing any more: only the policy can open loopback
    monkeypatch.setenv("KB_TEST_ALLOW_LOOPBACK", "1")
    assert failure_code(lambda: Fetcher(OutboundPolicy(ssl_context=tls.client_context)).fetch(url)) == (
        Code.BLOCKED_ADDRESS)
    other_port = OutboundPolicy(loopback_port=site.port + 1 if site.port < 65535 else 1,
                                ssl_context=tls.client_context)
    assert failure_code(lambda: Fetcher(other_port).fetch(url)) == Code.BLOCKED_ADDRESS
    assert site.requests == []
    dev = OutboundPolicy(loopback_port=site.port, ssl_context=tls.client_context)
    assert Fetcher(dev).fetch(url).body == b"ok"
    assert site.paths() == ["/"]


def test_private_and_metadata_names_are_never_contacted(site: Any, make_fetcher: MAKE) -> None:
    fetcher = make_fetcher()
    for url in (site.url("/", host="evil.test"), site.url("/", host="meta.test")):
        assert failure_code(functools.partial(fetcher.fetch, url)) == Code.BLOCKED_ADDRESS
    assert failure_code(lambda: fetcher.fetch(f"https://10.0.0.1:{site.port}/")) == Code.BLOCKED_ADDRESS
    assert failure_code(lambda: fetcher.fetch(f"https://u:p@test.example:{site.port}/")) == Code.BLOCKED_ADDRESS
    assert fetcher.connections == []
    # plain http: only the development switch allows it (to loopback, on its port)
    production = make_fetcher(loopback=False)
    assert failure_code(lambda: production.fetch(f"http://test.example:{site.port}/")) == Code.BLOCKED_ADDRESS
    assert failure_code(lambda: fetcher.fetch(f"http://test.example:{site.port + 1}/")) == Code.BLOCKED_ADDRESS
    assert production.connections == fetcher.connections == []
    assert site.requests == []


# -- redirects --------------------------------------------------------------------------


def test_three_redirects_are_followed(site: Any, make_fetcher: MAKE) -> None:
    site.routes["/r1"] = site.redirect("/r2", 301)
    site.routes["/r2"] = site.redirect(site.url("/r3"), 307)
    site.routes["/r3"] = site.redirect("final?x=1", 308)
    site.routes["/final"] = site.page("done")
    fetcher = make_fetcher()
    result = fetcher.fetch(site.url("/r1"))
    assert result.body == b"done"
    assert result.url == site.url("/r1")
    assert result.final_url == site.url("/final?x=1")
    assert site.paths() == ["/r1", "/r2", "/r3", "/final?x=1"]
    assert len(fetcher.connections) == 4  # each hop checked and connected on its own


def test_a_fourth_redirect_is_refused(site: Any, make_fetcher: MAKE) -> None:
    for n in range(1, 6):
        site.routes[f"/hop{n}"] = site.redirect(f"/hop{n + 1}", 302)
    fetcher = make_fetcher()
    assert failure_code(lambda: fetcher.fetch(site.url("/hop1"))) == Code.MALFORMED_FILE
    assert site.paths() == ["/hop1", "/hop2", "/hop3", "/hop4"]
    assert make_fetcher(max_redirects=4).fetch(site.url("/hop2")).status == 404


def test_redirect_into_a_private_address_is_blocked(site: Any, make_fetcher: MAKE, resolver: Any) -> None:
    site.routes["/go"] = site.redirect(f"https://evil.test:{site.port}/admin")
    site.routes["/go-literal"] = site.redirect("https://169.254.169.254/latest/meta-data/")
    site.routes["/go-decimal"] = site.redirect(f"https://167772161:{site.port}/")  # 10.0.0.1
    fetcher = make_fetcher()
    assert failure_code(lambda: fetcher.fetch(site.url("/go"))) == Code.BLOCKED_ADDRESS
    assert ("evil.test", site.port) in resolver.calls
    assert failure_code(lambda: fetcher.fetch(site.url("/go-literal"))) == Code.BLOCKED_ADDRESS
    assert failure_code(lambda: fetcher.fetch(site.url("/go-decimal"))) == Code.BLOCKED_ADDRESS
    assert all(ip == "127.0.0.1" for ip, _ in fetcher.connections)
    assert "/admin" not in site.paths()


def test_redirect_to_http_is_refused(site: Any, make_fetcher: MAKE) -> None:
    site.routes["/down"] = site.redirect(f"http://test.example:{site.port}/plain")
    site.routes["/plain"] = site.page("should not be reached")
    fetcher = make_fetcher()
    assert failure_code(lambda: fetcher.fetch(site.url("/down"))) == Code.BLOCKED_ADDRESS
    assert site.paths() == ["/down"]


def test_redirect_outside_the_origins_is_blocked(site: Any, make_fetcher: MAKE) -> None:
    site.routes["/away"] = site.redirect(site.url("/elsewhere", host="other.example"))
    site.routes["/elsewhere"] = site.page("other site")
    fetcher = make_fetcher()
    origins = [site.origin()]
    assert failure_code(lambda: fetcher.fetch(site.url("/away"), origins=origins)) == Code.BLOCKED_ADDRESS
    assert site.paths() == ["/away"]
    # the origin check is what refused it: without origins the same hop is fine
    assert fetcher.fetch(site.url("/away")).body == b"other site"
    assert failure_code(lambda: fetcher.fetch(site.url("/", host="other.example"), origins=origins)) == (
        Code.BLOCKED_ADDRESS
    )


def test_redirect_forbidden_by_robots_is_not_followed(site: Any, make_fetcher: MAKE) -> None:
    site.routes["/moved"] = site.redirect("/private/page")
    site.routes["/private/page"] = site.page("secret")
    fetcher = make_fetcher()
    asked: list[str] = []

    def may_follow(url: str) -> bool:
        asked.append(url)
        return "/private/" not in url

    assert failure_code(lambda: fetcher.fetch(site.url("/moved"), may_follow=may_follow)) == Code.ROBOTS_DENIED
    assert asked == [site.url("/private/page")]
    assert site.paths() == ["/moved"]


def test_redirect_without_location_is_malformed(site: Any, make_fetcher: MAKE) -> None:
    site.routes["/nowhere"] = lambda h: site.respond(h, 302, b"", "text/plain")
    assert failure_code(lambda: make_fetcher().fetch(site.url("/nowhere"))) == Code.MALFORMED_FILE


# -- time and size limits ---------------------------------------------------------------


def test_slow_drip_body_hits_the_total_deadline(site: Any, make_fetcher: MAKE) -> None:
    # 40 bytes, one every 0.1 s: no single read waits long, only the total is too long.
    def slow(handler: Any) -> None:
        handler.send_raw(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 40\r\n\r\n")
        site.drip(handler, [b"x"] * 40, 0.1)

    site.routes["/slow"] = slow
    fetcher = make_fetcher(timeout=1.0)
    assert failure_code(lambda: fetcher.fetch(site.url("/slow"))) == Code.FETCH_TIMEOUT


def test_slow_drip_headers_hit_the_total_deadline(site: Any, make_fetcher: MAKE) -> None:
    head = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nok"

    site.routes["/slow-head"] = lambda h: site.drip(h, [bytes([b]) for b in head], 0.05)
    fetcher = make_fetcher(timeout=1.0)
    assert failure_code(lambda: fetcher.fetch(site.url("/slow-head"))) == Code.FETCH_TIMEOUT


def test_server_that_never_answers_times_out(site: Any, make_fetcher: MAKE) -> None:
    release = threading.Event()
    site.routes["/silent"] = lambda h: release.wait(10)
    try:
        assert failure_code(lambda: make_fetcher(timeout=0.5).fetch(site.url("/silent"))) == Code.FETCH_TIMEOUT
    finally:
        release.set()


def test_body_over_the_limit_is_refused_while_streaming(site: Any, make_fetcher: MAKE) -> None:
    sent: list[int] = []
    site.routes["/endless"] = site.endless("text/html", sent)
    fetcher = make_fetcher()  # the default 8 MB limit
    assert failure_code(lambda: fetcher.fetch(site.url("/endless"))) == Code.FILE_TOO_LARGE


def test_body_limit_boundary(site: Any, make_fetcher: MAKE) -> None:
    site.routes["/exact"] = site.page(b"x" * 1000, "text/plain")
    site.routes["/over"] = site.page(b"x" * 1001, "text/plain")
    fetcher = make_fetcher(max_bytes=1000)
    assert len(fetcher.fetch(site.url("/exact")).body) == 1000
    assert failure_code(lambda: fetcher.fetch(site.url("/over"))) == Code.FILE_TOO_LARGE


def test_chunked_body_over_the_limit(site: Any, make_fetcher: MAKE) -> None:
    def chunked(handler: Any) -> None:
        handler.send_raw(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n")
        for _ in range(20):
            handler.send_raw(b"100\r\n" + b"c" * 256 + b"\r\n")
        handler.send_raw(b"0\r\n\r\n")

    site.routes["/chunked"] = chunked
    assert len(make_fetcher(max_bytes=5120).fetch(site.url("/chunked")).body) == 5120
    assert failure_code(lambda: make_fetcher(max_bytes=5000).fetch(site.url("/chunked"))) == Code.FILE_TOO_LARGE


def test_declared_length_over_the_limit_is_refused_before_reading(site: Any, make_fetcher: MAKE) -> None:
    # Claims 100 GB, sends a few bytes and keeps the connection open: only the header can
    # have decided, since reading would wait for the deadline.
    release = threading.Event()

    def liar(handler: Any) -> None:
        handler.send_raw(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 100000000000\r\n\r\nabc")
        release.wait(10)

    site.routes["/huge"] = liar
    try:
        fetcher = make_fetcher(timeout=10.0)
        assert failure_code(lambda: fetcher.fetch(site.url("/huge"))) == Code.FILE_TOO_LARGE
    finally:
        release.set()


# -- content types and statuses ---------------------------------------------------------


@pytest.mark.parametrize(
    "content_type",
    ["text/html", "TEXT/HTML; charset=ISO-8859-1", "application/xhtml+xml", "text/plain", "text/markdown"],
)
def test_accepted_content_types(site: Any, make_fetcher: MAKE, content_type: str) -> None:
    site.routes["/doc"] = site.page("body", content_type)
    assert make_fetcher().fetch(site.url("/doc")).body == b"body"


@pytest.mark.parametrize(
    "content_type",
    ["application/pdf", "image/png", "application/json", "text/csv", "application/octet-stream", "", None],
)
def test_other_content_types_are_unsupported(site: Any, make_fetcher: MAKE, content_type: str | None) -> None:
    site.routes["/doc"] = site.page(b"%PDF-1.7 ...", content_type)
    assert failure_code(lambda: make_fetcher().fetch(site.url("/doc"))) == Code.UNSUPPORTED_TYPE


def test_compressed_responses_are_unsupported(site: Any, make_fetcher: MAKE) -> None:
    site.routes["/gz"] = lambda h: site.respond(h, 200, b"\x1f\x8b...", "text/html", {"Content-Encoding": "gzip"})
    assert failure_code(lambda: make_fetcher().fetch(site.url("/gz"))) == Code.UNSUPPORTED_TYPE


def test_robots_fetch_accepts_any_content_type(site: Any, make_fetcher: MAKE) -> None:
    site.routes["/robots.txt"] = site.page("User-agent: *\nDisallow: /\n", "application/octet-stream")
    result = make_fetcher().fetch_robots(site.url("/robots.txt"))
    assert result.body.startswith(b"User-agent")


def test_rate_limit_and_error_statuses(site: Any, make_fetcher: MAKE) -> None:
    site.routes["/busy"] = site.page("slow down", "text/plain", status=429)
    site.routes["/gone"] = site.page("{}", "application/json", status=404)
    site.routes["/broken"] = site.page("oops", "text/plain", status=503)
    fetcher = make_fetcher()
    assert failure_code(lambda: fetcher.fetch(site.url("/busy"))) == Code.RATE_LIMITED
    gone = fetcher.fetch(site.url("/gone"))
    assert (gone.status, gone.body) == (404, b"")
    assert fetcher.fetch(site.url("/broken")).status == 503


def test_garbage_instead_of_http_is_malformed(site: Any, make_fetcher: MAKE) -> None:
    site.routes["/garbage"] = lambda h: h.send_raw(b"SSH-2.0-OpenSSH_9.0\r\n\r\nnot http at all")
    assert failure_code(lambda: make_fetcher().fetch(site.url("/garbage"))) == Code.MALFORMED_FILE


def test_certificates_are_verified_against_the_host_name(site: Any, make_fetcher: MAKE) -> None:
    site.routes["/"] = site.page("ok")
    # nocert.test resolves to the same server, but the certificate does not name it
    assert failure_code(lambda: make_fetcher().fetch(site.url("/", host="nocert.test"))) == Code.MALFORMED_FILE
    # a client that does not trust the test CA refuses the server
    untrusting = make_fetcher(ssl_context=ssl.create_default_context())
    assert failure_code(lambda: untrusting.fetch(site.url("/"))) == Code.MALFORMED_FILE
    assert site.requests == []


def test_failure_messages_never_contain_fetched_text(site: Any, make_fetcher: MAKE) -> None:
    marker = "SECRET-PAGE-TEXT"
    site.routes["/a"] = site.redirect(f"http://{marker}.example/{marker}")
    site.routes["/b"] = site.page(marker, f"application/{marker.lower()}")
    site.routes["/c"] = lambda h: h.send_raw(f"HTTP/1.1 {marker}\r\n\r\n".encode())
    fetcher = make_fetcher()
    for path in ("/a", "/b", "/c"):
        with pytest.raises(SourceFailure) as caught:
            fetcher.fetch(site.url(path))
        assert marker.lower() not in str(caught.value).lower()
        assert marker.lower() not in repr(caught.value.details).lower()
