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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import BackendError, Code
from ..model import Source, stable_id
from ..sources.files import awaiting_upload
from ..sources.packs import PACK_SUFFIX, product_title, slug_of
from ..sources.registry import pack_blob_key
from ..sources.scope import in_scope
from ..wiring import Services
from .pipeline import Progress, Refresher, RefreshOutcome, drop_orphans

log = logging.getLogger(__name__)


def pack_source_id(bot: str, slug: str) -> str:
    return stable_id(bot, "pack", slug)


def install_pack(services: Services, path: Path) -> str:
    """Copy a pack file into the data dir's ``packs/`` folder; returns its slug."""
    slug = slug_of(path.name)
    data = path.read_bytes()
    key = pack_blob_key(slug)
    if not services.blobs.exists(key) or services.blobs.get(key) != data:
        services.blobs.put(key, data)
    return slug


def pack_slugs(services: Services) -> list[str]:
    out = []
    for key in services.blobs.list("packs/"):
        name = key.rsplit("/", 1)[-1]
        if name.endswith(PACK_SUFFIX) and key.count("/") == 1:
            out.append(name[: -len(PACK_SUFFIX)])
    return sorted(out)


def sync_packs(services: Services, bot: str) -> list[Source]:
    """Make sure every pack has a source row for ``bot``; apply the bot's product scope.

    An out-of-scope pack is listed as ``disabled`` with ``out_of_scope`` and whatever an
    earlier run indexed from it is withdrawn from every search — never silently skipped.
    A pack that comes back into scope is queued again. Needs the blob store's listing of
    ``packs/`` and the state store; the index only to drop a withdrawn pack's passages at
    once, which is left to the next commit's clean-up when the caller may not write it."""
    state, now = services.state, services.clock.now()
    settings = state.get_bot(bot)
    rows = []
    for slug in pack_slugs(services):
        source_id = pack_source_id(bot, slug)
        source = state.get_source(bot, source_id)
        if source is None:
            source = Source(
                id=source_id,
                bot=bot,
                type="pack",
                name=f"Documentation — {product_title(slug)}",
                visibility="public",
                config={"slug": slug},
                status="waiting",
                created_at=now,
                updated_at=now,
            )
            state.put_source(source)
        allowed = in_scope(slug, settings.products, settings.scope_to_products)
        if not allowed and source.error_code != Code.OUT_OF_SCOPE:
            old = state.withdraw_generation(
                bot, source_id, status="disabled", error_code=Code.OUT_OF_SCOPE,
                error_message="this bot does not declare the product of this pack", checksum=None,
                updated_at=now,
            )
            if old is not None:
                try:
                    drop_orphans(services, only=(bot, source_id))
                except BackendError:
                    # Out of every search already (no live generation). A caller whose index
                    # access is read-only or none (on AWS: the admin API, the scheduler) leaves
                    # the passages to the next commit's orphan clean-up.
                    log.warning("passages of out-of-scope pack %s/%s left for the next clean-up", bot, source_id)
        elif allowed and source.error_code == Code.OUT_OF_SCOPE:
            state.update_source(bot, source_id, status="waiting", error_code=None, error_message=None,
                                updated_at=now)
        current = state.get_source(bot, source_id)
        assert current is not None
        rows.append(current)
    return rows


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
        if source.status == "disabled":
            continue
        if source.type not in REFRESHABLE or awaiting_upload(services, source):
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


#: Types the pipeline can fetch (every source type).
REFRESHABLE = frozenset({"pack", "article", "instruction", "fact", "faq", "website", "file"})
