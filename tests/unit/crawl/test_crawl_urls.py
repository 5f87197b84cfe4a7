"""URL normalisation, origin checks and link extraction."""

from __future__ import annotations

import pytest

from knowledge.crawl.urls import extract_links, in_origins, normalize, origin_of, page_links


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("https://site.example/a#section", "https://site.example/a"),
        ("https://site.example/a?utm_source=x&utm_medium=y&id=3", "https://site.example/a?id=3"),
        ("https://site.example/a?UTM_Campaign=x&id=3", "https://site.example/a?id=3"),
        ("https://site.example/a?gclid=abc&fbclid=def", "https://site.example/a"),
        ("https://site.example/a?utmost=1&fbclid_extra=2", "https://site.example/a?fbclid_extra=2&utmost=1"),
        ("https://site.example/a?b=2&a=1", "https://site.example/a?a=1&b=2"),
        ("HTTPS://Site.EXAMPLE:443/a", "https://site.example/a"),
        ("https://site.example:8443/a", "https://site.example:8443/a"),
        ("https://site.example", "https://site.example/"),
        ("https://site.example/a/./b/../c", "https://site.example/a/c"),
        ("https://site.example/a b", "https://site.example/a%20b"),
        ("https://bücher.example/x", "https://xn--bcher-kva.example/x"),
    ],
)
def test_normalize(raw: str, expected: str) -> None:
    assert normalize(raw) == expected


def test_normalize_is_idempotent() -> None:
    for url in ("https://site.example/a?utm_x=1&b=2#f", "https://Site.example:443/%7Euser/x y?q=ä"):
        once = normalize(url)
        assert normalize(once) == once


def test_in_origins() -> None:
    origins = ["https://site.example", "https://docs.example:8443/"]
    assert in_origins("https://site.example/anything?x=1", origins)
    assert in_origins("https://SITE.example:443/a", origins)
    assert in_origins("https://docs.example:8443/a", origins)
    assert not in_origins("https://docs.example/a", origins)  # other port
    assert not in_origins("https://site.example:8443/a", origins)
    assert not in_origins("http://site.example/a", origins)  # other scheme
    assert not in_origins("https://sub.site.example/a", origins)
    assert not in_origins("https://site.example.evil.example/a", origins)
    assert not in_origins("https://user@site.example/a", origins)
    assert not in_origins("not a url", origins)
    assert not in_origins("https://site.example/a", ["https://site.example/docs"])  # not a bare origin


def test_origin_of() -> None:
    assert origin_of("https://Site.example:443/a?b") == "https://site.example"
    assert origin_of("https://site.example:8443/a") == "https://site.example:8443"
    # http origins exist only under the development switch; the scheme is part of the origin
    assert origin_of("http://127.0.0.1:8000/a") == "http://127.0.0.1:8000"
    assert origin_of("http://site.example:80/a") == "http://site.example"
    assert not in_origins("https://127.0.0.1:8000/a", ["http://127.0.0.1:8000"])
    assert in_origins("http://127.0.0.1:8000/a", ["http://127.0.0.1:8000"])
    assert origin_of("ftp://site.example/a") is None


def test_an_http_page_yields_http_links_and_an_https_page_never_does() -> None:
    html = '<a href="/x">x</a><a href="https://site.example/y">y</a><link rel="canonical" href="/x">'
    assert page_links(html, "http://127.0.0.1:8000/") == (
        ["http://127.0.0.1:8000/x", "https://site.example/y"], "http://127.0.0.1:8000/x")
    assert page_links('<a href="http://127.0.0.1:8000/x">x</a>', "https://site.example/") == ([], None)


BASE = "https://site.example/docs/page.html"


def test_extract_links_follows_only_anchors() -> None:
    html = """<html><head><link href="/style.css" rel="stylesheet"><script src="/app.js"></script></head>
    <body><img src="/logo.png"><iframe src="/frame"></iframe><form action="/submit"></form>
    <area href="/area"><a href="/one">one</a><a name="no-href">x</a></body></html>"""
    assert extract_links(html, BASE) == ["https://site.example/one"]


def test_extract_links_resolves_normalises_and_deduplicates_in_order() -> None:
    html = """
    <a href="b.html">relative</a>
    <a href="/top?utm_source=mail">tracking</a>
    <a href="/top#intro">fragment</a>
    <a href="/top">plain</a>
    <a href="b.html?gclid=1">again</a>
    <a href=" ../up.html ">spaces</a>
    <a href="https://other.example/x">external (kept; the crawler filters origins)</a>
    <a href="http://site.example/insecure">http</a>
    <a href="mailto:team@site.example">mail</a>
    <a href="javascript:void(0)">js</a>
    <a href="#">self</a>
    <a href="">empty</a>
    """
    assert extract_links(html, BASE) == [
        "https://site.example/docs/b.html",
        "https://site.example/top",
        "https://site.example/up.html",
        "https://other.example/x",
        "https://site.example/docs/page.html",
    ]


def test_extract_links_uses_base_href() -> None:
    html = '<head><base href="https://site.example/v2/"></head><a href="guide">g</a><a href="/abs">a</a>'
    assert extract_links(html, BASE) == ["https://site.example/v2/guide", "https://site.example/abs"]
    relative_base = '<head><base href="/archive/"></head><a href="old">o</a>'
    assert extract_links(relative_base, BASE) == ["https://site.example/archive/old"]
    insecure_base = '<head><base href="http://site.example/"></head><a href="x">x</a>'
    assert extract_links(insecure_base, BASE) == []
