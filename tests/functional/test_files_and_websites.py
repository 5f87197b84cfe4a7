"""Website and file sources over the real embedded adapters: the staged, resumable crawl
(``crawl_step``), documents built from it (``website_content``), file extraction
(``file_content``), the scheduler refreshing websites on their interval (and nothing else),
and "unreachable" never deleting what was indexed before."""

# The site fixtures are imported from tests.e2e.sites, so test arguments shadow them by design.
# ruff: noqa: F811

from __future__ import annotations

import json
import time
from typing import Any

import pytest

import knowledge.sources.website as website
from knowledge.api.auth import create_token
from knowledge.api.http import Request
from knowledge.api.routes import dispatch
from knowledge.embedded.worker import InProcessWorkflow
from knowledge.errors import Code, SourceFailure
from knowledge.model import Source
from knowledge.refresh import crawl_turn
from knowledge.refresh.pipeline import Refresher
from knowledge.retrieve.service import RetrievalRequest, retrieve
from knowledge.settings import LEASE_SECONDS
from knowledge.sources.base import SourceContent, pages_prefix, upload_blob_key
from knowledge.sources.registry import load_content
from knowledge.sources.website import crawl_prefix, crawl_step, website_content
from tests.e2e.sites import (  # noqa: F401 - fixtures
    HOSTILE_FAILURES,
    MB,
    hostile_site,
    make_fetcher,
    resolver,
    site,
    site_fetcher,
    tls,
)
from tests.unit.extract import hostile

pytestmark = pytest.mark.timeout(60)

KB = "/api/bots/default/knowledge"


class Api:
    def __init__(self, services: Any):
        self.services = services
        self.token = create_token(services, "default", ["knowledge:read", "knowledge:write"])

    def __call__(self, method: str, path: str, body: Any = None, raw: bytes | None = None) -> tuple[int, Any]:
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else b"")
        request = Request(method, path, {"authorization": f"Bearer {self.token}"}, {}, data)
        response = dispatch(self.services, request)
        return response.status, response.body


@pytest.fixture
def api(services: Any) -> Api:
    services.workflow = InProcessWorkflow(services, background=False)  # jobs run inside the call
    return Api(services)


def ask(services: Any, q: str) -> list[dict[str, Any]]:
    return list(retrieve(services, RetrievalRequest("default", q, "customer"))["excerpts"])


def make_source(services: Any, site: Any, *starts: str, origins: list[str] | None = None, **extra: Any) -> Source:
    source = Source(
        id="web1",
        bot="default",
        type="website",
        name="Help site",
        visibility="public",
        config={"origins": origins or [site.origin()], "startUrls": [site.url(s) for s in starts or ("/",)]},
        **extra,
    )
    services.state.put_source(source)
    return source


class SlowFetcher:
    """Wraps a real fetcher; every page takes at least ``pause`` seconds."""

    def __init__(self, inner: Any, pause: float):
        self.inner = inner
        self.pause = pause

    def fetch(self, url: str, **kwargs: Any) -> Any:
        time.sleep(self.pause)
        return self.inner.fetch(url, **kwargs)

    def fetch_robots(self, url: str, **kwargs: Any) -> Any:
        return self.inner.fetch_robots(url, **kwargs)


def crawled(services: Any, source: Source, fetcher: Any) -> SourceContent:
    """Crawl ``source`` to the end in steps (as the refresh's crawl turns do), then read the
    staged crawl back as documents (as its listing does)."""
    cursor = None
    while not (step := crawl_step(services, source, cursor, deadline=time.monotonic() + 30, fetcher=fetcher)).done:
        cursor = step.cursor
    return website_content(services, source)


def small_site(site: Any, pages: int = 6, word: str = "lemming") -> None:
    h = site.html
    site.routes["/"] = site.page(h(*[f"/p{i}" for i in range(pages - 1)], title="Home", text=f"{word} home"))
    for i in range(pages - 1):
        site.routes[f"/p{i}"] = site.page(h(title=f"Page {i}", text=f"{word} page number {i}"))


# -- crawl steps --------------------------------------------------------------------------


