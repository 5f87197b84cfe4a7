"""rel=canonical folding and include/exclude path patterns: real fetcher, local HTTPS server."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from knowledge.crawl.crawler import crawl
from knowledge.crawl.urls import PathFilter, page_links

pytestmark = pytest.mark.timeout(60)

MAKE = Callable[..., Any]


def no_sleep(seconds: float) -> None:
    return


def run(site: Any, fetcher: Any, *starts: str, **kwargs: Any) -> Any:
    kwargs.setdefault("sleep", no_sleep)
    return crawl([site.origin()], [site.url(s) for s in starts or ("/",)], fetcher, **kwargs)


def paths_of(site: Any, result: Any) -> list[str]:
    prefix = site.origin()
    return [p.url[len(prefix) :] for p in result.pages]


def with_canonical(href: str, *links: str, title: str = "t") -> str:
    anchors = "".join(f'<a href="{link}">link</a>' for link in links)
    return (f'<html><head><title>{title}</title><link rel="canonical" href="{href}"></head>'
            f"<body><p>{title}</p>{anchors}</body></html>")


def test_two_urls_with_the_same_canonical_are_one_page(site: Any, make_fetcher: MAKE) -> None:
    site.routes["/"] = site.page(site.html("/guide?print=1", "/guide?lang=en", "/guide"))
    site.routes["/guide"] = site.page(with_canonical("/guide", title="Guide"))
    result = run(site, make_fetcher())
    # /guide?print=1 is fetched first and kept under /guide, which is then not fetched;
    # /guide?lang=en names the same canonical URL and is dropped
    assert paths_of(site, result) == ["/", "/guide"]
    assert result.failures == []
    assert [p.title for p in result.pages] == ["t", "Guide"]
    assert [p for p in site.paths() if p.startswith("/guide")] == ["/guide?print=1", "/guide?lang=en"]


def test_canonical_outside_the_origins_or_forbidden_is_ignored(site: Any, make_fetcher: MAKE) -> None:
    site.routes["/robots.txt"] = site.page("User-agent: *\nDisallow: /private\n", "text/plain")
    site.routes["/"] = site.page(site.html("/a", "/b", "/c"))
    site.routes["/a"] = site.page(with_canonical(site.url("/x", host="other.example")))
    site.routes["/b"] = site.page(with_canonical("/private/b"))
    site.routes["/c"] = site.page(with_canonical("/d", "/e"))
    site.routes["/e"] = site.page(site.html())
    result = run(site, make_fetcher(), include=["/"], exclude=["/d"])
    # /c's canonical /d is excluded by the patterns: /c keeps its own URL
    assert paths_of(site, result) == ["/", "/a", "/b", "/c", "/e"]
    assert site.paths(host="other.example") == []


def test_canonical_to_a_page_already_kept_drops_the_duplicate(site: Any, make_fetcher: MAKE) -> None:
    site.routes["/"] = site.page(site.html("/copy"))
    site.routes["/copy"] = site.page(with_canonical(site.url("/"), "/only-in-copy"))
    result = run(site, make_fetcher())
    assert paths_of(site, result) == ["/"]
    assert "/only-in-copy" not in site.paths()


def test_include_and_exclude_apply_to_links_and_sitemap_entries(site: Any, make_fetcher: MAKE) -> None:
    site.routes["/"] = site.page(site.html("/docs/a", "/docs/old/b", "/blog/c", "/docs"))
    site.routes["/sitemap.xml"] = site.page(
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        + "".join(f"<url><loc>{site.url(p)}</loc></url>" for p in ("/docs/s", "/docs/old/s", "/shop/s"))
        + "</urlset>",
        "application/xml",
    )
    site.fallback = lambda h: site.respond(h, 200, site.html().encode())
    result = run(site, make_fetcher(), include=["/docs/*"], exclude=["/docs/old/*"])
    assert paths_of(site, result) == ["/", "/docs/s", "/docs/a"]  # the start URL is always fetched
    assert result.failures == []
    for path in ("/docs/old/b", "/blog/c", "/docs", "/docs/old/s", "/shop/s"):
        assert path not in site.paths()


@pytest.mark.parametrize(
    ("include", "exclude", "path", "passes"),
    [
        ([], [], "/anything", True),
        (["/docs/*"], [], "/docs/x", True),
        (["/docs/*"], [], "/docs", False),
        (["/docs"], [], "/docs-old", True),  # a prefix, as in robots.txt
        (["/docs/*.html$"], [], "/docs/a/b.html", True),
        (["/docs/*.html$"], [], "/docs/a/b.html?x=1", False),
        (["/caf%C3%A9/*"], [], "/caf\u00e9/menu", True),
        (["/caf\u00e9/*"], [], "/caf%C3%A9/menu", True),
        (["/a.b"], [], "/axb", False),  # "." is not a wildcard
        ([], ["/private"], "/private/x", False),
        (["/docs/*"], ["/docs/old/*"], "/docs/old/x", False),
        (["/docs/*"], ["/docs/old/*"], "/docs/new/x", True),
        ([], ["/*?session="], "/a?session=1", False),
    ],
)
def test_path_filter(include: list[str], exclude: list[str], path: str, passes: bool) -> None:
    assert PathFilter(include, exclude).allows("https://site.example" + path) is passes


def test_page_links_reads_the_canonical_link() -> None:
    html = ('<html><head><base href="https://site.example/docs/"><link rel="alternate" href="/fr">'
            '<link rel="Canonical Other" href="guide#top"></head><body><a href="a">a</a></body></html>')
    links, canonical = page_links(html, "https://site.example/x")
    assert links == ["https://site.example/docs/a"]
    assert canonical == "https://site.example/docs/guide"
    assert page_links('<link rel="canonical" href="http://site.example/">', "https://site.example/")[1] is None
    assert page_links("<p>none</p>", "https://site.example/")[1] is None


def test_excluded_links_are_not_failures(site: Any, make_fetcher: MAKE) -> None:
    site.routes["/"] = site.page(site.html("/private/x"))
    result = run(site, make_fetcher(), exclude=["/private"])
    assert result.failures == []
    assert "/private/x" not in site.paths()
