"""Return sources whose worker died to the queue (DESIGN.md §6).

A worker that dies releases nothing; its lease simply expires. The reaper drops the
generation it was staging (never visible to queries) with its batch files, and queues the
source again. The
previous live generation keeps answering throughout.
"""

from __future__ import annotations

from ..ports import Services
from .leases import release_expired_leases
from .staging import clear_staging


def reap_expired_leases(services: Services) -> list[str]:
    """Drop what dead workers were staging, then requeue their sources (the state half is
    the one the AWS scheduler runs: ``leases.release_expired_leases``)."""
    state, now = services.state, services.clock.now()
    for bot, source_id, generation in state.stale_staging(now):
        services.index.delete_generation(bot, source_id, generation)
        state.finish_generation(bot, source_id, generation)
        clear_staging(services, bot, source_id, generation)  # its batch files, if it got that far
    return [source.id for source in release_expired_leases(services)]