def test_crawl_steps_stage_pages_and_resume_from_a_small_cursor(services: Any, site: Any, make_fetcher: Any) -> None:
    small_site(site)
    source = make_source(services, site)
    fetcher = SlowFetcher(make_fetcher(), 0.3)
    steps, cursor = [], None
    while True:
        step = crawl_step(services, source, cursor, deadline=time.monotonic() + 0.5, fetcher=fetcher)
        steps.append(step)
        if step.done:
            break
        assert step.cursor is not None
        assert len(json.dumps(step.cursor)) < 300  # the crawl state lives in a blob, not the cursor
        cursor = step.cursor
    assert len(steps) > 1 and steps[-1].cursor is None
    assert sum(s.pages for s in steps) == 6 and sum(s.failures for s in steps) == 0
    prefix = crawl_prefix("default", "web1")
    keys = services.blobs.list(prefix)
    assert prefix + "done.json" in keys
    assert [k for k in keys if k[len(prefix):].split(".")[0].isdigit()] == sorted(
        f"{prefix}{n}.json" for n in range(len(steps)))
    staged = json.loads(services.blobs.get(f"{prefix}0.json"))
    assert set(staged) == {"pages", "failures"}
    assert set(staged["pages"][0]) == {"url", "title", "text", "etag", "lastModified", "unchanged"}
    assert site.paths().count("/robots.txt") == 1  # the robots cache travels between steps

    # the pipeline's load stage builds the documents from the staged crawl, fetching nothing
    content = website_content(services, source)
    assert sorted(d.path for d in content.documents) == ["/"] + [f"/p{i}" for i in range(5)]
    assert {d.url for d in content.documents} == {site.url("/")} | {site.url(f"/p{i}") for i in range(5)}
    assert all(d.visibility == "public" and d.weight == 1.0 for d in content.documents)
    page3 = next(d for d in content.documents if d.path == "/p3")
    assert page3.title == "Page 3" and "lemming page number 3" in page3.body

    # a fresh crawl throws the old staging away first
    site.routes.clear()
    site.routes["/"] = site.page(site.html(title="Only", text="solitary page"))
    while not (step := crawl_step(services, source, None, deadline=time.monotonic() + 30, fetcher=make_fetcher())).done:
        pass
    assert sorted(services.blobs.list(prefix)) == [prefix + "0.json", prefix + "done.json"]
    assert [d.title for d in website_content(services, source).documents] == ["Only"]


def test_crawl_delay_is_the_wait_between_steps_and_is_not_slept_twice(
    services: Any, site: Any, make_fetcher: Any
) -> None:
    small_site(site, pages=3)
    site.routes["/robots.txt"] = site.page("User-agent: *\nCrawl-delay: 2\n", "text/plain")
    source = make_source(services, site)
    slept: list[float] = []
    # a step shorter than the delay stops before the first page and asks for the wait
    first = crawl_step(services, source, None, deadline=time.monotonic() + 1.0, fetcher=make_fetcher(),
                       sleep=slept.append)
    assert (first.done, first.pages, first.wait_seconds, slept) == (False, 0, 2.0, [])
    assert first.cursor is not None
    # the caller waited those two seconds (the Wait state): no second sleep before the next request
    waited = dict(first.cursor, endedAt=first.cursor["endedAt"] - 2.0)
    second = crawl_step(services, source, waited, deadline=time.monotonic() + 30, fetcher=make_fetcher(),
                        sleep=slept.append)
    assert second.done and second.pages == 3
    assert slept == [2.0, 2.0, 2.0]  # /sitemap.xml came right after the wait, then the 3 pages
    assert site.paths().count("/robots.txt") == 1


def test_pages_reachable_only_through_the_sitemap_become_documents(
    services: Any, site: Any, make_fetcher: Any
) -> None:
    site.routes["/"] = site.page(site.html(title="Home", text="nothing links anywhere"))
    site.routes["/robots.txt"] = site.page(f"User-agent: *\nSitemap: {site.url('/maps/index.xml')}\n", "text/plain")
    site.routes["/maps/index.xml"] = site.page(
        '<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        f"<sitemap><loc>{site.url('/maps/pages.xml')}</loc></sitemap></sitemapindex>",
        "application/xml",
    )
    site.routes["/maps/pages.xml"] = site.page(
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        f"<url><loc>{site.url('/orphan')}</loc><lastmod>2024-03-01</lastmod></url></urlset>",
        "application/xml",
    )
    site.routes["/orphan"] = site.page(site.html(title="Orphan", text="the wombat page nobody links to"))
    source = make_source(services, site)
    content = crawled(services, source, make_fetcher())
    assert [d.title for d in content.documents] == ["Home", "Orphan"]
    assert content.failed == []
    assert "wombat" in content.documents[1].body


