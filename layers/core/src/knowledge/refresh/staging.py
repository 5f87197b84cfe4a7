"""The blobs a Step Functions refresh keeps between its tasks (DESIGN.md §6), under
``staging/<bot>/<source>/<generation>/``: ``manifest.json`` (checksum, vector space, document
and batch counts, failures of the listing), ``docs-<n>.json`` (the document contents of batch
``n``) and ``result-<n>.json`` (what batch ``n`` indexed: document rows, passages, failures,
passages per visibility), which ``commit`` sums; a website's crawl stages its steps under
``staging/<bot>/<source>/crawl/`` (``sources.website``) for the listing to read. The run's end
(``commit``, ``fail``) deletes both. The task payloads stay small (ids and numbers), far below
the state machine's payload limit.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from ..errors import Code
from ..ports import Services
from .workflow_errors import RefreshError

STAGING_ROOT = "staging"


def staging_prefix(bot: str, source_id: str, generation: int) -> str:
    return f"{STAGING_ROOT}/{bot}/{source_id}/{generation}/"


def fields_of(record: Any) -> dict[str, Any]:
    """A document's fields for a staged blob: one level deep (``dataclasses.asdict`` copies
    every nested list too, which cost seconds per 10,000 documents)."""
    return {f.name: getattr(record, f.name) for f in dataclasses.fields(record)}


def put_json(services: Services, key: str, value: Any) -> None:
    services.blobs.put(key, json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8"))


def get_json(services: Services, key: str) -> Any:
    return json.loads(services.blobs.get(key))


def job_generation(job: dict[str, Any]) -> int:
    generation = job.get("generation")
    if not isinstance(generation, int) or isinstance(generation, bool):
        raise RefreshError(Code.INTERNAL, "the job carries no generation")
    return generation


def clear_staging(services: Services, bot: str, source_id: str, generation: int) -> None:
    for key in services.blobs.list(staging_prefix(bot, source_id, generation)):
        services.blobs.delete(key)
