"""Validation of source bodies (``POST sources`` / ``PATCH sources/{id}``).

Pure functions: a JSON body in, a ``SourceSpec`` out, or ``InvalidInput`` with one of the
stable codes below. Nothing here touches storage, so the same rules hold in every
deployment and the unit tests need no fixtures.
"""

from __future__ import annotations

import ipaddress
import json
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from ..errors import InvalidInput
from ..model import SOURCE_TYPES, VISIBILITIES
from ..sources.packs import valid_slug

# -- stable error codes (HTTP 400) --------------------------------------------------------
INVALID_BODY = "invalid_input"
UNKNOWN_FIELD = "unknown_field"
INVALID_TYPE = "invalid_type"
INVALID_NAME = "invalid_name"
INVALID_VISIBILITY = "invalid_visibility"
INVALID_PRIORITY = "invalid_priority"
INVALID_CONFIG = "invalid_config"
CONFIG_TOO_LARGE = "config_too_large"
INVALID_ORIGIN = "invalid_origin"
INVALID_START_URL = "invalid_start_url"
INVALID_REFRESH_INTERVAL = "invalid_refresh_interval"
INVALID_CONTENT_TYPE = "invalid_content_type"

# -- limits (reference 003, "Source types", "Website sources") ----------------------------
MAX_NAME_CHARS = 120
MAX_CONFIG_BYTES = 64 * 1024
MIN_PRIORITY, MAX_PRIORITY = -100, 100
MAX_ORIGINS = 20
MAX_START_URLS = 100
MAX_URL_CHARS = 2048
#: website include/exclude: patterns per list, characters per pattern
MAX_PATH_PATTERNS = 50
MAX_PATTERN_CHARS = 200
MIN_REFRESH_SECONDS = 60
MAX_REFRESH_SECONDS = 366 * 24 * 3600
MAX_FACT_KEY_CHARS = 200
MAX_FILENAME_CHARS = 255

#: Types whose passages may never be public (reference 003, "Visibility and priority").
NEVER_PUBLIC = frozenset({"file", "instruction", "fact"})
#: Article state -> the visibility its passages get (drafts produce nothing searchable).
ARTICLE_STATES = {"published": "public", "internal": "agent", "draft": "agent"}
#: Upload types accepted for file sources.
FILE_CONTENT_TYPES = frozenset(
    {
        "application/pdf",
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        "application/vnd.openxmlformats-officedocument.presentationml.presentation",
        "text/plain",
        "text/markdown",
        "text/html",
        "application/xhtml+xml",
    }
)

TOP_LEVEL_FIELDS = frozenset({"type", "name", "visibility", "priority", "config", "refreshEverySeconds"})

#: config keys per type: (required, optional)
CONFIG_KEYS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "article": (frozenset({"body"}), frozenset({"title", "state"})),
    "instruction": (frozenset({"text"}), frozenset()),
    "fact": (frozenset({"key", "value"}), frozenset()),
    "faq": (frozenset({"entries"}), frozenset()),
    "website": (frozenset({"origins", "startUrls"}), frozenset({"refreshEverySeconds", "include", "exclude"})),
    "file": (frozenset({"filename", "contentType"}), frozenset()),
    "pack": (frozenset({"slug"}), frozenset()),
}

_HOST_LABEL = re.compile(r"^(?!-)[a-z0-9-]{1,63}(?<!-)$")


def _bad(code: str, message: str, **details: Any) -> InvalidInput:
    return InvalidInput(message, code=code, details=details or None)


@dataclass
class SourceSpec:
    """A validated source definition (what is stored on the source row)."""

    type: str
    name: str
    visibility: str
    priority: int
    config: dict[str, Any] = field(default_factory=dict)
    refresh_every: int | None = None


# -- entry points -----------------------------------------------------------------------


def parse_create(body: Any) -> SourceSpec:
    """Validate a ``POST sources`` body."""
    data = _object(body)
    kind = data.get("type")
    if not isinstance(kind, str) or kind not in SOURCE_TYPES:
        raise _bad(INVALID_TYPE, f"type must be one of {', '.join(SOURCE_TYPES)}")
    if "name" not in data:
        raise _bad(INVALID_NAME, "name is required")
    if "config" not in data:
        raise _bad(INVALID_CONFIG, "config is required")
    return _spec(kind, data, current=None)


def parse_patch(body: Any, current: SourceSpec) -> SourceSpec:
    """Validate a ``PATCH sources/{id}`` body against the stored definition. Fields left
    out keep their value; ``config`` given is the whole new config (not merged)."""
    data = _object(body)
    if "type" in data and data["type"] != current.type:
        raise _bad(INVALID_TYPE, "the type of a source cannot change; create a new source")
    return _spec(current.type, data, current=current)


