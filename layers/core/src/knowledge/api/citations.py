"""Citation checks (reference 003, "What retrieval returns"): an answer may cite only what
its retrieval served, and nothing whose source was disabled or deleted since."""

from __future__ import annotations

from typing import Any

from ..errors import InvalidCitation, InvalidInput, NotFound
from ..ports import Services

MAX_CITATIONS = 100
MAX_ID_CHARS = 200
RETRIEVAL_NOT_FOUND = "retrieval_not_found"

# reasons an item is rejected (under ``error.invalid[].reason``)
NOT_SERVED = "not_served"
SOURCE_DELETED = "source_deleted"
SOURCE_DISABLED = "source_disabled"

_KEYS = ("sourceId", "documentId", "fragmentId")


def _parse(body: Any) -> tuple[str, list[tuple[str, str, str]]]:
    if not isinstance(body, dict):
        raise InvalidInput("the body must be a JSON object")
    unknown = sorted(k for k in body if k not in ("retrievalId", "citations"))
    if unknown:
        raise InvalidInput(f"unknown field(s): {', '.join(unknown)[:200]}", code="unknown_field")
    retrieval_id = body.get("retrievalId")
    if not isinstance(retrieval_id, str) or not retrieval_id or len(retrieval_id) > MAX_ID_CHARS:
        raise InvalidInput("retrievalId must be the id a retrieval returned")
    citations = body.get("citations")
    if not isinstance(citations, list) or len(citations) > MAX_CITATIONS:
        raise InvalidInput(f"citations must be a list of at most {MAX_CITATIONS} items")
    triples = []
    for number, item in enumerate(citations, start=1):
        if not isinstance(item, dict) or set(item) != set(_KEYS):
            raise InvalidInput(f"citation {number} must be {{sourceId, documentId, fragmentId}}")
        values = tuple(item[k] for k in _KEYS)
        if not all(isinstance(v, str) and 0 < len(v) <= MAX_ID_CHARS for v in values):
            raise InvalidInput(f"citation {number} must hold three non-empty string ids")
        triples.append((str(values[0]), str(values[1]), str(values[2])))
    return retrieval_id, triples


def validate_citations(services: Services, bot: str, body: Any) -> dict[str, Any]:
    """``{"valid": true}``, or ``InvalidCitation`` (422) naming every rejected item."""
    retrieval_id, triples = _parse(body)
    record = services.state.get_retrieval(bot, retrieval_id)
    if record is None or record.expires_at < services.clock.now():
        raise NotFound("no such retrieval (or it expired)", code=RETRIEVAL_NOT_FOUND)
    served = set(record.served)
    statuses: dict[str, str | None] = {}
    invalid = []
    for triple in triples:
        source_id = triple[0]
        if source_id not in statuses:
            source = services.state.get_source(bot, source_id)
            statuses[source_id] = source.status if source is not None else None
        reason = None
        if triple not in served:
            reason = NOT_SERVED
        elif statuses[source_id] is None:
            reason = SOURCE_DELETED
        elif statuses[source_id] == "disabled":
            reason = SOURCE_DISABLED
        if reason:
            invalid.append({"sourceId": triple[0], "documentId": triple[1], "fragmentId": triple[2],
                            "reason": reason})
    if invalid:
        raise InvalidCitation(f"{len(invalid)} citation(s) are not allowed", details={"invalid": invalid})
    return {"valid": True}
