"""One turn of a website source's crawl loop (DESIGN.md §6): fetch pages until a deadline,
heartbeating the lease before every request, stage them and say how long to wait before the
next turn. A crawl Lambda task on AWS; a turn of the embedded runner's loop in-process.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..ports import Services
from ..settings import LEASE_SECONDS
from .leases import HeartbeatingFetcher, LeaseKeeper, RunStopped, check_run


@dataclass(frozen=True)
class CrawlResult:
    done: bool
    cursor: Any
    wait_seconds: int
    pages: int = 0
    failures: int = 0
    stopped: str | None = None

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"done": self.done, "cursor": self.cursor, "waitSeconds": self.wait_seconds,
                               "pages": self.pages, "failures": self.failures}
        if self.stopped:
            out["stopped"] = self.stopped
        return out


def crawl_pages(services: Services, bot: str, source_id: str, owner: str, cursor: Any, *, deadline: float,
                fetcher: Any = None) -> CrawlResult:
    """One turn of the crawl loop: fetch pages until ``deadline`` (a ``time.monotonic()``
    value), heartbeating the lease before every request (``LeaseKeeper``), stage them
    (``sources.website.crawl_step``) and say how long to wait."""
    import math

    from ..sources import website

    status, source = check_run(services, bot, source_id, owner)
    if status != "ok" or source is None:
        return CrawlResult(True, None, 0, stopped=status)
    keeper = LeaseKeeper(services, bot, source_id, owner)
    beating = HeartbeatingFetcher(fetcher or website.default_fetcher(services.outbound), keeper)
    try:
        step = website.crawl_step(services, source, cursor, deadline=deadline, fetcher=beating)
    except RunStopped as stop:  # cancelled or lost mid-turn: what this turn fetched is not staged
        return CrawlResult(True, None, 0, stopped=str(stop))
    if not services.state.extend_lease(bot, source_id, owner, services.clock.now(), LEASE_SECONDS):
        return CrawlResult(True, None, 0, stopped="lost")
    wait = max(0, math.ceil(float(step.wait_seconds or 0)))
    pages, failures = step.pages, step.failures
    return CrawlResult(bool(step.done), step.cursor, wait,
                       pages=pages if isinstance(pages, int) else len(pages or ()),
                       failures=failures if isinstance(failures, int) else len(failures or ()))
