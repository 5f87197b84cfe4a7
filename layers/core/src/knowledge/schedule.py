"""When a source is due for a refresh, and what picking it up changes: one rule for both
deployments. The stores index it for speed (a partial SQL index on SQLite, a sparse index on
DynamoDB); ``is_due`` is the rule they implement, checked against both in the contract suite.

A source is due when it is not disabled or indexing and either
- it is queued (``waiting`` or ``needs_refresh``) with no time set, or
- its time (``next_refresh_at``: a website's interval, or a backoff after throttling) has come.

Picking up a source on an interval moves its time one interval on and marks a ``ready`` one
``needs_refresh``, before the run starts: a run that fails does not leave it due at every
tick of the scheduler; a run that succeeds sets the next time from its own finish.
"""

from __future__ import annotations

from .model import Source

#: the source types a refresh fetches and indexes: every type but ``live``, whose tables are
#: read at answer time and never indexed
REFRESHABLE = frozenset({"pack", "article", "instruction", "fact", "faq", "website", "file"})
#: queued: due at once unless a backoff time is set
QUEUED = frozenset({"waiting", "needs_refresh"})
#: never due, whatever the time says
NEVER_DUE = frozenset({"disabled", "indexing"})


def runnable(source: Source) -> bool:
    """Whether a source is ever refreshed (queued, scheduled, reindexed)."""
    return source.type in REFRESHABLE


def is_due(status: str, next_refresh_at: float | None, now: float) -> bool:
    if status in NEVER_DUE:
        return False
    if next_refresh_at is None:
        return status in QUEUED
    return next_refresh_at <= now


def pickup_changes(source: Source, now: float) -> dict[str, object]:
    """The fields to write when a scheduler starts the refresh of a due ``source``."""
    if not source.refresh_every or source.next_refresh_at is None or source.next_refresh_at > now:
        return {}
    changes: dict[str, object] = {"next_refresh_at": now + source.refresh_every}
    if source.status == "ready":
        changes["status"] = "needs_refresh"
    return changes
