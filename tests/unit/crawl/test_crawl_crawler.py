"""The crawler end to end: real fetcher, real local HTTPS server."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from knowledge.crawl.crawler import crawl, html_to_text
from knowledge.crawl.robots import MAX_REDIRECTS as ROBOTS_MAX_REDIRECTS
from knowledge.errors import Code
from tests.unit.crawl.conftest import StepClock

pytestmark = pytest.mark.timeout(60)

MAKE = Callable[..., Any]


class FakeSleep:
    def __init__(self) -> None:
        self.delays: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


def run(site: Any, fetcher: Any, *starts: str, **kwargs: Any) -> Any:
    kwargs.setdefault("sleep", FakeSleep())
    return crawl([site.origin()], [site.url(s) for s in starts or ("/",)], fetcher, **kwargs)


def paths_of(site: Any, result: Any) -> list[str]:
    prefix = site.origin()
    return [p.url[len(prefix) :] for p in result.pages]


def test_breadth_first_inside_the_origin(site: Any, make_fetcher: MAKE) -> None:
    h = site.html
    site.routes["/"] = site.page(
        h(
            "/a",
            "/b",
            site.url("/x", host="other.example"),  # same server, other origin
            f"http://test.example:{site.port}/insecure",
            "https://outside.example/",
        )
    )
    site.routes["/a"] = site.page(h("/a/deep", "/b"))
    site.routes["/b"] = site.page(h("/"), "text/html")
    site.routes["/a/deep"] = site.page("# Notes\n\nplain markdown", "text/markdown")
    result = run(site, make_fetcher())
    assert paths_of(site, result) == ["/", "/a", "/b", "/a/deep"]
    assert result.failures == []
    assert result.cursor is None
    assert site.paths()[0] == "/robots.txt"
    assert site.paths().count("/robots.txt") == 1
    assert site.paths(host="other.example") == []
    assert "/insecure" not in site.paths()
    first = result.pages[0]
    assert first.content_type == "text/html"
    assert result.pages[-1].content_type == "text/markdown"
    assert "plain markdown" in result.pages[-1].text


def test_robots_rules_are_obeyed(site: Any, make_fetcher: MAKE) -> None:
    h = site.html
    site.routes["/robots.txt"] = site.page(
        "User-agent: *\nDisallow: /\n\n"
        "User-agent: KnowledgeBot\nDisallow: /private\nAllow: /private/open\n"
        "Disallow: /*.txt$\nAllow: /same\nDisallow: /same\n",
        "text/plain",
    )
    site.routes["/"] = site.page(
        h("/private/secret", "/private/open", "/notes.txt", "/notes.txt?v=2", "/same", "/public")
    )
    for path in ("/private/secret", "/private/open", "/notes.txt", "/same", "/public"):
        site.routes[path] = site.page(h(), "text/html")
    site.routes["/notes.txt"] = site.page("notes", "text/plain")
    result = run(site, make_fetcher())
    assert sorted(paths_of(site, result)) == ["/", "/notes.txt?v=2", "/private/open", "/public", "/same"]
    assert sorted(result.failures) == [
        (site.url("/notes.txt"), Code.ROBOTS_DENIED),
        (site.url("/private/secret"), Code.ROBOTS_DENIED),
    ]
    assert "/private/secret" not in site.paths()
    assert "/notes.txt" not in site.paths()


def test_redirects_into_disallowed_paths_are_not_followed(site: Any, make_fetcher: MAKE) -> None:
    site.routes["/robots.txt"] = site.page("User-agent: *\nDisallow: /private\n", "text/plain")
    site.routes["/"] = site.page(site.html("/moved"))
    site.routes["/moved"] = site.redirect("/private/page")
    site.routes["/private/page"] = site.page(site.html())
    result = run(site, make_fetcher())
    assert paths_of(site, result) == ["/"]
    assert result.failures == [(site.url("/moved"), Code.ROBOTS_DENIED)]
    assert "/private/page" not in site.paths()


def test_robots_behind_five_redirects_across_hosts_is_obeyed(site: Any, make_fetcher: MAKE) -> None:
    # RFC 9309 2.3.1.2: follow at least five redirects, even to another host, and apply the
    # rules found there to the host first asked.
    site.routes["/robots.txt"] = site.redirect(site.url("/hop/1", host="other.example"), 301)
    for hop in range(1, 5):
        site.routes[f"/hop/{hop}"] = site.redirect(f"/hop/{hop + 1}")
    site.routes["/hop/5"] = site.page("User-agent: *\nDisallow: /private\n", "text/plain")
    site.routes["/"] = site.page(site.html("/private/x", "/open"))
    site.routes["/open"] = site.page(site.html())
    result = run(site, make_fetcher(max_redirects=ROBOTS_MAX_REDIRECTS))
    assert paths_of(site, result) == ["/", "/open"]
    assert result.failures == [(site.url("/private/x"), Code.ROBOTS_DENIED)]
    assert site.paths(host="other.example") == [f"/hop/{n}" for n in range(1, 6)]
    assert "/private/x" not in site.paths()


@pytest.mark.parametrize("status", [500, 503])
def test_robots_server_error_disallows_everything(site: Any, make_fetcher: MAKE, status: int) -> None:
    site.routes["/robots.txt"] = site.page("down", "text/plain", status=status)
    site.routes["/"] = site.page(site.html("/a"))
    result = run(site, make_fetcher(), "/", "/a")
    assert result.pages == []
    assert result.failures == [(site.url("/"), Code.ROBOTS_DENIED), (site.url("/a"), Code.ROBOTS_DENIED)]
    assert site.paths() == ["/robots.txt"]


def test_robots_server_error_is_asked_again_by_the_next_crawl(site: Any, make_fetcher: MAKE) -> None:
    site.routes["/robots.txt"] = site.page("down", "text/plain", status=503)
    site.routes["/"] = site.page(site.html())
    assert run(site, make_fetcher()).pages == []
    site.routes["/robots.txt"] = site.page("User-agent: *\nDisallow: /private\n", "text/plain")
    assert paths_of(site, run(site, make_fetcher())) == ["/"]
    assert site.paths().count("/robots.txt") == 2


def test_robots_not_found_allows_everything(site: Any, make_fetcher: MAKE) -> None:
    site.routes["/"] = site.page(site.html("/a"))
    site.routes["/a"] = site.page(site.html())
    result = run(site, make_fetcher())
    assert paths_of(site, result) == ["/", "/a"]
    assert site.paths() == ["/robots.txt", "/sitemap.xml", "/", "/a"]


def test_unreachable_robots_stops_the_origin_with_the_fetch_code(site: Any, make_fetcher: MAKE) -> None:
    site.routes["/"] = site.page(site.html())
    fetcher = make_fetcher(refuse=True)  # every connection refused
    result = run(site, fetcher)
    assert result.pages == []
    assert result.failures == [(site.url("/"), Code.FETCH_TIMEOUT)]
    assert len(fetcher.connections) == 1  # robots.txt only; the page itself was not tried


@pytest.mark.parametrize(("declared", "expected"), [("2", 2.0), ("60", 10.0)])
def test_crawl_delay_is_honoured_and_capped(
    site: Any, make_fetcher: MAKE, declared: str, expected: float
) -> None:
    site.routes["/robots.txt"] = site.page(f"User-agent: *\nCrawl-delay: {declared}\n", "text/plain")
    site.routes["/"] = site.page(site.html("/a", "/b"))
    site.routes["/a"] = site.page(site.html())
    site.routes["/b"] = site.page(site.html())
    sleep = FakeSleep()
    result = run(site, make_fetcher(), sleep=sleep)
    assert len(result.pages) == 3
    assert sleep.delays == [expected] * 4  # /sitemap.xml, then the three pages
    assert site.paths() == ["/robots.txt", "/sitemap.xml", "/", "/a", "/b"]


def test_no_crawl_delay_means_no_sleep(site: Any, make_fetcher: MAKE) -> None:
    site.routes["/"] = site.page(site.html("/a"))
    sleep = FakeSleep()
    run(site, make_fetcher(), sleep=sleep)
    assert sleep.delays == []


def test_calendar_trap_is_capped_at_max_pages(site: Any, make_fetcher: MAKE) -> None:
    def calendar(handler: Any) -> None:
        if not handler.path.startswith("/cal/"):
            site.respond(handler, 404, b"", "text/plain")
            return
        day = int(handler.path.split("?")[0].rsplit("/", 1)[1])
        body = site.html(f"/cal/{day + 1}", f"/cal/{day + 2}", f"/cal/{day + 1}?view=week")
        site.respond(handler, 200, body.encode())

    site.fallback = calendar
    result = run(site, make_fetcher(), "/cal/1", max_pages=7)
    assert len(result.pages) == 7
    assert len({p.url for p in result.pages}) == 7
    assert result.cursor is None
    assert len([p for p in site.paths() if p.startswith("/cal/")]) == 7


def test_tracking_parameters_and_fragments_do_not_duplicate_pages(site: Any, make_fetcher: MAKE) -> None:
    site.routes["/"] = site.page(
        site.html(
            "/a?utm_source=news&utm_medium=mail",
            "/a?gclid=123",
            "/a?fbclid=456#comments",
            "/a#top",
            "/a",
            "/b?page=2&utm_campaign=x",
            "/b?page=2",
        )
    )
    site.routes["/a"] = site.page(site.html())
    site.routes["/b"] = site.page(site.html())
    result = run(site, make_fetcher())
    assert paths_of(site, result) == ["/", "/a", "/b?page=2"]
    assert site.paths() == ["/robots.txt", "/sitemap.xml", "/", "/a", "/b?page=2"]


def test_start_urls_outside_the_origins_are_refused(site: Any, make_fetcher: MAKE) -> None:
    site.routes["/"] = site.page(site.html())
    starts = [site.url("/"), site.url("/", host="other.example"), f"http://test.example:{site.port}/"]
    result = crawl([site.origin()], starts, make_fetcher(), sleep=FakeSleep())
    assert paths_of(site, result) == ["/"]
    assert result.failures == [(starts[1], Code.BLOCKED_ADDRESS), (starts[2], Code.BLOCKED_ADDRESS)]
    assert site.paths(host="other.example") == []


def test_failures_are_recorded_and_the_crawl_goes_on(site: Any, make_fetcher: MAKE) -> None:
    site.routes["/"] = site.page(site.html("/pdf", "/broken", "/missing", "/busy", "/away", "/moved", "/ok"))
    site.routes["/pdf"] = site.page(b"%PDF-1.7", "application/pdf")
    site.routes["/broken"] = site.page("oops", "text/plain", status=500)
    site.routes["/busy"] = site.page("later", "text/plain", status=429)
    site.routes["/away"] = site.redirect(site.url("/", host="other.example"))
    site.routes["/moved"] = site.redirect("/")  # lands on a page this crawl already has
    site.routes["/ok"] = site.page(site.html(), "text/html")
    result = run(site, make_fetcher())
    assert paths_of(site, result) == ["/", "/ok"]
    assert result.failures == [
        (site.url("/pdf"), Code.UNSUPPORTED_TYPE),
        (site.url("/broken"), Code.FETCH_TIMEOUT),
        (site.url("/missing"), Code.MALFORMED_FILE),
        (site.url("/busy"), Code.RATE_LIMITED),
        (site.url("/away"), Code.BLOCKED_ADDRESS),
    ]
    assert site.paths(host="other.example") == []


def test_redirect_target_is_recorded_as_the_page_and_not_fetched_twice(site: Any, make_fetcher: MAKE) -> None:
    site.routes["/"] = site.page(site.html("/old", "/new"))
    site.routes["/old"] = site.redirect("/new", 301)
    site.routes["/new"] = site.page(site.html(), "text/html")
    result = run(site, make_fetcher())
    assert paths_of(site, result) == ["/", "/new"]
    assert site.paths().count("/new") == 1


def test_to_text_is_pluggable(site: Any, make_fetcher: MAKE) -> None:
    site.routes["/"] = site.page("<title>Home</title><p>Hello</p>", "text/html; charset=utf-8")
    calls: list[tuple[bytes, str]] = []

    def to_text(body: bytes, content_type: str) -> tuple[str | None, str]:
        calls.append((body, content_type))
        return "custom title", f"{len(body)} bytes"

    result = run(site, make_fetcher(), to_text=to_text)
    assert calls == [(b"<title>Home</title><p>Hello</p>", "text/html; charset=utf-8")]
    assert (result.pages[0].title, result.pages[0].text) == ("custom title", "31 bytes")


def test_default_text_extraction() -> None:
    body = "<html><head><title> Caf\u00e9  menu </title><style>p{}</style></head><body><script>x()</script>" \
        "<h1>Menu</h1><p>Soup</p></body></html>"
    title, text = html_to_text(body.encode("latin-1"), "text/html; charset=iso-8859-1")
    assert title == "Caf\u00e9 menu"
    assert text.split("\n") == ["Menu", "Soup"]
    assert html_to_text(b"plain words", "text/plain") == (None, "plain words")



def test_deadline_stops_with_a_cursor_that_resumes(site: Any, make_fetcher: MAKE) -> None:
    site.routes["/"] = site.page(site.html("/a", "/b", "/c"))
    for path in ("/a", "/b", "/c"):
        site.routes[path] = site.page(site.html("/", "/d"))
    site.routes["/d"] = site.page(site.html("/a"))
    fetcher = make_fetcher()

    pages: list[str] = []
    steps = 0
    cursor = None
    while True:
        clock = StepClock()
        result = crawl(
            [site.origin()],
            [site.url("/")],
            fetcher,
            sleep=FakeSleep(),
            deadline=2.5,  # room for two requests per step
            clock=clock,
            cursor=cursor,
        )
        steps += 1
        pages += paths_of(site, result)
        assert result.failures == []
        if result.cursor is None:
            break
        cursor = json.loads(json.dumps(result.cursor))  # it has to survive serialisation
        assert steps < 10
    assert pages == ["/", "/a", "/b", "/c", "/d"]
    assert steps == 4  # the first step reads robots.txt and /sitemap.xml
    assert site.paths().count("/robots.txt") == 1  # the robots cache travels in the cursor


def test_crawl_delay_that_would_pass_the_deadline_ends_the_step(site: Any, make_fetcher: MAKE) -> None:
    site.routes["/robots.txt"] = site.page("User-agent: *\nCrawl-delay: 5\n", "text/plain")
    site.routes["/"] = site.page(site.html())
    sleep = FakeSleep()
    result = crawl([site.origin()], [site.url("/")], make_fetcher(), sleep=sleep, deadline=3.0, clock=lambda: 0.0)
    assert sleep.delays == []
    assert result.pages == []
    assert result.cursor is not None
    assert result.cursor["queue"] == [site.url("/")]
    resumed = crawl([site.origin()], [], make_fetcher(), sleep=sleep, cursor=result.cursor)
    assert paths_of(site, resumed) == ["/"]
    assert sleep.delays == [5.0, 5.0]  # before /sitemap.xml and before the page
    assert site.paths() == ["/robots.txt", "/sitemap.xml", "/"]
