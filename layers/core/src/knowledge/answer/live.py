"""Live data: tables of rows an operator maintains (fees, limits, processing times), read at
answer time and never indexed (DESIGN.md §7 "Answer time").

A live source's config may hold ``{"tables": ["withdrawals", ...], "fullList": "https://… or a
label"}``: the tables it must have (a missing one fails the whole read closed) and where the
full list is when a passage can show only part of it.

The composition rules, each a function below:

- only enabled rows are read (:func:`enabled_rows`);
- only a question classified as a topic gets passages; rows count for a topic only when they
  carry a value for it (:func:`topic_rows`), so a processing-time question is grounded only by
  rows with a non-empty ``processingTime``;
- codes only when named (:func:`named_codes`): an uppercase 2-6 letter code in the question
  that the rows have narrows to those rows; an unknown code narrows nothing; areas likewise
  (:func:`named_areas`): "how long does a card deposit take" reads the deposit rows only, so
  withdrawal timings never ground it;
- one passage per area of a table, at most ``MAX_ROWS_PER_AREA`` rows; when there are more the
  passage says it is a partial list and where the full list is (:func:`compose_area`);
- derives nothing: values are quoted as stored (a percentage stays a percentage, a minimum a
  minimum, ``processingTime`` verbatim), never a fee computed for an amount (:func:`render_row`);
- fails closed (:func:`compose`): nothing configured, a missing table, a malformed row or a
  reader error means no live passage at all, never a partial read.
"""

from __future__ import annotations

import json
import logging
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictFloat, StrictInt, StrictStr, ValidationError

from ..api.bodies import UNKNOWN_FIELD
from ..errors import InvalidInput, KnowledgeError
from ..model import Source, stable_id

log = logging.getLogger(__name__)

SOURCE_TYPE = "live"
LIVE_WEIGHT = 1.3
MAX_ROWS_PER_AREA = 8
MAX_ROWS_PER_TABLE = 500
MAX_TABLE_BYTES = 256 * 1024
#: visibilities a live source may have (never public)
LIVE_VISIBILITIES = ("agent", "operator")

#: stable codes (HTTP 400)
INVALID_LIVE_ROW = "invalid_live_row"
INVALID_LIVE_TABLE = "invalid_live_table"

_TABLE_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
_CODE_IN_TEXT = re.compile(r"(?<![A-Za-z0-9])[A-Z]{2,6}(?![A-Za-z0-9])")

Amount = StrictInt | StrictFloat | StrictStr

#: which row fields speak to which topic
TOPIC_FIELDS: dict[str, tuple[str, ...]] = {
    "fees": ("fixedFee", "percentageFee"),
    "limits": ("minAmount", "maxAmount"),
    "processing_time": ("processingTime",),
}


