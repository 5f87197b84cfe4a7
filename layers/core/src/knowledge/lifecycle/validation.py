"""Validation of source bodies (``POST sources`` / ``PATCH sources/{id}``).

The shape of a body (fields, types, bounds, the config of each type) is declared once in
``knowledge.api.models``; this module adds the rules that need more than a shape: an
article's visibility follows its state, files, instructions and facts are never public,
origins are normalised and start URLs lie inside them (https only, except
``http://`` on loopback at the one port of the development switch ``kb serve
--dev-allow-loopback PORT``, passed in as ``loopback_port``), ``refreshEverySeconds`` is for
websites. Pure functions: a JSON body (or its model) in, a ``SourceSpec`` out, or
``InvalidInput`` with one of the stable codes. Nothing here touches storage, so the same
rules hold in every deployment and the unit tests need no fixtures.
"""

from __future__ import annotations

import ipaddress
import json
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from pydantic import ValidationError

from ..api.models import (
    CONFIG_MODELS,
    CONFIG_TOO_LARGE,
    INVALID_BODY,
    INVALID_CONFIG,
    INVALID_CONTENT_TYPE,
    INVALID_NAME,
    INVALID_ORIGIN,
    INVALID_PRIORITY,
    INVALID_REFRESH_INTERVAL,
    INVALID_START_URL,
    INVALID_TYPE,
    INVALID_VISIBILITY,
    MAX_CONFIG_BYTES,
    MAX_NAME_CHARS,
    MAX_ORIGINS,
    MAX_PATH_PATTERNS,
    MAX_PATTERN_CHARS,
    MAX_PRIORITY,
    MAX_REFRESH_SECONDS,
    MAX_START_URLS,
    MAX_URL_CHARS,
    MIN_PRIORITY,
    MIN_REFRESH_SECONDS,
    UNKNOWN_FIELD,
    SourceCreate,
    SourcePatch,
    invalid_input,
    parse,
)
from ..errors import InvalidInput
from ..model import VISIBILITIES
from ..settings import OutboundPolicy

__all__ = [
    "CONFIG_TOO_LARGE", "INVALID_BODY", "INVALID_CONFIG", "INVALID_CONTENT_TYPE", "INVALID_NAME", "INVALID_ORIGIN",
    "INVALID_PRIORITY", "INVALID_REFRESH_INTERVAL", "INVALID_START_URL", "INVALID_TYPE", "INVALID_VISIBILITY",
    "MAX_CONFIG_BYTES", "MAX_NAME_CHARS", "MAX_ORIGINS",
    "MAX_PATH_PATTERNS", "MAX_PATTERN_CHARS", "MAX_PRIORITY", "MAX_REFRESH_SECONDS", "MAX_START_URLS",
    "MIN_PRIORITY", "MIN_REFRESH_SECONDS", "UNKNOWN_FIELD", "SourceSpec", "parse_create", "parse_patch",
]

#: Types whose passages may never be public (reference 003, "Visibility and priority").
NEVER_PUBLIC = frozenset({"file", "instruction", "fact", "live"})
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


def parse_create(body: Any, policy: OutboundPolicy | None = None) -> SourceSpec:
    """Validate a ``POST sources`` body (parsed JSON, or its ``SourceCreate``); ``policy``:
    the deployment's outbound policy, for a URL the service will call (a live endpoint) and
    for the development switch's port (a website on loopback)."""
    model = body if isinstance(body, SourceCreate) else parse(SourceCreate, body)
    source: Any = model.root
    given = source.model_fields_set
    config = source.config.model_dump(exclude_unset=True)
    refresh = source.refreshEverySeconds if "refreshEverySeconds" in given else _UNSET
    return _spec(source.type, source.name.strip(), source.priority, config, source.visibility, refresh, policy)


def parse_patch(body: Any, current: SourceSpec, policy: OutboundPolicy | None = None) -> SourceSpec:
    """Validate a ``PATCH sources/{id}`` body against the stored definition. Fields left
    out keep their value; ``config`` given is the whole new config (not merged)."""
    patch = body if isinstance(body, SourcePatch) else parse(SourcePatch, body)
    given = patch.model_fields_set
    if "type" in given and patch.type != current.type:
        raise _bad(INVALID_TYPE, "the type of a source cannot change; create a new source")
    name = patch.name.strip() if "name" in given else current.name
    priority = patch.priority if "priority" in given else current.priority
    config = check_config(current.type, patch.config) if "config" in given else dict(current.config)
    refresh = patch.refreshEverySeconds if "refreshEverySeconds" in given else _UNSET
    visibility: str | None = patch.visibility if "visibility" in given else None
    if visibility is None and current.type != "article":
        visibility = current.visibility
    return _spec(current.type, name, priority, config, visibility, refresh, policy)


def check_config(kind: str, config: Any) -> dict[str, Any]:
    """``config`` checked against the model of ``kind``'s config (the fields it gave)."""
    model = CONFIG_MODELS[kind]
    try:
        return model.model_validate(config).model_dump(exclude_unset=True)
    except ValidationError as exc:
        raise invalid_input(exc, model, prefix=("config",), default=INVALID_CONFIG) from None


# -- pieces -----------------------------------------------------------------------------

_UNSET: Any = object()


def _spec(kind: str, name: str, priority: int, config: dict[str, Any], visibility: str | None,
          refresh: Any, policy: OutboundPolicy | None = None) -> SourceSpec:
    if refresh is not _UNSET:
        # accepted at the top level too (that is where a source shows it); lives in config
        if kind != "website":
            raise _bad(INVALID_REFRESH_INTERVAL, "refreshEverySeconds applies to website sources only")
        config["refreshEverySeconds"] = refresh
    if kind == "live":
        config, refresh_every = _live(config, policy)
    elif kind == "website":
        config, refresh_every = _website(config, policy.loopback_port if policy else None)
    else:
        config, refresh_every = _CHECKERS[kind](config)
    if visibility is not None:
        visibility = validate_visibility(kind, visibility, config)
    else:
        visibility = default_visibility(kind, config)
    return SourceSpec(kind, name, visibility, priority, config, refresh_every)


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


