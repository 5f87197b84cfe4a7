"""The OpenAPI document, generated from the route table (``routes.ROUTES``) and the models
of its bodies (``models`` for requests, ``responses`` for answers): the validator and the
document come from the same declarations, for the server, the docs and fuzzers."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from pydantic.json_schema import models_json_schema

from .auth import SCOPES
from .models import REQUEST_MODELS
from .responses import RESPONSE_MODELS

REF = "#/components/schemas/{model}"


def ref(model: Any) -> dict[str, Any]:
    """A reference to a model's schema: the model, or its name (as the route table gives it)."""
    return {"$ref": REF.format(model=model if isinstance(model, str) else model.__name__)}


def schemas() -> dict[str, Any]:
    """Every body model's JSON Schema, by name (``components.schemas``)."""
    inputs = [(m, "validation") for m in REQUEST_MODELS] + [(m, "serialization") for m in RESPONSE_MODELS]
    _, top = models_json_schema(inputs, ref_template=REF)  # type: ignore[arg-type]
    found: dict[str, Any] = top.get("$defs", {})
    for schema in found.values():
        _drop_null_defaults(schema)
    return found


def _drop_null_defaults(schema: Any) -> None:
    """A field that may be left out but not sent as null (a PATCH field, a visibility...)
    has the default None in Python; the document must not offer ``null`` as its value."""
    if isinstance(schema, dict):
        if schema.get("default", 0) is None and not _allows_null(schema):
            del schema["default"]
        for value in schema.values():
            _drop_null_defaults(value)
    elif isinstance(schema, list):
        for value in schema:
            _drop_null_defaults(value)


def _allows_null(schema: dict[str, Any]) -> bool:
    kinds = schema.get("type")
    if kinds == "null" or (isinstance(kinds, list) and "null" in kinds):
        return True
    return any(isinstance(s, dict) and s.get("type") == "null" for s in schema.get("anyOf", []))

TITLE = "kb knowledge API"
VERSION = "1"

_PARAMS: dict[str, dict[str, Any]] = {
    "botID": {"description": "The bot (tenant) the token opens",
              "schema": {"type": "string", "pattern": "^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"}},
    "sourceID": {"description": "A source id", "schema": {"type": "string", "minLength": 1}},
    "tokenID": {"description": "A token id (from the token list; not its secret)",
                "schema": {"type": "string", "pattern": "^[0-9a-f]{16}$"}},
    "table": {"description": "A live table's name",
              "schema": {"type": "string", "pattern": "^[a-z0-9][a-z0-9_-]{0,63}$"}},
    "agentID": {"description": "An agent id",
                "schema": {"type": "string", "pattern": "^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"}},
}

_ERROR_TEXT = {
    400: "Invalid input (error.code says which rule)",
    401: "Missing or unknown bearer token",
    403: "The token is for another bot or lacks the scope",
    404: "Not found",
    409: "Conflict with the source's or agent's state",
    413: "Upload larger than 8 MB (file_too_large)",
    422: "Rejected citations (invalid_citation, items under error.invalid)",
    429: "Rate limited; see Retry-After",
}


def _operation(route: Any) -> dict[str, Any]:
    names = re.findall(r"\{(\w+)\}", route.template)
    op: dict[str, Any] = {
        "operationId": route.operation_id,
        "summary": route.summary,
        "parameters": [{"name": n, "in": "path", "required": True, **_PARAMS.get(n, {"schema": {"type": "string"}})}
                       for n in names]
        + [{"name": n, "in": "query", "required": False, "description": d, "schema": s}
           for n, d, s in getattr(route, "query", ())],
    }
    if route.scope is not None:
        op["security"] = [{"bearer": [route.scope]}]
        op["x-scope"] = route.scope
    else:
        op["security"] = []
    if route.raw_body:
        op["requestBody"] = {
            "required": route.body_required,
            "content": {"application/octet-stream": {"schema": {"type": "string", "format": "binary"}}},
        }
    elif route.body is not None:
        op["requestBody"] = {
            "required": route.body_required,
            "content": {"application/json": {"schema": ref(route.body)}},
        }
    responses: dict[str, Any] = {}
    ok: dict[str, Any] = {"description": "OK" if route.ok < 300 else ""}
    if route.response is not None:
        ok["content"] = {"application/json": {"schema": ref(route.response)}}
    elif route.template == "/openapi.json":
        ok["content"] = {"application/json": {"schema": {"type": "object"}}}
    responses[str(route.ok)] = ok
    statuses = set(route.errors)
    if route.scope is not None:
        statuses |= {400, 401, 403}
    if route.body is not None or route.raw_body:
        statuses.add(400)
    if route.limited:
        statuses.add(429)
    for status in sorted(statuses):
        responses[str(status)] = {
            "description": _ERROR_TEXT[status],
            "content": {"application/json": {"schema": {"$ref": REF.format(model="Error")}}},
        }
    op["responses"] = responses
    return op


def build_document(routes: Sequence[Any]) -> dict[str, Any]:
    """The OpenAPI document of ``routes`` (the route table passes itself in: this module
    knows the models, not the table)."""
    paths: dict[str, dict[str, Any]] = {}
    for route in routes:
        paths.setdefault(route.template, {})[route.method.lower()] = _operation(route)
    return {
        "openapi": "3.1.0",
        "info": {
            "title": TITLE,
            "version": VERSION,
            "description": "Knowledge sources, retrieval and citations for AI support agents. "
                           "Every route but this document needs `Authorization: Bearer <token>`; a token opens "
                           f"exactly one bot with the scopes {', '.join(SCOPES)}. Errors are "
                           '`{"error": {"code", "message"}}`.',
        },
        "paths": paths,
        "components": {
            "schemas": schemas(),
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
    }
