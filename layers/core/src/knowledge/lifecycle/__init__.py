"""The life of a source, from created to deleted (reference 003, "Indexing and statuses",
"Deleting, disabling, and retention").

Use cases only: each takes ``Services`` and plain values, changes state through the
ports and asks the workflow to run refreshes. The HTTP routes (both deployments) and the
CLI call these; none of them knows about a transport.

Statuses: ``waiting`` (created or changed, not processed yet) -> ``indexing`` (a worker
holds the lease) -> ``ready`` | ``failed``; ``disabled`` is kept but excluded from every
search; ``needs_refresh`` is set by schedules.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass
from typing import Any

from ..api.models import AgentPut, parse
from ..errors import BackendError, Code, Conflict, InvalidInput, NotFound, SourceFailure
from ..model import Agent, Source, valid_bot_id
from ..ports import Services
from ..refresh.finish import drop_orphans
from ..refresh.packsync import pack_source_id
from ..schedule import REFRESHABLE, next_refresh, runnable
from ..sources.base import pack_blob_key, pages_prefix, upload_blob_key
from ..sources.files import awaiting_upload
from .validation import SourceSpec, parse_create, parse_patch

log = logging.getLogger(__name__)

#: Upload cap for file sources (reference 003, "File uploads").
MAX_UPLOAD_BYTES = 8 * 1024 * 1024

# conflict / request codes used by the lifecycle (HTTP 409 unless noted)
SOURCE_IN_USE = "source_in_use"
SOURCE_DISABLED = "source_disabled"
ALREADY_INDEXING = "already_indexing"
NOTHING_TO_CANCEL = "nothing_to_cancel"
ALREADY_EXISTS = "already_exists"
UNKNOWN_PACK = "unknown_pack"  # 400
NOT_A_FILE_SOURCE = "not_a_file_source"  # 409
EMPTY_UPLOAD = "empty_upload"  # 400
INVALID_AGENT = "invalid_agent"  # 400
INVALID_STATUS = "invalid_status"  # 400
TOO_MANY_SOURCES = "too_many_sources"  # 400
UNKNOWN_SOURCE = "unknown_source"  # 400

AGENT_STATUSES = ("active", "paused")


@dataclass(frozen=True)
class Queued:
    """What a lifecycle call did to the queue (the reply shows it)."""

    source: Source
    queued: bool


# -- helpers ----------------------------------------------------------------------------


def get_source(services: Services, bot: str, source_id: str) -> Source:
    source = services.state.get_source(bot, source_id)
    if source is None:
        raise NotFound(f"source {source_id} not found")
    return source


def is_indexing(services: Services, source: Source) -> bool:
    """A worker holds a live lease on the source."""
    return source.lease_owner is not None and (source.lease_expires_at or 0.0) >= services.clock.now()


def _pending_status(source: Source) -> str:
    """The status a created, changed or enabled source takes: ``waiting`` for its refresh, or
    ``ready`` at once when there is nothing to index (live data)."""
    return "waiting" if runnable(source) else "ready"


def _queue(services: Services, source: Source, *, force: bool = False, explicit: bool = False) -> bool:
    """Ask the workflow to refresh ``source``. A file source with nothing uploaded yet waits
    for its upload (which queues it) unless the refresh was asked for explicitly, in which
    case it runs and fails with ``malformed_file`` ("no file uploaded")."""
    if not runnable(source) or services.workflow is None:
        return False
    if not explicit and awaiting_upload(services, source):
        return False
    services.workflow.start_refresh(source.bot, source.id, force=force)
    return True


def _unqueue(services: Services, bot: str, source_id: str) -> int:
    return services.workflow.cancel_refresh(bot, source_id) if services.workflow is not None else 0


def _reload(services: Services, bot: str, source_id: str) -> Source:
    return get_source(services, bot, source_id)


# -- create / patch ---------------------------------------------------------------------


def create_source(services: Services, bot: str, body: Any) -> Queued:
    spec = parse_create(body, services.outbound)
    now = services.clock.now()
    if spec.type == "pack":
        slug = spec.config["slug"]
        if not services.blobs.exists(pack_blob_key(slug)):
            raise InvalidInput(f"no pack {slug!r} has been dropped in packs/", code=UNKNOWN_PACK)
        # one row per (bot, pack): the same id the pack sync uses, so the two never duplicate
        source_id = pack_source_id(bot, slug)
        if services.state.get_source(bot, source_id) is not None:
            raise Conflict(f"pack {slug!r} already has a source ({source_id})", code=ALREADY_EXISTS,
                           details={"sourceId": source_id})
    else:
        source_id = uuid.uuid4().hex[:16]
    source = Source(
        id=source_id,
        bot=bot,
        type=spec.type,
        name=spec.name,
        visibility=spec.visibility,
        priority=spec.priority,
        config=spec.config,
        status="ready" if spec.type not in REFRESHABLE else "waiting",
        refresh_every=spec.refresh_every,
        created_at=now,
        updated_at=now,
    )
    services.state.put_source(source)
    queued = _queue(services, source)
    return Queued(_reload(services, bot, source_id), queued)


def _spec_of(source: Source) -> SourceSpec:
    return SourceSpec(source.type, source.name, source.visibility, source.priority, dict(source.config),
                      source.refresh_every)


def _fetched_config(config: dict[str, Any]) -> dict[str, Any]:
    """The part of a config that decides what is fetched (not a website's interval)."""
    return {k: v for k, v in config.items() if k != "refreshEverySeconds"}


def patch_source(services: Services, bot: str, source_id: str, body: Any) -> Queued:
    """Apply the fields given. Name and priority apply at once (ranking reads priority
    from the source row); a new config or visibility changes what is indexed, so the
    source goes back to ``waiting`` and is queued (unless it is disabled). A website's
    ``refreshEverySeconds`` alone only moves its next scheduled refresh."""
    source = get_source(services, bot, source_id)
    spec = parse_patch(body, _spec_of(source), services.outbound)
    changes: dict[str, object] = {}
    if spec.name != source.name:
        changes["name"] = spec.name
    if spec.priority != source.priority:
        changes["priority"] = spec.priority
    content_changed = (_fetched_config(spec.config) != _fetched_config(source.config)
                       or spec.visibility != source.visibility)
    if spec.config != source.config:
        changes["config"] = spec.config
    if spec.refresh_every != source.refresh_every:
        # a website's interval alone changes when it is fetched next, not what it holds
        changes["refresh_every"] = spec.refresh_every
        if not content_changed and source.status in ("ready", "failed") and source.last_indexed_at is not None:
            changes["next_refresh_at"] = next_refresh(spec.refresh_every, source.last_indexed_at)
    if content_changed:
        changes["visibility"] = spec.visibility
        if spec.type == "pack" and spec.config["slug"] != source.config.get("slug"):
            raise InvalidInput("the pack of a pack source cannot change; create a new source",
                               code="invalid_config")
    if not changes:
        return Queued(source, False)
    changes["updated_at"] = services.clock.now()
    rerun = content_changed and source.status != "disabled"
    if rerun and not is_indexing(services, source):
        changes.update(status=_pending_status(source), error_code=None, error_message=None)
    services.state.update_source(bot, source_id, **changes)
    queued = False
    if rerun:
        if is_indexing(services, source):
            # the running job reads the old config; stop it and run again with the new one
            services.state.update_source(bot, source_id, cancel_requested=True)
        queued = _queue(services, source)
    return Queued(_reload(services, bot, source_id), queued)


# -- refresh / cancel -------------------------------------------------------------------


def refresh_source(services: Services, bot: str, source_id: str, *, force: bool = False) -> Queued:
    source = get_source(services, bot, source_id)
    if source.status == "disabled":
        raise Conflict("the source is disabled; enable it to index it again", code=SOURCE_DISABLED)
    if is_indexing(services, source):
        raise Conflict("the source is being indexed right now", code=ALREADY_INDEXING)
    if not runnable(source):  # live data is read at answer time: there is nothing to refresh
        return Queued(source, False)
    services.state.update_source(bot, source_id, status="waiting", updated_at=services.clock.now())
    queued = _queue(services, source, force=force, explicit=True)
    return Queued(_reload(services, bot, source_id), queued)


def cancel_source(services: Services, bot: str, source_id: str) -> Queued:
    """Stop the current run (the worker checks between documents and write batches) or
    drop the queued one. The previous live generation keeps answering either way."""
    source = get_source(services, bot, source_id)
    dropped = _unqueue(services, bot, source_id)
    if is_indexing(services, source):
        services.state.update_source(bot, source_id, cancel_requested=True)
        return Queued(_reload(services, bot, source_id), False)
    if dropped or source.status in ("waiting", "needs_refresh", "indexing"):
        # not running (yet), or its worker died: record the cancellation so the scheduler
        # does not pick it up again, and free what a dead worker left behind
        if source.lease_owner is not None:
            services.state.release_lease(bot, source_id, source.lease_owner)
            drop_orphans(services, only=(bot, source_id))
        services.state.update_source(bot, source_id, status="failed", error_code=Code.CANCELLED,
                                     error_message="cancelled by request", updated_at=services.clock.now())
        return Queued(_reload(services, bot, source_id), False)
    raise Conflict("nothing is queued or running for this source", code=NOTHING_TO_CANCEL)


# -- disable / enable -------------------------------------------------------------------


def disable_source(services: Services, bot: str, source_id: str) -> Source:
    """Out of every search at once: ``live_sources`` leaves disabled sources out, and that
    list is what every query filters on. The live generation is kept, so enabling an
    unchanged source is a checksum skip, not a rebuild."""
    source = get_source(services, bot, source_id)
    if source.status == "disabled":
        return source
    _unqueue(services, bot, source_id)
    services.state.update_source(bot, source_id, status="disabled", cancel_requested=is_indexing(services, source),
                                 updated_at=services.clock.now())
    return _reload(services, bot, source_id)


def enable_source(services: Services, bot: str, source_id: str) -> Queued:
    source = get_source(services, bot, source_id)
    if source.status != "disabled":
        return Queued(source, False)
    if source.error_code == Code.OUT_OF_SCOPE:
        raise Conflict("this bot does not run the product of this pack; change the bot's products first",
                       code=Code.OUT_OF_SCOPE)
    services.state.update_source(bot, source_id, status=_pending_status(source), error_code=None,
                                 error_message=None, updated_at=services.clock.now())
    queued = _queue(services, source)
    return Queued(_reload(services, bot, source_id), queued)


# -- delete -----------------------------------------------------------------------------


def agents_selecting(services: Services, bot: str, source_id: str) -> list[str]:
    return [a.id for a in services.state.list_agents(bot) if a.status == "active" and source_id in a.source_ids]


def delete_source(services: Services, bot: str, source_id: str) -> None:
    """Remove the source, its documents and its passages. Refused (409) while an active
    agent selects it: deselect it or pause the agent first."""
    source = get_source(services, bot, source_id)
    users = agents_selecting(services, bot, source_id)
    if users:
        raise Conflict(
            "an active agent selects this source; deselect it or pause the agent first",
            code=SOURCE_IN_USE,
            details={"agents": users[:100]},
        )
    _unqueue(services, bot, source_id)
    # the store retires every generation of the source; the index drops them right after.
    # A worker still running sees the source gone at its next checkpoint and drops its own.
    services.state.delete_source(bot, source_id)
    try:
        drop_orphans(services, only=(bot, source_id))
    except BackendError:
        # The source is gone from every search already (no live generation). A caller whose
        # index role is read-only (the admin Lambda) leaves the passages to the next commit's
        # orphan clean-up, which runs with the ingest role.
        log.warning("passages of deleted source %s/%s left for the next clean-up", bot, source_id)
    if source.type == "file":
        services.blobs.delete(upload_blob_key(bot, source_id))
    if source.type == "website":
        _forget_kept_pages(services, bot, source_id)
    if not runnable(source):  # live data: its tables go with it
        services.state.delete_live_tables(bot, source_id)


def _forget_kept_pages(services: Services, bot: str, source_id: str) -> None:
    """The pages a website source kept for conditional re-fetch go with it. A caller whose
    role may not touch the staging area (the admin Lambda) leaves them to its expiry."""
    try:
        for key in services.blobs.list(pages_prefix(bot, source_id)):
            services.blobs.delete(key)
    except BackendError:
        log.warning("kept pages of deleted source %s/%s left to the staging expiry", bot, source_id)


# -- uploads ----------------------------------------------------------------------------


def upload_file(services: Services, bot: str, source_id: str, data: bytes) -> Queued:
    source = get_source(services, bot, source_id)
    if source.type != "file":
        raise Conflict("only file sources take uploads", code=NOT_A_FILE_SOURCE)
    if len(data) > MAX_UPLOAD_BYTES:
        raise SourceFailure(Code.FILE_TOO_LARGE, f"the file is larger than {MAX_UPLOAD_BYTES} bytes")
    if not data:
        raise InvalidInput("the upload is empty", code=EMPTY_UPLOAD)
    services.blobs.put(upload_blob_key(bot, source_id), data)
    changes: dict[str, object] = {"updated_at": services.clock.now()}
    indexing = source.status != "disabled" and is_indexing(services, source)
    if source.status != "disabled" and not indexing:
        changes.update(status="waiting", error_code=None, error_message=None)
    services.state.update_source(bot, source_id, **changes)
    if indexing:
        # the running job may have read the previous file: stop it and run again, as an edit does
        services.state.update_source(bot, source_id, cancel_requested=True)
    queued = source.status != "disabled" and _queue(services, source)
    return Queued(_reload(services, bot, source_id), queued)


# -- agents -----------------------------------------------------------------------------


def get_agent(services: Services, bot: str, agent_id: str) -> Agent:
    agent = services.state.get_agent(bot, agent_id)
    if agent is None:
        raise NotFound(f"agent {agent_id} not found")
    return agent


def put_agent(services: Services, bot: str, agent_id: str, body: Any) -> Agent:
    if not valid_bot_id(agent_id):
        raise InvalidInput("agent ids are 1-64 letters, digits, '.', '_' or '-'", code=INVALID_AGENT)
    put = body if isinstance(body, AgentPut) else parse(AgentPut, body)
    status = put.status
    source_ids = list(dict.fromkeys(put.sourceIds or []))
    known = {s.id for s in services.state.list_sources(bot)}
    missing = [s for s in source_ids if s not in known]
    if missing:
        raise InvalidInput("unknown source id(s)", code=UNKNOWN_SOURCE, details={"unknown": missing[:100]})
    agent = Agent(id=agent_id, bot=bot, status=status, source_ids=source_ids)
    services.state.put_agent(agent)
    return agent
