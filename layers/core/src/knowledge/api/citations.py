"""Citation checks (reference 003, "What retrieval returns"): an answer may cite only what
its retrieval served, and nothing whose source was disabled or deleted since."""

from __future__ import annotations

from typing import Any

from ..errors import InvalidCitation, NotFound
from ..ports import Services
from .models import MAX_CITATIONS, MAX_ID_CHARS, CitationCheck, parse

__all__ = ["MAX_CITATIONS", "MAX_ID_CHARS", "validate_citations"]
RETRIEVAL_NOT_FOUND = "retrieval_not_found"

# reasons an item is rejected (under ``error.invalid[].reason``)
NOT_SERVED = "not_served"
SOURCE_DELETED = "source_deleted"
SOURCE_DISABLED = "source_disabled"


def _parse(body: Any) -> tuple[str, list[tuple[str, str, str]]]:
    check = body if isinstance(body, CitationCheck) else parse(CitationCheck, body)
    return check.retrievalId, [(c.sourceId, c.documentId, c.fragmentId) for c in check.citations]


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
