"""A refresh run's lease (DESIGN.md §6): ``take_lease`` (the workflow's first task) leases the
source and hands out a generation; ``check_run`` tells whether the run may go on;
``LeaseKeeper`` heartbeats the lease through a long stage (``HeartbeatingFetcher`` before
every request of a crawl); ``release_expired_leases`` (the reaper's state half) sends the
sources of dead workers back to ``waiting``.

Cancellation and lease loss are not errors: a stage that finds the source cancelled,
disabled, deleted or leased to another owner returns without side effects.
"""

from __future__ import annotations

import logging
from typing import Any

from ..model import Source
from ..ports import Services
from ..settings import HEARTBEAT_SECONDS, LEASE_SECONDS

log = logging.getLogger(__name__)

__all__ = ["HEARTBEAT_SECONDS", "HeartbeatingFetcher", "LeaseKeeper", "RunStopped", "check_run",
           "release_expired_leases", "take_lease"]


class RunStopped(Exception):
    """Raised inside a stage when its run must end: the message is ``"cancelled"`` or ``"lost"``."""


def check_run(services: Services, bot: str, source_id: str, owner: str, *,
              beat: bool = True) -> tuple[str, Source | None]:
    """("ok", source) while this run may go on (and, with ``beat``, its lease was extended);
    ("cancelled", ...) when the source was cancelled, disabled or deleted; ("lost", ...) when
    another owner holds the lease."""
    state = services.state
    current = state.get_source(bot, source_id)
    if current is None or current.cancel_requested or current.status == "disabled":
        return "cancelled", current
    if current.lease_owner != owner:
        return "lost", current
    if beat and not state.extend_lease(bot, source_id, owner, services.clock.now(), LEASE_SECONDS):
        return "lost", current
    return "ok", current


class LeaseKeeper:
    """Heartbeats one run's lease through a long stage: ``beat()`` extends it once
    ``HEARTBEAT_SECONDS`` (a third of the lease) passed on the services' clock since the last
    extension, or every ``every_calls`` calls or when forced (a cancel checkpoint), and raises
    ``RunStopped`` with ``"cancelled"`` or ``"lost"`` when the run must end. Without it a stage
    longer than the lease (a crawl turn runs up to 150 s; the lease lasts 120 s) would be
    reaped mid-run."""

    def __init__(self, services: Services, bot: str, source_id: str, owner: str, *,
                 every_calls: int | None = None):
        self.services, self.bot, self.source_id, self.owner = services, bot, source_id, owner
        self.every_calls = every_calls
        self.calls = 0
        self.last = services.clock.now()
        self.beats = 0
        self._seen: object = None

    def look(self) -> None:
        """A cheap checkpoint between documents: asks whether the run may go on only when the
        store says something committed since the last look (``StateStore.version``, which
        SQLite can tell and DynamoDB cannot) or when a heartbeat is due, and raises
        ``RunStopped`` like ``beat``. A cancel made in the embedded mode is so seen before
        the next document; elsewhere within a heartbeat or at the batch's next ``beat``."""
        version = self.services.state.version()
        changed = version is not None and version != self._seen
        self._seen = version
        due = self.services.clock.now() - self.last >= HEARTBEAT_SECONDS
        if not (changed or due):
            return
        status, _ = check_run(self.services, self.bot, self.source_id, self.owner, beat=due)
        if status != "ok":
            raise RunStopped(status)
        if due:
            self.last = self.services.clock.now()
            self.beats += 1

    def beat(self, *, force: bool = False) -> None:
        self.calls += 1
        forced = force or (self.every_calls is not None and self.calls % self.every_calls == 0)
        if not forced and self.services.clock.now() - self.last < HEARTBEAT_SECONDS:
            return
        status, _ = check_run(self.services, self.bot, self.source_id, self.owner)
        if status != "ok":
            raise RunStopped(status)
        self.last = self.services.clock.now()
        self.beats += 1


class HeartbeatingFetcher:
    """A crawl's page fetcher that heartbeats the lease before every request (robots.txt
    included): the crawler's loop makes one request per page after at most a Crawl-delay
    (10 s), so the lease is extended within a third of its length plus one request."""

    def __init__(self, inner: Any, keeper: LeaseKeeper):
        self.inner, self.keeper = inner, keeper

    def fetch(self, url: str, **kwargs: Any) -> Any:
        self.keeper.beat()
        return self.inner.fetch(url, **kwargs)

    def fetch_robots(self, url: str, **kwargs: Any) -> Any:
        self.keeper.beat()
        return self.inner.fetch_robots(url, **kwargs)


def take_lease(services: Services, bot: str, source_id: str, owner: str, *, force: bool = False) -> dict[str, Any]:
    """Lease the source for ``owner`` (the execution name) and hand out a new generation.

    ``{"acquired": false, "reason": "disabled|missing"}`` ends the execution quietly: there
    is nothing to refresh. ``"reason": "busy"`` means another execution holds the lease (a
    run asked to stop for an edit, or one still working): the state machine tries again
    with a backoff that outlasts a lease (``lease_busy``) and ends quietly only after that,
    so an edit made during a refresh is indexed once the running one lets go. Retried by
    the same owner (a lost reply), the lease is still its own and the step goes on."""
    state, now = services.state, services.clock.now()
    source = state.get_source(bot, source_id)
    if source is None:
        return {"acquired": False, "reason": "missing", "sourceType": None}
    if source.status == "disabled":
        return {"acquired": False, "reason": "disabled", "sourceType": source.type}
    if not state.acquire_lease(bot, source_id, owner, now, LEASE_SECONDS) and not (
        source.lease_owner == owner and state.extend_lease(bot, source_id, owner, now, LEASE_SECONDS)
    ):
        return {"acquired": False, "reason": "busy", "sourceType": source.type}
    generation = state.begin_generation(bot, source_id, owner)
    if source.type == "website":  # the crawl takes a while: show it
        state.update_source(bot, source_id, status="indexing", error_code=None, error_message=None,
                            documents_processed=0, fragments_processed=0, documents_failed=0)
    return {"acquired": True, "sourceType": source.type, "generation": generation, "force": bool(force)}


def release_expired_leases(services: Services) -> list[Source]:
    """The reaper's state half: a source whose worker died (its lease expired) goes back to
    ``waiting``. The generation that worker was staging is invisible to every query and is
    dropped from the index by the next commit of that source (``drop_orphans``), so this
    needs no access to the index."""
    state, now = services.state, services.clock.now()
    reaped = []
    for source in state.expired_leases(now):
        owner = source.lease_owner
        if owner is None:
            continue
        state.release_lease(source.bot, source.id, owner)
        if source.status != "disabled":
            state.update_source(source.bot, source.id, status="waiting", updated_at=now)
        reaped.append(source)
        log.warning("reaped expired lease of %s/%s (attempt %d)", source.bot, source.id, source.attempts)
    return reaped
