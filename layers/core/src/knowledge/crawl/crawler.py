"""Breadth-first crawl of a website source, resumable in time-boxed steps.

Rules (product behaviour):

* robots.txt is read for each origin before any page of it (once per crawl; the cache
  travels in the cursor). 2xx -> its rules, 3xx/4xx -> everything allowed, 5xx ->
  nothing allowed. When it cannot be fetched at all, the pages of that origin fail with
  the fetch's code (``fetch_timeout``, ``blocked_address``...) without being requested.
* ``Crawl-delay`` (capped at 10 s) is waited, through ``sleep``, before every page or sitemap request
  to that origin (the robots.txt request counts as the previous one).
* Sitemaps seed the queue before any page is fetched: for each allowed origin, the
  ``Sitemap:`` lines of its robots.txt and its ``/sitemap.xml`` (see ``sitemaps``), index
  files followed one level down, at most ``MAX_SITEMAP_FILES`` files a crawl. Their URLs
  inside the allowed origins are queued after the start URLs and before any link, newest
  ``lastmod`` first. A sitemap listed in robots.txt is fetched as the site offered it; the
  others only where robots.txt allows. An error on ``/sitemap.xml`` (most sites have none)
  is not a failure; one on a listed sitemap or an index's child is, with its code.
* Only ``<a href>`` links into the allowed origins are queued, normalised (no fragment, no
  tracking parameters), each URL once. ``include``/``exclude`` path patterns
  (``urls.PathFilter``) narrow what links and sitemap entries are queued; start URLs are
  always fetched.
* ``<link rel="canonical">`` folds duplicates: a page whose canonical URL is another URL
  inside the allowed origins (passing the patterns and robots.txt) is kept under that URL,
  which is then not fetched again; a second page with the same canonical URL is dropped.
* Redirects must stay inside the origins and be allowed by robots.txt as well.
* At most ``max_pages`` pages are kept, and at most ``3 * max_pages`` requests are made, so
  a site full of broken links cannot keep the crawler busy either. The queue holds at most
  ``5 * max_pages`` URLs.
* Conditional re-fetch: ``known(url)`` may return what an earlier crawl kept of that URL
  (:class:`KnownPage`: its ``ETag``/``Last-Modified``, extracted text, links and canonical
  link). The request then carries ``If-None-Match``/``If-Modified-Since``; a ``304`` keeps
  the page as it was (``Page.unchanged``) without extracting anything, and its links are
  followed as before. Validators are kept on a page only when it was kept under the URL it
  was requested at (no redirect, no canonical fold), so they are never sent to another URL.
* A page that fails is recorded in ``failures`` with its code and the crawl goes on.
  HTTP errors have no code of their own: 5xx is recorded as ``fetch_timeout`` (the site did
  not answer usefully) and other non-2xx statuses as ``malformed_file``.

Time-boxed steps (a Lambda): pass ``deadline`` (a ``time.monotonic()`` value). Before each
request the crawler checks it, and stops with a JSON-safe ``cursor`` when it has passed
(or when a Crawl-delay would run past it). ``crawl(..., cursor=cursor)`` resumes: the queue,
the seen set, the robots cache and the page/request counts are restored. A step returns only
the pages and failures it produced itself; ``cursor`` is None once the crawl is complete.
Because a request already started may take up to the fetcher's timeout, give the step a
deadline that leaves that much room.
"""

from __future__ import annotations

import codecs
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from bs4 import BeautifulSoup

from knowledge.crawl.fetcher import FetchResult, media_type, validators
from knowledge.crawl.robots import RobotsPolicy
from knowledge.crawl.sitemaps import newest_first, parse_sitemap
from knowledge.crawl.urls import PathFilter, in_origins, normalize, origin_of, page_links
from knowledge.errors import Code, SourceFailure

CURSOR_VERSION = 1
#: Sitemap files (robots.txt's, ``/sitemap.xml`` and index children) fetched per crawl.
MAX_SITEMAP_FILES = 10
HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})

ToText = Callable[[bytes, str], tuple[str | None, str]]


