"""Website crawling: address guard, robots.txt, URL rules, the fetcher and the crawler.

``guard`` decides which addresses may be contacted, ``robots`` applies RFC 9309,
``urls`` normalises and filters links, ``fetcher`` performs one guarded HTTPS GET and
``crawler`` runs a resumable breadth-first crawl over them.
"""

from knowledge.crawl.crawler import CrawlResult, Page, crawl, html_to_text
from knowledge.crawl.fetcher import USER_AGENT, Fetcher, FetchResult
from knowledge.crawl.guard import blocked_ip, check_url, parse_host_ip
from knowledge.crawl.robots import RobotsPolicy, allowed
from knowledge.crawl.urls import extract_links, in_origins, normalize

__all__ = [
    "USER_AGENT",
    "CrawlResult",
    "FetchResult",
    "Fetcher",
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
