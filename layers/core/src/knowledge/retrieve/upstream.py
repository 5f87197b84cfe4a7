"""Federation with an upstream deployment of this service (reference 000, "Store-hosted
retrieval, fused in").

An enhancement, never a dependency: switched off, no credentials, an HTTP error, a slow or
unreachable upstream all give an empty list, logged at debug (on an air-gapped install that
is the steady state). The asker's audience is always named in the request — the boundary is
never left to the upstream's default. Lists are fused by rank only (scores of two indexes
mean different things), local passages boosted 1.15.
"""

from __future__ import annotations

import json
import logging
import urllib.error
import urllib.request
from typing import Any

from .ranking import RRF_K

log = logging.getLogger(__name__)

TIMEOUT_SECONDS = 2.5
LOCAL_BOOST = 1.15


def fetch(
    config: dict[str, Any] | None, q: str, audience: str, *, timeout: float | None = None
) -> list[dict[str, Any]]:
    if not config or not config.get("url") or not config.get("token"):
        return []
    url = str(config["url"]).rstrip("/")
    bot = str(config.get("bot") or "default")
    body = json.dumps({"q": q, "audience": audience}).encode("utf-8")
    req = urllib.request.Request(f"{url}/api/bots/{bot}/knowledge/retrieve", data=body, method="POST")
    req.add_header("Content-Type", "application/json")
    req.add_header("Authorization", f"Bearer {config['token']}")
    try:
        with urllib.request.urlopen(req, timeout=timeout or TIMEOUT_SECONDS) as resp:
            payload = json.loads(resp.read(2_000_000))
        excerpts = payload.get("excerpts") if isinstance(payload, dict) else None
        if not isinstance(excerpts, list):
            return []
    except (urllib.error.URLError, TimeoutError, OSError, ValueError) as exc:
        log.debug("upstream retrieval skipped: %s", type(exc).__name__)
        return []
    if payload.get("audience") not in (None, audience):
        log.debug("upstream answered for another audience; ignored")
        return []
    out = []
    for e in excerpts:
        if isinstance(e, dict) and isinstance(e.get("text"), str):
            out.append(e)
    return out


def fuse(
    local: list[dict[str, Any]], upstream: list[dict[str, Any]], limit: int, k: int = RRF_K
) -> list[dict[str, Any]]:
    """Interleave by reciprocal rank: local 1.15/(k + rank), upstream 1/(k + rank)."""
    scored = [(LOCAL_BOOST / (k + i), 0, i, e) for i, e in enumerate(local, start=1)]
    for i, e in enumerate(upstream, start=1):
        item = {key: e.get(key) for key in ("sourceId", "sourceType", "documentId", "fragmentId", "title",
                                            "path", "breadcrumb", "text", "url")}
        item.update({"score": e.get("score"), "reason": "upstream",
                     "signals": {"upstreamRank": i, "rrf": round(1.0 / (k + i), 6)}})
        scored.append((1.0 / (k + i), 1, i, item))
    scored.sort(key=lambda t: (-t[0], t[1], t[2]))
    return [e for *_, e in scored[:limit]]
