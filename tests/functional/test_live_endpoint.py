"""Live data read from an operator's HTTPS endpoint at answer time, through the route table
(SQLite + tantivy) against a real HTTPS server on 127.0.0.1 (the crawler tests' throw-away
CA and resolver): the endpoint's rows answer, a slow or failing endpoint never fails the
question and is reported with a stable code, the 30 s cache with an injected clock, hostile
answers refused with their codes, and the URL checked when it is configured."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from knowledge.answer import endpoint
from knowledge.answer.service import replace_live_table
from knowledge.crawl.outbound import OutboundPolicy
from tests.functional.test_lifecycle import KB, Api, create
from tests.unit.crawl import conftest as crawl_fixtures

tls = crawl_fixtures.tls
site = crawl_fixtures.site
resolver = crawl_fixtures.resolver

pytestmark = pytest.mark.timeout(60)

FEE_Q = "What is the BTC withdrawal fee?"
BTC = {"area": "withdrawal", "name": "Bitcoin", "code": "BTC", "fixedFee": 0.0005, "processingTime": "up to 1 hour"}
CARD = {"area": "deposit", "name": "Card", "percentageFee": "2.5%"}


def tables(*rows: dict[str, Any], name: str = "withdrawals") -> bytes:
    return json.dumps({"tables": {name: list(rows)}}).encode()


@pytest.fixture(autouse=True)
def fresh_cache():
    endpoint.CACHE.clear()
    yield
    endpoint.CACHE.clear()


@pytest.fixture
def api(services, site, tls, resolver):
    # the development policy (``kb serve --dev-allow-loopback PORT``), pointed at the test CA
    # and resolver (test.example -> 127.0.0.1, evil.test -> 10.0.0.1)
    services.outbound = OutboundPolicy(loopback_port=site.port, resolve=resolver, ssl_context=tls.client_context)
    return Api(services)


def serve(site, path: str, body: bytes, status: int = 200) -> None:
    site.routes[path] = site.page(body, "application/json", status=status)


def ask(api, q: str = FEE_Q, audience: str = "customer") -> dict[str, Any]:
    status, body, _ = api("POST", f"{KB}/retrieve", {"q": q, "audience": audience})
    assert status == 200, body
    return body


def live_texts(reply: dict[str, Any]) -> list[str]:
    return [e["text"] for e in reply["excerpts"] if e["sourceType"] == "live"]


def rates_source(api, site, **config: Any) -> str:
    return create(api, "live", {"endpoint": site.url("/rates"), **config}, name="Rates")["id"]


def test_the_endpoint_rows_answer_a_fee_question_and_pass_the_gate(api, site):
    serve(site, "/rates", tables(BTC, CARD))
    sid = rates_source(api, site)
    reply = ask(api)
    (text,) = live_texts(reply)
    assert "Bitcoin (BTC): fixed fee 0.0005" in text
    assert reply["gate"]["passed"] is True
    assert "liveUnavailable" not in reply
    live = next(e for e in reply["excerpts"] if e["sourceType"] == "live")
    assert live["sourceId"] == sid and live["path"] == "live/withdrawals"
    assert site.paths() == ["/rates"]
    # a question with no topic never calls the endpoint
    ask(api, "How do I reset my password?")
    assert site.paths() == ["/rates"]


def test_a_slow_endpoint_never_fails_the_question_and_is_reported(api, site):
    def slow(handler):
        time.sleep(1.5)  # past the 1 s budget
        site.respond(handler, 200, tables(BTC), "application/json")

    site.routes["/rates"] = slow
    sid = rates_source(api, site)
    reply = ask(api)
    assert live_texts(reply) == []
    assert reply["liveUnavailable"] == [{"sourceId": sid, "code": "fetch_timeout"}]
    assert (reply["gate"]["passed"], reply["wouldAnswer"]) == (False, False)


def test_endpoint_tables_are_read_besides_pushed_ones_and_a_failure_drops_both(api, services, site, clock):
    serve(site, "/rates", tables(BTC))
    sid = rates_source(api, site)
    replace_live_table(services, "default", "deposits", {"rows": [{**CARD, "fixedFee": 1}]})
    texts = live_texts(ask(api, "What are the fees?"))
    assert len(texts) == 2 and any("Card" in t for t in texts) and any("Bitcoin" in t for t in texts)
    serve(site, "/rates", b"{}", status=503)
    clock.advance(31)
    reply = ask(api, "What are the fees?")
    assert live_texts(reply) == []  # never a partial read
    assert reply["liveUnavailable"] == [{"sourceId": sid, "code": "live_endpoint_status"}]


def test_a_read_is_kept_30_seconds_never_longer(api, site, clock):
    serve(site, "/rates", tables(BTC))
    rates_source(api, site)
    assert "fixed fee 0.0005" in live_texts(ask(api))[0]
    serve(site, "/rates", tables({**BTC, "fixedFee": 0.0007}))
    clock.advance(30)
    assert "fixed fee 0.0005" in live_texts(ask(api))[0]  # from the cache: no call
    assert site.paths() == ["/rates"]
    clock.advance(1)
    assert "fixed fee 0.0007" in live_texts(ask(api))[0]  # 31 s: read again
    assert site.paths() == ["/rates", "/rates"]


def test_a_stale_value_is_never_served_when_the_endpoint_fails(api, site, clock):
    serve(site, "/rates", tables(BTC))
    sid = rates_source(api, site)
    assert live_texts(ask(api))
    serve(site, "/rates", b"not json")
    clock.advance(31)
    reply = ask(api)
    assert live_texts(reply) == []
    assert reply["liveUnavailable"] == [{"sourceId": sid, "code": "malformed_file"}]
    # the failure is remembered a few seconds (one budget spent, not one per question) ...
    clock.advance(4)
    assert ask(api)["liveUnavailable"] == [{"sourceId": sid, "code": "malformed_file"}]
    assert len(site.paths()) == 2
    # ... then the endpoint is tried again
    serve(site, "/rates", tables(BTC))
    clock.advance(2)
    reply = ask(api)
    assert live_texts(reply) and "liveUnavailable" not in reply
    assert len(site.paths()) == 3


def _oversized(site):
    return lambda h: site.respond(h, 200, b"{" + b" " * (endpoint.MAX_ENDPOINT_BYTES + 10) + b"}",
                                  "application/json")


def _lying_length(site):
    return lambda h: site.respond(h, 200, b"{}", "application/json", length=10**12)


@pytest.mark.parametrize(("route", "code"), [
    (_oversized, "file_too_large"),
    (_lying_length, "file_too_large"),
    (lambda s: s.page(tables(*[BTC] * 501), "application/json"), "invalid_live_table"),
    (lambda s: s.page(json.dumps({"tables": {f"t{i}": [BTC] for i in range(51)}}), "application/json"),
     "invalid_live_table"),
    (lambda s: s.page(tables({**BTC, "colour": "red"}), "application/json"), "unknown_field"),
    (lambda s: s.page(tables({**BTC, "code": "bitcoin"}), "application/json"), "invalid_live_row"),
    (lambda s: s.page(json.dumps({"tables": {}, "more": 1}), "application/json"), "unknown_field"),
    (lambda s: s.page(json.dumps({"tables": {"Bad Name": [BTC]}}), "application/json"), "invalid_live_table"),
    (lambda s: s.page("[" * 100_000 + "]" * 100_000, "application/json"), "malformed_file"),
    (lambda s: s.redirect("https://other.example/rates"), "blocked_address"),
    (lambda s: s.redirect("https://evil.test/rates"), "blocked_address"),
])
def test_hostile_endpoint_answers_are_refused_with_their_code(api, site, route, code):
    site.routes["/rates"] = route(site)
    sid = rates_source(api, site)
    reply = ask(api)
    assert live_texts(reply) == []
    assert reply["liveUnavailable"] == [{"sourceId": sid, "code": code}]


def test_an_endpoint_resolving_to_a_private_address_is_never_contacted(api, site):
    sid = create(api, "live", {"endpoint": f"https://evil.test:{site.port}/rates"}, name="Rates")["id"]
    reply = ask(api)
    assert reply["liveUnavailable"] == [{"sourceId": sid, "code": "blocked_address"}]
    assert site.connections == 0


@pytest.mark.parametrize(("url", "code"), [
    ("http://rates.example/fees", "invalid_config"),
    ("ftp://rates.example/fees", "invalid_config"),
    ("https://user:pw@rates.example/fees", "invalid_config"),
    ("https://rates.example/fees?key=1", "invalid_config"),
    ("https://10.0.0.1/fees", "blocked_address"),
    ("https://169.254.169.254/latest", "blocked_address"),
    ("https://127.0.0.1/fees", "blocked_address"),
    ("https://[::1]/fees", "blocked_address"),
])
def test_the_endpoint_url_is_checked_when_it_is_configured(api, services, url, code):
    status, reply, _ = api("POST", f"{KB}/sources", {"type": "live", "name": "x", "config": {"endpoint": url}})
    assert (status, reply["error"]["code"]) == (400, code), reply
    sid = create(api, "live", {}, name="Rates")["id"]
    status, reply, _ = api("PATCH", f"{KB}/sources/{sid}", {"config": {"endpoint": url}})
    assert (status, reply["error"]["code"]) == (400, code), reply
    assert services.state.get_source("default", sid).config == {}


def test_loopback_is_an_endpoint_only_under_the_development_switch(api, services, site, tls, resolver):
    serve(site, "/rates", tables(BTC))
    url = f"https://127.0.0.1:{site.port}/rates"
    create(api, "live", {"endpoint": url}, name="Rates")
    assert live_texts(ask(api))
    # the production policy: refused when configured, and an already stored one is never contacted
    services.outbound = OutboundPolicy(resolve=resolver, ssl_context=tls.client_context)
    status, reply, _ = api("POST", f"{KB}/sources", {"type": "live", "name": "x", "config": {"endpoint": url}})
    assert (status, reply["error"]["code"]) == (400, "blocked_address")
    endpoint.CACHE.clear()
    before = site.connections
    assert ask(api)["liveUnavailable"][0]["code"] == "blocked_address"
    assert site.connections == before