def test_source_patterns_and_canonical_links_shape_the_documents(
    services: Any, site: Any, make_fetcher: Any
) -> None:
    canonical = f'<link rel="canonical" href="{site.url("/docs/guide")}">'
    site.routes["/"] = site.page(site.html("/docs/guide?ref=nav", "/docs/guide?ref=footer", "/docs/old/x", "/blog"))
    site.routes["/docs/guide"] = site.page(
        f"<html><head><title>Guide</title>{canonical}</head><body>otter</body></html>"
    )
    site.fallback = lambda h: site.respond(h, 200, site.html(title="other").encode())
    source = make_source(services, site)
    source.config.update(include=["/docs/*"], exclude=["/docs/old/*"])
    content = crawled(services, source, make_fetcher())
    assert [(d.title, d.url) for d in content.documents] == [("t", site.url("/")), ("Guide", site.url("/docs/guide"))]
    assert "/docs/old/x" not in site.paths() and "/blog" not in site.paths()


def test_the_embedded_refresh_crawls_in_turns_and_cleans_up(services: Any, site: Any, site_fetcher: Any) -> None:
    small_site(site, pages=2)
    make_source(services, site)
    outcome = Refresher(services).refresh("default", "web1")  # no fetcher: the default
    assert (outcome.status, outcome.documents) == ("indexed", 2) and site_fetcher.made
    row = services.state.get_source("default", "web1")
    assert (row.status, row.lease_owner, row.documents_processed) == ("ready", None, 2)
    assert services.blobs.list(crawl_prefix("default", "web1")) == []  # nothing left staged


def test_a_cancelled_or_disabled_source_stops_before_its_next_turn(services: Any, site: Any, site_fetcher: Any,
                                                                    clock: Any) -> None:
    small_site(site, pages=2)
    make_source(services, site)
    services.state.acquire_lease("default", "web1", "worker-a", clock.now(), LEASE_SECONDS)
    for change in ({"cancel_requested": True}, {"status": "disabled"}):
        services.state.update_source("default", "web1", **change)
        turn = crawl_turn.crawl_pages(services, "default", "web1", "worker-a", None,
                                      deadline=time.monotonic() + 30)
        assert (turn.done, turn.stopped, turn.pages) == (True, "cancelled", 0)
        services.state.update_source("default", "web1", cancel_requested=False, status="waiting")
    assert site.paths() == []


def test_a_staged_crawl_left_by_another_lease_is_not_served(services: Any, site: Any, make_fetcher: Any,
                                                            clock: Any) -> None:
    small_site(site, pages=2, word="old")
    source = make_source(services, site)
    services.state.acquire_lease("default", "web1", "worker-old", clock.now(), LEASE_SECONDS)
    while not crawl_step(services, source, None, deadline=time.monotonic() + 30, fetcher=make_fetcher()).done:
        pass
    services.state.release_lease("default", "web1", "worker-old")
    small_site(site, pages=2, word="new")
    services.state.acquire_lease("default", "web1", "worker-new", clock.now(), LEASE_SECONDS)
    with pytest.raises(SourceFailure) as caught:
        website_content(services, source)
    assert caught.value.code == Code.INTERNAL
    content = crawled(services, source, make_fetcher())
    assert all("new" in d.body and "old" not in d.body for d in content.documents)


# -- a hostile site -------------------------------------------------------------------------


def test_hostile_site_pages_fail_with_their_codes(services: Any, site: Any, make_fetcher: Any) -> None:
    hostile_site(site)
    # a second allowed origin whose name resolves to the metadata service address
    source = make_source(services, site, "/", "/private/other",
                         origins=[site.origin(), site.origin(host="meta.test")])
    source.config["startUrls"].append(site.url("/", host="meta.test"))
    fetcher = make_fetcher(timeout=2.0)
    content = crawled(services, source, fetcher)
    failed = dict(content.failed)
    origin = site.origin()
    assert {url[len(origin):]: code for url, code in failed.items() if url.startswith(origin)} == {
        **HOSTILE_FAILURES, "/private/other": Code.ROBOTS_DENIED}
    assert failed[site.url("/", host="meta.test")] == Code.BLOCKED_ADDRESS
    assert len(failed) == len(HOSTILE_FAILURES) + 2
    paths = [d.path for d in content.documents]
    assert len(paths) == website.MAX_PAGES == 100 and len(set(paths)) == 100  # the trap is cut at 100 pages
    # tracking parameters and fragments collapsed: every page once, under its clean path
    assert paths[:2] == ["/", "/guide"] and "/faq.md" in paths
    assert all(p.startswith("/calendar/") and "?" not in p for p in paths if p not in ("/", "/guide", "/faq.md"))
    guide = content.documents[1]
    assert guide.title == "Ocelot guide" and guide.url == site.url("/guide")
    assert "## Resetting the ocelot dongle" in guide.body  # headings kept for the chunker
    assert "Site header" not in guide.body and "Footer links" not in guide.body
    home = content.documents[0]
    assert "pangolin" not in home.body and "Navigation menu" not in home.body
    assert {ip for ip, _ in fetcher.connections} == {"127.0.0.1"}
    assert "/private/secret" not in site.paths() and "/private/other" not in site.paths()
    assert {r.user_agent for r in site.requests} == {"KnowledgeBot/1.0"}


