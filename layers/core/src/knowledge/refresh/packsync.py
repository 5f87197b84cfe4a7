"""Documentation packs in the blob store -> pack sources of each bot, with product scoping;
and a dropped pack -> the refreshes of every bot that uses it.

Both deployments keep packs under ``packs/<slug>.ndjson.gz``: ``kb ingest`` copies them there,
on AWS an S3 drop puts them there. Every bot gets a pack source per pack; the product scope
decides which are enabled.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..errors import BackendError, Code
from ..model import Source, stable_id
from ..ports import Services
from ..sources.base import pack_blob_key
from ..sources.packs import PACK_SUFFIX, product_title, slug_of
from ..sources.scope import in_scope
from .finish import drop_orphans

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


def pack_slug_of_key(key: str) -> str | None:
    """The slug of a dropped pack's object key ``packs/<slug>.ndjson.gz`` (None otherwise)."""
    if not key.startswith("packs/") or key.count("/") != 1 or not key.endswith(PACK_SUFFIX):
        return None
    slug = key[len("packs/") : -len(PACK_SUFFIX)]
    return slug or None


def pack_sources(services: Services, slug: str, bots: Iterable[str]) -> list[Source]:
    """Every enabled pack source using ``slug``, across ``bots``, after syncing each bot's
    pack sources (new packs get a row, product scope applied)."""
    out = []
    for bot in bots:
        for source in sync_packs(services, bot):
            if source.type == "pack" and source.config.get("slug") == slug and source.status != "disabled":
                out.append(source)
    return out


def start_pack_refreshes(services: Services, slug: str, etag: str) -> list[dict[str, Any]]:
    """A pack was dropped: refresh every pack source of every bot that uses it. The pack's
    ETag names the executions, so a duplicate S3 event starts nothing new."""
    return [
        services.require_workflow().start_refresh(source.bot, source.id, reason="pack", token=etag)
        for source in pack_sources(services, slug, services.state.list_bots())
    ]
