"""One error hierarchy. Every error carries a stable ``code``; HTTP mapping lives in
``knowledge.api.http`` only. Messages never contain fetched or extracted text."""

from __future__ import annotations

from typing import Any


class Code:
    """Stable error codes. Source failure codes are stored on a source row."""

    # source failure codes (DESIGN.md §5)
    BLOCKED_ADDRESS = "blocked_address"
    ROBOTS_DENIED = "robots_denied"
    UNSUPPORTED_TYPE = "unsupported_type"
    FILE_TOO_LARGE = "file_too_large"
    EXPANDED_TOO_LARGE = "expanded_too_large"
    MALFORMED_FILE = "malformed_file"
    FETCH_TIMEOUT = "fetch_timeout"
    RATE_LIMITED = "rate_limited"
    EMBEDDING_FAILED = "embedding_failed"
    OUT_OF_SCOPE = "out_of_scope"
    CANCELLED = "cancelled"
    INTERNAL = "internal_error"

    # request codes
    INVALID_INPUT = "invalid_input"
    EMPTY_QUESTION = "empty_question"
    QUESTION_TOO_LONG = "question_too_long"
    INVALID_AUDIENCE = "invalid_audience"
    UNAUTHORIZED = "unauthorized"
    FORBIDDEN = "forbidden"
    NOT_FOUND = "not_found"
    CONFLICT = "conflict"
    LEASE_HELD = "lease_held"
    LEASE_LOST = "lease_lost"
    INVALID_CITATION = "invalid_citation"


SOURCE_FAILURE_CODES = frozenset(
    {
        Code.BLOCKED_ADDRESS,
        Code.ROBOTS_DENIED,
        Code.UNSUPPORTED_TYPE,
        Code.FILE_TOO_LARGE,
        Code.EXPANDED_TOO_LARGE,
        Code.MALFORMED_FILE,
        Code.FETCH_TIMEOUT,
        Code.RATE_LIMITED,
        Code.EMBEDDING_FAILED,
        Code.OUT_OF_SCOPE,
        Code.CANCELLED,
        Code.INTERNAL,
    }
)


class KnowledgeError(Exception):
    """Base error. ``code`` is stable and machine-readable; ``details`` is JSON-safe."""

    default_code = Code.INTERNAL

    def __init__(self, message: str, *, code: str | None = None, details: dict[str, Any] | None = None):
        super().__init__(message)
        self.message = message
        self.code = code or self.default_code
        self.details = details or {}


class InvalidInput(KnowledgeError):
    default_code = Code.INVALID_INPUT


class Unauthorized(KnowledgeError):
    default_code = Code.UNAUTHORIZED


class Forbidden(KnowledgeError):
    default_code = Code.FORBIDDEN


class NotFound(KnowledgeError):
    default_code = Code.NOT_FOUND


class Conflict(KnowledgeError):
    default_code = Code.CONFLICT


class RateLimited(KnowledgeError):
    default_code = Code.RATE_LIMITED

    def __init__(self, message: str, *, retry_after: float = 1.0, code: str | None = None):
        super().__init__(message, code=code, details={"retryAfter": retry_after})
        self.retry_after = retry_after


class InvalidCitation(KnowledgeError):
    default_code = Code.INVALID_CITATION


class SourceFailure(KnowledgeError):
    """A source (or one of its documents) could not be read/extracted/fetched/embedded.

    ``code`` is one of SOURCE_FAILURE_CODES; it is stored on the source or document row.
    """

    def __init__(self, code: str, message: str = "", *, details: dict[str, Any] | None = None):
        if code not in SOURCE_FAILURE_CODES:
            raise ValueError(f"unknown source failure code {code!r}")
        super().__init__(message or code, code=code, details=details)


class BackendError(KnowledgeError):
    """A storage or search backend failed (adapters raise this ``from`` the backend error)."""

    default_code = Code.INTERNAL