def test_redirect_to_an_allowed_origin_on_a_private_address_is_blocked_address(
    services: Any, site: Any, make_fetcher: Any
) -> None:
    site.routes["/"] = site.redirect(f"https://evil.test:{site.port}/inside")
    source = make_source(services, site, origins=[site.origin(), site.origin(host="evil.test")])
    with pytest.raises(SourceFailure) as caught:
        crawled(services, source, make_fetcher())
    assert caught.value.code == Code.BLOCKED_ADDRESS


# -- scheduling -----------------------------------------------------------------------------


def create(api: Api, kind: str, config: dict[str, Any], **extra: Any) -> dict[str, Any]:
    status, body = api("POST", f"{KB}/sources", {"type": kind, "name": f"{kind} source", "config": config, **extra})
    assert status == 201, body
    return dict(body)


def row(services: Any, source_id: str) -> Source:
    found = services.state.get_source("default", source_id)
    assert found is not None
    return found


def test_websites_refresh_on_their_interval_and_nothing_else_does(
    api: Api, services: Any, site: Any, site_fetcher: Any, clock: Any
) -> None:
    site.routes["/"] = site.page(site.html(title="Hours", text="The tapir desk opens at nine."))
    web = create(api, "website", {"origins": [site.origin()], "startUrls": [site.url("/")]},
                 refreshEverySeconds=3600)
    assert (web["status"], web["queued"], web["refreshEverySeconds"]) == ("ready", True, 3600)
    assert row(services, web["id"]).next_refresh_at == clock.now() + 3600
    ins = create(api, "instruction", {"text": "Mention the tapir loyalty card."})
    doc = create(api, "file", {"filename": "tapir.md", "contentType": "text/markdown"})
    assert (doc["status"], doc["queued"]) == ("waiting", False)  # waits for its upload
    status, body = api("POST", f"{KB}/sources/{doc['id']}/upload", raw=b"# Tapir\n\nTapir food is organic.")
    assert (status, body["status"], body["queued"]) == (202, "ready", True)
    assert ask(services, "when does the tapir desk open")[0]["sourceId"] == web["id"]

    def attempts() -> tuple[int, int, int]:
        return tuple(row(services, s["id"]).attempts for s in (web, ins, doc))  # type: ignore[return-value]

    before = attempts()
    site.routes["/"] = site.page(site.html(title="Hours", text="The tapir desk opens at ten now."))
    clock.advance(3599)
    services.workflow.tick()
    assert attempts() == before  # not due yet
    clock.advance(2)
    services.workflow.tick()
    assert attempts() == (before[0] + 1, before[1], before[2])
    assert "ten now" in ask(services, "when does the tapir desk open")[0]["text"]
    assert row(services, web["id"]).next_refresh_at == clock.now() + 3600
    assert row(services, ins["id"]).next_refresh_at is None and row(services, doc["id"]).next_refresh_at is None

    # a year later nothing but the website has been fetched again
    for _ in range(3):
        clock.advance(3600)
        services.workflow.tick()
    assert attempts() == (before[0] + 4, before[1], before[2])

    # the site goes away: the scheduled run fails, the old pages keep answering, and the
    # next attempt waits for the next interval instead of repeating at every tick
    passages = row(services, web["id"]).passages
    site_fetcher.refuse = True
    clock.advance(3600)
    services.workflow.tick()
    failed = row(services, web["id"])
    assert (failed.status, failed.error_code, failed.passages) == ("failed", Code.FETCH_TIMEOUT, passages)
    assert "ten now" in ask(services, "when does the tapir desk open")[0]["text"]
    assert failed.next_refresh_at == clock.now() + 3600
    services.workflow.tick()
    clock.advance(60)
    services.workflow.tick()
    assert row(services, web["id"]).attempts == failed.attempts
    site_fetcher.refuse = False
    clock.advance(3600)
    services.workflow.tick()
    assert row(services, web["id"]).status == "ready"


