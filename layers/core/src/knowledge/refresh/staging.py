"""The blobs a Step Functions refresh keeps between its tasks (DESIGN.md §6), under
``staging/<bot>/<source>/<generation>/``: ``manifest.json`` (checksum, vector space, document
and batch counts, failures of the listing), ``docs-<n>.json`` (the document contents of batch
``n``) and ``result-<n>.json`` (what batch ``n`` indexed: document rows, passages, failures,
passages per visibility), which ``commit`` sums; a website's crawl stages its steps under
``staging/<bot>/<source>/crawl/`` (``sources.website``) for the listing to read. The run's end
(``commit``, ``fail``) deletes both. The task payloads stay small (ids and numbers), far below
the state machine's payload limit.

The embedded runner calls the same stages in one process: it hands them an
``InProcessStaging`` blob store, which keeps the run's own files in memory as the values the
stages wrote (no JSON round trip per batch) and sends every other key to the real store.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from ..errors import Code
from ..ports import BlobStore, Services
from .workflow_errors import RefreshError

STAGING_ROOT = "staging"


def staging_prefix(bot: str, source_id: str, generation: int) -> str:
    return f"{STAGING_ROOT}/{bot}/{source_id}/{generation}/"


def fields_of(record: Any) -> dict[str, Any]:
    """A document's fields for a staged blob: one level deep (``dataclasses.asdict`` copies
    every nested list too, which cost seconds per 10,000 documents)."""
    return {f.name: getattr(record, f.name) for f in dataclasses.fields(record)}


def _encode(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


class InProcessStaging:
    """A blob store for one run of the embedded runner: the keys under ``prefix`` (the run's
    ``staging_prefix``) are held in memory as the values ``put_json`` was given, every other
    key (a crawl's staged steps, kept pages, packs) goes to ``inner``."""

    def __init__(self, inner: BlobStore, prefix: str):
        self.inner, self.prefix = inner, prefix
        self.values: dict[str, Any] = {}

    def holds(self, key: str) -> bool:
        return key.startswith(self.prefix)

    def put(self, key: str, data: bytes) -> None:
        if self.holds(key):
            self.values[key] = json.loads(data)
        else:
            self.inner.put(key, data)

    def get(self, key: str) -> bytes:
        return _encode(self.values[key]) if self.holds(key) else self.inner.get(key)

    def exists(self, key: str) -> bool:
        return key in self.values if self.holds(key) else self.inner.exists(key)

    def delete(self, key: str) -> None:
        if self.holds(key):
            self.values.pop(key, None)
        else:
            self.inner.delete(key)

    def list(self, prefix: str) -> list[str]:
        held = [k for k in self.values if k.startswith(prefix)]
        outside = [] if prefix.startswith(self.prefix) else self.inner.list(prefix)
        return sorted({*outside, *held})


def put_json(services: Services, key: str, value: Any) -> None:
    blobs = services.blobs
    if isinstance(blobs, InProcessStaging) and blobs.holds(key):
        blobs.values[key] = value
    else:
        blobs.put(key, _encode(value))


def get_json(services: Services, key: str) -> Any:
    blobs = services.blobs
    if isinstance(blobs, InProcessStaging) and blobs.holds(key):
        return blobs.values[key]
    return json.loads(blobs.get(key))


def job_generation(job: dict[str, Any]) -> int:
    generation = job.get("generation")
    if not isinstance(generation, int) or isinstance(generation, bool):
        raise RefreshError(Code.INTERNAL, "the job carries no generation")
    return generation


def clear_staging(services: Services, bot: str, source_id: str, generation: int) -> None:
    for key in services.blobs.list(staging_prefix(bot, source_id, generation)):
        services.blobs.delete(key)
