"""Federation with an upstream deployment of this service (reference 000, "Store-hosted
retrieval, fused in").

An enhancement, never a dependency: switched off, no credentials, a refused address, an
HTTP error, a slow, oversized or unreachable upstream all give an empty list, logged at
debug with the error code only (never the token, the URL or the response; on an air-gapped
install that is the steady state). The call goes through the guarded outbound client
(:mod:`knowledge.crawl.outbound`): https only, every address checked on every call, no
redirect off the upstream's origin, a total budget of ``TIMEOUT_SECONDS`` and at most
``MAX_RESPONSE_BYTES`` read. The asker's audience is always named in the request — the
boundary is never left to the upstream's default. Lists are fused by rank only (scores of
two indexes mean different things), local passages boosted 1.15.
"""

from __future__ import annotations

import json
import logging
from typing import Any
from urllib.parse import quote

from ..crawl.outbound import OutboundClient, OutboundPolicy, check_configured_url
from ..errors import KnowledgeError
from .ranking import RRF_K

log = logging.getLogger(__name__)

#: the whole call, lookup to last byte
TIMEOUT_SECONDS = 2.5
#: the most of an upstream's answer read (twelve excerpts of 800 characters fit many times)
MAX_RESPONSE_BYTES = 2_000_000
LOCAL_BOOST = 1.15


def fetch(
    config: dict[str, Any] | None,
    q: str,
    audience: str,
    *,
    timeout: float | None = None,
    policy: OutboundPolicy | None = None,
) -> list[dict[str, Any]]:
    """The upstream's excerpts for ``q`` as ``audience``, or [] whatever goes wrong.
    ``policy`` is the composition root's (``Services.outbound``)."""
    if not config or not config.get("url") or not config.get("token"):
        return []
    bot = str(config.get("bot") or "default")
    body = json.dumps({"q": q, "audience": audience}).encode("utf-8")
    headers = {"Content-Type": "application/json", "Accept": "application/json",
               "Authorization": f"Bearer {config['token']}"}
    try:
        base = check_configured_url(config["url"], policy)
        client = OutboundClient(policy, timeout=timeout or TIMEOUT_SECONDS, max_bytes=MAX_RESPONSE_BYTES)
        response = client.request("POST", f"{base}/api/bots/{quote(bot, safe='')}/knowledge/retrieve",
                                  headers=headers, body=body)
    except KnowledgeError as exc:
        log.debug("upstream retrieval skipped: %s", exc.code)
        return []
    except ValueError:  # a token that cannot be sent as a header
        log.debug("upstream retrieval skipped: the token is not a valid header value")
        return []
    if response.status != 200:
        log.debug("upstream retrieval skipped: HTTP %d", response.status)
        return []
    try:
        payload = json.loads(response.body)
    except ValueError:
        log.debug("upstream retrieval skipped: the answer is not JSON")
        return []
    excerpts = payload.get("excerpts") if isinstance(payload, dict) else None
    if not isinstance(excerpts, list):
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
