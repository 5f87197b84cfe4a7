"""Website sources: a resumable crawl staged as blobs, then one document per page.

The refresh workflow (both deployments: ``knowledge.refresh.crawl_turn``) calls
:func:`crawl_step` turn after turn (a Lambda per turn and a Wait state of ``wait_seconds``
between them on AWS; a loop of the embedded runner in-process), then its listing stage's
``load_content`` ends up in :func:`website_content`, which builds the documents from the
completed staged crawl of this run.

Staging layout (``crawl_prefix(bot, source_id)`` = ``staging/{bot}/{source_id}/crawl/``):

* ``<step>.json`` - ``{"pages": [{"url", "title", "text"}], "failures": [[url, code]]}``, what
  that step fetched (``text`` is already the extracted, Markdown-ish text);
* ``state-<step>.json`` - the crawler's resume state *before* that step (queue, seen set,
  robots cache); kept out of the cursor so the cursor stays small enough for a Step
  Functions payload whatever the site looks like;
* ``done.json`` - written by the last step: ``{"steps", "pages", "failures", "owner"}``.

Conditional re-fetch: a page fetched with an ``ETag`` or ``Last-Modified`` is also kept in
``pages_prefix(bot, source_id)`` = ``staging/{bot}/{source_id}/pages/<hash of the URL>.json``
(its validators, extracted text, links and canonical link, and the ``INGEST_VERSION`` that
extracted it). The next crawl sends those validators for each URL whose live document row
carries the same ones; a 304 keeps the page from that file without extracting it (see
``crawler``). What a crawl did not keep is deleted when it completes. An ingest version
change, a missing file or validators that disagree with the row mean a full fetch.

A fresh crawl (``cursor`` None) first deletes whatever an earlier crawl staged; the run's end
(commit or fail) deletes what it crawled. The marker remembers the lease owner at the time the
crawl finished: a marker written under another lease (an earlier run that died before its
listing read it) is stale and never served.

Tests and tools choose the fetcher by monkeypatching :func:`default_fetcher` (the crawl turn
passes none; ``services.outbound`` is passed in):
``monkeypatch.setattr(knowledge.sources.website, "default_fetcher", lambda policy: Fetcher(...))``.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from ..crawl.crawler import Known, KnownPage, Page, PageFetcher, crawl
from ..crawl.fetcher import Fetcher
from ..crawl.outbound import OutboundPolicy
from ..crawl.robots import MAX_REDIRECTS as ROBOTS_MAX_REDIRECTS
from ..crawl.robots import RobotsPolicy
from ..crawl.urls import origin_of
from ..errors import Code, SourceFailure
from ..extract import extract_bytes
from ..model import TYPE_WEIGHT, Source, stable_id
from ..settings import INGEST_VERSION
from .base import DocumentContent, SourceContent, clear_staged_crawl, crawl_prefix, pages_prefix

if TYPE_CHECKING:
    from ..ports import Services

#: At most this many pages per website source (reference 003, "Website sources").
MAX_PAGES = 100
CURSOR_VERSION = 1
DONE_MARKER = "done.json"
_STEP_BLOB = re.compile(r"^(\d+)\.json$")


def default_fetcher(policy: OutboundPolicy) -> PageFetcher:
    """The fetcher used when none is passed: the real guarded HTTPS fetcher (15 s timeout,
    8 MB bodies, 5 redirects as RFC 9309 asks for robots.txt) under the composition root's
    ``policy`` (loopback only on the port of ``kb serve --dev-allow-loopback``). Monkeypatch
    this factory to serve a test site."""
    return Fetcher(policy, max_redirects=ROBOTS_MAX_REDIRECTS)


@dataclass
class CrawlStep:
    """What one time-boxed crawl step did.

    ``cursor`` (None once ``done``) resumes the crawl in the next step; ``wait_seconds`` is the
    Crawl-delay to sleep before that step; ``pages``/``failures`` count what *this* step
    staged."""

    done: bool
    cursor: dict[str, Any] | None
    wait_seconds: float
    pages: int
    failures: int


def _page_key(bot: str, source_id: str, url: str) -> str:
    return pages_prefix(bot, source_id) + hashlib.sha256(url.encode("utf-8")).hexdigest()[:40] + ".json"


def _known_pages(services: Services, source: Source) -> Known:
    """``known(url)`` for the crawler: the kept page of ``url`` when the live document row
    of that URL has validators and the kept file has the same ones, else None."""
    rows = {
        d.url: (d.etag, d.last_modified)
        for d in services.state.list_documents(source.bot, source.id)
        if d.url and d.error_code is None and (d.etag or d.last_modified)
    }

    def known(url: str) -> KnownPage | None:
        expected = rows.get(url)
        key = _page_key(source.bot, source.id, url)
        if expected is None or not services.blobs.exists(key):
            return None
        try:
            kept = json.loads(services.blobs.get(key))
            if (kept.get("ingest") != INGEST_VERSION or kept.get("url") != url
                    or (kept.get("etag"), kept.get("lastModified")) != expected):
                return None
            return KnownPage(etag=kept.get("etag"), last_modified=kept.get("lastModified"), title=kept.get("title"),
                             text=str(kept["text"]), content_type=str(kept.get("contentType") or "text/html"),
                             links=tuple(str(u) for u in kept.get("links") or ()), canonical=kept.get("canonical"))
        except (ValueError, KeyError, TypeError, AttributeError):
            return None  # an unreadable file: fetch the page in full

    return known


def _keep_pages(services: Services, source: Source, pages: list[Page]) -> None:
    """Keep every page that has validators, for the next crawl's conditional requests."""
    for page in pages:
        if not (page.etag or page.last_modified):
            continue
        kept = {"url": page.url, "etag": page.etag, "lastModified": page.last_modified, "title": page.title,
                "text": page.text, "contentType": page.content_type, "links": list(page.links),
                "canonical": page.canonical, "ingest": INGEST_VERSION}
        services.blobs.put(_page_key(source.bot, source.id, page.url), json.dumps(kept).encode("utf-8"))


