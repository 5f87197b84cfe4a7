"""robots.txt evaluation (RFC 9309) on top of Protego.

Protego does the path matching (longest match wins, ``allow`` wins ties, ``*`` and ``$``,
percent-encoding normalisation) and reads ``Crawl-delay``. Two of its behaviours differ
from RFC 9309 and are corrected here:

* **Group selection.** Protego picks the group whose user-agent value occurs at a token
  boundary *inside* the crawler's name, preferring the longest such value, so a group for
  ``Knowledge`` (or for ``1.0`` when the full ``KnowledgeBot/1.0`` string is passed) would
  apply to us. RFC 9309 matches the product token case-insensitively. This module splits the
  file into groups itself, keeps the rules of every group naming ``KnowledgeBot`` (all of
  them, merged, as the RFC requires) or else of every ``*`` group, and hands only those rules
  to Protego under a single ``User-agent: *`` line.
* **The index.html extension.** Protego treats ``Allow: /dir/index.html`` as also allowing
  ``/dir/`` (a search-engine convention, not part of the RFC). For such URLs the decision is
  taken again without those allow lines.

A UTF-8 byte-order mark is ignored, and only the first 500 KiB of a file are parsed
(the minimum RFC 9309 asks parsers to read).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from protego import Protego

PRODUCT_TOKEN = "KnowledgeBot"
MAX_CRAWL_DELAY = 10.0
MAX_ROBOTS_CHARS = 500 * 1024

# "User-agent", also with the spellings Protego tolerates ("User agent", "useragent"),
# followed by a colon or by whitespace.
_USER_AGENT_LINE = re.compile(r"^\s*user(?:-|\s+)?agent\s*(?::|\s)\s*(.*)$", re.IGNORECASE)
_TOKEN = re.compile(r"^[A-Za-z_-]+")
_ALLOW_INDEX_HTML = re.compile(r"^\s*allow\s*:?\s*\S*/index\.html\s*$", re.IGNORECASE)


def _strip_comment(line: str) -> str:
    position = line.find("#")
    return (line if position == -1 else line[:position]).strip()


def _agent_key(value: str) -> str:
    """The product token a ``User-agent`` value names ('KnowledgeBot/1.0' -> 'knowledgebot')."""
    value = value.strip()
    if value == "*":
        return "*"
    match = _TOKEN.match(value)
    return match.group(0).lower() if match else ""


def _select_rules(robots_txt: str, product_token: str) -> list[str] | None:
    """The rule lines that apply to ``product_token`` (None: no group applies)."""
    if robots_txt.startswith("\ufeff"):
        robots_txt = robots_txt[1:]
    robots_txt = robots_txt[:MAX_ROBOTS_CHARS]
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
        in_agents = False
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
    allowed; 5xx or unreachable (``status`` None) -> everything disallowed.
    """

    mode: str  # "rules", "allow_all" or "deny_all"
    body: str = ""
    _rules: _Rules | None = field(default=None, repr=False, compare=False)

    @classmethod
    def from_response(cls, status: int | None, body: str | None) -> RobotsPolicy:
        if status is not None and 200 <= status < 300:
            text = (body or "")[:MAX_ROBOTS_CHARS]
            return cls("rules", text, _Rules(text))
        if status is not None and 300 <= status < 500:
            return cls("allow_all")
        return cls("deny_all")

    def to_dict(self) -> dict[str, str]:
        """A small JSON-safe form (only the rules that apply to this crawler are kept)."""
        compact = self._rules.compact if self._rules is not None else ""
        return {"mode": self.mode, "rules": compact}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RobotsPolicy:
        mode = data.get("mode")
        if mode == "rules":
            text = str(data.get("rules") or "")
            return cls("rules", text, _Rules(text))
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
