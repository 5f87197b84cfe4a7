"""The topic gate (DESIGN.md §7): a question about fees, limits or processing time is answered
only when something the operator wrote, and that speaks of the topic, is among the excerpts
served. A shipped documentation page (a pack, a website, a file) never settles it: such
numbers change, and only the operator knows their current ones."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..model import OPERATOR_AUTHORED_TYPES
from .topics import DEFAULT_CLASSIFIER, TopicClassifier

#: Source types whose excerpts can settle a gated question.
SETTLING_TYPES = frozenset(OPERATOR_AUTHORED_TYPES | {"faq", "live"})

_LABEL = {"fees": "fees", "limits": "limits", "processing_time": "processing times"}


def gate(topic: str | None, excerpts: Sequence[Mapping[str, Any]], *, enabled: bool = True,
         classifier: TopicClassifier = DEFAULT_CLASSIFIER) -> dict[str, Any] | None:
    """``{"topic", "passed", "reason"}`` for a classified question, None for any other.

    Passed when an excerpt of an operator-authored type (article, instruction, fact, FAQ,
    live) speaks of the topic (a live excerpt always does: it was composed for it); the
    reason names it, or says plainly what was missing."""
    if topic is None:
        return None
    label = _LABEL.get(topic, topic)
    if not enabled:
        return {"topic": topic, "passed": True, "reason": "the topic gate is switched off for this bot"}
    authored = [e for e in excerpts if e.get("sourceType") in SETTLING_TYPES]
    for e in authored:
        if e.get("sourceType") == "live" or classifier.speaks_of(f"{e.get('title') or ''} {e.get('text') or ''}",
                                                                  topic):
            return {"topic": topic, "passed": True,
                    "reason": f"excerpt {e.get('rank')} is operator-authored ({e.get('sourceType')}) and "
                              f"speaks of {label}"}
    if authored:
        reason = (f"the question is about {label}, and none of the operator-authored excerpts served "
                  f"speaks of {label}")
    else:
        reason = (f"the question is about {label}, which only the operator's own content can settle "
                  "(an article, instruction, fact, FAQ or live data); none was among the excerpts, and "
                  "documentation pages never settle it")
    return {"topic": topic, "passed": False, "reason": reason}


def gate_enabled(settings: Mapping[str, Any] | None) -> bool:
    """The per-bot switch (``{"gate": false}`` in the bot's answer settings); on by default."""
    value = (settings or {}).get("gate", True)
    return value is not False
