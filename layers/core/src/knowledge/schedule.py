"""When a source is due for a refresh: the one due-time policy of both deployments (the
embedded scheduler and the AWS one, both state stores, both refresh runners).

A source is due when it is not disabled or indexing and either
- it is queued (``waiting`` or ``needs_refresh``) with no time set, or
- its time (``next_refresh_at``: a website's interval, or a backoff after throttling) has come.

That time is set in three places, each through a function here:
- picking up a source on an interval (``pickup_changes``) moves it one interval on and marks a
  ``ready`` one ``needs_refresh``, before the run starts: a run that then fails (``failed``)
  keeps that time, so a failing website is next due one interval later, not at every tick;
- a commit sets it one interval from the commit (``next_refresh``, through
  ``store_rules.commit_changes``); an interval changed by an edit counts from the last commit;
- a run failed by throttling or an embedder outage is queued again after a backoff that grows
  with its attempts (``requeue_at``, through the fail stage).

The stores index the rule for speed (a partial SQL index on SQLite, a sparse index on
DynamoDB keyed by ``due_at``); ``is_due`` is the rule, checked against both in the contract
suite.
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


#: a throttled or embedder-less run is queued again after 30 s, doubling with each attempt
REQUEUE_FIRST_SECONDS = 30.0
REQUEUE_MAX_SECONDS = 3600.0


def due_at(status: str, next_refresh_at: float | None) -> float | None:
    """From when a source is due (0.0: now), or None when it never is as it stands."""
    if status in NEVER_DUE:
        return None
    if next_refresh_at is None:
        return 0.0 if status in QUEUED else None
    return float(next_refresh_at)


def is_due(status: str, next_refresh_at: float | None, now: float) -> bool:
    at = due_at(status, next_refresh_at)
    return at is not None and at <= now


def next_refresh(refresh_every: float | None, since: float) -> float | None:
    """The next scheduled refresh of a source on an interval, counted from ``since``; None
    for a source without one."""
    return since + float(refresh_every) if refresh_every else None


def requeue_at(attempts: int, now: float) -> float:
    """When a run that failed for a passing reason (throttling, an embedder outage) is due
    again: a backoff that doubles with the source's attempts, at most an hour."""
    return now + min(REQUEUE_MAX_SECONDS, REQUEUE_FIRST_SECONDS * 2 ** min(attempts, 7))


def pickup_changes(source: Source, now: float) -> dict[str, object]:
    """The fields to write when a scheduler starts the refresh of a due ``source``."""
    if not source.refresh_every or source.next_refresh_at is None or source.next_refresh_at > now:
        return {}
    changes: dict[str, object] = {"next_refresh_at": next_refresh(source.refresh_every, now)}
    if source.status == "ready":
        changes["status"] = "needs_refresh"
    return changes
