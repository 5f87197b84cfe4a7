# The fixtures are imported from other test modules, so test arguments shadow them by design.
# ruff: noqa: F811
"""Long stages keep their lease for as long as they run (DESIGN.md §6).

A crawl turn may run for most of the crawl function's time budget (its timeout less a safety
margin), far longer than the 2-minute lease, and so may a batch whose embedder is slow. Both
heartbeat (before every request, after every embedder call), so the minute tick's reaper never
finds the lease expired and the work is kept.

The crawl tests give the handler the time budget the stack gives the function (its timeout in
``infra.functions``) and run the turn's deadline on the same moved clock as the lease.
"""

from __future__ import annotations

import functools
import types
from typing import Any

import pytest

import knowledge.sources.website as website
from infra.functions import FUNCTION_SPECS
from knowledge.model import Source
from knowledge.refresh import batches, indexing, leases
from knowledge.settings import LEASE_SECONDS
from tests.conftest import FakeClock, page
from tests.e2e.sites import make_fetcher, resolver, site, tls  # noqa: F401 - fixtures
from tests.functional.test_handlers import BOT, Aws, aws, invoke, pack_source  # noqa: F401 - fixtures
from tests.lambda_support import FakeContext

#: the fake clock moves this much per request: a slow site with a Crawl-delay
SECONDS_PER_REQUEST = 25.0
PAGES = 8


#: the crawl function's timeout in the stack: what a turn's invocation has left when it starts
CRAWL_TIMEOUT_SECONDS = next(spec.timeout.to_seconds() for spec in FUNCTION_SPECS if spec.name == "crawl")


class LambdaBudget(FakeContext):
    """The time a crawl invocation really has: the function's timeout in the stack."""

    remaining_ms = int(CRAWL_TIMEOUT_SECONDS * 1000)


def turn_on_clock(aws: Aws, clock: FakeClock, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run the crawl turn's deadline (the handler's) and the crawler's checks of it on ``clock``
    instead of ``time.monotonic``, so the moved clock spends the turn's budget as real fetches would."""
    monkeypatch.setattr(aws.handlers["crawl"], "time", types.SimpleNamespace(monotonic=clock.now))
    monkeypatch.setattr(website, "crawl", functools.partial(website.crawl, clock=clock.now))


class ClockedFetcher:
    """A real fetcher of the local HTTPS site; each request moves the services' clock on and
    then lets the reaper (the scheduler's minute tick) look at the leases."""

    def __init__(self, inner: Any, clock: FakeClock, aws: Aws, reaped: list[Any]):
        self.inner, self.clock, self.aws, self.reaped = inner, clock, aws, reaped

    def _tick(self) -> None:
        self.clock.advance(SECONDS_PER_REQUEST)
        self.reaped.extend(leases.release_expired_leases(self.aws.services))

    def fetch(self, url: str, **kwargs: Any) -> Any:
        self._tick()
        return self.inner.fetch(url, **kwargs)

    def fetch_robots(self, url: str, **kwargs: Any) -> Any:
        self._tick()
        return self.inner.fetch_robots(url, **kwargs)


def leased_site(aws: Aws, site: Any, monkeypatch: pytest.MonkeyPatch, execution: str,
                word: str = "") -> tuple[FakeClock, dict[str, str], dict[str, Any]]:
    """A site of PAGES pages as a waiting website source whose lease ``execution`` has taken,
    on a clock the test moves: (clock, the execution's ids, its job)."""
    clock = FakeClock()
    monkeypatch.setattr(aws.services, "clock", clock)
    h, prefix = site.html, f"{word} " if word else ""
    site.routes["/"] = site.page(h(*[f"/p{i}" for i in range(PAGES - 1)], title="Home", text=f"{prefix}home"))
    for i in range(PAGES - 1):
        site.routes[f"/p{i}"] = site.page(h(title=f"Page {i}", text=f"{prefix}page {i}"))
    now = clock.now()
    aws.services.state.put_source(Source(id="site", bot=BOT, type="website", name="Docs", status="waiting",
                                         config={"origins": [site.origin()], "startUrls": [site.url("/")]},
                                         created_at=now, updated_at=now))
    ids = {"botId": BOT, "sourceId": "site", "executionName": execution}
    job = invoke(aws, "ingest", {"action": "take_lease", **ids, "input": {}})
    return clock, ids, job


