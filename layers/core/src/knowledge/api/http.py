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
#: the longest integer a body may hold (Python refuses to parse more than 4300 digits)
MAX_INT_DIGITS = 40
NUMBER_TOO_LARGE = "number_too_large"
INVALID_UNICODE = "invalid_unicode"

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
        """The body as JSON (``{}`` when empty). Refused with a code: text that is not UTF-8
        JSON, NaN and Infinity, an integer longer than ``MAX_INT_DIGITS`` digits or a number
        beyond a float's range (``number_too_large``) and an escaped lone surrogate (``invalid_unicode``): a string
        that cannot be encoded again would fail later, in a log line or the reply."""
        if not self.body:
            return {}
        try:
            value = json.loads(self.body, parse_int=_bounded_int, parse_float=_finite_float,
                               parse_constant=_no_constant)
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
            raise InvalidInput("the body is not valid JSON") from exc
        try:
            _check_strings(value)
        except RecursionError as exc:
            raise InvalidInput("the body is not valid JSON") from exc
        return value


def _bounded_int(digits: str) -> int:
    if len(digits.lstrip("-")) > MAX_INT_DIGITS:
        raise InvalidInput(f"a number in the body has more than {MAX_INT_DIGITS} digits", code=NUMBER_TOO_LARGE)
    return int(digits)


def _finite_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):  # 1e999: out of range of a float, not a number any field takes
        raise InvalidInput("a number in the body is out of range", code=NUMBER_TOO_LARGE)
    return value


def _no_constant(name: str) -> Any:
    raise InvalidInput(f"{name} is not a JSON number")


def _check_strings(value: Any) -> None:
    """Refuse a string (or object key) holding a lone surrogate anywhere in ``value``."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            encodable(item)
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, dict):
            for key, child in item.items():
                encodable(key)
                stack.append(child)


def encodable(text: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInput("the request holds an unpaired UTF-16 surrogate (\\ud800-\\udfff)",
                           code=INVALID_UNICODE) from None


@dataclass
class Response:
    status: int
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)

    def encoded(self) -> bytes:
        if self.body is None:
            return b""
        text = json.dumps(self.body, ensure_ascii=False, separators=(",", ":"))
        try:
            return text.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate got this far: escape it rather than fail
            return json.dumps(self.body, ensure_ascii=True, separators=(",", ":")).encode("ascii")


def _printable(text: str) -> str:
    """A message that can always be encoded: a lone surrogate from the input is escaped."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


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
        error: dict[str, Any] = {"code": exc.code, "message": _printable(exc.message)}
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