class Conditional:
    """A page that answers conditional requests as a static server does: ``ETag`` and/or
    ``Last-Modified`` on a 200, a 304 when the request carries the same validator. Notes
    the status of every answer."""

    def __init__(self, site: Any, body: str, *, etag: str | None = None, modified: str | None = None):
        self.site, self.body, self.etag, self.modified = site, body, etag, modified
        self.answers: list[int] = []

    def __call__(self, handler: Any) -> None:
        same_tag = self.etag is not None and handler.headers.get("If-None-Match") == self.etag
        same_date = self.modified is not None and handler.headers.get("If-Modified-Since") == self.modified
        headers = {k: v for k, v in (("ETag", self.etag), ("Last-Modified", self.modified)) if v is not None}
        if same_tag or (same_date and handler.headers.get("If-None-Match") is None):
            self.answers.append(304)
            handler.send_response(304)
            for name, value in headers.items():
                handler.send_header(name, value)
            handler.end_headers()
            return
        self.answers.append(200)
        self.site.respond(handler, 200, self.body.encode(), "text/html; charset=utf-8", headers)


def test_a_refresh_of_an_unchanged_site_gets_304s_and_extracts_nothing(
    api: Api, services: Any, site: Any, site_fetcher: Any, clock: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    h = site.html
    home = Conditional(site, h("/a", "/b", "/plain", title="Home", text="The narwhal help desk."), etag='"home-1"')
    page_a = Conditional(site, h(title="Tusks", text="Narwhal tusks are polished monthly."), etag='"a-1"',
                         modified="Mon, 01 Jan 2024 00:00:00 GMT")
    page_b = Conditional(site, h(title="Feeding", text="Narwhals eat halibut."),
                         modified="Tue, 02 Jan 2024 00:00:00 GMT")
    site.routes.update({"/": home, "/a": page_a, "/b": page_b})
    site.routes["/plain"] = site.page(h(title="Plain", text="No validators on the narwhal map."))
    extracted: list[bytes] = []
    real_page_text = website.page_text

    def counting(body: bytes, content_type: str) -> tuple[str | None, str]:
        extracted.append(body)
        return real_page_text(body, content_type)

    monkeypatch.setattr(website, "page_text", counting)
    web = create(api, "website", {"origins": [site.origin()], "startUrls": [site.url("/")]},
                 refreshEverySeconds=3600)
    assert len(extracted) == 4 and row(services, web["id"]).documents_unchanged == 0
    docs = {d.path: d for d in services.state.list_documents("default", web["id"])}
    assert (docs["/"].etag, docs["/a"].etag, docs["/a"].last_modified) == ('"home-1"', '"a-1"', page_a.modified)
    assert (docs["/b"].etag, docs["/b"].last_modified) == (None, page_b.modified)
    assert (docs["/plain"].etag, docs["/plain"].last_modified) == (None, None)
    generation = row(services, web["id"]).live_generation

    # the scheduled refresh: three 304s, only the page without validators is extracted
    extracted.clear()
    clock.advance(3601)
    services.workflow.tick()
    assert (home.answers, page_a.answers, page_b.answers) == ([200, 304], [200, 304], [200, 304])
    assert len(extracted) == 1 and b"narwhal map" in extracted[0]
    after = row(services, web["id"])
    assert (after.status, after.documents_unchanged, after.attempts) == ("ready", 3, 2)
    assert after.live_generation == generation  # nothing changed: the passages stay as they are
    status, card = api("GET", f"{KB}/sources/{web['id']}/index-status")
    assert status == 200 and card["documentsUnchanged"] == 3
    status, listed = api("GET", f"{KB}/sources")
    assert [s["documentsUnchanged"] for s in listed["sources"] if s["id"] == web["id"]] == [3]
    assert ask(services, "how often are narwhal tusks polished")[0]["sourceId"] == web["id"]

    # a changed page is fetched in full and extracted; the others stay 304s
    extracted.clear()
    page_b.body = h(title="Feeding", text="Narwhals eat cod and squid now.")
    page_b.modified = "Wed, 03 Jan 2024 00:00:00 GMT"
    clock.advance(3601)
    services.workflow.tick()
    assert (home.answers[-1], page_a.answers[-1], page_b.answers[-1]) == (304, 304, 200)
    assert sorted(b"squid" in body for body in extracted) == [False, True]  # /b and /plain
    after = row(services, web["id"])
    assert (after.documents_unchanged, after.documents_processed) == (2, 4)
    assert after.live_generation != generation
    assert "squid" in ask(services, "what do narwhals eat")[0]["text"]
    # the unchanged pages' passages were carried into the new generation from what was kept
    assert ask(services, "how often are narwhal tusks polished")[0]["sourceId"] == web["id"]
    docs = {d.path: d for d in services.state.list_documents("default", web["id"])}
    assert (docs["/a"].etag, docs["/b"].last_modified) == ('"a-1"', page_b.modified)

    # the kept pages (those with validators) go when the site drops them, and with the source
    prefix = pages_prefix("default", web["id"])
    assert len(services.blobs.list(prefix)) == 3
    home.body = h("/b", "/plain", title="Home", text="The narwhal help desk, without tusks.")
    home.etag = '"home-2"'
    clock.advance(3601)
    services.workflow.tick()
    assert len(page_a.answers) == 3  # not linked any more: not asked
    assert len(services.blobs.list(prefix)) == 2
    status, _ = api("DELETE", f"{KB}/sources/{web['id']}")
    assert status == 204 and services.blobs.list(prefix) == []


@pytest.fixture
def http_folder(tmp_path: Any) -> Any:
    """A folder served as ``python -m http.server`` serves it: plain HTTP on 127.0.0.1."""
    import functools
    import threading
    from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

    folder = tmp_path / "docs"
    folder.mkdir()

    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            return

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(folder)))
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield folder, httpd.server_address[1]
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


