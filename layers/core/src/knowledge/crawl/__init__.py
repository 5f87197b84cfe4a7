"""Website crawling and guarded outbound HTTP: address guard, transport, robots.txt, URL
rules, the fetcher and the crawler.

``guard`` decides which addresses may be contacted, ``outbound`` connects only to those
(for the crawler and for every tenant-configured endpoint), ``robots`` applies RFC 9309,
``urls`` normalises and filters links, ``fetcher`` performs one guarded HTTPS GET and
``crawler`` runs a resumable breadth-first crawl over them.

The names below are loaded on first use, so importing ``knowledge.crawl.guard`` or
``knowledge.crawl.outbound`` (as the answering path does) does not load the HTML parsers
the crawler needs.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from knowledge.crawl.crawler import CrawlResult, Page, crawl, html_to_text
    from knowledge.crawl.fetcher import Fetcher, FetchResult
    from knowledge.crawl.guard import blocked_ip, check_url, parse_host_ip
    from knowledge.crawl.outbound import USER_AGENT, OutboundClient, OutboundPolicy
    from knowledge.crawl.robots import RobotsPolicy, allowed
    from knowledge.crawl.urls import extract_links, in_origins, normalize

_EXPORTS = {
    "CrawlResult": "crawler",
    "Page": "crawler",
    "crawl": "crawler",
    "html_to_text": "crawler",
    "USER_AGENT": "outbound",
    "OutboundClient": "outbound",
    "OutboundPolicy": "outbound",
    "Fetcher": "fetcher",
    "FetchResult": "fetcher",
    "blocked_ip": "guard",
    "check_url": "guard",
    "parse_host_ip": "guard",
    "RobotsPolicy": "robots",
    "allowed": "robots",
    "extract_links": "urls",
    "in_origins": "urls",
    "normalize": "urls",
}

__all__ = [
    "USER_AGENT",
    "CrawlResult",
    "FetchResult",
    "Fetcher",
    "OutboundClient",
    "OutboundPolicy",
    "Page",
    "RobotsPolicy",
    "allowed",
    "blocked_ip",
    "check_url",
    "crawl",
    "extract_links",
    "html_to_text",
    "in_origins",
    "normalize",
    "parse_host_ip",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'knowledge.crawl' has no attribute {name!r}")
    return getattr(importlib.import_module(f"knowledge.crawl.{module}"), name)
