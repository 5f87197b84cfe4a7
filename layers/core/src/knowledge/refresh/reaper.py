"""Return sources whose worker died to the queue (DESIGN.md §6).

A worker that dies releases nothing; its lease simply expires. The reaper drops the
generation it was staging (never visible to queries) and queues the source again. The
previous live generation keeps answering throughout.
"""

from __future__ import annotations

import logging

from ..wiring import Services

log = logging.getLogger(__name__)


def reap_expired_leases(services: Services) -> list[str]:
    state, now = services.state, services.clock.now()
    reaped = []
    for bot, source_id, generation in state.stale_staging(now):
        services.index.delete_generation(bot, source_id, generation)
        state.finish_generation(bot, source_id, generation)
    for source in state.expired_leases(now):
        owner = source.lease_owner
        if owner is None:
            continue
        state.release_lease(source.bot, source.id, owner)
        if source.status != "disabled":
            state.update_source(source.bot, source.id, status="waiting", updated_at=now)
        reaped.append(source.id)
        log.warning("reaped expired lease of %s/%s (attempt %d)", source.bot, source.id, source.attempts)
    return reaped