def test_the_development_switch_lets_a_website_source_crawl_a_local_http_server(
    api: Api, services: Any, http_folder: Any, clock: Any
) -> None:
    from knowledge.crawl.outbound import OutboundPolicy

    folder, port = http_folder
    (folder / "index.html").write_text(
        '<html><head><title>Gecko docs</title></head><body><h1>Gecko docs</h1>'
        '<a href="install.html">Install</a></body></html>')
    (folder / "install.html").write_text(
        "<html><head><title>Install</title></head><body><h1>Installing the gecko agent</h1>"
        "<p>Run the gecko installer and restart the terrarium service.</p></body></html>")
    origin = f"http://127.0.0.1:{port}"
    config = {"origins": [origin], "startUrls": [origin + "/"]}

    # without the switch (production), or with it on another port: refused, with the codes
    for policy in (services.outbound, OutboundPolicy(loopback_port=port + 1)):
        services.outbound = policy
        status, body = api("POST", f"{KB}/sources", {"type": "website", "name": "Gecko", "config": config})
        assert (status, body["error"]["code"]) == (400, "invalid_origin")
        status, body = api("POST", f"{KB}/sources", {"type": "website", "name": "Gecko", "config": {
            "origins": ["https://docs.example"], "startUrls": [origin + "/"]}})
        assert (status, body["error"]["code"]) == (400, "invalid_start_url")
    assert services.state.list_sources("default") == []

    services.outbound = OutboundPolicy(loopback_port=port)  # kb serve --dev-allow-loopback PORT
    for other in (f"http://10.0.0.1:{port}", "http://127.0.0.1", f"http://docs.example:{port}"):
        status, body = api("POST", f"{KB}/sources", {"type": "website", "name": "Gecko", "config": {
            "origins": [other], "startUrls": [other + "/"]}})
        assert (status, body["error"]["code"]) == (400, "invalid_origin"), other
    web = create(api, "website", config)
    assert (web["status"], web["config"]["origins"]) == ("ready", [origin])
    docs = sorted(d.path for d in services.state.list_documents("default", web["id"]))
    assert docs == ["/", "/install.html"]
    assert ask(services, "how do I install the gecko agent")[0]["sourceId"] == web["id"]

    # http.server answers If-Modified-Since: a second crawl finds both files unchanged
    status, _ = api("POST", f"{KB}/sources/{web['id']}/refresh", {})
    assert status == 202
    assert row(services, web["id"]).documents_unchanged == 2