def test_a_crawl_turn_longer_than_the_lease_keeps_it(aws: Aws, site: Any, make_fetcher: Any,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    clock, ids, job = leased_site(aws, site, monkeypatch, "exec-long", word="lemming")
    assert job["acquired"] is True
    reaped: list[Any] = []
    monkeypatch.setattr(website, "default_fetcher", lambda policy: ClockedFetcher(make_fetcher(), clock, aws, reaped))
    turn_on_clock(aws, clock, monkeypatch)
    budget = CRAWL_TIMEOUT_SECONDS - crawl_handler_safety(aws)
    assert budget > LEASE_SECONDS  # what the test is about: a turn may outlast the lease
    began = clock.now()

    first = aws.handlers["crawl"].handler({**ids, "job": job, "crawl": {"done": False, "waitSeconds": 0}},
                                          LambdaBudget())

    # the turn spent its budget on the moved clock (a request at most past it), longer than the
    # lease, and the reaper that looked after every request never found the lease expired
    spent = clock.now() - began
    assert LEASE_SECONDS < spent <= budget + SECONDS_PER_REQUEST
    assert reaped == []
    assert first["done"] is False and "stopped" not in first and 0 < first["pages"] < PAGES
    row = aws.services.state.get_source(BOT, "site")
    assert row.lease_owner == "exec-long" and row.lease_expires_at >= clock.now() + LEASE_SECONDS - 1
    assert row.status == "indexing"

    # the state machine calls again with the cursor: the next turn finishes the site
    second = aws.handlers["crawl"].handler({**ids, "job": job, "crawl": first}, LambdaBudget())
    assert reaped == []
    assert second["done"] is True and "stopped" not in second
    assert first["pages"] + second["pages"] == PAGES and second["failures"] == 0
    assert aws.services.state.get_source(BOT, "site").lease_owner == "exec-long"
    # the crawl is staged for the next step: list_documents builds its documents
    listing = invoke(aws, "ingest", {"action": "list_documents", **ids, "job": job})
    assert listing["documents"] == PAGES


def crawl_handler_safety(aws: Aws) -> float:
    """The time the crawl handler keeps back from its invocation's budget."""
    return float(aws.handlers["crawl"].SAFETY_SECONDS)


def test_a_turn_cancelled_mid_way_stops_at_its_next_heartbeat(aws: Aws, site: Any, make_fetcher: Any,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    clock, ids, job = leased_site(aws, site, monkeypatch, "exec-a")
    inner = make_fetcher()
    requests: list[str] = []

    class Cancelling:
        def fetch(self, url: str, **kwargs: Any) -> Any:
            requests.append(url)
            clock.advance(SECONDS_PER_REQUEST)
            if len(requests) == 3:  # an edit asks the running turn to stop
                aws.services.state.update_source(BOT, "site", cancel_requested=True)
            return inner.fetch(url, **kwargs)

        def fetch_robots(self, url: str, **kwargs: Any) -> Any:
            return inner.fetch_robots(url, **kwargs)

    monkeypatch.setattr(website, "default_fetcher", lambda policy: Cancelling())
    turn_on_clock(aws, clock, monkeypatch)
    result = aws.handlers["crawl"].handler({**ids, "job": job, "crawl": {"done": False, "waitSeconds": 0}},
                                           LambdaBudget())
    assert result["done"] is True and result["stopped"] == "cancelled"
    # heartbeats at 50 s (just before the cancel) and 100 s of the clock (a third of the lease
    # apart): the second noticed the cancel, so one more page was asked for and none after
    assert len(requests) == 4
    assert aws.services.state.get_source(BOT, "site").lease_owner == "exec-a"  # commit lets go


class SlowEmbedder:
    """An embedder whose every call takes 50 s of the services' clock; the reaper looks after
    each call."""

    name = "slow:1024"
    dimensions = 1024

    def __init__(self, clock: FakeClock, aws: Aws, reaped: list[Any]):
        self.clock, self.aws, self.reaped, self.calls = clock, aws, reaped, 0

    def embed(self, texts: Any) -> list[list[float]]:
        self.calls += 1
        self.clock.advance(50.0)
        self.reaped.extend(leases.release_expired_leases(self.aws.services))
        return [[1.0] + [0.0] * (self.dimensions - 1) for _ in texts]


def test_a_batch_whose_embedding_outlasts_the_lease_keeps_it(aws: Aws, monkeypatch: pytest.MonkeyPatch) -> None:
    clock = FakeClock()
    monkeypatch.setattr(aws.services, "clock", clock)
    pages = [page(f"help/p{n}.md", f"# Page {n}\n\nHow to do thing number {n}.") for n in range(12)]
    source_id = pack_source(aws, "slow", pages)
    reaped: list[Any] = []
    embedder = SlowEmbedder(clock, aws, reaped)
    monkeypatch.setattr(aws.services, "embedder_for", lambda bot: embedder)
    monkeypatch.setattr(indexing, "EMBED_CALL", 3)  # 12 passages: 4 embedder calls, 200 s of the clock
    ids = {"botId": BOT, "sourceId": source_id, "executionName": "exec-batch"}
    job = invoke(aws, "ingest", {"action": "take_lease", **ids, "input": {}})
    listing = invoke(aws, "ingest", {"action": "list_documents", **ids, "job": job})
    [batch] = listing["batches"]
    began = clock.now()

    result = invoke(aws, "ingest", {"action": "process_batch", **ids, "job": job, "batch": batch})

    assert embedder.calls == 4 and clock.now() - began > 1.5 * LEASE_SECONDS
    assert reaped == []
    assert "stopped" not in result and result["passages"] == 12
    row = aws.services.state.get_source(BOT, source_id)
    assert row.lease_owner == "exec-batch" and row.lease_expires_at >= clock.now() + LEASE_SECONDS - 1
    assert invoke(aws, "ingest", {"action": "commit", **ids, "job": job})["status"] == "indexed"


class ClockedBlobs:
    """The deployment's blob store, on which every read and write of a staged file takes
    ``seconds`` of the services' clock, after which the reaper looks at the leases (and
    ``on_read`` may act, e.g. ask for a cancel)."""

    def __init__(self, inner: Any, clock: FakeClock, aws: Aws, reaped: list[Any], seconds: float,
                 on_read: Any = None):
        self.inner, self.clock, self.aws, self.reaped, self.seconds = inner, clock, aws, reaped, seconds
        self.on_read, self.reads = on_read, 0

    @staticmethod
    def _staged(key: str) -> bool:
        return ("/crawl/" in key and not key.endswith(website.DONE_MARKER)) or "/docs-" in key

    def _slow(self, key: str) -> None:
        if self._staged(key):
            self.clock.advance(self.seconds)
            self.reaped.extend(leases.release_expired_leases(self.aws.services))

    def get(self, key: str) -> bytes:
        self._slow(key)
        if self._staged(key) and "/crawl/" in key:
            self.reads += 1
            if self.on_read is not None:
                self.on_read(self.reads)
        return bytes(self.inner.get(key))

    def put(self, key: str, data: bytes) -> None:
        self._slow(key)
        self.inner.put(key, data)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


STEPS = 12


def staged_site(aws: Aws, monkeypatch: pytest.MonkeyPatch, execution: str) -> tuple[FakeClock, dict[str, str],
                                                                                     dict[str, Any]]:
    """A website source whose crawl is staged in STEPS steps of one page, leased by ``execution``."""
    import json

    clock = FakeClock()
    monkeypatch.setattr(aws.services, "clock", clock)
    now = clock.now()
    aws.services.state.put_source(Source(id="staged", bot=BOT, type="website", name="Docs", status="waiting",
                                         config={"origins": ["https://docs.example"],
                                                 "startUrls": ["https://docs.example/"]},
                                         created_at=now, updated_at=now))
    prefix = website.crawl_prefix(BOT, "staged")
    for n in range(STEPS):
        step = {"pages": [{"url": f"https://docs.example/p{n}", "title": f"Page {n}", "text": f"walrus page {n}"}],
                "failures": []}
        aws.services.blobs.put(f"{prefix}{n}.json", json.dumps(step).encode())
    aws.services.blobs.put(prefix + website.DONE_MARKER, json.dumps({"steps": STEPS}).encode())
    ids = {"botId": BOT, "sourceId": "staged", "executionName": execution}
    job = invoke(aws, "ingest", {"action": "take_lease", **ids, "input": {}})
    assert job["acquired"] is True
    return clock, ids, job


def test_a_listing_longer_than_the_lease_keeps_it(aws: Aws, monkeypatch: pytest.MonkeyPatch) -> None:
    clock, ids, job = staged_site(aws, monkeypatch, "exec-list")
    reaped: list[Any] = []
    monkeypatch.setattr(aws.services, "blobs", ClockedBlobs(aws.services.blobs, clock, aws, reaped, 25.0))
    monkeypatch.setattr(batches, "BATCH_DOCUMENTS", 2)  # 6 batch files written, 25 s each
    began = clock.now()

    listing = invoke(aws, "ingest", {"action": "list_documents", **ids, "job": job})

    # 12 staged steps read and 6 batches written at 25 s each: 450 s, almost four leases
    assert clock.now() - began == (STEPS + STEPS // 2) * 25.0 > 3 * LEASE_SECONDS
    assert reaped == []
    assert listing["documents"] == STEPS and len(listing["batches"]) == STEPS // 2 and "stopped" not in listing
    row = aws.services.state.get_source(BOT, "staged")
    # extended at most a heartbeat interval plus one slow write ago: still well ahead of the clock
    assert row.lease_owner == "exec-list"
    assert row.lease_expires_at >= clock.now() + LEASE_SECONDS - leases.HEARTBEAT_SECONDS - 25.0 - 1


def test_a_listing_cancelled_mid_way_stops_at_its_next_heartbeat(aws: Aws, monkeypatch: pytest.MonkeyPatch) -> None:
    clock, ids, job = staged_site(aws, monkeypatch, "exec-cancel")

    def cancel_at_third(reads: int) -> None:
        if reads == 3:
            aws.services.state.update_source(BOT, "staged", cancel_requested=True)

    blobs = ClockedBlobs(aws.services.blobs, clock, aws, [], 25.0, on_read=cancel_at_third)
    monkeypatch.setattr(aws.services, "blobs", blobs)

    listing = invoke(aws, "ingest", {"action": "list_documents", **ids, "job": job})

    assert listing == {"batches": [], "documents": 0, "stopped": "cancelled"}
    # heartbeats at least a third of the lease (40 s) apart: the one at 50 s came before the
    # cancel (asked at the 3rd read, 75 s), the next one, at 100 s after the 4th read, saw it
    assert blobs.reads == 4
