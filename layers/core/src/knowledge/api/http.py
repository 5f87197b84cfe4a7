"""Transport-neutral request/response and the one place errors become HTTP statuses.

API Gateway events and the embedded HTTP server both convert to ``Request`` and back from
``Response``; the route code in ``routes.py`` never sees either transport.
"""

from __future__ import annotations

import json
import logging
import math
from dataclasses import dataclass, field
from typing import Any

from ..errors import (
    Code,
    Conflict,
    Forbidden,
    InvalidCitation,
    InvalidInput,
    KnowledgeError,
    NotFound,
    RateLimited,
    SourceFailure,
    Unauthorized,
)

log = logging.getLogger(__name__)

MAX_BODY_BYTES = 9 * 1024 * 1024  # uploads are capped at 8 MB; a little room for envelopes

#: code -> status where the code alone decides; otherwise the error class does.
STATUS_BY_CODE = {
    Code.FILE_TOO_LARGE: 413,
    Code.UNSUPPORTED_TYPE: 415,
}
STATUS_BY_CLASS: list[tuple[type[KnowledgeError], int]] = [
    (InvalidInput, 400),
    (Unauthorized, 401),
    (Forbidden, 403),
    (NotFound, 404),
    (Conflict, 409),
    (InvalidCitation, 422),
    (SourceFailure, 422),
    (RateLimited, 429),
]


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str] = field(default_factory=dict)  # lower-case names
    query: dict[str, str] = field(default_factory=dict)
    body: bytes = b""

    def header(self, name: str) -> str | None:
        return self.headers.get(name.lower())

    def json(self) -> Any:
        if not self.body:
            return {}
        try:
            return json.loads(self.body)
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
            raise InvalidInput("the body is not valid JSON") from exc


@dataclass
class Response:
    status: int
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)

    def encoded(self) -> bytes:
        if self.body is None:
            return b""
        return json.dumps(self.body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def status_for(exc: KnowledgeError) -> int:
    if exc.code in STATUS_BY_CODE:
        return STATUS_BY_CODE[exc.code]
    for cls, status in STATUS_BY_CLASS:
        if isinstance(exc, cls):
            return status
    return 500


def error_response(exc: Exception) -> Response:
    if isinstance(exc, KnowledgeError):
        status = status_for(exc)
        error: dict[str, Any] = {"code": exc.code, "message": exc.message}
        for key, value in exc.details.items():
            error[key] = value
        headers = {}
        if isinstance(exc, RateLimited):
            headers["Retry-After"] = str(max(1, math.ceil(exc.retry_after)))
        if status >= 500:
            log.error("request failed: %s", exc.code, exc_info=exc)
            error["message"] = "internal error"
        return Response(status, {"error": error}, headers)
    log.error("unhandled error", exc_info=exc)
    return Response(500, {"error": {"code": Code.INTERNAL, "message": "internal error"}})
