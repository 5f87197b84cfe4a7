"""Helpers for the website and file source tests: the local HTTPS test site (reused from the
crawler's unit-test fixtures), a hostile site layout, and documents of every accepted type
built in code (reused from the extraction tests' builders).

Test modules pull the fixtures in with ``from tests.e2e.sites import *`` style imports of
``tls``, ``site``, ``resolver`` and ``make_fetcher`` (pytest finds fixtures in a module's
namespace).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

import knowledge.sources.website as website
from knowledge.errors import Code
from tests.unit.crawl import conftest as crawl_fixtures
from tests.unit.extract import hostile

# the crawler tests' fixtures: a throw-away CA, an HTTPS server on 127.0.0.1, a resolver
tls = crawl_fixtures.tls
site = crawl_fixtures.site
resolver = crawl_fixtures.resolver
make_fetcher = crawl_fixtures.make_fetcher

MB = 1024 * 1024


@dataclass
class FetcherSwitch:
    """What ``knowledge.sources.website.default_fetcher`` returns while a test runs; flip
    ``refuse`` to make the site unreachable (every connection refused)."""

    build: Callable[..., Any]
    refuse: bool = False
    made: list[Any] = field(default_factory=list)

    def __call__(self, policy: Any = None) -> Any:
        fetcher = self.build(refuse=self.refuse, timeout=2.0)
        self.made.append(fetcher)
        return fetcher

    def connections(self) -> list[tuple[str, int]]:
        return [c for f in self.made for c in f.connections]


@pytest.fixture
def site_fetcher(make_fetcher: Callable[..., Any], monkeypatch: pytest.MonkeyPatch) -> FetcherSwitch:
    switch = FetcherSwitch(make_fetcher)
    monkeypatch.setattr(website, "default_fetcher", switch)
    return switch


# -- a hostile help site -----------------------------------------------------------------

TRAP_DEPTH = 400  # far more pages than a source may keep

#: path -> the code its page must fail with
HOSTILE_FAILURES = {
    "/private/secret": Code.ROBOTS_DENIED,
    "/to-private": Code.BLOCKED_ADDRESS,
    "/to-metadata": Code.BLOCKED_ADDRESS,
    "/loop/0": Code.MALFORMED_FILE,
    "/slow": Code.FETCH_TIMEOUT,
    "/huge": Code.FILE_TOO_LARGE,
    "/logo.png": Code.UNSUPPORTED_TYPE,
    "/brochure.pdf": Code.UNSUPPORTED_TYPE,
}


def hostile_site(site: Any, *, trap: bool = True) -> None:
    """Routes of a help site that also tries everything a crawler must survive.

    ``/`` links to the real pages (``/guide``, reached three times through tracking
    parameters and a fragment, which links to ``/faq.md``), to a robots-disallowed path,
    to redirects into a private address, into the metadata service and round a loop, to a
    page that drips for longer than the fetch timeout, to a body over 8 MB, to non-text
    media and, last, to an endless calendar of generated pages (a link trap)."""
    h = site.html
    origin = site.origin()
    site.routes["/robots.txt"] = site.page(
        "User-agent: *\nDisallow: /\n\nUser-agent: KnowledgeBot\nDisallow: /private\n", "text/plain"
    )
    links = [
        "/guide",
        "/guide?utm_source=newsletter&utm_medium=mail",
        "/guide?gclid=abc123#pricing",
        "/private/secret",
        "/to-private",
        "/to-metadata",
        "/loop/0",
        "/slow",
        "/huge",
        "/logo.png",
        "/brochure.pdf",
        "mailto:help@test.example",
        "javascript:alert(1)",
    ]
    if trap:
        links.append("/calendar/0")
    site.routes["/"] = site.page(
        "<html><head><title>Marmot Help</title><script>document.write('pangolin script')</script></head>"
        "<body><nav>Navigation menu</nav><h1>Marmot help centre</h1><p>Welcome to the marmot help centre.</p>"
        + "".join(f'<a href="{link}">link</a>' for link in links)
        + "<form action='/search'><input name='q'></form></body></html>"
    )
    site.routes["/guide"] = site.page(
        "<html><head><title>Ocelot guide</title></head><body>"
        "<header>Site header</header>"
        "<h1>Ocelot guide</h1><h2>Resetting the ocelot dongle</h2>"
        "<p>Hold the ocelot dongle reset button for twelve seconds until the lamp blinks amber.</p>"
        "<h2>Pricing</h2><ul><li>The ocelot plan costs nine euros a month.</li></ul>"
        '<a href="/faq.md">faq</a><footer>Footer links</footer></body></html>'
    )
    site.routes["/faq.md"] = site.page(
        "# Quokka FAQ\n\n## Can I pause a quokka subscription?\n\nYes: quokka subscriptions pause from "
        "the billing page for up to ninety days.\n",
        "text/markdown; charset=utf-8",
    )
    site.routes["/private/secret"] = site.page(h(text="never fetched"))
    site.routes["/to-private"] = site.redirect(f"https://evil.test:{site.port}/steal")
    site.routes["/to-metadata"] = site.redirect("https://169.254.169.254/latest/meta-data/")
    for number in range(5):
        site.routes[f"/loop/{number}"] = site.redirect(f"{origin}/loop/{number + 1}")
    site.routes["/slow"] = _slow(site)
    site.routes["/huge"] = _huge
    site.routes["/logo.png"] = site.page(b"\x89PNG\r\n\x1a\n" + bytes(64), "image/png")
    site.routes["/brochure.pdf"] = site.page(hostile.build_pdf(["brochure"]), "application/pdf")
    if trap:
        site.fallback = _calendar(site)


def _slow(site: Any) -> Callable[[Any], None]:
    def route(handler: Any) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "text/html")
        handler.send_header("Content-Length", "100000")
        handler.end_headers()
        site.drip(handler, [b"<p>drip</p>"] * 60, 0.1)

    return route


def _huge(handler: Any) -> None:
    """Over 8 MB streamed without a Content-Length (the cap must hold while reading)."""
    handler.send_response(200)
    handler.send_header("Content-Type", "text/html")
    handler.send_header("Connection", "close")
    handler.end_headers()
    block = b"<p>" + b"a" * (MB - 7) + b"</p>\n"
    for _ in range(9):
        handler.wfile.write(block)
    handler.close_connection = True


def _calendar(site: Any) -> Callable[[Any], None]:
    def route(handler: Any) -> None:
        path = handler.path.split("?", 1)[0]
        if not path.startswith("/calendar/"):
            site.respond(handler, 404, b"missing", "text/plain")
            return
        number = int(path.rsplit("/", 1)[-1] or 0)
        following = f"/calendar/{number + 1}"
        body = site.html(following, following + "?utm_campaign=trap", title=f"Day {number}",
                         text=f"Nothing happens on day {number}.")
        site.respond(handler, 200, body.encode(), "text/html")

    return route


def wait_for(predicate: Callable[[], Any], timeout: float = 30.0, interval: float = 0.05) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError("condition not reached in time")


# -- documents of every accepted type ------------------------------------------------------


def pdf(text: str, title: str | None = None) -> bytes:
    return hostile.build_pdf([text], title=title)


def docx(heading: str, text: str) -> bytes:
    return hostile.docx(hostile.w_para(heading, "Heading1") + hostile.w_para(text))


def xlsx(rows: list[list[str]], title: str = "Price list") -> bytes:
    values = [cell for row in rows for cell in row]
    indexed = [[f"s:{values.index(cell)}" for cell in row] for row in rows]
    return hostile.office_zip({
        "xl/workbook.xml": hostile.workbook([("Prices", "rId1")]),
        "xl/_rels/workbook.xml.rels": hostile.rels({"rId1": "worksheets/sheet1.xml"}),
        "xl/sharedStrings.xml": hostile.shared_strings(values),
        "xl/worksheets/sheet1.xml": hostile.sheet_xml(indexed),
        "docProps/core.xml": hostile.core_xml(title),
    })


def pptx(title: str, points: list[str]) -> bytes:
    return hostile.office_zip({
        "ppt/presentation.xml": hostile.presentation(["rId1"]),
        "ppt/_rels/presentation.xml.rels": hostile.rels({"rId1": "slides/slide1.xml"}),
        "ppt/slides/slide1.xml": hostile.slide_xml(title, points),
    })


#: type -> (filename, contentType, body, question, a phrase the answer holds)
FILE_CASES: dict[str, tuple[str, str, bytes, str, str]] = {
    "pdf": ("returns.pdf", "application/pdf",
            pdf("Capybara returns are accepted within forty days of delivery.", title="Returns"),
            "how long do capybara returns take", "forty days"),
    "docx": ("onboarding.docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
             docx("Onboarding", "Every wombat account starts with a two week trial."),
             "wombat account trial", "two week trial"),
    "xlsx": ("prices.xlsx", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
             xlsx([["Plan", "Price"], ["Axolotl premium", "fourteen euros"]]),
             "axolotl premium price", "fourteen euros"),
    "pptx": ("roadmap.pptx", "application/vnd.openxmlformats-officedocument.presentationml.presentation",
             pptx("Roadmap", ["The narwhal sync ships in spring."]),
             "when does narwhal sync ship", "ships in spring"),
    "html": ("shipping.html", "text/html",
             b"<html><head><title>Shipping</title><style>.x{}</style></head><body><nav>menu</nav>"
             b"<h1>Shipping</h1><p>Pelican parcels leave the warehouse every Tuesday.</p></body></html>",
             "when do pelican parcels leave", "every Tuesday"),
    "text": ("hours.txt", "text/plain", b"The flamingo hotline is open from eight to six.\n",
             "flamingo hotline hours", "eight to six"),
    "markdown": ("security.md", "text/markdown",
                 b"# Security\n\n## Keys\n\nRotate the gecko API keys every thirty days.\n",
                 "rotate gecko api keys", "thirty days"),
}


def zip_bomb_docx() -> bytes:
    """A DOCX whose document part inflates to 64 MB of zeros (1000:1) behind a header that
    claims 1 KB."""
    payload, crc = hostile.deflated_zeros(64 * MB)
    bomb = hostile.RawEntry("word/document.xml", payload, 8, crc, len(payload), 1024)
    parts = hostile.docx_parts(hostile.w_para("x"))
    del parts["word/document.xml"]
    return hostile.build_zip([hostile.entry(n, c) for n, c in parts.items()] + [bomb])


#: legacy Word 97 file: the OLE2 compound document signature and some padding
LEGACY_DOC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(504)