def test_an_interval_change_alone_moves_the_schedule_without_a_crawl(
    api: Api, services: Any, site: Any, site_fetcher: Any, clock: Any
) -> None:
    site.routes["/"] = site.page(site.html(title="Home", text="Yak grooming tips."))
    web = create(api, "website", {"origins": [site.origin()], "startUrls": [site.url("/")],
                                  "refreshEverySeconds": 3600})
    requests = len(site.requests)
    indexed = row(services, web["id"]).last_indexed_at
    assert indexed is not None
    status, body = api("PATCH", f"{KB}/sources/{web['id']}", {"refreshEverySeconds": 86400})
    assert (status, body["queued"], body["refreshEverySeconds"]) == (200, False, 86400)
    assert row(services, web["id"]).next_refresh_at == indexed + 86400
    assert len(site.requests) == requests
    # dropping the interval takes the source off the schedule, again without a crawl
    status, body = api("PATCH", f"{KB}/sources/{web['id']}",
                       {"config": {"origins": [site.origin()], "startUrls": [site.url("/")]}})
    assert (status, body["queued"], body["refreshEverySeconds"]) == (200, False, None)
    assert row(services, web["id"]).next_refresh_at is None and len(site.requests) == requests
    clock.advance(10 * 86400)
    services.workflow.tick()
    assert row(services, web["id"]).attempts == 1 and len(site.requests) == requests
    # what is fetched changes: crawled again at once
    site.routes["/more"] = site.page(site.html(title="More", text="Yak shearing season."))
    status, body = api("PATCH", f"{KB}/sources/{web['id']}",
                       {"config": {"origins": [site.origin()], "startUrls": [site.url("/"), site.url("/more")]}})
    assert (status, body["queued"], body["status"]) == (200, True, "ready")
    assert ask(services, "yak shearing season")[0]["sourceId"] == web["id"]


# -- files -------------------------------------------------------------------------------------


def test_a_file_source_waits_for_its_upload_and_keeps_good_content_after_a_bad_one(
    api: Api, services: Any
) -> None:
    doc = create(api, "file", {"filename": "guide.pdf", "contentType": "application/pdf"})
    services.workflow.tick()
    assert (row(services, doc["id"]).status, row(services, doc["id"]).attempts) == ("waiting", 0)
    status, body = api("POST", f"{KB}/sources/{doc['id']}/refresh", {})
    assert (status, body["status"], body["errorCode"]) == (202, "failed", Code.MALFORMED_FILE)
    assert body["errorMessage"] == "no file uploaded"

    good = hostile.build_pdf(["Refunds for the heron plan take five days."], title="Refund guide")
    status, body = api("POST", f"{KB}/sources/{doc['id']}/upload", raw=good)
    assert (status, body["status"], body["passages"]) == (202, "ready", 1)
    status, docs = api("GET", f"{KB}/sources/{doc['id']}/documents")
    assert [(d["title"], d["path"]) for d in docs["documents"]] == [("Refund guide", "guide.pdf")]
    top = ask(services, "heron plan refunds")[0]
    assert (top["sourceId"], top["title"], top["sourceType"]) == (doc["id"], "Refund guide", "file")

    attempts = row(services, doc["id"]).attempts
    status, body = api("POST", f"{KB}/sources/{doc['id']}/upload", raw=hostile.encrypted_pdf("pw"))
    assert (status, body["status"], body["errorCode"]) == (202, "failed", Code.MALFORMED_FILE)
    assert row(services, doc["id"]).attempts == attempts + 1
    assert body["passages"] == 1 and ask(services, "heron plan refunds")[0]["sourceId"] == doc["id"]


def test_file_content_reports_extraction_codes(services: Any) -> None:
    source = Source(id="f1", bot="default", type="file", name="Upload",
                    config={"filename": "old.doc", "contentType": "application/pdf"})
    services.blobs.put(upload_blob_key("default", "f1"), b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(504))
    with pytest.raises(SourceFailure) as caught:
        load_content(services, source)
    assert caught.value.code == Code.UNSUPPORTED_TYPE
    # a blob over 8 MB (put there by another path than the capped upload) is refused too
    source.config = {"filename": "big.txt", "contentType": "text/plain"}
    services.blobs.put(upload_blob_key("default", "f1"), b"a" * (8 * MB + 1))
    with pytest.raises(SourceFailure) as caught:
        load_content(services, source)
    assert caught.value.code == Code.FILE_TOO_LARGE
