"""Plain records the state stores keep for answer time (no I/O, no imports from the rest of
``knowledge.answer``, so ``knowledge.ports`` can name them)."""

from __future__ import annotations

from dataclasses import dataclass

#: How a retrieval can end without an answer.
GAP_OUTCOMES: tuple[str, ...] = ("nothing_found", "below_floor", "gated")
#: Gaps are kept this long unless a bot says otherwise.
GAP_RETENTION_SECONDS = 90 * 24 * 3600


@dataclass(frozen=True)
class GapRecord:
    """One question that nothing answered. ``question`` is already redacted."""

    id: str
    bot: str
    audience: str
    question: str
    outcome: str
    topic: str | None
    created_at: float
    expires_at: float