class PageFetcher(Protocol):
    def fetch(
        self,
        url: str,
        *,
        origins: Sequence[str] | None = None,
        may_follow: Callable[[str], bool] | None = None,
        conditions: Mapping[str, str] | None = None,
    ) -> FetchResult:
        """``conditions``: conditional headers (see ``Fetcher.fetch``); the crawler passes
        them only when it has validators to send."""
        ...

    def fetch_robots(self, url: str, *, origins: Sequence[str] | None = None) -> FetchResult: ...


@dataclass(frozen=True)
class Page:
    url: str
    title: str | None
    text: str
    content_type: str  # bare media type, e.g. "text/html"
    etag: str | None = None
    last_modified: str | None = None
    unchanged: bool = False  # the site answered 304: kept from the earlier crawl
    links: tuple[str, ...] = ()  # the page's links (before the origin and pattern filters)
    canonical: str | None = None


@dataclass(frozen=True)
class KnownPage:
    """What an earlier crawl kept of a page, to ask the site whether it changed."""

    etag: str | None
    last_modified: str | None
    title: str | None
    text: str
    content_type: str
    links: tuple[str, ...] = ()
    canonical: str | None = None


Known = Callable[[str], "KnownPage | None"]


@dataclass
class CrawlResult:
    pages: list[Page] = field(default_factory=list)
    failures: list[tuple[str, str]] = field(default_factory=list)
    cursor: dict[str, Any] | None = None


def charset_of(content_type: str) -> str | None:
    """The ``charset`` parameter of a Content-Type, if Python knows the codec."""
    for param in content_type.split(";")[1:]:
        name, _, value = param.partition("=")
        if name.strip().lower() == "charset":
            charset = value.strip().strip("\"'")
            try:
                return codecs.lookup(charset).name
            except LookupError:
                return None
    return None


def decode_body(body: bytes, content_type: str) -> str:
    return body.decode(charset_of(content_type) or "utf-8", errors="replace")


def html_to_text(body: bytes, content_type: str) -> tuple[str | None, str]:
    """Minimal default extraction: the <title> and the visible text of the page."""
    if media_type(content_type) not in HTML_TYPES:
        return None, decode_body(body, content_type).strip()
    soup = BeautifulSoup(body, "lxml", from_encoding=charset_of(content_type))
    title = None
    if soup.title is not None and soup.title.string:
        title = " ".join(soup.title.string.split()) or None
    for tag in soup(["script", "style", "noscript", "template", "head"]):
        tag.decompose()
    return title, soup.get_text("\n", strip=True)


def _status_code(status: int) -> str:
    return Code.FETCH_TIMEOUT if status >= 500 else Code.MALFORMED_FILE


