"""Sitemaps seed the crawl: real fetcher, real local HTTPS server."""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable
from typing import Any

import pytest

from knowledge.crawl.crawler import MAX_SITEMAP_FILES, crawl
from knowledge.crawl.robots import RobotsPolicy
from knowledge.crawl.sitemaps import MAX_SITEMAP_BYTES, parse_lastmod, parse_sitemap, robots_sitemaps
from knowledge.errors import Code, SourceFailure
from tests.unit.crawl.conftest import StepClock

pytestmark = pytest.mark.timeout(60)

MAKE = Callable[..., Any]
XML = "application/xml"


def no_sleep(seconds: float) -> None:
    return


def run(site: Any, fetcher: Any, *starts: str, **kwargs: Any) -> Any:
    kwargs.setdefault("sleep", no_sleep)
    site.routes.setdefault("/", site.page(site.html(title="home")))
    return crawl([site.origin()], [site.url(s) for s in starts or ("/",)], fetcher, **kwargs)


def paths_of(site: Any, result: Any) -> list[str]:
    prefix = site.origin()
    return [p.url[len(prefix) :] for p in result.pages]


def urlset(*entries: tuple[str, str | None]) -> str:
    body = "".join(
        f"<url><loc>{loc}</loc>{f'<lastmod>{mod}</lastmod>' if mod else ''}</url>" for loc, mod in entries
    )
    return f'<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{body}</urlset>'


def index(*locs: str) -> str:
    body = "".join(f"<sitemap><loc>{loc}</loc></sitemap>" for loc in locs)
    return f'<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{body}</sitemapindex>'


def test_pages_only_in_the_sitemap_are_crawled_newest_first_before_links(site: Any, make_fetcher: MAKE) -> None:
    site.routes["/"] = site.page(site.html("/linked"))
    site.routes["/sitemap.xml"] = site.page(
        urlset(
            (site.url("/old"), "2020-01-01"),
            (site.url("/undated"), None),
            (site.url("/new"), "2024-05-01T10:00:00+02:00"),
            (site.url("/middle"), "2023-07"),
            (site.url("/"), "2019"),  # the start page: queued once
            ("https://outside.example/page", "2025-01-01"),  # not an allowed origin
            (site.url("/x", host="other.example"), "2025-01-01"),
        ),
        XML,
    )
    for path in ("/old", "/undated", "/new", "/middle", "/linked"):
        site.routes[path] = site.page(site.html(title=path))
    result = run(site, make_fetcher())
    assert paths_of(site, result) == ["/", "/new", "/middle", "/old", "/undated", "/linked"]
    assert result.failures == []
    assert site.paths() == ["/robots.txt", "/sitemap.xml", "/", "/new", "/middle", "/old", "/undated", "/linked"]
    assert site.paths(host="other.example") == []


def test_sitemap_lines_of_robots_txt_are_read(site: Any, make_fetcher: MAKE) -> None:
    site.routes["/robots.txt"] = site.page(
        "User-agent: *\nDisallow: /maps/\n"
        f"Sitemap: {site.url('/maps/pages.xml')}\n"
        f"Sitemap: {site.url('/maps/other.xml', host='other.example')}\n",
        "text/plain",
    )
    site.routes["/maps/pages.xml"] = site.page(urlset((site.url("/hidden"), None)), "text/xml")
    site.routes["/hidden"] = site.page(site.html(title="hidden"))
    result = run(site, make_fetcher())
    # listed in robots.txt: fetched although /maps/ is disallowed; the other origin's is not
    assert paths_of(site, result) == ["/", "/hidden"]
    assert "/maps/pages.xml" in site.paths()
    assert site.paths(host="other.example") == []
    assert result.failures == []


def test_sitemap_index_with_a_gzip_child(site: Any, make_fetcher: MAKE) -> None:
    site.routes["/sitemap.xml"] = site.page(
        index(site.url("/maps/a.xml.gz"), site.url("/maps/b.xml"), site.url("/maps/c.xml", host="other.example")),
        XML,
    )
    site.routes["/maps/a.xml.gz"] = site.page(
        gzip.compress(urlset((site.url("/from-gzip"), "2024-01-01")).encode()), "application/x-gzip"
    )
    site.routes["/maps/b.xml"] = site.page(urlset((site.url("/from-plain"), "2024-02-01")), XML)
    site.routes["/from-gzip"] = site.page(site.html())
    site.routes["/from-plain"] = site.page(site.html())
    result = run(site, make_fetcher())
    assert paths_of(site, result) == ["/", "/from-plain", "/from-gzip"]
    assert result.failures == []
    assert site.paths(host="other.example") == []


