"""JSON Schemas of the API bodies, referenced by the route table and published in the
OpenAPI document (``GET /openapi.json``). Descriptive, not the validator: the use cases
validate (and answer 400 with a stable code); these tell clients and fuzzers the shapes."""

from __future__ import annotations

from typing import Any

from ..lifecycle.validation import (
    MAX_CONFIG_BYTES,
    MAX_NAME_CHARS,
    MAX_ORIGINS,
    MAX_PRIORITY,
    MAX_REFRESH_SECONDS,
    MAX_START_URLS,
    MIN_PRIORITY,
    MIN_REFRESH_SECONDS,
)
from ..model import AUDIENCES, SOURCE_TYPES, STATUSES, VISIBILITIES
from ..settings import MAX_AGENT_SOURCES, MAX_QUESTION_CHARS

Schema = dict[str, Any]


def ref(name: str) -> Schema:
    return {"$ref": f"#/components/schemas/{name}"}


_NULLABLE_STRING: Schema = {"type": ["string", "null"]}

#: The writable fields of a source: POST takes them (type, name and config required), PATCH any.
_SOURCE_FIELDS: dict[str, Any] = {
    "type": {"type": "string", "enum": list(SOURCE_TYPES)},
    "name": {"type": "string", "minLength": 1, "maxLength": MAX_NAME_CHARS},
    "visibility": {"type": "string", "enum": list(VISIBILITIES)},
    "priority": {"type": "integer", "minimum": MIN_PRIORITY, "maximum": MAX_PRIORITY},
    "config": {"type": "object"},
    "refreshEverySeconds": {"type": "integer", "minimum": MIN_REFRESH_SECONDS, "maximum": MAX_REFRESH_SECONDS},
}