# -- pieces -----------------------------------------------------------------------------


def _object(body: Any) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise _bad(INVALID_BODY, "the body must be a JSON object")
    unknown = sorted(k for k in body if k not in TOP_LEVEL_FIELDS)
    if unknown:
        raise _bad(UNKNOWN_FIELD, f"unknown field(s): {', '.join(unknown)[:200]}", fields=unknown[:20])
    return body


def _spec(kind: str, data: dict[str, Any], current: SourceSpec | None) -> SourceSpec:
    name = validate_name(data["name"]) if "name" in data else _need(current).name
    priority = validate_priority(data["priority"]) if "priority" in data else (current.priority if current else 0)
    if "config" in data:
        config = data["config"]
        if not isinstance(config, dict):
            raise _bad(INVALID_CONFIG, "config must be a JSON object")
        config = dict(config)
    else:
        config = dict(_need(current).config)
    if "refreshEverySeconds" in data:
        # accepted at the top level too (that is where a source shows it); lives in config
        config["refreshEverySeconds"] = data["refreshEverySeconds"]
    check_config_size(config)
    config, refresh_every = validate_config(kind, config)
    if "visibility" in data:
        visibility = validate_visibility(kind, data["visibility"], config)
    elif current is not None and kind != "article":
        visibility = current.visibility
    else:
        visibility = default_visibility(kind, config)
    return SourceSpec(kind, name, visibility, priority, config, refresh_every)


def _need(current: SourceSpec | None) -> SourceSpec:
    assert current is not None  # parse_create checks required fields first
    return current


def validate_name(value: Any) -> str:
    if not isinstance(value, str):
        raise _bad(INVALID_NAME, "name must be a string")
    name = value.strip()
    if not name:
        raise _bad(INVALID_NAME, "name must not be empty")
    if len(name) > MAX_NAME_CHARS:
        raise _bad(INVALID_NAME, f"name is longer than {MAX_NAME_CHARS} characters")
    if any(ord(c) < 32 for c in name):
        raise _bad(INVALID_NAME, "name must not contain control characters")
    return name