class _Crawl:
    def __init__(
        self,
        origins: Sequence[str],
        fetcher: PageFetcher,
        *,
        max_pages: int,
        sleep: Callable[[float], None],
        deadline: float | None,
        clock: Callable[[], float],
        to_text: ToText,
        paths: PathFilter,
        known: Known | None = None,
    ):
        self.known = known
        self.origins = list(origins)
        self.paths = paths
        self.fetcher = fetcher
        self.max_pages = max_pages
        self.max_requests = 3 * max_pages
        self.max_queue = 5 * max_pages
        self.sleep = sleep
        self.deadline = deadline
        self.clock = clock
        self.to_text = to_text
        self.queue: deque[str] = deque()
        self.seen: set[str] = set()
        self.done: set[str] = set()
        self.kept: set[str] = set()  # the URLs of the pages kept (canonical ones included)
        self.robots: dict[str, dict[str, Any]] = {}
        self.page_count = 0
        self.requests = 0
        self.result = CrawlResult()
        # sitemap seeding: "todo" -> "running" -> "done" (a resumed old cursor: "done")
        self.sitemap_state = "done"
        self.sitemap_queue: deque[tuple[str, str]] = deque()  # (url, "listed"/"guessed"/"child")
        self.sitemap_seen: set[str] = set()
        self.sitemap_found: dict[str, float | None] = {}
        self.sitemap_files = 0

    # -- state --------------------------------------------------------------------------

    def start(self, start_urls: Sequence[str]) -> None:
        for raw in start_urls:
            try:
                url = normalize(raw)
            except ValueError:
                self.result.failures.append((raw, Code.BLOCKED_ADDRESS))
                continue
            if not in_origins(url, self.origins):
                self.result.failures.append((raw, Code.BLOCKED_ADDRESS))
                continue
            self.enqueue(url)
        self.sitemap_state = "todo"

    def restore(self, cursor: dict[str, Any]) -> None:
        if cursor.get("version") != CURSOR_VERSION:
            raise ValueError("unknown crawl cursor version")
        self.queue = deque(str(u) for u in cursor.get("queue", []))
        self.seen = {str(u) for u in cursor.get("seen", [])}
        self.done = {str(u) for u in cursor.get("done", [])}
        self.kept = {str(u) for u in cursor.get("kept", [])}
        self.robots = {str(k): dict(v) for k, v in dict(cursor.get("robots", {})).items()}
        self.page_count = int(cursor.get("pages", 0))
        self.requests = int(cursor.get("requests", 0))
        sitemaps = dict(cursor.get("sitemaps") or {"state": "done"})
        self.sitemap_state = str(sitemaps.get("state", "done"))
        self.sitemap_queue = deque((str(u), str(how)) for u, how in sitemaps.get("queue", []))
        self.sitemap_seen = {str(u) for u in sitemaps.get("seen", [])}
        self.sitemap_found = {str(u): (None if t is None else float(t)) for u, t in sitemaps.get("found", [])}
        self.sitemap_files = int(sitemaps.get("files", 0))

    def cursor(self) -> dict[str, Any]:
        return {
            "version": CURSOR_VERSION,
            "queue": list(self.queue),
            "seen": sorted(self.seen),
            "done": sorted(self.done),
            "kept": sorted(self.kept),
            "robots": self.robots,
            "pages": self.page_count,
            "requests": self.requests,
            "sitemaps": {
                "state": self.sitemap_state,
                "queue": [list(item) for item in self.sitemap_queue],
                "seen": sorted(self.sitemap_seen),
                "found": [[u, t] for u, t in self.sitemap_found.items()],
                "files": self.sitemap_files,
            },
        }

    def enqueue(self, url: str) -> None:
        if url in self.seen or len(self.queue) >= self.max_queue:
            return
        self.seen.add(url)
        self.queue.append(url)

    # -- robots -------------------------------------------------------------------------

    def robots_entry(self, origin: str) -> dict[str, Any]:
        entry = self.robots.get(origin)
        if entry is not None:
            return entry
        try:
            response = self.fetcher.fetch_robots(origin + "/robots.txt")
            # RFC 9309: the file is UTF-8 whatever the Content-Type says; 500 KiB are read
            entry = RobotsPolicy.from_response(response.status, response.body).to_dict()
        except SourceFailure as failure:
            if failure.code in (Code.FILE_TOO_LARGE, Code.UNSUPPORTED_TYPE):
                entry = RobotsPolicy.from_response(None, None).to_dict()
            else:
                entry = {"error": failure.code}
        self.robots[origin] = entry
        return entry

    def policy(self, url: str) -> RobotsPolicy | str:
        """The robots policy for ``url``'s origin, or the failure code of its robots fetch."""
        origin = origin_of(url)
        if origin is None:
            return Code.BLOCKED_ADDRESS
        entry = self.robots_entry(origin)
        if "error" in entry:
            return str(entry["error"])
        return RobotsPolicy.from_dict(entry)

    def may_follow(self, url: str) -> bool:
        """Whether a redirect may go to ``url``. When its origin's robots.txt could not be
        fetched, that failure's own code stands (e.g. ``blocked_address`` for a host on a
        private address), not ``robots_denied``."""
        policy = self.policy(url)
        if isinstance(policy, str):
            raise SourceFailure(policy, "redirect target refused")
        return policy.allowed(url)

    # -- sitemaps -----------------------------------------------------------------------

    def wanted(self, url: str) -> bool:
        """Whether a discovered URL (link, sitemap entry, canonical) may be queued."""
        return in_origins(url, self.origins) and self.paths.allows(url)

    def list_sitemaps(self) -> bool:
        """Queue the sitemaps of every allowed origin (False: out of time first)."""
        for configured in self.origins:
            origin = origin_of(configured)
            if origin is None:
                continue
            if origin not in self.robots and self.out_of_time():
                return False
            entry = self.robots_entry(origin)
            if "error" in entry:
                continue
            for listed in RobotsPolicy.from_dict(entry).sitemaps:
                self.add_sitemap(listed, "listed")
            self.add_sitemap(origin + "/sitemap.xml", "guessed")
        return True

    def add_sitemap(self, raw: str, how: str) -> None:
        try:
            url = normalize(raw)
        except ValueError:
            return
        if url in self.sitemap_seen or not in_origins(url, self.origins):
            return
        self.sitemap_seen.add(url)
        self.sitemap_queue.append((url, how))

    def read_sitemaps(self) -> bool:
        """Fetch the queued sitemaps and seed the page queue from them (False: stopped at
        the deadline; the cursor carries what is left)."""
        if self.sitemap_state == "todo":
            if not self.list_sitemaps():
                return False
            self.sitemap_state = "running"
        while self.sitemap_queue and self.sitemap_files < MAX_SITEMAP_FILES:
            if self.out_of_time():
                return False
            url, how = self.sitemap_queue[0]
            policy = self.policy(url)
            if isinstance(policy, str) or (how != "listed" and not policy.allowed(url)):
                self.sitemap_queue.popleft()
                continue
            delay = policy.crawl_delay
            if delay > 0:
                if self.out_of_time(delay):
                    return False
                self.sleep(delay)
            self.sitemap_queue.popleft()
            self.sitemap_files += 1
            self.read_sitemap(url, how)
        self.sitemap_state = "done"
        self.sitemap_queue.clear()
        for url, _ in newest_first(list(self.sitemap_found.items())):
            self.enqueue(url)
        self.sitemap_found.clear()
        return True

    def read_sitemap(self, url: str, how: str) -> None:
        try:
            response = self.fetcher.fetch_robots(url, origins=self.origins)
            if not 200 <= response.status < 300:
                raise SourceFailure(_status_code(response.status), "the sitemap could not be fetched")
            sitemap = parse_sitemap(response.body)
        except SourceFailure as failure:
            if how != "guessed":
                self.result.failures.append((url, failure.code))
            return
        if sitemap.index:
            if how != "child":  # an index lists sitemaps, not further indexes
                for child in sitemap.children:
                    self.add_sitemap(child, "child")
            return
        for loc, lastmod in sitemap.urls:
            try:
                page = normalize(loc)
            except ValueError:
                continue
            if not self.wanted(page):
                continue
            known = self.sitemap_found.get(page)
            if page not in self.sitemap_found or (lastmod is not None and (known is None or lastmod > known)):
                self.sitemap_found[page] = lastmod
        if len(self.sitemap_found) > self.max_queue:  # keep the newest the queue can hold
            kept = newest_first(list(self.sitemap_found.items()))[: self.max_queue]
            self.sitemap_found = dict(kept)

    # -- the loop -----------------------------------------------------------------------

    def out_of_time(self, extra: float = 0.0) -> bool:
        return self.deadline is not None and self.clock() + extra >= self.deadline

    def run(self) -> CrawlResult:
        if self.sitemap_state != "done" and not self.read_sitemaps():
            self.result.cursor = self.cursor()
            return self.result
        while self.queue:
            if self.page_count >= self.max_pages or self.requests >= self.max_requests:
                break
            if self.out_of_time():
                self.result.cursor = self.cursor()
                return self.result
            url = self.queue[0]
            if url in self.done:
                self.queue.popleft()
                continue
            policy = self.policy(url)
            if isinstance(policy, str):
                self.queue.popleft()
                self.result.failures.append((url, policy))
                continue
            if not policy.allowed(url):
                self.queue.popleft()
                self.result.failures.append((url, Code.ROBOTS_DENIED))
                continue
            delay = policy.crawl_delay
            if delay > 0:
                if self.out_of_time(delay):
                    self.result.cursor = self.cursor()
                    return self.result
                self.sleep(delay)
            self.queue.popleft()
            self.visit(url)
        self.result.cursor = None
        return self.result

    def visit(self, url: str) -> None:
        self.requests += 1
        self.done.add(url)
        earlier = self.known(url) if self.known is not None else None
        conditions = validators(earlier.etag, earlier.last_modified) if earlier is not None else {}
        try:
            if conditions:
                response = self.fetcher.fetch(url, origins=self.origins, may_follow=self.may_follow,
                                              conditions=conditions)
            else:
                response = self.fetcher.fetch(url, origins=self.origins, may_follow=self.may_follow)
        except SourceFailure as failure:
            self.result.failures.append((url, failure.code))
            return
        if response.status == 304 and earlier is not None and conditions:
            self.keep_unchanged(url, earlier)
            return
        if not 200 <= response.status < 300:
            self.result.failures.append((url, _status_code(response.status)))
            return
        try:
            final = normalize(response.final_url)
        except ValueError:
            self.result.failures.append((url, Code.MALFORMED_FILE))
            return
        if final != url:
            if final in self.done:
                return  # a redirect to a page this crawl already has
            self.done.add(final)
            self.seen.add(final)
        kind = response.media_type
        links: list[str] = []
        canonical: str | None = None
        requested = final == url
        if kind in HTML_TYPES:
            links, canonical = page_links(decode_body(response.body, response.content_type), final)
            if canonical is not None and canonical != final and self.may_fold_into(canonical):
                if canonical in self.kept:
                    return  # a duplicate of a page this crawl already has
                self.done.add(canonical)
                self.seen.add(canonical)
                final = canonical
                requested = False
        try:
            title, text = self.to_text(response.body, response.content_type)
        except SourceFailure as failure:
            self.result.failures.append((url, failure.code))
            return
        except (ValueError, LookupError, UnicodeError):
            self.result.failures.append((url, Code.MALFORMED_FILE))
            return
        # validators belong to the URL they were requested at: kept only for a page kept there
        etag = response.etag if requested else None
        last_modified = response.last_modified if requested else None
        self.keep(Page(final, title, text, kind, etag, last_modified, False, tuple(links), canonical), links)

    def keep_unchanged(self, url: str, earlier: KnownPage) -> None:
        """A 304: the page as the earlier crawl kept it, its canonical link and links
        weighed again under today's patterns and robots.txt."""
        canonical = earlier.canonical
        if canonical is not None and canonical != url and self.may_fold_into(canonical):
            if canonical in self.kept:
                return
            self.done.add(canonical)
            self.seen.add(canonical)
            # kept under another URL now: without validators, fetched in full next time
            self.keep(Page(canonical, earlier.title, earlier.text, earlier.content_type, links=earlier.links,
                           canonical=canonical), list(earlier.links))
            return
        self.keep(Page(url, earlier.title, earlier.text, earlier.content_type, earlier.etag, earlier.last_modified,
                       True, earlier.links, canonical), list(earlier.links))

    def keep(self, page: Page, links: list[str]) -> None:
        self.result.pages.append(page)
        self.kept.add(page.url)
        self.page_count += 1
        for link in links:
            if self.wanted(link):
                self.enqueue(link)

    def may_fold_into(self, canonical: str) -> bool:
        """Whether a page may be kept under its canonical URL: inside the origins, passing
        the patterns, and allowed by robots.txt."""
        if not self.wanted(canonical):
            return False
        policy = self.policy(canonical)
        return not isinstance(policy, str) and policy.allowed(canonical)


def crawl(
    origins: Sequence[str],
    start_urls: Sequence[str],
    fetcher: PageFetcher,
    *,
    max_pages: int = 100,
    sleep: Callable[[float], None] = time.sleep,
    deadline: float | None = None,
    cursor: dict[str, Any] | None = None,
    to_text: ToText = html_to_text,
    clock: Callable[[], float] = time.monotonic,
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    known: Known | None = None,
) -> CrawlResult:
    """Crawl ``start_urls`` breadth-first inside ``origins`` (see the module docstring).

    ``to_text(body, content_type)`` returns ``(title, text)``; plug the extraction module in
    here. ``cursor`` resumes a crawl that an earlier call stopped at its ``deadline``.
    ``include``/``exclude`` are the source's path patterns (validated beforehand).
    ``known(url)`` returns what an earlier crawl kept of a URL (conditional re-fetch).
    """
    state = _Crawl(
        origins,
        fetcher,
        max_pages=max_pages,
        sleep=sleep,
        deadline=deadline,
        clock=clock,
        to_text=to_text,
        paths=PathFilter(include, exclude),
        known=known,
    )
    if cursor is not None:
        state.restore(cursor)
    else:
        state.start(start_urls)
    return state.run()