def test_an_index_inside_an_index_is_not_followed(site: Any, make_fetcher: MAKE) -> None:
    site.routes["/sitemap.xml"] = site.page(index(site.url("/maps/nested.xml")), XML)
    site.routes["/maps/nested.xml"] = site.page(index(site.url("/maps/deeper.xml")), XML)
    result = run(site, make_fetcher())
    assert paths_of(site, result) == ["/"]
    assert "/maps/deeper.xml" not in site.paths()


def test_oversized_sitemaps_fail_bounded_and_the_crawl_goes_on(site: Any, make_fetcher: MAKE) -> None:
    bomb = gzip.compress(b"<urlset>" + b" " * (MAX_SITEMAP_BYTES + 1024) + b"</urlset>")
    assert len(bomb) < 100 * 1024
    site.routes["/sitemap.xml"] = site.page(
        index(site.url("/maps/bomb.xml.gz"), site.url("/maps/huge.xml"), site.url("/maps/ok.xml")), XML
    )
    site.routes["/maps/bomb.xml.gz"] = site.page(bomb, "application/gzip")
    site.routes["/maps/huge.xml"] = site.page(b"<urlset>" + b" " * 300_000 + b"</urlset>", XML)
    site.routes["/maps/ok.xml"] = site.page(urlset((site.url("/fine"), None)), XML)
    site.routes["/fine"] = site.page(site.html())
    result = run(site, make_fetcher(max_bytes=200_000))
    assert paths_of(site, result) == ["/", "/fine"]
    assert result.failures == [
        (site.url("/maps/bomb.xml.gz"), Code.FILE_TOO_LARGE),
        (site.url("/maps/huge.xml"), Code.FILE_TOO_LARGE),
    ]


def test_hostile_or_broken_sitemaps_are_failures_with_their_code(site: Any, make_fetcher: MAKE) -> None:
    entities = (
        '<?xml version="1.0"?><!DOCTYPE u [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;">]>'
        "<urlset><url><loc>&b;</loc></url></urlset>"
    )
    site.routes["/sitemap.xml"] = site.page(
        index(*(site.url(f"/maps/{name}") for name in ("entities.xml", "html.xml", "gone.xml", "bad.gz"))), XML
    )
    site.routes["/maps/entities.xml"] = site.page(entities, XML)
    site.routes["/maps/html.xml"] = site.page("<html><body>not a sitemap</body></html>", "text/html")
    site.routes["/maps/bad.gz"] = site.page(b"\x1f\x8bnot gzip at all", "application/gzip")
    result = run(site, make_fetcher())
    assert paths_of(site, result) == ["/"]
    assert result.failures == [
        (site.url("/maps/entities.xml"), Code.MALFORMED_FILE),
        (site.url("/maps/html.xml"), Code.MALFORMED_FILE),
        (site.url("/maps/gone.xml"), Code.MALFORMED_FILE),  # a 404
        (site.url("/maps/bad.gz"), Code.MALFORMED_FILE),
    ]


@pytest.mark.parametrize(
    "route",
    [
        None,  # 404
        ("<html><body>a soft 404</body></html>", "text/html"),
        ("not xml <", XML),
    ],
)
def test_no_usable_sitemap_xml_is_not_a_failure(site: Any, make_fetcher: MAKE, route: Any) -> None:
    if route is not None:
        site.routes["/sitemap.xml"] = site.page(*route)
    result = run(site, make_fetcher())
    assert paths_of(site, result) == ["/"]
    assert result.failures == []


def test_robots_txt_can_forbid_the_guessed_sitemap(site: Any, make_fetcher: MAKE) -> None:
    site.routes["/robots.txt"] = site.page("User-agent: *\nDisallow: /sitemap\n", "text/plain")
    site.routes["/sitemap.xml"] = site.page(urlset((site.url("/hidden"), None)), XML)
    result = run(site, make_fetcher())
    assert paths_of(site, result) == ["/"]
    assert "/sitemap.xml" not in site.paths()


