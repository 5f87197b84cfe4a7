"""Live tables read from an operator's HTTPS endpoint at answer time (DESIGN.md §7).

A live source whose config names ``"endpoint": "https://…"`` is read with one guarded GET
(:class:`~knowledge.crawl.outbound.OutboundClient`: the SSRF guard on every hop, one budget
of :data:`ENDPOINT_TIMEOUT` seconds for the whole call, the body capped at
:data:`MAX_ENDPOINT_BYTES`). The endpoint answers ``{"tables": {"<table>": [row, ...]}}``;
every table and row is checked exactly like a pushed one (``unknown_field``,
``invalid_live_row``, ``invalid_live_table``). Tables pushed with ``PUT live/{table}`` are
read besides; a table of the same name comes from the endpoint.

Honest failure: a failed, slow, oversized or malformed read raises with a stable code, the
source gives no live passage at all (``live.read_closed``), and the question is answered
without it (the response lists the source and the code under ``liveUnavailable``).

Cache, per bot and source: a good read is reused for at most :data:`CACHE_SECONDS`; never a
value older than that, whatever happens to the endpoint. A failure is remembered for
:data:`FAILURE_SECONDS` so that a dead endpoint costs one budget every few seconds rather
than one per question; during that time the same code is reported.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..api.bodies import UNKNOWN_FIELD
from ..errors import Code, InvalidInput, KnowledgeError, SourceFailure
from ..model import Source
from ..ports import Clock
from ..settings import OutboundPolicy
from .live import INVALID_LIVE_TABLE, validate_table

#: the whole call's budget (lookup, connect, TLS, request, body, every redirect)
ENDPOINT_TIMEOUT = 1.0
#: the largest body read from an endpoint
MAX_ENDPOINT_BYTES = 512 * 1024
#: at most this many tables in one endpoint answer
MAX_ENDPOINT_TABLES = 50
#: the oldest value ever served from the cache
CACHE_SECONDS = 30.0
#: how long a failed read is reported again without calling the endpoint
FAILURE_SECONDS = 5.0
#: entries the process keeps (least recently written dropped first)
MAX_CACHE_ENTRIES = 1024

#: the endpoint answered, but not 2xx
LIVE_ENDPOINT_STATUS = "live_endpoint_status"


def parse_body(data: bytes) -> dict[str, list[dict[str, Any]]]:
    """An endpoint's answer as checked tables; ``malformed_file`` for anything but a JSON
    object, ``unknown_field`` for a key other than ``tables``, then the pushed-table rules."""
    try:
        body = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise SourceFailure(Code.MALFORMED_FILE, "the live endpoint's answer is not JSON") from None
    if not isinstance(body, dict):
        raise SourceFailure(Code.MALFORMED_FILE, "the live endpoint's answer must be an object")
    unknown = sorted(str(k) for k in body if k != "tables")
    if unknown:
        raise InvalidInput(f"unknown field(s): {', '.join(unknown)[:200]}", code=UNKNOWN_FIELD,
                           details={"fields": unknown[:20]})
    tables = body.get("tables")
    if not isinstance(tables, dict):
        raise InvalidInput("tables must be an object of table name to rows", code=INVALID_LIVE_TABLE)
    if len(tables) > MAX_ENDPOINT_TABLES:
        raise InvalidInput(f"an endpoint gives at most {MAX_ENDPOINT_TABLES} tables", code=INVALID_LIVE_TABLE)
    return {name: validate_table(name, {"rows": rows}) for name, rows in tables.items()}


@dataclass(frozen=True)
class _Entry:
    at: float
    tables: dict[str, list[dict[str, Any]]] | None = None
    code: str | None = None


class EndpointCache:
    """Reads kept per (bot, source, URL), with the time they were made."""

    def __init__(self, max_entries: int = MAX_CACHE_ENTRIES):
        self._entries: OrderedDict[tuple[str, str, str], _Entry] = OrderedDict()
        self._lock = threading.Lock()
        self._max = max_entries

    def get(self, key: tuple[str, str, str], now: float) -> _Entry | None:
        """The entry when it may still be used at ``now`` (a clock that went back counts as
        stale), else None."""
        with self._lock:
            entry = self._entries.get(key)
        if entry is None:
            return None
        age = now - entry.at
        limit = CACHE_SECONDS if entry.code is None else FAILURE_SECONDS
        return entry if 0 <= age <= limit else None

    def put(self, key: tuple[str, str, str], entry: _Entry) -> None:
        with self._lock:
            self._entries[key] = entry
            self._entries.move_to_end(key)
            while len(self._entries) > self._max:
                self._entries.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


#: the process's cache (a warm function keeps it between questions)
CACHE = EndpointCache()


class EndpointUnavailable(KnowledgeError):
    """A live endpoint read that failed (now, or within the last few seconds)."""

    default_code = LIVE_ENDPOINT_STATUS


class EndpointLiveReader:
    """A :class:`~knowledge.answer.live.LiveReader`: the tables pushed for the source, and
    those its endpoint gives when its config names one (read through the cache)."""

    def __init__(self, state: Any, policy: OutboundPolicy | None, clock: Clock, *,
                 cache: EndpointCache = CACHE, timeout: float = ENDPOINT_TIMEOUT,
                 max_bytes: int = MAX_ENDPOINT_BYTES):
        from ..crawl.outbound import OutboundClient

        self.state = state
        self.clock = clock
        self.cache = cache
        self.client = OutboundClient(policy, timeout=timeout, max_bytes=max_bytes, max_redirects=1)

    def read(self, source: Source) -> Mapping[str, object] | None:
        stored = self.state.get_live_tables(source.bot, source.id) or {}
        config = source.config if isinstance(source.config, Mapping) else {}
        url = config.get("endpoint")
        if not isinstance(url, str) or not url:
            return stored or None
        return {**stored, **self.fetch(source.bot, source.id, url)}

    def fetch(self, bot: str, source_id: str, url: str) -> dict[str, list[dict[str, Any]]]:
        """The endpoint's tables, from the cache when a read at most 30 s old is there."""
        key = (bot, source_id, url)
        entry = self.cache.get(key, self.clock.now())
        if entry is not None:
            if entry.code is not None:
                raise EndpointUnavailable("the live endpoint failed a moment ago", code=entry.code)
            return dict(entry.tables or {})
        try:
            tables = self._read(url)
        except KnowledgeError as exc:
            self.cache.put(key, _Entry(at=self.clock.now(), code=exc.code))
            raise
        # the time the read ended: the value is never served more than 30 s after it was read
        self.cache.put(key, _Entry(at=self.clock.now(), tables=tables))
        return dict(tables)

    def _read(self, url: str) -> dict[str, list[dict[str, Any]]]:
        response = self.client.request("GET", url, headers={"Accept": "application/json"})
        if not 200 <= response.status < 300:
            raise EndpointUnavailable("the live endpoint did not answer 2xx", code=LIVE_ENDPOINT_STATUS,
                                      details={"status": response.status})
        return parse_body(response.body)