SCHEMAS: dict[str, Schema] = {
    "Error": {
        "type": "object",
        "required": ["error"],
        "properties": {
            "error": {
                "type": "object",
                "required": ["code", "message"],
                "properties": {
                    "code": {"type": "string"},
                    "message": {"type": "string"},
                    "invalid": {"type": "array", "items": {"type": "object"}},
                    "retryAfter": {"type": "number"},
                },
            }
        },
    },
    "SourceCreate": {
        "type": "object",
        "required": ["type", "name", "config"],
        "additionalProperties": False,
        "description": (
            f"config per type: article {{title, body, state: published|internal|draft}}; instruction {{text}}; "
            "fact {key, value}; faq {entries: [{question, answer}]}; "
            f"website {{origins: 1-{MAX_ORIGINS} bare https://host, startUrls: 1-{MAX_START_URLS} inside them, "
            f"refreshEverySeconds: {MIN_REFRESH_SECONDS}-{MAX_REFRESH_SECONDS}}}; file {{filename, contentType}}; "
            f"pack {{slug}}. The serialised config is at most {MAX_CONFIG_BYTES} bytes."
        ),
        "properties": _SOURCE_FIELDS,
    },
    "SourcePatch": {
        "type": "object",
        "additionalProperties": False,
        "description": "Any field of SourceCreate; a config given replaces the whole config.",
        "properties": _SOURCE_FIELDS,
    },
    "Source": {
        "type": "object",
        "required": ["id", "type", "name", "status", "errorCode", "visibility", "priority", "weight", "passages",
                     "attempts", "lastIndexedAt"],
        "properties": {
            "id": {"type": "string"},
            "type": {"type": "string", "enum": list(SOURCE_TYPES)},
            "name": {"type": "string"},
            "status": {"type": "string", "enum": list(STATUSES)},
            "errorCode": _NULLABLE_STRING,
            "errorMessage": _NULLABLE_STRING,
            "visibility": {"type": "string", "enum": list(VISIBILITIES)},
            "priority": {"type": "integer"},
            "weight": {"type": "number"},
            "passages": {"type": "integer"},
            "attempts": {"type": "integer"},
            "documentsProcessed": {"type": "integer"},
            "fragmentsProcessed": {"type": "integer"},
            "documentsFailed": {"type": "integer"},
            "lastIndexedAt": _NULLABLE_STRING,
            "refreshEverySeconds": {"type": ["integer", "null"]},
            "nextRefreshAt": _NULLABLE_STRING,
            "config": {"type": "object"},
            "createdAt": _NULLABLE_STRING,
            "updatedAt": _NULLABLE_STRING,
            "queued": {"type": "boolean"},
        },
    },
    "SourceList": {
        "type": "object",
        "required": ["sources"],
        "properties": {"sources": {"type": "array", "items": ref("Source")}},
    },
    "IndexStatus": {
        "type": "object",
        "required": ["id", "status", "indexing", "attempts", "documentsProcessed", "fragmentsProcessed",
                     "documentsFailed", "errorCode", "lastIndexedAt"],
        "properties": {
            "id": {"type": "string"},
            "status": {"type": "string", "enum": list(STATUSES)},
            "indexing": {"type": "boolean"},
            "cancelRequested": {"type": "boolean"},
            "attempts": {"type": "integer"},
            "documentsProcessed": {"type": "integer"},
            "fragmentsProcessed": {"type": "integer"},
            "documentsFailed": {"type": "integer"},
            "passages": {"type": "integer"},
            "errorCode": _NULLABLE_STRING,
            "errorMessage": _NULLABLE_STRING,
            "lastIndexedAt": _NULLABLE_STRING,
            "leaseExpiresAt": _NULLABLE_STRING,
        },
    },
    "DocumentList": {
        "type": "object",
        "required": ["sourceId", "documents"],
        "properties": {
            "sourceId": {"type": "string"},
            "documents": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "id": {"type": "string"},
                        "title": {"type": "string"},
                        "path": {"type": "string"},
                        "url": _NULLABLE_STRING,
                        "visibility": {"type": "string"},
                        "fragments": {"type": "integer"},
                        "errorCode": _NULLABLE_STRING,
                    },
                },
            },
        },
    },
    "Index": {
        "type": "object",
        "required": ["builtAt", "totalPassages", "embedder", "sources"],
        "properties": {
            "builtAt": _NULLABLE_STRING,
            "totalPassages": {"type": "integer"},
            "embedder": {"type": "string"},  # none, hashing, local, bedrock or openai
            "sources": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["id", "title", "type", "passages", "error", "lastIndexedAt"],
                    "properties": {
                        "id": {"type": "string"},
                        "title": {"type": "string"},
                        "type": {"type": "string"},
                        "status": {"type": "string"},
                        "passages": {"type": "integer"},
                        "weight": {"type": "number"},
                        "error": _NULLABLE_STRING,
                        "lastIndexedAt": _NULLABLE_STRING,
                    },
                },
            },
        },
    },
    "RetrievalRequest": {
        "type": "object",
        "required": ["q"],
        "properties": {
            "q": {"type": "string", "minLength": 1, "maxLength": MAX_QUESTION_CHARS},
            "audience": {"type": "string", "enum": list(AUDIENCES)},
            "agentId": _NULLABLE_STRING,
        },
    },
    "RetrievalTestRequest": {
        "type": "object",
        "required": ["q"],
        "additionalProperties": False,
        "properties": {
            "q": {"type": "string", "minLength": 1, "maxLength": MAX_QUESTION_CHARS},
            "audience": {"type": "string", "enum": list(AUDIENCES)},
            "agentId": _NULLABLE_STRING,
            "rerank": {"type": "boolean"},
        },
    },
    "Retrieval": {
        "type": "object",
        "required": ["retrievalId", "audience", "confidence", "floor", "wouldAnswer", "operatorGrounded",
                     "corpusSize", "excerpts"],
        "properties": {
            "retrievalId": {"type": "string"},
            "audience": {"type": "string", "enum": list(AUDIENCES)},
            "confidence": {"type": "number", "minimum": 0, "maximum": 1},
            "floor": {"type": "number"},
            "wouldAnswer": {"type": "boolean"},
            "operatorGrounded": {"type": "boolean"},
            "corpusSize": {"type": "integer"},
            "excerpts": {
                "type": "array",
                "maxItems": 12,
                "items": {
                    "type": "object",
                    "required": ["rank", "sourceId", "documentId", "fragmentId", "title", "text", "score", "reason"],
                    "properties": {
                        "rank": {"type": "integer"},
                        "sourceId": {"type": "string"},
                        "sourceType": _NULLABLE_STRING,
                        "documentId": {"type": "string"},
                        "fragmentId": {"type": "string"},
                        "title": {"type": "string"},
                        "path": {"type": "string"},
                        "breadcrumb": {"type": "string"},
                        "text": {"type": "string", "maxLength": 800},
                        "url": _NULLABLE_STRING,
                        "score": {"type": "number"},
                        "reason": {"type": "string"},
                        "signals": {"type": "object"},
                    },
                },
            },
        },
    },
    "Reindex": {
        "type": "object",
        "additionalProperties": False,
        "properties": {"force": {"type": "boolean"}},
    },
    "Refresh": {
        "type": "object",
        "additionalProperties": False,
        "properties": {"force": {"type": "boolean", "description": "rebuild even when the checksum is unchanged"}},
    },
    "Accepted": {
        "type": "object",
        "required": ["accepted"],
        "properties": {"accepted": {"type": "boolean"}, "job": {"type": "object"}},
    },
    "CitationCheck": {
        "type": "object",
        "required": ["retrievalId", "citations"],
        "additionalProperties": False,
        "properties": {
            "retrievalId": {"type": "string", "minLength": 1},
            "citations": {
                "type": "array",
                "maxItems": 100,
                "items": {
                    "type": "object",
                    "required": ["sourceId", "documentId", "fragmentId"],
                    "additionalProperties": False,
                    "properties": {
                        "sourceId": {"type": "string", "minLength": 1},
                        "documentId": {"type": "string", "minLength": 1},
                        "fragmentId": {"type": "string", "minLength": 1},
                    },
                },
            },
        },
    },
    "CitationValid": {
        "type": "object",
        "required": ["valid"],
        "properties": {"valid": {"type": "boolean", "const": True}},
    },
    "AgentPut": {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "status": {"type": "string", "enum": ["active", "paused"]},
            "sourceIds": {"type": "array", "maxItems": MAX_AGENT_SOURCES, "items": {"type": "string"}},
        },
    },
    "Agent": {
        "type": "object",
        "required": ["id", "status", "sourceIds"],
        "properties": {
            "id": {"type": "string"},
            "status": {"type": "string", "enum": ["active", "paused"]},
            "sourceIds": {"type": "array", "items": {"type": "string"}},
        },
    },
}
