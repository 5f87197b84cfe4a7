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

``start_reindex`` starts one execution per enabled source: each refresh runs (and fails, and
retries) on its own.
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
    client; ``start_reindex`` needs the services (to list the bot's sources)."""

    def __init__(self, client: Any, state_machine_arn: str, *, services: Any = None,
                 clock: Callable[[], float] = time.time):
        if not state_machine_arn:
            raise ValueError("the refresh state machine ARN is not configured")
        self.client = client
        self.state_machine_arn = state_machine_arn
        self.services = services
        self.clock = clock

    # -- Workflow port --------------------------------------------------------------------

    def start_refresh(self, bot: str, source_id: str, *, force: bool = False, reason: str = "manual",
                      token: str | None = None) -> dict[str, Any]:
        """Start (or find already started) the refresh of one source. ``token`` names what
        caused it; without one, starts within the same second are taken as duplicates."""
        if reason not in REASONS:
            raise ValueError(f"unknown refresh reason {reason!r}")
        if token is None:
            token = str(int(self.clock()))
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

    def start_reindex(self, bot: str, *, force: bool = False, token: str | None = None) -> dict[str, Any]:
        """Start a refresh of every enabled source of the bot (unchanged ones end in a
        checksum skip). Pack sources are synced where packs are read — on every pack drop,
        by ``ingest`` — so this needs nothing but the state store."""
        from ...refresh.reindex import REFRESHABLE

        if self.services is None:
            raise BackendError("the reindex needs the services (state store) to list sources")
        started = duplicates = 0
        token = token or str(int(self.clock()))
        for source in self.services.state.list_sources(bot):
            if source.status == "disabled" or source.type not in REFRESHABLE:
                continue
            job = self.start_refresh(bot, source.id, force=force, reason="reindex", token=token)
            if job["status"] == "duplicate":
                duplicates += 1
            else:
                started += 1
        return {"id": execution_name(bot, "*", "reindex", token), "kind": "reindex", "bot": bot,
                "status": "started", "started": started, "duplicates": duplicates}


def _error_code(exc: Exception) -> str | None:
    """The AWS error code of a botocore ``ClientError`` (None for anything else)."""
    response = getattr(exc, "response", None)
    if isinstance(response, dict):
        code = response.get("Error", {}).get("Code")
        return str(code) if code else Code.INTERNAL
    return None
