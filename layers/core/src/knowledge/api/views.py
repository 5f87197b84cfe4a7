"""JSON shapes of the API (camelCase). The only place model objects become response bodies."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from ..model import Agent, BotSettings, Document, Source, Token


def iso(ts: float | None) -> str | None:
    if ts is None:
        return None
    return datetime.fromtimestamp(ts, tz=UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def heaviest_first(sources: Iterable[Source]) -> list[Source]:
    return sorted(sources, key=lambda s: (-s.weight, -s.passages, s.name.lower(), s.id))


def source_json(s: Source) -> dict[str, Any]:
    return {
        "id": s.id,
        "type": s.type,
        "name": s.name,
        "status": s.status,
        "errorCode": s.error_code,
        "errorMessage": s.error_message,
        "visibility": s.visibility,
        "priority": s.priority,
        "weight": s.weight,
        "passages": s.passages,
        "attempts": s.attempts,
        "documentsProcessed": s.documents_processed,
        "fragmentsProcessed": s.fragments_processed,
        "documentsFailed": s.documents_failed,
        "documentsUnchanged": s.documents_unchanged,
        "lastIndexedAt": iso(s.last_indexed_at),
        "refreshEverySeconds": s.refresh_every,
        "nextRefreshAt": iso(s.next_refresh_at),
        "config": s.config,
        "createdAt": iso(s.created_at),
        "updatedAt": iso(s.updated_at),
    }


def document_json(d: Document) -> dict[str, Any]:
    return {
        "id": d.id,
        "title": d.title,
        "path": d.path,
        "url": d.url,
        "visibility": d.visibility,
        "fragments": d.fragments,
        "errorCode": d.error_code,
    }


def index_json(sources: Iterable[Source], embedder: str | None = None) -> dict[str, Any]:
    """``GET index``; ``embedder`` is the embedder the bot uses (``none``: lexical only)."""
    rows = heaviest_first(sources)
    live = [s for s in rows if s.live_generation is not None and s.status != "disabled"]
    built = max((s.last_indexed_at for s in rows if s.last_indexed_at), default=None)
    out_rows = []
    for s in rows:
        row: dict[str, Any] = {
            "id": s.id,
            "title": s.name,
            "type": s.type,
            "status": s.status,
            "passages": s.passages,
            "error": s.error_code,
            "lastIndexedAt": iso(s.last_indexed_at),
        }
        if s.weight != 1.0:
            row["weight"] = s.weight
        out_rows.append(row)
    return {
        "builtAt": iso(built),
        "totalPassages": sum(s.passages for s in live),
        "embedder": embedder or "none",
        "sources": out_rows,
    }


def status_json(s: Source, *, indexing: bool) -> dict[str, Any]:
    """``GET sources/{id}/index-status``: what the source card shows."""
    return {
        "id": s.id,
        "status": s.status,
        "indexing": indexing,
        "cancelRequested": s.cancel_requested,
        "attempts": s.attempts,
        "documentsProcessed": s.documents_processed,
        "fragmentsProcessed": s.fragments_processed,
        "documentsFailed": s.documents_failed,
        "documentsUnchanged": s.documents_unchanged,
        "passages": s.passages,
        "errorCode": s.error_code,
        "errorMessage": s.error_message,
        "lastIndexedAt": iso(s.last_indexed_at),
        "leaseExpiresAt": iso(s.lease_expires_at) if indexing else None,
    }


def agent_json(a: Agent) -> dict[str, Any]:
    return {"id": a.id, "status": a.status, "sourceIds": list(a.source_ids)}


#: What an agent's retrieval test (the MCP tool) shows of each excerpt: no ranking internals
#: ("signals"); the HTTP ``retrieval-test`` keeps them for the operator.
PUBLIC_EXCERPT_FIELDS = ("rank", "sourceId", "sourceType", "documentId", "fragmentId", "title", "path",
                         "breadcrumb", "text", "url", "score", "reason")


def retrieval_test_json(result: dict[str, Any]) -> dict[str, Any]:
    out = dict(result)
    out["excerpts"] = [{k: e.get(k) for k in PUBLIC_EXCERPT_FIELDS} for e in result.get("excerpts", [])]
    return out


def gap_cluster_json(c: dict[str, Any]) -> dict[str, Any]:
    """A gap cluster (``answer.gaps.cluster_gaps``) with its times as ISO 8601."""
    return {**c, "firstSeen": iso(c.get("firstSeen")), "lastSeen": iso(c.get("lastSeen"))}


def token_json(t: Token) -> dict[str, Any]:
    """A token as listed: never its secret (nor its hash beyond the id)."""
    return {
        "id": t.id,
        "bot": t.bot,
        "scopes": list(t.scopes),
        "createdAt": iso(t.created_at),
        "lastUsedAt": iso(t.last_used_at),
        "expiresAt": iso(t.expires_at),
    }


def settings_json(s: BotSettings) -> dict[str, Any]:
    """A bot's settings; secrets (provider key, upstream token) only as whether they are set."""
    options = dict(s.embedder_options or {})
    shown: dict[str, Any] = {k: options[k] for k in ("baseUrl", "model", "modelId", "dimensions") if k in options}
    shown["apiKeySet"] = bool(options.get("apiKey"))
    upstream = None
    if s.upstream:
        upstream = {"url": str(s.upstream.get("url", "")), "bot": str(s.upstream.get("bot") or "default"),
                    "tokenSet": bool(s.upstream.get("token"))}
    return {
        "bot": s.bot,
        "products": list(s.products),
        "scopeToProducts": s.scope_to_products,
        "floor": s.floor,
        "topK": s.top_k,
        "rerank": s.rerank,
        "embedder": s.embedder,
        "embedderOptions": shown,
        "upstream": upstream,
        "answer": dict(s.answer) if s.answer else {},
    }