def _forget_other_pages(services: Services, source: Source, urls: set[str]) -> None:
    """Once a crawl completes: delete the kept pages of URLs it did not keep."""
    wanted = {_page_key(source.bot, source.id, url) for url in urls}
    for key in services.blobs.list(pages_prefix(source.bot, source.id)):
        if key not in wanted:
            services.blobs.delete(key)


def page_text(body: bytes, content_type: str) -> tuple[str | None, str]:
    """The crawler's ``to_text``: HTML through the HTML extractor (headings kept as ``#``
    lines, navigation and scripts dropped), text and Markdown as they are. Extraction
    limits raise ``SourceFailure`` and the crawler records the page as failed."""
    extracted = extract_bytes(body, content_type=content_type)
    return extracted.title, extracted.text


def _lease_owner(services: Services, source: Source) -> str | None:
    current = services.state.get_source(source.bot, source.id)
    return current.lease_owner if current is not None else None


def _first_sleep_shortened(sleep: Callable[[float], None], ended_at: float | None) -> Callable[[float], None]:
    """The crawler sleeps a Crawl-delay before every request to a delayed origin, counting
    from the previous request. The previous step's last request finished by ``ended_at``
    (wall clock, comparable across Lambdas), and the caller was asked to wait in between:
    the first sleep of this step only covers what is left of the delay."""
    pending = [ended_at]

    def shortened(seconds: float) -> None:
        if pending[0] is not None:
            seconds = max(0.0, min(seconds, pending[0] + seconds - time.time()))
            pending[0] = None
        if seconds > 0:
            sleep(seconds)

    return shortened


def _next_delay(state: dict[str, Any]) -> float:
    """Crawl-delay of the origin of the next URL to fetch, a sitemap's or a page's (0 when
    unknown)."""
    sitemaps = state.get("sitemaps") or {}
    pending = sitemaps.get("queue") or [] if sitemaps.get("state") == "running" else []
    queue = [item[0] for item in pending] or state.get("queue") or []
    if not queue:
        return 0.0
    origin = origin_of(str(queue[0]))
    entry = (state.get("robots") or {}).get(origin) if origin else None
    if not entry or "error" in entry:
        return 0.0
    return float(RobotsPolicy.from_dict(entry).crawl_delay)


