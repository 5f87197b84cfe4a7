"""robots.txt evaluation (RFC 9309) on top of Protego.

Protego does the path matching (longest match wins, ``allow`` wins ties, ``*`` and ``$``)
and reads ``Crawl-delay``. It normalises percent-encoding on both sides as RFC 9309 section
2.2.2 asks: unreserved characters are compared decoded (``/%7Efoo`` is ``/~foo``), non-ASCII
characters UTF-8 percent-encoded (``/ツ`` is ``/%E3%83%84``), and ``/`` stays apart from its
escape (``/foo%2Fbar`` is not ``/foo/bar``), in the query too. Any other reserved character
compares equal to its escape (``%3F`` and ``?``, ``%3A`` and ``:``). This module decides
which lines Protego sees:

* **Groups.** The file is split into groups here: consecutive ``User-agent`` lines open one
  group, which runs until a ``User-agent`` line follows one of its rules. Other records
  (``Sitemap``, ``Crawl-delay``, unknown lines) inside a group do not end it. The rules of
  every group naming ``KnowledgeBot`` (case-insensitive product token; merged, as the RFC
  requires) apply, or else those of every ``*`` group, and only those are handed to
  Protego under a single ``User-agent: *`` line. Rules before the first ``User-agent`` line
  belong to no group and are ignored.
* **Limits.** Only the first 500 KiB of the file are read (the minimum RFC 9309 asks
  parsers to read); a line cut by that limit is dropped rather than read half. A UTF-8
  byte-order mark is ignored.
* **Responses** (:meth:`RobotsPolicy.from_response`): 2xx uses the rules, 3xx/4xx allow
  everything, 5xx (and no answer at all) disallow everything. Nothing is kept past one
  crawl, so the next refresh asks again. Redirects are followed by the fetcher, across
  hosts, up to :data:`MAX_REDIRECTS` hops.

Google's reference parser, which its authors maintain next to the RFC, agrees on every
case above. Where it goes its own way:

* followed: misspelt keys (``Disalow``, ``useragent``), a missing colon
  (``Disallow /x``), a ``User-agent`` value read up to its first character that cannot be
  in a product token (``KnowledgeBot/2.0`` names us);
* not followed: ``Allow: /dir/index.html`` also allowing ``/dir/`` (its "index.html is
  the directory" rule; the decision is taken again without those allow lines); its
  matching of URLs exactly as given (it expects callers to percent-encode, and does not
  decode ``%62%61%7A`` to ``baz``): here both sides are normalised as the RFC's table says;
  its cut of lines longer than 16,664 bytes (lines are read whole within the 500 KiB).
* ``Crawl-delay`` is in neither the RFC nor Google's parser; it is honoured, capped at
  :data:`MAX_CRAWL_DELAY` seconds.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from protego import Protego

from knowledge.crawl.sitemaps import robots_sitemaps

PRODUCT_TOKEN = "KnowledgeBot"
MAX_CRAWL_DELAY = 10.0
MAX_ROBOTS_BYTES = 500 * 1024
#: Redirect hops followed for robots.txt (RFC 9309 section 2.3.1.2: at least five).
MAX_REDIRECTS = 5

# "User-agent", also with the spellings Protego tolerates ("User agent", "useragent"),
# followed by a colon or by whitespace.
_USER_AGENT_LINE = re.compile(r"^\s*user(?:-|\s+)?agent\s*(?::|\s)\s*(.*)$", re.IGNORECASE)
_TOKEN = re.compile(r"^[A-Za-z_-]+")
# The key of a line ("Disallow" in "Disallow: /x" or, colon forgotten, "Disallow /x").
_KEY = re.compile(r"^\s*([^:\s]+)\s*(?::|\s)")
# Allow/disallow lines, with the misspellings Protego reads as such. Only these end the
# run of User-agent lines that opens a group.
_RULE_KEYS = frozenset({"allow", "disallow", "dissallow", "dissalow", "disalow", "diasllow", "disallaw"})
_ALLOW_INDEX_HTML = re.compile(r"^\s*allow\s*:?\s*\S*/index\.html\s*$", re.IGNORECASE)


def _strip_comment(line: str) -> str:
    position = line.find("#")
    return (line if position == -1 else line[:position]).strip()


def _agent_key(value: str) -> str:
    """The product token a ``User-agent`` value names ('KnowledgeBot/1.0' -> 'knowledgebot')."""
    value = value.strip()
    if value == "*" or (value.startswith("*") and value[1].isspace()):
        return "*"
    match = _TOKEN.match(value)
    return match.group(0).lower() if match else ""


def _is_rule(line: str) -> bool:
    key = _KEY.match(line)
    return key is not None and key.group(1).lower() in _RULE_KEYS


def limited(body: str | bytes) -> str:
    """The part of a robots.txt that is read: its first 500 KiB, whole lines only."""
    data = body.encode("utf-8") if isinstance(body, str) else body
    if len(data) > MAX_ROBOTS_BYTES:
        data = data[:MAX_ROBOTS_BYTES]
        end = max(data.rfind(b"\n"), data.rfind(b"\r"))
        data = data[: end + 1] if end >= 0 else b""
    text = data.decode("utf-8", errors="replace")
    return text[1:] if text.startswith("\ufeff") else text


def _select_rules(robots_txt: str, product_token: str) -> list[str] | None:
    """The rule lines that apply to ``product_token`` (None: no group applies)."""
    robots_txt = limited(robots_txt)
    wanted = product_token.lower()
    groups: list[tuple[set[str], list[str]]] = []
    agents: set[str] = set()
    rules: list[str] = []
    in_agents = False
    for raw in robots_txt.splitlines():
        line = _strip_comment(raw)
        if not line:
            continue
        agent = _USER_AGENT_LINE.match(line)
        if agent:
            if not in_agents:
                if agents:
                    groups.append((agents, rules))
                agents, rules = set(), []
                in_agents = True
            agents.add(_agent_key(agent.group(1)))
            continue
        if _is_rule(line):
            in_agents = False  # the next User-agent line opens another group
        if agents:  # rules before the first user-agent line belong to no group
            rules.append(line)
    if agents:
        groups.append((agents, rules))

    own = [r for names, group_rules in groups if wanted in names for r in group_rules]
    if any(wanted in names for names, _ in groups):
        return own
    if any("*" in names for names, _ in groups):
        return [r for names, group_rules in groups if "*" in names for r in group_rules]
    return None


def _build(rules: list[str]) -> Protego:
    return Protego.parse("User-agent: *\n" + "\n".join(rules) + "\n")


def _path_of(url: str) -> str:
    parts = urlsplit(url)
    return parts.path or "/"


class _Rules:
    """The rules of one robots.txt for one product token."""

    def __init__(self, robots_txt: str, product_token: str = PRODUCT_TOKEN):
        selected = _select_rules(robots_txt, product_token)
        self._empty = selected is None
        rules = selected or []
        # The rules that apply to us, as a robots.txt of their own (for caching).
        self.compact = "" if selected is None else "\n".join([f"User-agent: {product_token}", *rules]) + "\n"
        self._parser = _build(rules)
        without_index = [r for r in rules if not _ALLOW_INDEX_HTML.match(r)]
        self._strict = _build(without_index) if len(without_index) != len(rules) else None

    def allowed(self, url: str) -> bool:
        if self._empty:
            return True
        verdict = self._parser.can_fetch(url, PRODUCT_TOKEN)
        if verdict and self._strict is not None and _path_of(url).endswith("/") and "index.html" not in url:
            verdict = self._strict.can_fetch(url, PRODUCT_TOKEN)
        return verdict

    def crawl_delay(self) -> float | None:
        if self._empty:
            return None
        return self._parser.crawl_delay(PRODUCT_TOKEN)


def allowed(robots_txt: str, user_agent: str, url: str) -> bool:
    """May ``user_agent`` (a product token, or a full ``Token/version`` string) fetch ``url``?"""
    token = _agent_key(user_agent) or user_agent.strip().lower()
    return _Rules(robots_txt, token).allowed(url)


@dataclass(frozen=True)
class RobotsPolicy:
    """What the crawler may do on one origin, from its robots.txt response.

    ``from_response``: 2xx -> the file's rules; 3xx/4xx (no usable file) -> everything
    allowed; 5xx or unreachable (``status`` None) -> everything disallowed. ``body`` may be
    the raw bytes (UTF-8) or text; only its first 500 KiB are read.
    """

    mode: str  # "rules", "allow_all" or "deny_all"
    body: str = ""
    _rules: _Rules | None = field(default=None, repr=False, compare=False)
    #: the URLs of the file's ``Sitemap:`` lines (at most ten)
    sitemaps: tuple[str, ...] = ()

    @classmethod
    def from_response(cls, status: int | None, body: str | bytes | None) -> RobotsPolicy:
        if status is not None and 200 <= status < 300:
            text = limited(body or "")
            return cls("rules", text, _Rules(text), tuple(robots_sitemaps(text)))
        if status is not None and 300 <= status < 500:
            return cls("allow_all")
        return cls("deny_all")

    def to_dict(self) -> dict[str, Any]:
        """A small JSON-safe form (only the rules that apply to this crawler are kept)."""
        compact = self._rules.compact if self._rules is not None else ""
        return {"mode": self.mode, "rules": compact, "sitemaps": list(self.sitemaps)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RobotsPolicy:
        mode = data.get("mode")
        if mode == "rules":
            text = str(data.get("rules") or "")
            return cls("rules", text, _Rules(text), tuple(str(u) for u in data.get("sitemaps") or ()))
        if mode == "allow_all":
            return cls("allow_all")
        return cls("deny_all")

    def allowed(self, url: str) -> bool:
        if self.mode == "allow_all":
            return True
        if self.mode == "deny_all" or self._rules is None:
            return False
        return self._rules.allowed(url)

    @property
    def crawl_delay(self) -> float:
        """Seconds to wait between requests to this origin, at most 10 (0 when unset)."""
        if self._rules is None:
            return 0.0
        delay = self._rules.crawl_delay()
        if delay is None or math.isnan(delay) or delay <= 0:
            return 0.0
        return min(delay, MAX_CRAWL_DELAY)