def _article(config: dict[str, Any]) -> tuple[dict[str, Any], int | None]:
    out: dict[str, Any] = {"body": config["body"]}
    if config.get("title") is not None:
        out["title"] = config["title"]
    out["state"] = config.get("state", "draft")
    return out, None


def _instruction(config: dict[str, Any]) -> tuple[dict[str, Any], int | None]:
    return {"text": config["text"]}, None


def _fact(config: dict[str, Any]) -> tuple[dict[str, Any], int | None]:
    value = config["value"]
    text = value if isinstance(value, str) else json.dumps(value)
    return {"key": config["key"].strip(), "value": text}, None


def _faq(config: dict[str, Any]) -> tuple[dict[str, Any], int | None]:
    return {"entries": [{"question": e["question"], "answer": e["answer"]} for e in config["entries"]]}, None


def _website(config: dict[str, Any], loopback_port: int | None = None) -> tuple[dict[str, Any], int | None]:
    origins = list(dict.fromkeys(normalize_origin(o, loopback_port=loopback_port) for o in config["origins"]))
    urls = list(dict.fromkeys(validate_start_url(u, origins, loopback_port=loopback_port)
                              for u in config["startUrls"]))
    out: dict[str, Any] = {"origins": origins, "startUrls": urls}
    for key in ("include", "exclude"):
        if config.get(key) is not None:
            out[key] = validate_path_patterns(key, config[key])
    refresh: int | None = None
    if config.get("refreshEverySeconds") is not None:
        refresh = validate_refresh_interval(config["refreshEverySeconds"])
        out["refreshEverySeconds"] = refresh
    return out, refresh


def _file(config: dict[str, Any]) -> tuple[dict[str, Any], int | None]:
    filename = config["filename"].strip()
    if "/" in filename or "\\" in filename or filename in (".", ".."):
        raise _bad(INVALID_CONFIG, "config.filename must be a bare file name")
    normalized = config["contentType"].split(";", 1)[0].strip().lower()
    if normalized not in FILE_CONTENT_TYPES:
        raise _bad(INVALID_CONTENT_TYPE,
                   "contentType must be PDF, DOCX, XLSX, PPTX, text/plain, text/markdown, text/html or XHTML")
    return {"filename": filename, "contentType": normalized}, None


def _pack(config: dict[str, Any]) -> tuple[dict[str, Any], int | None]:
    return {"slug": config["slug"]}, None


def _live(config: dict[str, Any], policy: OutboundPolicy | None = None) -> tuple[dict[str, Any], int | None]:
    """``endpoint``: checked as a URL the service will call (``invalid_config`` unless
    https, ``blocked_address`` for an IP literal in a blocked range); names are resolved and
    checked again at every read."""
    from ..crawl.outbound import check_configured_url

    out: dict[str, Any] = {}
    if config.get("tables") is not None:
        out["tables"] = list(dict.fromkeys(config["tables"]))
    if config.get("fullList") is not None:
        out["fullList"] = config["fullList"].strip()
    if config.get("endpoint") is not None:
        out["endpoint"] = check_configured_url(config["endpoint"], policy)
    return out, None


_CHECKERS = {
    "article": _article,
    "instruction": _instruction,
    "fact": _fact,
    "faq": _faq,
    "website": _website,
    "file": _file,
    "pack": _pack,
    "live": _live,
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


def _dev_loopback(host: str, port: int | None, loopback_port: int | None) -> bool:
    """Whether an ``http://`` address is the development switch's: a loopback host on
    exactly its port."""
    if loopback_port is None or (port or 80) != loopback_port:
        return False
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _split(url: str, code: str, what: str, loopback_port: int | None = None) -> tuple[str, str, Any]:
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
    if scheme not in ("http", "https"):
        raise _bad(code, f"{what} must be an https:// address")
    if parts.username is not None or parts.password is not None or "@" in parts.netloc:
        raise _bad(code, f"{what} must not carry user information")
    host = _host(parts.hostname or "")
    if host is None:
        raise _bad(code, f"{what} has no valid host")
    if scheme == "http":
        if not _dev_loopback(host, port, loopback_port):
            allowed = "" if loopback_port is None else (
                f" (kb serve --dev-allow-loopback allows http://127.0.0.1:{loopback_port} only)")
            raise _bad(code, f"{what} must use https; http addresses are refused{allowed}")
        return f"http://{host}" if port in (None, 80) else f"http://{host}:{port}", host, parts
    origin = f"https://{host}" if port in (None, 443) else f"https://{host}:{port}"
    return origin, host, parts


def normalize_origin(value: Any, *, loopback_port: int | None = None) -> str:
    """``https://Host[:port][/]`` -> ``https://host[:port]``; anything else -> invalid_origin
    (``http://`` only on loopback at ``loopback_port``, the development switch)."""
    origin, _, parts = _split(value, INVALID_ORIGIN, "an origin", loopback_port)
    if parts.path not in ("", "/") or parts.query or parts.fragment or "?" in value or "#" in value:
        raise _bad(INVALID_ORIGIN, "an origin is a bare https://host address: no path, query or fragment")
    return origin


def validate_start_url(value: Any, origins: list[str], *, loopback_port: int | None = None) -> str:
    origin, _, parts = _split(value, INVALID_START_URL, "a start URL", loopback_port)
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