def crawl_step(
    services: Services,
    source: Source,
    cursor: dict[str, Any] | None,
    *,
    deadline: float | None,
    fetcher: PageFetcher | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> CrawlStep:
    """Crawl the source's ``origins``/``startUrls`` until ``deadline`` (a ``time.monotonic()``
    value; None = to the end), stage what was fetched and return how to go on.

    Idempotent per step: a retried step re-reads the state it started from and overwrites
    its own blobs. A step only makes progress when its time exceeds the site's Crawl-delay
    (at most 10 s) plus one fetch (at most 15 s); shorter steps return at once with the
    cursor they were given and ``wait_seconds`` set."""
    bot, source_id = source.bot, source.id
    prefix = crawl_prefix(bot, source_id)
    blobs = services.blobs
    if cursor is None:
        clear_staged_crawl(services, bot, source_id)
        number, state, ended_at, total_pages, total_failures = 0, None, None, 0, 0
    else:
        if cursor.get("version") != CURSOR_VERSION:
            raise ValueError("unknown website crawl cursor version")
        number = int(cursor["step"])
        state = json.loads(blobs.get(f"{prefix}state-{number}.json"))
        ended_at = float(cursor["endedAt"]) if cursor.get("endedAt") is not None else None
        total_pages, total_failures = int(cursor.get("pages", 0)), int(cursor.get("failures", 0))

    origins = [str(o) for o in source.config.get("origins") or []]
    start_urls = [str(u) for u in source.config.get("startUrls") or []]
    result = crawl(
        origins,
        start_urls,
        fetcher or default_fetcher(services.outbound),
        max_pages=MAX_PAGES,
        sleep=_first_sleep_shortened(sleep, ended_at),
        deadline=deadline,
        cursor=state,
        to_text=page_text,
        include=[str(p) for p in source.config.get("include") or []],
        exclude=[str(p) for p in source.config.get("exclude") or []],
        known=_known_pages(services, source),
    )
    _keep_pages(services, source, result.pages)
    staged = {
        "pages": [{"url": p.url, "title": p.title, "text": p.text, "etag": p.etag, "lastModified": p.last_modified,
                   "unchanged": p.unchanged} for p in result.pages],
        "failures": [[url, code] for url, code in result.failures],
    }
    blobs.put(f"{prefix}{number}.json", json.dumps(staged).encode("utf-8"))
    total_pages += len(result.pages)
    total_failures += len(result.failures)
    if result.cursor is None:
        kept = {p.url for p in result.pages}
        for earlier in range(number):
            key = f"{prefix}{earlier}.json"
            if blobs.exists(key):
                kept.update(str(p["url"]) for p in json.loads(blobs.get(key)).get("pages") or [])
        _forget_other_pages(services, source, kept)
        marker = {
            "steps": number + 1,
            "pages": total_pages,
            "failures": total_failures,
            "owner": _lease_owner(services, source),
        }
        blobs.put(prefix + DONE_MARKER, json.dumps(marker).encode("utf-8"))
        return CrawlStep(True, None, 0.0, len(result.pages), len(result.failures))
    blobs.put(f"{prefix}state-{number + 1}.json", json.dumps(result.cursor).encode("utf-8"))
    following = {
        "version": CURSOR_VERSION,
        "step": number + 1,
        "endedAt": time.time(),
        "pages": total_pages,
        "failures": total_failures,
    }
    return CrawlStep(False, following, _next_delay(result.cursor), len(result.pages), len(result.failures))


# -- building the documents -------------------------------------------------------------


def _staged_crawl(services: Services, source: Source,
                  beat: Callable[[], None] | None = None) -> tuple[list[dict[str, Any]], list[tuple[str, str]]] | None:
    """Pages and failures of the completed staged crawl of this run, or None."""
    prefix = crawl_prefix(source.bot, source.id)
    if not services.blobs.exists(prefix + DONE_MARKER):
        return None
    marker = json.loads(services.blobs.get(prefix + DONE_MARKER))
    owner = marker.get("owner")
    if owner is not None and owner != _lease_owner(services, source):
        return None  # left behind by an earlier run under another lease
    pages: list[dict[str, Any]] = []
    failures: list[tuple[str, str]] = []
    for number in range(int(marker.get("steps", 0))):
        if beat is not None:
            beat()
        key = f"{prefix}{number}.json"
        if not services.blobs.exists(key):
            return None  # incomplete staging: crawl again
        staged = json.loads(services.blobs.get(key))
        pages.extend(staged.get("pages") or [])
        failures.extend((str(url), str(code)) for url, code in staged.get("failures") or [])
    return pages, failures


def _page_path(url: str) -> str:
    parts = urlsplit(url)
    return (parts.path or "/") + (f"?{parts.query}" if parts.query else "")


def website_content(services: Services, source: Source, *, beat: Callable[[], None] | None = None) -> SourceContent:
    """One document per page of this run's completed staged crawl (:func:`crawl_step`).
    ``beat`` is called before each staged step is read (the caller's lease heartbeat).

    Pages that failed are returned in ``failed`` as ``(url, code)``. When every page failed
    the site is unreachable: ``SourceFailure`` with the first code, so the refresh keeps the
    previous live generation instead of replacing it with nothing. Without a completed crawl
    of this run (its lease's) there is nothing to read: ``SourceFailure`` ``internal_error``
    (the workflow always crawls before it lists)."""
    staged = _staged_crawl(services, source, beat)
    if staged is None:
        raise SourceFailure(Code.INTERNAL, "no completed crawl of this run is staged")
    pages, failures = staged
    if not pages and failures:
        raise SourceFailure(failures[0][1], f"no page of the site could be indexed ({len(failures)} failed)")
    documents: list[DocumentContent] = []
    seen: set[str] = set()
    skipped = 0
    unchanged = 0
    for page in pages:
        url = str(page["url"])
        text = str(page.get("text") or "")
        if url in seen or not text.strip():
            skipped += 1  # a page met twice (a retried step) or with no text at all
            continue
        seen.add(url)
        unchanged += bool(page.get("unchanged"))
        path = _page_path(url)
        title = str(page.get("title") or "").strip() or path
        documents.append(
            DocumentContent(
                id=stable_id(source.id, url),
                title=title,
                path=path,
                body=text,
                visibility=source.visibility,
                weight=TYPE_WEIGHT["website"],
                crumbs=[source.name, title] if title != source.name else [title],
                url=url,
                etag=page.get("etag"),
                last_modified=page.get("lastModified"),
            )
        )
    checksum = json.dumps(
        {
            "name": source.name,
            "visibility": source.visibility,
            "pages": sorted(([d.url, d.title, d.body] for d in documents), key=lambda p: str(p[0])),
            "failures": sorted([url, code] for url, code in failures),
        },
        sort_keys=True,
    ).encode("utf-8")
    return SourceContent(
        checksum_bytes=checksum,
        documents=documents,
        failed=list(failures),
        skipped=skipped,
        unchanged=unchanged,
    )
