"""Step Functions implementation of the Workflow port (AWS mode), the twin of
``InProcessWorkflow``.

A refresh is one execution of the refresh state machine with the input
``{"botId", "sourceId", "reason", "force"}``. Executions are named deterministically from what
caused them (bot, source and a *token*: a pack's ETag, the due time of a scheduled run, the
second of a manual request), so a duplicate start — an S3 event delivered twice, a tick that
overlaps the previous one, a double click — is harmless: Step Functions answers a start with
the name and input of a running execution with that execution, and refuses a name already
used by a finished one (``ExecutionAlreadyExists``), which is reported as a duplicate here.
Two different names for the same source still never run at once: the execution name is the
lease owner and the second execution finds the lease taken.

A start that finds another execution of the same source still running (an edit while its
refresh runs: the running one is asked to stop and the new one must index the edit) does
not give up at once: the state machine retries taking the lease with a backoff that
outlasts a lease, so the follow-up runs as soon as the first one has let go.

``start_reindex`` does what the embedded reindex does: it syncs the bot's pack sources with
the packs in the bucket (a pack dropped before the bot existed gets its row, the bot's
product scope is applied), then starts one execution per enabled source: each refresh runs
(and fails, and retries) on its own.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Callable
from typing import Any

from ...errors import BackendError, Code, RateLimited

#: Step Functions execution names: 1-80 characters of [A-Za-z0-9_-]
MAX_NAME = 80
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")
REASONS = ("manual", "schedule", "pack", "reindex")


def execution_name(bot: str, source_id: str, reason: str, token: str) -> str:
    """``<reason>-<bot>-<source>-<digest>``: readable in the console, unique per
    (bot, source, reason, token) and at most 80 characters."""
    digest = hashlib.sha256("\x00".join((bot, source_id, reason, token)).encode("utf-8")).hexdigest()[:16]
    readable = _UNSAFE.sub("_", f"{reason}-{bot}-{source_id}")[: MAX_NAME - len(digest) - 1]
    return f"{readable}-{digest}"


class StepFunctionsWorkflow:
    """Starts refresh executions of one state machine through an injected ``stepfunctions``
    client. Which sources a reindex refreshes is a use case (syncing packs, scoping), so the
    composition root injects it as ``plan_reindex``; this adapter only starts executions."""

    def __init__(self, client: Any, state_machine_arn: str, *, services: Any = None,
                 clock: Callable[[], float] = time.time,
                 plan_reindex: Callable[[str], tuple[list[str], list[str]]] | None = None):
        if not state_machine_arn:
            raise ValueError("the refresh state machine ARN is not configured")
        self.client = client
        self.state_machine_arn = state_machine_arn
        self.services = services
        self.clock = clock
        self.plan_reindex = plan_reindex

    # -- Workflow port --------------------------------------------------------------------

    def start_refresh(self, bot: str, source_id: str, *, force: bool = False, reason: str = "manual",
                      token: str | None = None) -> dict[str, Any]:
        """Start (or find already started) the refresh of one source. ``token`` names what
        caused it; without one, the current second and the source's last change name it,
        so a double start of one change is a duplicate but an edit made in the same second
        as the previous start (create, then patch at once) still gets its own execution."""
        if reason not in REASONS:
            raise ValueError(f"unknown refresh reason {reason!r}")
        if token is None:
            token = self._default_token(bot, source_id)
        name = execution_name(bot, source_id, reason, f"{token}|force={force}")
        payload = {"botId": bot, "sourceId": source_id, "reason": reason, "force": bool(force)}
        job: dict[str, Any] = {"id": name, "kind": "refresh", "bot": bot, "sourceId": source_id,
                               "reason": reason, "status": "started"}
        try:
            response = self.client.start_execution(stateMachineArn=self.state_machine_arn, name=name,
                                                   input=json.dumps(payload, separators=(",", ":")))
        except Exception as exc:
            code = _error_code(exc)
            if code == "ExecutionAlreadyExists":
                job["status"] = "duplicate"
                return job
            if code in ("ThrottlingException", "TooManyRequestsException"):
                raise RateLimited("the refresh workflow is throttled; try again shortly", retry_after=5.0) from exc
            if code is None:
                raise
            raise BackendError("cannot start the refresh workflow", details={"reason": code}) from exc
        job["executionArn"] = response.get("executionArn")
        return job

    def cancel_refresh(self, bot: str, source_id: str) -> int:
        """No queue to drop from: an execution already started stops at its next step through
        the source's ``cancel_requested`` flag, which the lifecycle sets."""
        return 0

    def _default_token(self, bot: str, source_id: str) -> str:
        token = str(int(self.clock()))
        if self.services is not None:
            source = self.services.state.get_source(bot, source_id)
            if source is not None:
                token += f"|{source.updated_at!r}"
        return token

    def reindex_targets(self, bot: str) -> tuple[list[str], list[str]]:
        """(the sources a reindex of ``bot`` refreshes, its out-of-scope packs), as the
        composition root's ``plan_reindex`` decides (``refresh.reindex.reindex_targets``)."""
        if self.plan_reindex is None:
            raise BackendError("this workflow was built without a reindex plan")
        return self.plan_reindex(bot)

    def running_executions(self, limit: int) -> int:
        """How many refresh executions run now, counted up to ``limit`` (one request)."""
        listed = self.client.list_executions(stateMachineArn=self.state_machine_arn, statusFilter="RUNNING",
                                             maxResults=max(1, min(limit, 1000)))
        return len(listed.get("executions", []))

    def start_reindex(self, bot: str, *, force: bool = False, token: str | None = None) -> dict[str, Any]:
        """``reindex_targets``, then start a refresh of every one of them at once (unchanged
        ones end in a checksum skip). The nightly run of every bot goes through the bounded
        ``ReindexQueue`` instead."""
        targets, out_of_scope = self.reindex_targets(bot)
        started = duplicates = 0
        token = token or str(int(self.clock()))
        for source_id in targets:
            job = self.start_refresh(bot, source_id, force=force, reason="reindex", token=token)
            if job["status"] == "duplicate":
                duplicates += 1
            else:
                started += 1
        return {"id": execution_name(bot, "*", "reindex", token), "kind": "reindex", "bot": bot,
                "status": "started", "started": started, "duplicates": duplicates, "outOfScope": out_of_scope}


def _error_code(exc: Exception) -> str | None:
    """The AWS error code of a botocore ``ClientError`` (None for anything else)."""
    response = getattr(exc, "response", None)
    if isinstance(response, dict):
        code = response.get("Error", {}).get("Code")
        return str(code) if code else Code.INTERNAL
    return None
