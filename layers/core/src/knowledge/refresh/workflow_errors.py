"""The errors a refresh workflow sees (DESIGN.md §6): the exception a Lambda task raises for
a project error (``RateLimited`` is retried by the state machine, ``RefreshError`` is caught
and runs ``fail``), the error object the Catch hands ``fail``, and the (code, message) a
caught error is recorded with.
"""

from __future__ import annotations

import json
from typing import Any

from ..errors import Code, KnowledgeError, RateLimited


class RefreshError(Exception):
    """A stage failed with a stored error code: ``"<code>: <message>"`` (messages never hold
    fetched text). The state machine catches it and runs ``fail``."""

    def __init__(self, code: str, message: str):
        super().__init__(f"{code}: {message}")
        self.code = code


def workflow_error(exc: KnowledgeError) -> Exception:
    """The exception a Lambda task raises for a project error. Step Functions matches errors by
    their class name: ``RateLimited`` (the project's own class, whatever raised it) is retried
    with backoff, ``RefreshError`` is caught and runs ``fail``."""
    status = exc.details.get("status") if isinstance(exc.details, dict) else None
    if isinstance(exc, RateLimited):
        return exc
    if exc.code == Code.RATE_LIMITED or status == 429:
        return RateLimited(exc.message, code=Code.RATE_LIMITED)
    return RefreshError(exc.code, exc.message)


def caught_error(exc: BaseException) -> dict[str, str]:
    """What the state machine's Catch hands ``fail`` for an exception a task raised: the
    task's own conversion (``workflow_error`` for a project error), then Step Functions' shape
    of a Lambda error, ``{"Error": <class name>, "Cause": <the Lambda error object as JSON>}``.
    The embedded runner records its failures through the same ``fail`` with this."""
    raised = workflow_error(exc) if isinstance(exc, KnowledgeError) else exc
    name = type(raised).__name__
    return {"Error": name, "Cause": json.dumps({"errorMessage": str(raised), "errorType": name})}


KNOWN_CODES = frozenset(v for k, v in vars(Code).items() if k.isupper() and isinstance(v, str))


def classify_failure(error: Any) -> tuple[str, str]:
    """(code, message) of a caught workflow error ``{"Error", "Cause"}``. A Lambda error's
    Cause is its JSON error object; its message starts with the code when a stage raised it."""
    if not isinstance(error, dict):
        return Code.INTERNAL, "refresh failed unexpectedly"
    name = str(error.get("Error") or "")
    cause = error.get("Cause")
    message = ""
    if isinstance(cause, str):
        try:
            parsed = json.loads(cause)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict):
            message = str(parsed.get("errorMessage") or "")
    if name == RateLimited.__name__:
        return Code.RATE_LIMITED, "the embedder or search backend kept throttling the refresh"
    code, _, text = message.partition(": ")
    if name == RefreshError.__name__ and code in KNOWN_CODES:
        return code, (text or code)[:500]
    if name == "States.Timeout":
        return Code.INTERNAL, "a refresh step timed out"
    return Code.INTERNAL, f"refresh failed unexpectedly ({name[:80] or 'unknown error'})"
