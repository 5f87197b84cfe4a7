"""The AWS scheduler's start of due refreshes (DESIGN.md §6): one workflow execution per due
source, named by its due time and attempt count so an overlapping tick starts nothing twice.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..model import Source
from ..ports import Services
from ..schedule import pickup_changes


def start_due_refreshes(services: Services, runnable: Callable[[Source], bool]) -> list[dict[str, Any]]:
    """Start the refresh of every due source. The due time and the attempt count name the
    execution: a tick overlapping the previous one starts nothing twice, and a source
    that is still due after a run (requeued with a new due time) gets a new execution."""
    started = []
    workflow = services.require_workflow()
    now = services.clock.now()
    for source in services.state.due_sources(now):
        if not runnable(source):
            continue
        due = source.next_refresh_at if source.next_refresh_at is not None else source.updated_at
        token = f"{due:.3f}:{source.attempts}"
        changes = pickup_changes(source, now)  # as the embedded scheduler: a failing run is not due every tick
        if changes:
            services.state.update_source(source.bot, source.id, **changes)
        started.append(workflow.start_refresh(source.bot, source.id, reason="schedule", token=token))
    return started