def test_sitemap_urls_still_obey_robots_and_the_page_limit(site: Any, make_fetcher: MAKE) -> None:
    site.routes["/robots.txt"] = site.page("User-agent: *\nDisallow: /private\n", "text/plain")
    entries = [(site.url(f"/p/{n}"), f"2024-01-{n + 1:02d}") for n in range(20)]
    site.routes["/sitemap.xml"] = site.page(urlset((site.url("/private/x"), "2030-01-01"), *entries), XML)
    site.fallback = lambda h: site.respond(h, 200, site.html().encode())
    result = run(site, make_fetcher(), max_pages=5)
    assert paths_of(site, result) == ["/", "/p/19", "/p/18", "/p/17", "/p/16"]
    assert result.failures == [(site.url("/private/x"), Code.ROBOTS_DENIED)]
    assert "/private/x" not in site.paths()


def test_at_most_a_bounded_number_of_sitemap_files(site: Any, make_fetcher: MAKE) -> None:
    children = [site.url(f"/maps/{n}.xml") for n in range(MAX_SITEMAP_FILES + 5)]
    site.routes["/sitemap.xml"] = site.page(index(*children), XML)
    site.fallback = lambda h: site.respond(h, 200, urlset().encode(), XML)
    run(site, make_fetcher())
    fetched = [p for p in site.paths() if p.startswith("/maps/") or p == "/sitemap.xml"]
    assert len(fetched) == MAX_SITEMAP_FILES



def test_a_deadline_inside_the_sitemap_phase_resumes_from_the_cursor(site: Any, make_fetcher: MAKE) -> None:
    site.routes["/sitemap.xml"] = site.page(index(site.url("/maps/a.xml"), site.url("/maps/b.xml")), XML)
    site.routes["/maps/a.xml"] = site.page(urlset((site.url("/a"), "2024-01-01")), XML)
    site.routes["/maps/b.xml"] = site.page(urlset((site.url("/b"), "2024-06-01")), XML)
    site.fallback = lambda h: site.respond(h, 200, site.html().encode())
    site.routes["/"] = site.page(site.html())
    fetcher = make_fetcher()
    pages: list[str] = []
    cursor = None
    for _ in range(10):
        result = crawl([site.origin()], [site.url("/")], fetcher, sleep=no_sleep, deadline=2.5,
                       clock=StepClock(), cursor=cursor)
        pages += paths_of(site, result)
        if result.cursor is None:
            break
        cursor = json.loads(json.dumps(result.cursor))
    assert pages == ["/", "/b", "/a"]  # lastmod order holds across steps
    assert site.paths().count("/sitemap.xml") == 1
    assert site.paths().count("/maps/a.xml") == 1


# -- parsing ------------------------------------------------------------------------------


def test_robots_sitemap_lines() -> None:
    robots = (
        "Sitemap: https://a.example/one.xml\n"
        "User-agent: *\nsitemap:https://a.example/two.xml # comment\nDisallow: /x\n"
        "# Sitemap: https://a.example/commented.xml\n"
        "SITEMAP: https://a.example/one.xml\n"
    )
    assert robots_sitemaps(robots) == ["https://a.example/one.xml", "https://a.example/two.xml"]
    policy = RobotsPolicy.from_dict(json.loads(json.dumps(RobotsPolicy.from_response(200, robots).to_dict())))
    assert policy.sitemaps == ("https://a.example/one.xml", "https://a.example/two.xml")
    assert not policy.allowed("https://a.example/x")


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2024", "2024-01-01T00:00:00+00:00"),
        ("2024-05", "2024-05-01T00:00:00+00:00"),
        ("2024-05-02", "2024-05-02T00:00:00+00:00"),
        ("2024-05-02T10:30:00Z", "2024-05-02T10:30:00+00:00"),
        ("2024-05-02T10:30+02:00", "2024-05-02T08:30:00+00:00"),
        ("2024-05-02T10:30:00.5+00:00", "2024-05-02T10:30:00.500000+00:00"),
    ],
)
def test_lastmod_formats(value: str, expected: str) -> None:
    from datetime import datetime

    assert parse_lastmod(value) == datetime.fromisoformat(expected).timestamp()


@pytest.mark.parametrize("value", ["", "yesterday", "2024-13-01", "99999-01-01"])
def test_unreadable_lastmod_is_none(value: str) -> None:
    assert parse_lastmod(value) is None


def test_parse_rejects_what_is_not_a_sitemap() -> None:
    with pytest.raises(SourceFailure) as caught:
        parse_sitemap(b"<rss><channel/></rss>")
    assert caught.value.code == Code.MALFORMED_FILE
    external = b'<?xml version="1.0"?><!DOCTYPE u SYSTEM "http://127.0.0.1:9/x.dtd"><urlset/>'
    with pytest.raises(SourceFailure) as caught:
        parse_sitemap(external)
    assert caught.value.code == Code.MALFORMED_FILE