class LiveRow(BaseModel):
    """One row of a live table, as the operator sends it (camelCase, unknown fields refused)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    area: StrictStr = Field(min_length=1, max_length=60)
    name: StrictStr = Field(min_length=1, max_length=120)
    code: StrictStr | None = Field(default=None, pattern=r"^[A-Z]{2,6}$")
    network: StrictStr | None = Field(default=None, max_length=60)
    fixedFee: Amount | None = None
    percentageFee: Amount | None = None
    minAmount: Amount | None = None
    maxAmount: Amount | None = None
    processingTime: StrictStr | None = Field(default=None, max_length=200)
    enabled: StrictBool = True


def parse_rows(rows: object) -> list[LiveRow]:
    """Validate a table's rows; ``InvalidInput`` with ``unknown_field`` for a field a row may
    not have, ``invalid_live_row`` for any other fault (the first one, with its row index)."""
    if not isinstance(rows, list):
        raise InvalidInput("rows must be a list", code=INVALID_LIVE_TABLE)
    if len(rows) > MAX_ROWS_PER_TABLE:
        raise InvalidInput(f"a live table holds at most {MAX_ROWS_PER_TABLE} rows", code=INVALID_LIVE_TABLE)
    parsed = []
    for i, row in enumerate(rows):
        if not isinstance(row, Mapping):
            raise InvalidInput(f"row {i} must be an object", code=INVALID_LIVE_ROW, details={"row": i})
        try:
            item = LiveRow.model_validate(dict(row))
        except ValidationError as exc:
            errors = exc.errors(include_input=False, include_url=False)
            unknown = [str(e["loc"][0]) for e in errors if e["type"] == "extra_forbidden" and e["loc"]]
            if unknown:
                raise InvalidInput(f"row {i}: unknown field(s): {', '.join(unknown)[:200]}", code=UNKNOWN_FIELD,
                                   details={"row": i, "fields": unknown[:20]}) from None
            where = ".".join(str(p) for p in errors[0]["loc"]) if errors else ""
            raise InvalidInput(f"row {i}: invalid {where or 'row'}", code=INVALID_LIVE_ROW,
                               details={"row": i, "field": where}) from None
        for name in ("fixedFee", "percentageFee", "minAmount", "maxAmount"):
            value = getattr(item, name)
            if isinstance(value, float) and not math.isfinite(value):
                raise InvalidInput(f"row {i}: {name} must be finite", code=INVALID_LIVE_ROW,
                                   details={"row": i, "field": name})
            if isinstance(value, str) and not (0 < len(value) <= 60):
                raise InvalidInput(f"row {i}: {name} must be 1-60 characters", code=INVALID_LIVE_ROW,
                                   details={"row": i, "field": name})
        parsed.append(item)
    return parsed


def validate_table(table: str, body: object) -> list[dict[str, Any]]:
    """The body of ``PUT live/{table}`` (``{"rows": [...]}``) checked, as the rows to store."""
    if not isinstance(table, str) or not _TABLE_NAME.match(table):
        raise InvalidInput("a table name is 1-64 lower-case letters, digits, '-' or '_'", code=INVALID_LIVE_TABLE)
    if not isinstance(body, Mapping):
        raise InvalidInput("the body must be an object with rows", code=INVALID_LIVE_TABLE)
    unknown = sorted(str(k) for k in body if k != "rows")
    if unknown:
        raise InvalidInput(f"unknown field(s): {', '.join(unknown)[:200]}", code=UNKNOWN_FIELD,
                           details={"fields": unknown[:20]})
    rows = [r.model_dump(exclude_none=True) for r in parse_rows(body.get("rows"))]
    if len(json.dumps(rows, ensure_ascii=False).encode("utf-8")) > MAX_TABLE_BYTES:
        raise InvalidInput(f"a live table is at most {MAX_TABLE_BYTES // 1024} KB", code=INVALID_LIVE_TABLE)
    return rows


# -- composition rules (pure) -------------------------------------------------------------


def enabled_rows(rows: Sequence[LiveRow]) -> list[LiveRow]:
    return [r for r in rows if r.enabled]


def _has(value: object) -> bool:
    return value is not None and not (isinstance(value, str) and not value.strip())


def topic_rows(rows: Sequence[LiveRow], topic: str) -> list[LiveRow]:
    """The rows that say something about ``topic`` (a non-empty value in one of its fields)."""
    names = TOPIC_FIELDS.get(topic, ())
    return [r for r in rows if any(_has(getattr(r, n)) for n in names)]


def named_codes(question: str, rows: Sequence[LiveRow]) -> set[str]:
    """Codes the question names (uppercase, 2-6 letters, a word of its own) that the rows have."""
    known = {r.code for r in rows if r.code}
    return {c for c in _CODE_IN_TEXT.findall(question) if c in known}


def narrow_to_codes(rows: Sequence[LiveRow], codes: set[str]) -> list[LiveRow]:
    return [r for r in rows if r.code in codes] if codes else list(rows)


def _area_stem(word: str) -> str:
    return word[: max(4, len(word) - 3)]


def named_areas(question: str, rows: Sequence[LiveRow]) -> set[str]:
    """Areas the question names ("deposit" for deposits, deposited...) among those the rows
    have; like codes, an area is narrowed to only when named."""
    words = re.findall(r"[a-z0-9]+", question.lower())
    found = set()
    for area in {r.area.strip().lower() for r in rows}:
        parts = re.findall(r"[a-z0-9]+", area)
        if parts and all(any(w.startswith(_area_stem(p)) for w in words) for p in parts):
            found.add(area)
    return found


def _number(value: int | float) -> str:
    """A number as written, without float noise or exponent (0.0005 stays 0.0005)."""
    text = format(Decimal(repr(value)) if isinstance(value, float) else Decimal(value), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def _quote(value: object) -> str:
    return _number(value) if isinstance(value, int | float) else str(value).strip()


def render_row(row: LiveRow) -> str:
    """One row as a line of text: every value quoted as stored, nothing computed."""
    head = row.name + (f" ({row.code})" if row.code else "") + (f", network {row.network}" if row.network else "")
    parts = []
    if _has(row.fixedFee):
        parts.append(f"fixed fee {_quote(row.fixedFee)}")
    if _has(row.percentageFee):
        pct = _quote(row.percentageFee)
        parts.append(f"percentage fee {pct}" + ("" if pct.endswith("%") else "%"))
    if _has(row.minAmount):
        parts.append(f"minimum amount {_quote(row.minAmount)}")
    if _has(row.maxAmount):
        parts.append(f"maximum amount {_quote(row.maxAmount)}")
    if _has(row.processingTime):
        parts.append(f"processing time: {str(row.processingTime).strip()}")
    return f"- {head}: " + "; ".join(parts) if parts else f"- {head}"


_TOPIC_LABEL = {"fees": "fees", "limits": "limits", "processing_time": "processing times"}


def compose_area(area: str, rows: Sequence[LiveRow], topic: str, *, full_list: str | None = None,
                 max_rows: int = MAX_ROWS_PER_AREA) -> str:
    """The text of one area's passage: at most ``max_rows`` rows, and a statement that the list
    is partial (and where the full one is) when there are more."""
    shown = rows[:max_rows]
    lines = [f"{area.strip().capitalize()}: {_TOPIC_LABEL.get(topic, topic)} as configured by the operator."]
    lines += [render_row(r) for r in shown]
    if len(rows) > len(shown):
        where = f" The full list: {full_list}." if full_list else ""
        lines.append(f"This is a partial list ({len(shown)} of {len(rows)}).{where}")
    return "\n".join(lines)


@dataclass(frozen=True)
class LivePassage:
    """A composed passage, shaped like an excerpt by :meth:`excerpt`."""

    source_id: str
    document_id: str
    fragment_id: str
    table: str
    area: str
    title: str
    text: str
    url: str | None
    weight: float = LIVE_WEIGHT

    def excerpt(self, rank: int) -> dict[str, Any]:
        return {"rank": rank, "sourceId": self.source_id, "sourceType": SOURCE_TYPE, "documentId": self.document_id,
                "fragmentId": self.fragment_id, "title": self.title, "path": f"live/{self.table}",
                "breadcrumb": f"{self.title} › {self.area}", "text": self.text, "url": self.url, "score": 0.0,
                "reason": "live", "signals": {"liveRank": rank, "weight": self.weight}}


def document_id(source_id: str, table: str) -> str:
    return stable_id("live", source_id, table)


def compose(question: str, topic: str | None, tables: Mapping[str, object] | None, *, source_id: str,
            title: str, required: Sequence[str] = (), full_list: str | None = None) -> list[LivePassage]:
    """Every passage a live source gives ``question`` (of ``topic``), or none at all.

    ``tables`` maps a table name to its stored rows (None: nothing configured or the read
    failed); ``required`` names tables that must be there. Fails closed: a missing required
    table or one malformed row anywhere gives no passage."""
    if topic not in TOPIC_FIELDS or not tables:
        return []
    if any(name not in tables for name in required):
        return []
    try:
        parsed = {name: parse_rows(rows) for name, rows in tables.items()}
    except InvalidInput:
        return []
    everything = [r for rows in parsed.values() for r in enabled_rows(rows)]
    codes = named_codes(question, everything)
    areas_named = named_areas(question, everything)
    url = full_list if full_list and full_list.startswith("https://") else None
    out: list[LivePassage] = []
    for name in sorted(parsed):
        rows = narrow_to_codes(topic_rows(enabled_rows(parsed[name]), topic), codes)
        areas: dict[str, list[LiveRow]] = {}
        for row in rows:
            area = row.area.strip().lower()
            if not areas_named or area in areas_named:
                areas.setdefault(area, []).append(row)
        for area, area_rows in areas.items():
            text = compose_area(area, area_rows, topic, full_list=full_list)
            out.append(LivePassage(source_id=source_id, document_id=document_id(source_id, name),
                                   fragment_id=stable_id("live", source_id, name, area, text), table=name,
                                   area=area, title=title, text=text, url=url))
    return out


# -- reading at answer time -----------------------------------------------------------------


class LiveReader(Protocol):
    """Reads a live source's tables at answer time. ``None`` when there is nothing to read;
    a failure raises (``KnowledgeError``, ``OSError``, ``TimeoutError``) and the caller
    fails closed. Stored tables: :class:`StoredLiveReader`; stored tables and an operator's
    HTTPS endpoint: ``answer.endpoint.EndpointLiveReader``."""

    def read(self, source: Source) -> Mapping[str, object] | None: ...


class StoredLiveReader:
    """Tables pushed through ``PUT live/{table}`` and kept in the state store."""

    def __init__(self, state: Any):
        self.state = state

    def read(self, source: Source) -> Mapping[str, object] | None:
        return self.state.get_live_tables(source.bot, source.id) or None


#: the code a read failure reports when the error carries none of its own
LIVE_UNAVAILABLE = "live_unavailable"


def failure_code(exc: BaseException) -> str:
    """The stable code of a failed read: the error's own (``fetch_timeout``,
    ``file_too_large``, ``unknown_field``...) or ``live_unavailable``."""
    code = getattr(exc, "code", None)
    if isinstance(exc, TimeoutError):
        return "fetch_timeout"
    return code if isinstance(code, str) and code else LIVE_UNAVAILABLE


def read_closed(reader: LiveReader, source: Source,
                failures: list[dict[str, str]] | None = None) -> Mapping[str, object] | None:
    """The reader's tables, or None when it failed in any of the ways a read can fail;
    ``failures`` (when given) gets ``{"sourceId", "code"}`` for a failed read."""
    try:
        return reader.read(source)
    except (KnowledgeError, OSError, TimeoutError, ValueError) as exc:
        code = failure_code(exc)
        log.warning("live source %s could not be read (%s); no live passage", source.id, code)
        if failures is not None:
            failures.append({"sourceId": source.id, "code": code})
        return None


def source_passages(reader: LiveReader, source: Source, question: str, topic: str | None,
                    failures: list[dict[str, str]] | None = None) -> list[LivePassage]:
    """The passages one live source gives a question (none when the source is off or fails;
    a failed read is noted in ``failures`` when given)."""
    if topic not in TOPIC_FIELDS or source.type != SOURCE_TYPE or not source.enabled:
        return []
    config = source.config if isinstance(source.config, Mapping) else {}
    required = config.get("tables") or ()
    full_list = config.get("fullList")
    if not isinstance(required, list | tuple) or not all(isinstance(t, str) for t in required):
        return []
    tables = read_closed(reader, source, failures)
    return compose(question, topic, tables, source_id=source.id, title=source.name, required=tuple(required),
                   full_list=full_list if isinstance(full_list, str) else None)
