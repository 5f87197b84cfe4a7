"""Packs on disk -> pack sources of a bot, with scoping; and the full reindex pass.

Both the nightly run and the manual button do the same thing: sync the pack sources, then
refresh every enabled source (unchanged ones are skipped by checksum). One failing source
never aborts the pass; the report says how many failed and each row keeps its error.

The corpus-learned rescue model is relearned by the caller once the work is done (``kb
ingest``/``kb reindex`` after their summary, ``kb serve`` when its queue drains), not per
pass: passages are searchable as soon as their generation is committed.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..errors import Code
from ..model import Source
from ..ports import Services
from ..schedule import runnable
from ..sources.files import awaiting_first_upload, awaiting_upload
from .finish import RefreshOutcome, drop_orphans
from .packsync import sync_packs
from .pipeline import Progress, Refresher

log = logging.getLogger(__name__)


def reindexed(source: Source, awaiting: Callable[[Source], bool]) -> bool:
    """Whether a reindex refreshes ``source``: enabled, refreshable (``schedule.runnable``) and
    not a file source still awaiting its upload. Only ``awaiting`` differs between the two
    passes: the embedded one asks the blob store (``sources.files.awaiting_upload``), the AWS
    plan reads the row (``awaiting_first_upload``) so the functions that start reindexes need
    no read access to the uploads."""
    return source.status != "disabled" and runnable(source) and not awaiting(source)


@dataclass
class ReindexReport:
    outcomes: list[RefreshOutcome] = field(default_factory=list)
    out_of_scope: list[str] = field(default_factory=list)

    @property
    def failed(self) -> int:
        return sum(1 for o in self.outcomes if o.status == "failed")

    def as_dict(self) -> dict[str, Any]:
        by = lambda s: sum(1 for o in self.outcomes if o.status == s)  # noqa: E731
        return {
            "sources": len(self.outcomes),
            "indexed": by("indexed"),
            "skipped": by("skipped"),
            "failed": self.failed,
            "busy": by("busy"),
            "outOfScope": self.out_of_scope,
            "pages": sum(o.documents for o in self.outcomes),
            "passages": sum(o.passages for o in self.outcomes if o.status == "indexed"),
            "pagesSkipped": sum(o.skipped for o in self.outcomes),
            "pagesFailed": sum(o.failed for o in self.outcomes),
            "warning": f"{self.failed} source(s) failed; see their rows" if self.failed else None,
            "results": [o.as_dict() for o in self.outcomes],
        }


def reindex(
    services: Services,
    bot: str,
    *,
    force: bool = False,
    only: set[str] | None = None,
    progress: Progress | None = None,
) -> ReindexReport:
    report = ReindexReport()
    drop_orphans(services)
    for source in sync_packs(services, bot):
        if source.error_code == Code.OUT_OF_SCOPE:
            report.out_of_scope.append(source.config.get("slug", source.id))
    refresher = Refresher(services, progress=progress)
    for source in services.state.list_sources(bot):
        if only is not None and source.id not in only:
            continue
        if not reindexed(source, lambda s: awaiting_upload(services, s)):
            continue
        try:
            report.outcomes.append(refresher.refresh(bot, source.id, force=force))
        except Exception:  # one failing source never aborts the pass; its row holds the code
            log.exception("refresh of %s/%s failed", bot, source.id)
            current = services.state.get_source(bot, source.id)
            report.outcomes.append(
                RefreshOutcome(source.id, source.name, "failed",
                               error_code=current.error_code if current else Code.INTERNAL)
            )
    return report




def reindex_targets(services: Services, bot: str) -> tuple[list[str], list[str]]:
    """Sync the bot's pack sources (``sync_packs``: every pack under ``packs/`` gets a row,
    out-of-scope ones are listed ``disabled``/``out_of_scope`` and withdrawn), then name what a
    reindex refreshes: (every source ``reindexed`` keeps, the slugs of out-of-scope packs).
    A file source never uploaded is left out (``awaiting_first_upload``: read from the row)."""
    out_of_scope = [
        str(source.config.get("slug", source.id))
        for source in sync_packs(services, bot)
        if source.error_code == Code.OUT_OF_SCOPE
    ]
    targets = [
        source.id for source in services.state.list_sources(bot)
        if reindexed(source, awaiting_first_upload)
    ]
    return targets, out_of_scope
