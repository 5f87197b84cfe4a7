"""Rules every state store applies and persists in its own way: written once here as pure
functions of what the store read, so the SQLite and DynamoDB adapters cannot drift apart.
The contract suite (``tests/contract``) runs each rule through both stores."""

from __future__ import annotations

from .model import Source
from .schedule import next_refresh


def commit_changes(
    *,
    status: str | None,
    refresh_every: float | None,
    generation: int,
    checksum: str,
    counters: dict[str, int],
    visibility_counts: dict[str, int] | None,
    error_code: str | None,
    now: float,
) -> dict[str, object]:
    """The source fields a commit writes, given the source's current ``status`` and
    ``refresh_every``: the new live generation, checksum and counters; ``ready`` (a source
    disabled while its run finished stays ``disabled``, and unsearched); the next scheduled
    refresh one interval from now for a source on an interval, none otherwise
    (``schedule.next_refresh``); the lease and
    any cancel request cleared."""
    return {
        "live_generation": generation,
        "checksum": checksum,
        "passages": counters.get("passages", 0),
        "documents_processed": counters.get("documents_processed", 0),
        "fragments_processed": counters.get("fragments_processed", 0),
        "documents_failed": counters.get("documents_failed", 0),
        "documents_unchanged": counters.get("documents_unchanged", 0),
        "visibility_counts": dict(visibility_counts or {}),
        "status": "disabled" if status == "disabled" else "ready",
        "error_code": error_code,
        "error_message": None,
        "last_indexed_at": now,
        "next_refresh_at": next_refresh(refresh_every, now),
        "updated_at": now,
        "lease_owner": None,
        "lease_expires_at": None,
        "cancel_requested": False,
    }


def retired_generation(live: int | None, committed: int) -> int | None:
    """The generation a commit of ``committed`` retires: the one that was live, unless it is
    the same one (a commit retried after it already flipped)."""
    return int(live) if live is not None and int(live) != committed else None


def _source_field_names() -> frozenset[str]:
    from dataclasses import fields

    return frozenset(f.name for f in fields(Source))


#: the fields ``update_source`` may change (identity fields never)
UPDATABLE_FIELDS = _source_field_names() - {"bot", "id"}


def check_update(changes: dict[str, object]) -> None:
    """Refuse an ``update_source`` of unknown or identity fields (a programming error)."""
    bad = set(changes) - UPDATABLE_FIELDS
    if bad:
        raise ValueError(f"cannot update fields {sorted(bad)}")