def validate_priority(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _bad(INVALID_PRIORITY, "priority must be an integer")
    if not MIN_PRIORITY <= value <= MAX_PRIORITY:
        raise _bad(INVALID_PRIORITY, f"priority must be between {MIN_PRIORITY} and {MAX_PRIORITY}")
    return value


def default_visibility(kind: str, config: dict[str, Any]) -> str:
    if kind == "article":
        return ARTICLE_STATES[str(config.get("state", "draft"))]
    return "public" if kind == "pack" else "agent"


def validate_visibility(kind: str, value: Any, config: dict[str, Any]) -> str:
    if not isinstance(value, str) or value not in VISIBILITIES:
        raise _bad(INVALID_VISIBILITY, f"visibility must be one of {', '.join(VISIBILITIES)}")
    if kind in NEVER_PUBLIC and value == "public":
        raise _bad(INVALID_VISIBILITY, f"a {kind} source can never be public")
    if kind == "article":
        # an article's audience follows its state; a different visibility would be a lie
        expected = default_visibility(kind, config)
        if value != expected:
            raise _bad(INVALID_VISIBILITY,
                       f"an article's visibility follows its state ({config.get('state', 'draft')} -> {expected})")
    return value


def check_config_size(config: dict[str, Any]) -> None:
    try:
        size = len(json.dumps(config, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))
    except (TypeError, ValueError) as exc:  # e.g. NaN is accepted by json.loads but not allowed
        raise _bad(INVALID_CONFIG, "config is not serialisable JSON") from exc
    if size > MAX_CONFIG_BYTES:
        raise _bad(CONFIG_TOO_LARGE, f"config is {size} bytes; the limit is {MAX_CONFIG_BYTES}")


def validate_config(kind: str, config: dict[str, Any]) -> tuple[dict[str, Any], int | None]:
    """Check ``config`` for ``kind``; returns the normalised config and the refresh interval."""
    if "refreshEverySeconds" in config and kind != "website":
        raise _bad(INVALID_REFRESH_INTERVAL, "refreshEverySeconds applies to website sources only")
    required, optional = CONFIG_KEYS[kind]
    unknown = sorted(k for k in config if k not in required | optional)
    if unknown:
        raise _bad(INVALID_CONFIG, f"unknown config field(s) for {kind}: {', '.join(unknown)[:200]}",
                   fields=unknown[:20])
    missing = sorted(required - set(config))
    if missing:
        raise _bad(INVALID_CONFIG, f"{kind} config needs {', '.join(missing)}", fields=missing)
    checker = _CHECKERS[kind]
    return checker(config)


def _string(config: dict[str, Any], key: str, *, allow_empty: bool = True, limit: int | None = None) -> str:
    value = config.get(key)
    if not isinstance(value, str):
        raise _bad(INVALID_CONFIG, f"config.{key} must be a string")
    if not allow_empty and not value.strip():
        raise _bad(INVALID_CONFIG, f"config.{key} must not be empty")
    if limit is not None and len(value) > limit:
        raise _bad(INVALID_CONFIG, f"config.{key} is longer than {limit} characters")
    return value


def _article(config: dict[str, Any]) -> tuple[dict[str, Any], int | None]:
    out: dict[str, Any] = {"body": _string(config, "body")}
    if "title" in config:
        out["title"] = _string(config, "title", limit=500)
    state = config.get("state", "draft")
    if state not in ARTICLE_STATES:
        raise _bad(INVALID_CONFIG, f"config.state must be one of {', '.join(ARTICLE_STATES)}")
    out["state"] = state
    return out, None


def _instruction(config: dict[str, Any]) -> tuple[dict[str, Any], int | None]:
    return {"text": _string(config, "text", allow_empty=False)}, None


def _fact(config: dict[str, Any]) -> tuple[dict[str, Any], int | None]:
    key = _string(config, "key", allow_empty=False, limit=MAX_FACT_KEY_CHARS).strip()
    if any(ord(c) < 32 for c in key):
        raise _bad(INVALID_CONFIG, "config.key must not contain control characters")
    value = config.get("value")
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise _bad(INVALID_CONFIG, "config.value must be a string or a number")
    text = value if isinstance(value, str) else json.dumps(value)
    if not text.strip():
        raise _bad(INVALID_CONFIG, "config.value must not be empty")
    return {"key": key, "value": text}, None


def _faq(config: dict[str, Any]) -> tuple[dict[str, Any], int | None]:
    entries = config.get("entries")
    if not isinstance(entries, list) or not entries:
        raise _bad(INVALID_CONFIG, "config.entries must be a non-empty list")
    out = []
    for number, entry in enumerate(entries, start=1):
        if not isinstance(entry, dict) or set(entry) != {"question", "answer"}:
            raise _bad(INVALID_CONFIG, f"entry {number} must be {{question, answer}}", entry=number)
        question, answer = entry["question"], entry["answer"]
        if not isinstance(question, str) or not isinstance(answer, str) or not question.strip() or not answer.strip():
            raise _bad(INVALID_CONFIG, f"entry {number} needs a non-empty question and answer", entry=number)
        out.append({"question": question, "answer": answer})
    return {"entries": out}, None


def _website(config: dict[str, Any]) -> tuple[dict[str, Any], int | None]:
    raw_origins = config.get("origins")
    if not isinstance(raw_origins, list) or not 1 <= len(raw_origins) <= MAX_ORIGINS:
        raise _bad(INVALID_ORIGIN, f"origins must be a list of 1 to {MAX_ORIGINS} https://host addresses")
    origins = list(dict.fromkeys(normalize_origin(o) for o in raw_origins))
    raw_urls = config.get("startUrls")
    if not isinstance(raw_urls, list) or not 1 <= len(raw_urls) <= MAX_START_URLS:
        raise _bad(INVALID_START_URL, f"startUrls must be a list of 1 to {MAX_START_URLS} URLs")
    urls = list(dict.fromkeys(validate_start_url(u, origins) for u in raw_urls))
    out: dict[str, Any] = {"origins": origins, "startUrls": urls}
    for key in ("include", "exclude"):
        if config.get(key) is not None:
            out[key] = validate_path_patterns(key, config[key])
    refresh: int | None = None
    if "refreshEverySeconds" in config and config["refreshEverySeconds"] is not None:
        refresh = validate_refresh_interval(config["refreshEverySeconds"])
        out["refreshEverySeconds"] = refresh
    return out, refresh


def _file(config: dict[str, Any]) -> tuple[dict[str, Any], int | None]:
    filename = _string(config, "filename", allow_empty=False, limit=MAX_FILENAME_CHARS).strip()
    if "/" in filename or "\\" in filename or any(ord(c) < 32 for c in filename) or filename in (".", ".."):
        raise _bad(INVALID_CONFIG, "config.filename must be a bare file name")
    content_type = config.get("contentType")
    if not isinstance(content_type, str):
        raise _bad(INVALID_CONTENT_TYPE, "config.contentType must be a string")
    normalized = content_type.split(";", 1)[0].strip().lower()
    if normalized not in FILE_CONTENT_TYPES:
        raise _bad(INVALID_CONTENT_TYPE,
                   "contentType must be PDF, DOCX, XLSX, PPTX, text/plain, text/markdown, text/html or XHTML")
    return {"filename": filename, "contentType": normalized}, None


def _pack(config: dict[str, Any]) -> tuple[dict[str, Any], int | None]:
    slug = config.get("slug")
    if not isinstance(slug, str) or not valid_slug(slug):
        raise _bad(INVALID_CONFIG, "config.slug must be a pack slug (lower-case letters, digits, . _ -)")
    return {"slug": slug}, None


_CHECKERS = {
    "article": _article,
    "instruction": _instruction,
    "fact": _fact,
    "faq": _faq,
    "website": _website,
    "file": _file,
    "pack": _pack,
}


# -- websites ---------------------------------------------------------------------------


def validate_path_patterns(key: str, value: Any) -> list[str]:
    """``include``/``exclude``: at most 50 URL path patterns of at most 200 characters,
    each starting with ``/`` (``*`` any run of characters, a final ``$`` the end)."""
    if not isinstance(value, list) or len(value) > MAX_PATH_PATTERNS:
        raise _bad(INVALID_CONFIG, f"config.{key} must be a list of at most {MAX_PATH_PATTERNS} path patterns",
                   field=key)
    for number, pattern in enumerate(value):
        problem = _pattern_error(pattern)
        if problem is not None:
            raise _bad(INVALID_CONFIG, f"config.{key}[{number}] {problem}", field=key, entry=number)
    return list(dict.fromkeys(value))


def _pattern_error(pattern: object) -> str | None:
    # kept here rather than imported from the crawler, which loads bs4 and Protego
    if not isinstance(pattern, str):
        return "must be a string"
    if not pattern.startswith("/"):
        return "must start with /"
    if len(pattern) > MAX_PATTERN_CHARS:
        return f"is longer than {MAX_PATTERN_CHARS} characters"
    if any(c.isspace() or ord(c) < 32 or ord(c) == 127 for c in pattern) or "#" in pattern:
        return "must not contain spaces, control characters or #"
    return None


def _host(hostname: str) -> str | None:
    """A lower-case ASCII host name or IP literal, or None when it is not one."""
    host = hostname.lower().rstrip(".") if hostname else ""
    if not host or len(host) > 253:
        return None
    if host.startswith("[") or ":" in host:
        try:
            ipaddress.IPv6Address(host.strip("[]"))
        except ValueError:
            return None
        return f"[{host.strip('[]')}]"
    if not host.isascii():
        try:
            host = host.encode("idna").decode("ascii")
        except UnicodeError:
            return None
    labels = host.split(".")
    if not all(_HOST_LABEL.match(label) for label in labels):
        return None
    return host


def _split(url: str, code: str, what: str) -> tuple[str, str, Any]:
    if not isinstance(url, str) or not url.strip() or len(url) > MAX_URL_CHARS:
        raise _bad(code, f"{what} must be a non-empty string of at most {MAX_URL_CHARS} characters")
    if any(c.isspace() or ord(c) < 32 for c in url.strip()):
        raise _bad(code, f"{what} must not contain spaces or control characters")
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError as exc:
        raise _bad(code, f"{what} is not a valid URL") from exc
    scheme = parts.scheme.lower()
    if scheme == "http":
        raise _bad(code, f"{what} must use https; http addresses are refused")
    if scheme != "https":
        raise _bad(code, f"{what} must be an https:// address")
    if parts.username is not None or parts.password is not None or "@" in parts.netloc:
        raise _bad(code, f"{what} must not carry user information")
    host = _host(parts.hostname or "")
    if host is None:
        raise _bad(code, f"{what} has no valid host")
    origin = f"https://{host}" if port in (None, 443) else f"https://{host}:{port}"
    return origin, host, parts


def normalize_origin(value: Any) -> str:
    """``https://Host[:port][/]`` -> ``https://host[:port]``; anything else -> invalid_origin."""
    origin, _, parts = _split(value, INVALID_ORIGIN, "an origin")
    if parts.path not in ("", "/") or parts.query or parts.fragment or "?" in value or "#" in value:
        raise _bad(INVALID_ORIGIN, "an origin is a bare https://host address: no path, query or fragment")
    return origin


def validate_start_url(value: Any, origins: list[str]) -> str:
    origin, _, parts = _split(value, INVALID_START_URL, "a start URL")
    if origin not in origins:
        raise _bad(INVALID_START_URL, "every start URL must be inside one of the origins")
    path = parts.path or "/"
    query = f"?{parts.query}" if parts.query else ""
    return f"{origin}{path}{query}"


def validate_refresh_interval(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _bad(INVALID_REFRESH_INTERVAL, "refreshEverySeconds must be an integer")
    if not MIN_REFRESH_SECONDS <= value <= MAX_REFRESH_SECONDS:
        raise _bad(INVALID_REFRESH_INTERVAL,
                   f"refreshEverySeconds must be between {MIN_REFRESH_SECONDS} and {MAX_REFRESH_SECONDS}")
    return value
