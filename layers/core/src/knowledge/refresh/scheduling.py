"""Starting the refresh of every due source (DESIGN.md §6), for both schedulers: the AWS
scheduler's tick (one workflow execution per due source, named by its due time and attempt
count so an overlapping tick starts nothing twice) and the embedded one's (a job on the
in-process queue).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..model import Source
from ..ports import Services, Workflow
from ..schedule import pickup_changes


def start_due_refreshes(services: Services, runnable: Callable[[Source], bool],
                        workflow: Workflow | None = None) -> list[dict[str, Any]]:
    """Start the refresh of every due source ``runnable`` keeps, on ``workflow`` (the
    services' by default), after writing what picking it up changes (``pickup_changes``).
    The due time and the attempt count name the execution: a tick overlapping the previous
    one starts nothing twice, and a source that is still due after a run (requeued with a
    new due time) gets a new execution."""
    started = []
    workflow = workflow or services.require_workflow()
    now = services.clock.now()
    for source in services.state.due_sources(now):
        if not runnable(source):
            continue
        due = source.next_refresh_at if source.next_refresh_at is not None else source.updated_at
        token = f"{due:.3f}:{source.attempts}"
        changes = pickup_changes(source, now)  # a failing run is not due again at every tick
        if changes:
            services.state.update_source(source.bot, source.id, **changes)
        started.append(workflow.start_refresh(source.bot, source.id, reason="schedule", token=token))
    return started
