"""Conditional re-fetch against the local HTTPS test site: validators go back only to the
URL they came from, a 304 keeps the page as it was and its links are still followed."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from knowledge.crawl.crawler import KnownPage, Page, crawl
from knowledge.errors import Code

pytestmark = pytest.mark.timeout(60)


class Tagged:
    """A page with an ETag; notes the If-None-Match of every request."""

    def __init__(self, site: Any, body: str, etag: str | None):
        self.site, self.body, self.etag = site, body, etag
        self.asked: list[str | None] = []

    def __call__(self, handler: Any) -> None:
        sent = handler.headers.get("If-None-Match")
        self.asked.append(sent)
        if self.etag is not None and sent == self.etag:
            handler.send_response(304)
            handler.send_header("ETag", self.etag)
            handler.end_headers()
            return
        headers = {"ETag": self.etag} if self.etag else {}
        self.site.respond(handler, 200, self.body.encode(), "text/html; charset=utf-8", headers)


def known_from(pages: list[Page], extra: dict[str, KnownPage] | None = None) -> Callable[[str], KnownPage | None]:
    table = {p.url: KnownPage(p.etag, p.last_modified, p.title, p.text, p.content_type, p.links, p.canonical)
             for p in pages if p.etag or p.last_modified}
    table.update(extra or {})
    return table.get


def test_validators_go_back_only_to_their_url_and_a_304_keeps_the_page(site: Any, make_fetcher: Any) -> None:
    h = site.html
    home = Tagged(site, h("/moved", "/alias", title="Home", text="kiwi home"), '"home-1"')
    target = Tagged(site, h(title="Target", text="kiwi target"), '"target-1"')
    alias = Tagged(site, '<html><head><title>Alias</title><link rel="canonical" href="/real"></head>'
                         "<body>kiwi alias</body></html>", '"alias-1"')
    site.routes.update({"/": home, "/target": target, "/alias": alias, "/moved": site.redirect("/target")})
    origins, starts = [site.origin()], [site.url("/")]

    first = crawl(origins, starts, make_fetcher(), sleep=lambda s: None)
    kept = {p.url[len(site.origin()):]: p for p in first.pages}
    assert sorted(kept) == ["/", "/real", "/target"]
    # a redirected or folded page keeps no validators: they belong to another URL
    assert (kept["/"].etag, kept["/target"].etag, kept["/real"].etag) == ('"home-1"', None, None)

    stale = KnownPage('"moved-1"', None, "Moved", "old text", "text/html")
    second = crawl(origins, starts, make_fetcher(), sleep=lambda s: None,
                   known=known_from(first.pages, {site.url("/moved"): stale}))
    assert home.asked == [None, '"home-1"']
    assert target.asked == [None, None]  # the redirect hop from /moved carried no validator
    assert alias.asked == [None, None]
    again = {p.url[len(site.origin()):]: p for p in second.pages}
    assert sorted(again) == ["/", "/real", "/target"]  # the 304 page's links were followed
    assert again["/"].unchanged and again["/"].text == kept["/"].text and again["/"].etag == '"home-1"'
    assert not again["/target"].unchanged and not again["/real"].unchanged
    assert second.failures == []


def test_a_304_to_a_request_without_validators_is_a_failure(site: Any, make_fetcher: Any) -> None:
    site.routes["/"] = site.page(site.html("/stubborn", title="Home", text="home"))
    site.routes["/stubborn"] = lambda h: site.respond(h, 304, b"", None)
    result = crawl([site.origin()], [site.url("/")], make_fetcher(), sleep=lambda s: None)
    assert result.failures == [(site.url("/stubborn"), Code.MALFORMED_FILE)]
