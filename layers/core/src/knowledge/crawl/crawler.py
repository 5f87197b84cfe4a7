"""Breadth-first crawl of a website source, resumable in time-boxed steps.

Rules (product behaviour):

* robots.txt is read for each origin before any page of it (once per crawl; the cache
  travels in the cursor). 2xx -> its rules, 3xx/4xx -> everything allowed, 5xx ->
  nothing allowed. When it cannot be fetched at all, the pages of that origin fail with
  the fetch's code (``fetch_timeout``, ``blocked_address``...) without being requested.
* ``Crawl-delay`` (capped at 10 s) is waited, through ``sleep``, before every page request
  to that origin (the robots.txt request counts as the previous one).
* Only ``<a href>`` links into the allowed origins are queued, normalised (no fragment, no
  tracking parameters), each URL once. Redirects must stay inside the origins and be
  allowed by robots.txt as well.
* At most ``max_pages`` pages are kept, and at most ``3 * max_pages`` requests are made, so
  a site full of broken links cannot keep the crawler busy either. The queue holds at most
  ``5 * max_pages`` URLs.
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
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from bs4 import BeautifulSoup

from knowledge.crawl.fetcher import FetchResult, media_type
from knowledge.crawl.robots import RobotsPolicy
from knowledge.crawl.urls import extract_links, in_origins, normalize, origin_of
from knowledge.errors import Code, SourceFailure

CURSOR_VERSION = 1
HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})

ToText = Callable[[bytes, str], tuple[str | None, str]]


class PageFetcher(Protocol):
    def fetch(
        self,
        url: str,
        *,
        origins: Sequence[str] | None = None,
        may_follow: Callable[[str], bool] | None = None,
    ) -> FetchResult: ...

    def fetch_robots(self, url: str, *, origins: Sequence[str] | None = None) -> FetchResult: ...


@dataclass(frozen=True)
class Page:
    url: str
    title: str | None
    text: str
    content_type: str  # bare media type, e.g. "text/html"


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
    ):
        self.origins = list(origins)
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
        self.robots: dict[str, dict[str, Any]] = {}
        self.page_count = 0
        self.requests = 0
        self.result = CrawlResult()

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

    def restore(self, cursor: dict[str, Any]) -> None:
        if cursor.get("version") != CURSOR_VERSION:
            raise ValueError("unknown crawl cursor version")
        self.queue = deque(str(u) for u in cursor.get("queue", []))
        self.seen = {str(u) for u in cursor.get("seen", [])}
        self.done = {str(u) for u in cursor.get("done", [])}
        self.robots = {str(k): dict(v) for k, v in dict(cursor.get("robots", {})).items()}
        self.page_count = int(cursor.get("pages", 0))
        self.requests = int(cursor.get("requests", 0))

    def cursor(self) -> dict[str, Any]:
        return {
            "version": CURSOR_VERSION,
            "queue": list(self.queue),
            "seen": sorted(self.seen),
            "done": sorted(self.done),
            "robots": self.robots,
            "pages": self.page_count,
            "requests": self.requests,
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

    # -- the loop -----------------------------------------------------------------------

    def out_of_time(self, extra: float = 0.0) -> bool:
        return self.deadline is not None and self.clock() + extra >= self.deadline

    def run(self) -> CrawlResult:
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
        try:
            response = self.fetcher.fetch(url, origins=self.origins, may_follow=self.may_follow)
        except SourceFailure as failure:
            self.result.failures.append((url, failure.code))
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
        try:
            title, text = self.to_text(response.body, response.content_type)
        except SourceFailure as failure:
            self.result.failures.append((url, failure.code))
            return
        except (ValueError, LookupError, UnicodeError):
            self.result.failures.append((url, Code.MALFORMED_FILE))
            return
        kind = response.media_type
        self.result.pages.append(Page(final, title, text, kind))
        self.page_count += 1
        if kind in HTML_TYPES:
            for link in extract_links(decode_body(response.body, response.content_type), final):
                if in_origins(link, self.origins):
                    self.enqueue(link)


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
) -> CrawlResult:
    """Crawl ``start_urls`` breadth-first inside ``origins`` (see the module docstring).

    ``to_text(body, content_type)`` returns ``(title, text)``; plug the extraction module in
    here. ``cursor`` resumes a crawl that an earlier call stopped at its ``deadline``.
    """
    state = _Crawl(
        origins,
        fetcher,
        max_pages=max_pages,
        sleep=sleep,
        deadline=deadline,
        clock=clock,
        to_text=to_text,
    )
    if cursor is not None:
        state.restore(cursor)
    else:
        state.start(start_urls)
    return state.run()
