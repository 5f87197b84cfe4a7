"""DynamoDB implementation of the StateStore port (AWS mode), behaviour for behaviour the
twin of :class:`knowledge.adapters.local.sqlite_state.SqliteStateStore`.

One table, string keys ``PK`` / ``SK`` (DESIGN.md §9)::

    PK = BOT#<bot>     SK = SETTINGS                     bot settings
                       SK = SOURCE#<id>                  a source (lease, live generation, counters)
                       SK = DOC#<id>#<doc>               a document of the live generation
                       SK = GEN#<id>#<n>                 a generation: staging | live | retired
                       SK = AGENT#<id>                   an agent
                       SK = RETRIEVAL#<id>               a served retrieval (TTL on ``expiresAt``)
                       SK = TOKEN#<id>                   names a token of the bot (for listing)
                       SK = LIVE#<source>#<table>        a live table's rows (answer time)
                       SK = GAP#<audience>#<ms>#<id>     an unanswered question (TTL on ``expiresAt``)
    PK = TOKEN#<sha256> SK = TOKEN                       a hashed bot token
    PK = BOTS          SK = BOT#<bot>                    the registry of bots (``list_bots``)
                       SK = #INDEXED                     the registry was back-filled once

The sparse global secondary index ``due`` (``dueShard`` string, ``dueAt`` number) holds only
the items that have work due:

* sources that may be refreshed — ``dueShard = REFRESH#<0..3>`` (spread over a few partitions),
  ``dueAt = 0`` for ``waiting`` / ``needs_refresh`` (due now) or the source's
  ``nextRefreshAt`` for ``ready`` / ``failed`` ones. Every write that changes ``status`` or
  ``nextRefreshAt`` rewrites these two attributes in the same request, conditioned on the
  values it computed them from, so the index never disagrees with the item for long.
* generations that are not live (staging or retired) — ``dueShard = GENERATIONS``: the
  cleanup work ``orphan_generations`` / ``stale_staging`` look for. Reading them from the
  index instead of scanning the table keeps the check that runs after every commit cheap.

The sparse global secondary index ``leases`` (``kind`` string, ``leaseExpiresAt`` number,
keys only) holds exactly the leased sources — no other item carries ``leaseExpiresAt`` — so
the reaper's minute sweep queries the expired ones instead of scanning the table. Every lease
write (take, heartbeat, release) is also a write to its one index partition ``source``: about
1,000 writes a second before that partition throttles, i.e. tens of thousands of refreshes
heartbeating at once.

Index reads are eventually consistent, so every candidate the index returns is re-read from
the table with a consistent read and judged on that fresh copy: a lagging index can delay
work, never cause the live generation to be dropped.

Leases are conditional writes: taken with ``attribute_not_exists(leaseOwner) OR
leaseExpiresAt < :now``, extended and released only by their owner.

Committing a generation is one ``TransactWriteItems`` whose first item is the one
``UpdateItem`` on the source (live generation, checksum, counters, status, lease released)
conditioned on the lease; the other two items only move the generation bookkeeping
(new -> live, old -> retired) so that it can never disagree with the flip. The documents are
then replaced with batch writes, *after* the flip. That is safe because no reader ever sees a
passage through the document items: retrieval reads passages from the search index filtered
on the live ``source:generation`` pairs, which changed atomically with the flip. Document items
are the operators' listing of the source; a crash between the flip and the document writes
leaves that listing one refresh behind until a retried commit (which is idempotent: it
recognises its own flip) or the next refresh rewrites it. A transaction could not replace them
anyway: a pack has hundreds of pages and a transaction holds at most 100 items.

Numbers: DynamoDB wants :class:`~decimal.Decimal`, never ``float``. :func:`to_dynamo` and
:func:`from_dynamo` are the only places that convert, and source fields are coerced back to
their declared types. ``config`` is stored as a JSON string so that it round-trips exactly.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import asdict, fields, replace
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from ...errors import BackendError, Code, Conflict, InvalidInput, NotFound
from ...model import (
    AUDIENCES,
    Agent,
    BotSettings,
    Document,
    GapRecord,
    LiveSource,
    RetrievalRecord,
    Source,
    Token,
    key64,
)
from ...schedule import due_at, is_due
from ...store_rules import check_update, commit_changes, retired_generation
from .dynamodb_expr import Expression as _Expr
from .dynamodb_table import (
    DUE_INDEX,
    DUE_PARTITION_KEY,
    DUE_SHARDS,
    DUE_SORT_KEY,
    GENERATIONS_SHARD,
    LEASE_INDEX,
    LEASE_PARTITION_KEY,
    LEASE_SORT_KEY,
    PARTITION_KEY,
    REGISTRY_DONE,
    REGISTRY_PK,
    SORT_KEY,
    TTL_ATTRIBUTE,
)
from .dynamodb_values import item as _item
from .dynamodb_values import plain as _plain
from .secrets import EMBEDDER_KEY, UPSTREAM_TOKEN, SecretVault, is_reference

_KIND = "kind"
_RETRIES = 5
_BATCH_WRITE = 25
_BATCH_GET = 100

# -- keys and field names -----------------------------------------------------------------


def _bot_pk(bot: str) -> str:
    return f"BOT#{bot}"


def _source_sk(source_id: str) -> str:
    return f"SOURCE#{source_id}"


def _doc_prefix(source_id: str) -> str:
    """Documents sort under ``DOC#``, apart from the ``SOURCE#`` items, so listing a bot's
    sources (every question's ``retrieval_view``) reads no document or generation."""
    return f"DOC#{source_id}#"


def _gen_sk(source_id: str, generation: int) -> str:
    return f"GEN#{source_id}#{generation}"


#: where documents and generations sorted in tables written before they moved out of the
#: ``SOURCE#`` range: still cleaned up, and read while a source has nothing under ``DOC#``
def _legacy_doc_prefix(source_id: str) -> str:
    return f"SOURCE#{source_id}#DOC#"


def _legacy_gen_sk(source_id: str, generation: int) -> str:
    return f"SOURCE#{source_id}#GEN#{generation}"


def _key(pk: str, sk: str) -> dict[str, Any]:
    return {PARTITION_KEY: {"S": pk}, SORT_KEY: {"S": sk}}


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


_SOURCE_FIELDS = [f.name for f in fields(Source)]
_ATTR = {name: _camel(name) for name in _SOURCE_FIELDS}
_FLOAT_FIELDS = {"last_indexed_at", "next_refresh_at", "lease_expires_at", "created_at", "updated_at"}
_INT_FIELDS = {
    "priority",
    "attempts",
    "documents_processed",
    "fragments_processed",
    "documents_failed",
    "documents_unchanged",
    "live_generation",
    "passages",
    "refresh_every",
}


def _encode_field(name: str, value: object) -> object:
    """A source field as stored (None means: remove the attribute)."""
    if value is None:
        return None
    if name == "config":
        return json.dumps(value, sort_keys=True)
    if name == "visibility_counts":
        return {str(k): int(v) for k, v in dict(value).items()}  # type: ignore[call-overload]
    if name == "cancel_requested":
        return bool(value)
    if name in _FLOAT_FIELDS:
        return float(value)  # type: ignore[arg-type]
    if name in _INT_FIELDS:
        return int(value)  # type: ignore[call-overload]
    return value


def _decode_source(item: Mapping[str, Any]) -> Source:
    values: dict[str, Any] = {}
    for name in _SOURCE_FIELDS:
        raw = item.get(_ATTR[name])
        if raw is None:
            continue
        if name == "config":
            raw = json.loads(raw)
        elif name == "visibility_counts":
            raw = {str(k): int(v) for k, v in raw.items()}
        elif name == "cancel_requested":
            raw = bool(raw)
        elif name in _FLOAT_FIELDS:
            raw = float(raw)
        elif name in _INT_FIELDS:
            raw = int(raw)
        values[name] = raw
    return Source(**values)


def _due_shard(bot: str, source_id: str) -> str:
    return f"REFRESH#{key64(f'{bot}/{source_id}') % DUE_SHARDS}"


def _due(bot: str, source_id: str, status: object, next_refresh_at: object) -> tuple[str, float] | None:
    """Where a source sits in the due index: its shard, sorted by ``schedule.due_at`` (out of
    the index when it is never due as it stands)."""
    at = due_at(str(status), float(next_refresh_at) if next_refresh_at is not None else None)  # type: ignore[arg-type]
    return (_due_shard(bot, source_id), at) if at is not None else None


def _token(item: Mapping[str, Any]) -> Token:
    expires, used = item.get("expiresAt"), item.get("lastUsedAt")
    return Token(token_hash=str(item["tokenHash"]), bot=str(item["bot"]),
                 scopes=tuple(str(s) for s in item.get("scopes", [])), created_at=float(item.get("createdAt", 0.0)),
                 expires_at=float(expires) if expires is not None else None,
                 last_used_at=float(used) if used is not None else None)


class _ConditionFailed(Conflict):
    """A conditional write's condition did not hold (callers decide what that means)."""


class DynamoDbStateStore:
    """StateStore over one DynamoDB table (see the module docstring for the layout)."""

    def __init__(self, table: str, *, client: Any = None, secrets: SecretVault | None = None):
        if client is None:
            import boto3

            client = boto3.client("dynamodb")
        self.table = table
        self.client = client
        #: where a bot's provider key and upstream token go (the item keeps a reference);
        #: None keeps them in the item (tests of the table layout, local tools)
        self.secrets = secrets

    # -- plumbing -------------------------------------------------------------------------

    def _call(self, operation: str, **kwargs: Any) -> dict[str, Any]:
        try:
            response: dict[str, Any] = getattr(self.client, operation)(**kwargs)
            return response
        except ClientError as exc:
            error = exc.response.get("Error", {})
            code = str(error.get("Code", ""))
            if code == "ConditionalCheckFailedException":
                raise _ConditionFailed("condition failed") from exc
            if code == "TransactionCanceledException":
                reasons = [str(r.get("Code")) for r in exc.response.get("CancellationReasons") or []]
                if "ConditionalCheckFailed" in reasons or "ConditionalCheckFailed" in str(error.get("Message")):
                    raise _ConditionFailed("condition failed") from exc
                raise Conflict("concurrent state change", details={"reasons": reasons}) from exc
            if code == "TransactionConflictException":
                raise Conflict("concurrent state change") from exc
            raise BackendError(f"state store {operation} failed", details={"awsCode": code}) from exc
        except BotoCoreError as exc:
            raise BackendError(f"state store {operation} failed") from exc

    def _get(self, pk: str, sk: str) -> dict[str, Any] | None:
        response = self._call("get_item", TableName=self.table, Key=_key(pk, sk), ConsistentRead=True)
        item = response.get("Item")
        return _plain(item) if item else None

    def _pages(self, operation: str, **kwargs: Any) -> Iterator[dict[str, Any]]:
        while True:
            page = self._call(operation, TableName=self.table, **kwargs)
            for item in page.get("Items", []):
                yield _plain(item)
            last = page.get("LastEvaluatedKey")
            if not last:
                return
            kwargs["ExclusiveStartKey"] = last

    def _query_prefix(self, pk: str, prefix: str, *, kind: str | None = None) -> Iterator[dict[str, Any]]:
        expr = _Expr()
        key = f"{expr.n(PARTITION_KEY)} = {expr.v(pk)} AND begins_with({expr.n(SORT_KEY)}, {expr.v(prefix)})"
        kwargs: dict[str, Any] = {"KeyConditionExpression": key, "ConsistentRead": True}
        if kind is not None:
            kwargs["FilterExpression"] = f"{expr.n(_KIND)} = {expr.v(kind)}"
        return self._pages("query", **expr._placeholders(kwargs))

    def _batch_write(self, requests: Sequence[dict[str, Any]]) -> None:
        for start in range(0, len(requests), _BATCH_WRITE):
            pending: dict[str, Any] = {self.table: list(requests[start : start + _BATCH_WRITE])}
            for attempt in range(10):
                response = self._call("batch_write_item", RequestItems=pending)
                pending = response.get("UnprocessedItems") or {}
                if not pending.get(self.table):
                    break
                time.sleep(min(0.05 * 2**attempt, 2.0))
            else:
                raise BackendError("state store batch write did not complete")

    def _batch_get(self, keys: Sequence[tuple[str, str]]) -> dict[tuple[str, str], dict[str, Any]]:
        out: dict[tuple[str, str], dict[str, Any]] = {}
        unique = list(dict.fromkeys(keys))
        for start in range(0, len(unique), _BATCH_GET):
            pending: dict[str, Any] = {
                self.table: {"Keys": [_key(pk, sk) for pk, sk in unique[start : start + _BATCH_GET]],
                             "ConsistentRead": True}
            }
            for attempt in range(10):
                response = self._call("batch_get_item", RequestItems=pending)
                for raw in response.get("Responses", {}).get(self.table, []):
                    item = _plain(raw)
                    out[(item[PARTITION_KEY], item[SORT_KEY])] = item
                pending = response.get("UnprocessedKeys") or {}
                if not pending.get(self.table):
                    break
                time.sleep(min(0.05 * 2**attempt, 2.0))
            else:
                raise BackendError("state store batch read did not complete")
        return out

    def _source_item(self, bot: str, source_id: str) -> dict[str, Any]:
        item = self._get(_bot_pk(bot), _source_sk(source_id))
        if item is None or item.get(_KIND) != "source":
            raise NotFound(f"source {source_id} not found")
        return item

    def _gen_item(self, bot: str, source_id: str, generation: int, state: str, owner: str | None) -> dict[str, Any]:
        pending = state != "live"
        return _item(
            {
                PARTITION_KEY: _bot_pk(bot),
                SORT_KEY: _gen_sk(source_id, generation),
                _KIND: "generation",
                "bot": bot,
                "sourceId": source_id,
                "generation": generation,
                "state": state,
                "owner": owner,
                DUE_PARTITION_KEY: GENERATIONS_SHARD if pending else None,
                DUE_SORT_KEY: 0 if pending else None,
            }
        )

    def _put_request(self, item: dict[str, Any]) -> dict[str, Any]:
        return {"PutRequest": {"Item": item}}

    # -- bots -----------------------------------------------------------------------------

    def get_bot(self, bot: str) -> BotSettings:
        item = self._get(_bot_pk(bot), "SETTINGS")
        if item is None:
            return BotSettings(bot=bot)
        known = {f.name for f in fields(BotSettings)}
        values = {name: item[_camel(name)] for name in known if _camel(name) in item}
        values["bot"] = bot
        if "floor" in values:
            values["floor"] = float(values["floor"])
        if "top_k" in values:
            values["top_k"] = int(values["top_k"])
        settings = BotSettings(**values)
        for holder, field_name, _ in self._secret_slots(settings):
            if is_reference(holder.get(field_name)):
                if self.secrets is None:
                    raise BackendError("a bot secret is in Secrets Manager but no vault is configured")
                holder[field_name] = self.secrets.get(holder[field_name])
        return settings

    @staticmethod
    def _secret_slots(settings: BotSettings) -> list[tuple[dict[str, Any], str, str]]:
        """(the dict holding a secret, its key, the secret's purpose) of a bot's settings."""
        slots = [(settings.embedder_options, "apiKey", EMBEDDER_KEY)] if settings.embedder_options else []
        if settings.upstream:
            slots.append((settings.upstream, "token", UPSTREAM_TOKEN))
        return slots

    def _stored_secret_refs(self, bot: str) -> dict[str, dict[str, Any]]:
        """The secret references the bot's stored settings item holds, by purpose."""
        item = self._get(_bot_pk(bot), "SETTINGS") or {}
        refs = {}
        for attr, key, purpose in (("embedderOptions", "apiKey", EMBEDDER_KEY), ("upstream", "token", UPSTREAM_TOKEN)):
            holder = item.get(attr)
            if isinstance(holder, dict) and is_reference(holder.get(key)):
                refs[purpose] = holder[key]
        return refs

    def _secrets_to_refs(self, settings: BotSettings) -> BotSettings:
        """The settings as the item stores them: each secret written to the vault and replaced
        by its reference; a secret no longer set is deleted from the vault."""
        assert self.secrets is not None
        stored = self._stored_secret_refs(settings.bot)
        out = replace(settings, embedder_options=dict(settings.embedder_options or {}),
                      upstream=dict(settings.upstream) if settings.upstream else None)
        kept = set()
        for holder, key, purpose in self._secret_slots(out):
            value = holder.get(key)
            if isinstance(value, str) and value:
                holder[key] = self.secrets.put(settings.bot, purpose, value, stored.get(purpose))
                kept.add(purpose)
            elif is_reference(value):
                kept.add(purpose)
        for purpose, ref in stored.items():
            if purpose not in kept:
                self.secrets.delete(ref)
        return out

    def put_bot(self, settings: BotSettings) -> None:
        if self.secrets is not None:
            settings = self._secrets_to_refs(settings)
        attrs = {_camel(k): v for k, v in asdict(settings).items()}
        if attrs.get("floor") is not None:
            attrs["floor"] = float(attrs["floor"])
        attrs.update({PARTITION_KEY: _bot_pk(settings.bot), SORT_KEY: "SETTINGS", _KIND: "settings"})
        self._call("put_item", TableName=self.table, Item=_item(attrs))
        self._register_bot(settings.bot)

    def set_rescue_version(self, bot: str, version: str | None) -> None:
        """One attribute of the settings item (created if the bot has none yet)."""
        expr = _Expr()
        expr.set(_camel("rescue_version"), version)
        expr.set_raw(f"{expr.n(_KIND)} = {expr.v('settings')}")
        self._call("update_item", TableName=self.table, Key=_key(_bot_pk(bot), "SETTINGS"), **expr.update())

    def version(self) -> None:
        """DynamoDB cannot say cheaply whether anything changed: callers re-read on a timer."""
        return None

    def list_bots(self) -> list[str]:
        """Every bot with settings or a source: one query of the ``BOTS`` registry, which
        ``put_bot`` and ``put_source`` keep. A table written before the registry existed is
        scanned once, and the registry back-filled (then marked ``#INDEXED``)."""
        expr = _Expr()
        key = f"{expr.n(PARTITION_KEY)} = {expr.v(REGISTRY_PK)}"
        rows = [str(i[SORT_KEY]) for i in self._pages("query", **expr._placeholders(
            {"KeyConditionExpression": key, "ProjectionExpression": expr.n(SORT_KEY), "ConsistentRead": True}))]
        if REGISTRY_DONE in rows:
            return sorted(r[len("BOT#"):] for r in rows if r.startswith("BOT#"))
        expr = _Expr()
        kinds = f"{expr.n(_KIND)} IN ({expr.v('settings')}, {expr.v('source')})"
        bots = {
            str(item[PARTITION_KEY])[len("BOT#"):]
            for item in self._pages(
                "scan", **expr._placeholders({"FilterExpression": kinds, "ProjectionExpression": expr.n(PARTITION_KEY),
                                              "ConsistentRead": True})
            )
        }
        self._batch_write([self._put_request(_item({PARTITION_KEY: REGISTRY_PK, SORT_KEY: f"BOT#{bot}"}))
                           for bot in sorted(bots)]
                          + [self._put_request(_item({PARTITION_KEY: REGISTRY_PK, SORT_KEY: REGISTRY_DONE}))])
        return sorted(bots)

    def _register_bot(self, bot: str) -> None:
        self._call("put_item", TableName=self.table,
                   Item=_item({PARTITION_KEY: REGISTRY_PK, SORT_KEY: f"BOT#{bot}"}))

    # -- sources --------------------------------------------------------------------------

    def put_source(self, source: Source) -> None:
        """Create or replace a source. An update, not a put, so the item keeps its generation
        counter (``lastGeneration``): a generation number is never handed out twice."""
        if "#" in source.id or "#" in source.bot or not source.id:
            raise InvalidInput("source and bot ids cannot contain '#'")
        expr = _Expr()
        for name in _SOURCE_FIELDS:
            if name not in ("bot", "id"):
                expr.set(_ATTR[name], _encode_field(name, getattr(source, name)))
        expr.set("bot", source.bot)
        expr.set("id", source.id)
        expr.set(_KIND, "source")
        expr.set_due(_due(source.bot, source.id, source.status, source.next_refresh_at))
        self._call("update_item", TableName=self.table, Key=_key(_bot_pk(source.bot), _source_sk(source.id)),
                   **expr.update())
        self._register_bot(source.bot)

    def get_source(self, bot: str, source_id: str) -> Source | None:
        item = self._get(_bot_pk(bot), _source_sk(source_id))
        return _decode_source(item) if item and item.get(_KIND) == "source" else None

    def _source_items(self, bot: str) -> list[dict[str, Any]]:
        """The bot's source items: one query over the ``SOURCE#`` range, which holds sources
        only (documents and generations sort under ``DOC#`` / ``GEN#``; the filter drops the
        children a table written before that move may still hold until they are cleaned up)."""
        return list(self._query_prefix(_bot_pk(bot), "SOURCE#", kind="source"))

    def list_sources(self, bot: str) -> list[Source]:
        sources = [_decode_source(item) for item in self._source_items(bot)]
        return sorted(sources, key=lambda s: (s.created_at, s.id))

    def delete_source(self, bot: str, source_id: str) -> None:
        """Delete the source and its documents; every generation it had becomes retired (an
        orphan for the index cleanup)."""
        pk = _bot_pk(bot)
        children = [*self._query_prefix(pk, _doc_prefix(source_id)), *self._query_prefix(pk, f"GEN#{source_id}#"),
                    *self._query_prefix(pk, f"{_source_sk(source_id)}#")]
        retire = [
            self._put_request(self._gen_item(bot, source_id, int(c["generation"]), "retired", None))
            for c in children
            if c.get(_KIND) == "generation"
        ]
        self._batch_write(retire)
        doomed = [str(c[SORT_KEY]) for c in children if c.get(_KIND) == "document"]
        doomed.append(_source_sk(source_id))
        self._batch_write([{"DeleteRequest": {"Key": _key(pk, sk)}} for sk in doomed])

    def update_source(self, bot: str, source_id: str, **changes: object) -> Source:
        check_update(changes)
        if not changes:
            source = self.get_source(bot, source_id)
            if source is None:
                raise NotFound(f"source {source_id} not found")
            return source
        key = _key(_bot_pk(bot), _source_sk(source_id))
        if "status" not in changes and "next_refresh_at" not in changes:
            expr = _Expr()
            for name, value in changes.items():
                expr.set(_ATTR[name], _encode_field(name, value))
            try:
                response = self._call("update_item", TableName=self.table, Key=key, ReturnValues="ALL_NEW",
                                      **expr.update(f"{expr.n(_KIND)} = {expr.v('source')}"))
            except _ConditionFailed as exc:
                raise NotFound(f"source {source_id} not found") from exc
            return _decode_source(_plain(response["Attributes"]))
        for _ in range(_RETRIES):
            item = self._source_item(bot, source_id)
            expr = _Expr()
            for name, value in changes.items():
                expr.set(_ATTR[name], _encode_field(name, value))
            status = changes.get("status", item.get("status"))
            next_at = changes["next_refresh_at"] if "next_refresh_at" in changes else item.get("nextRefreshAt")
            expr.set_due(_due(bot, source_id, status, next_at))
            try:
                response = self._call("update_item", TableName=self.table, Key=key, ReturnValues="ALL_NEW",
                                      **expr.update(self._due_guard(expr, item)))
            except _ConditionFailed:
                continue  # status or schedule moved under us (or the source vanished): re-read
            return _decode_source(_plain(response["Attributes"]))
        raise Conflict("source changed concurrently; try again")

    @staticmethod
    def _due_guard(expr: _Expr, item: Mapping[str, Any]) -> str:
        """Condition: the attributes the due index position was computed from are unchanged."""
        return (
            f"{expr.equals_or_absent('status', item.get('status'))} AND "
            f"{expr.equals_or_absent('nextRefreshAt', item.get('nextRefreshAt'))}"
        )

    def retrieval_view(self, bot: str) -> tuple[BotSettings, list[LiveSource]]:
        return self.get_bot(bot), self.live_sources(bot)

    def live_sources(self, bot: str) -> list[LiveSource]:
        out = []
        for source in self.list_sources(bot):
            if source.live_generation is None or source.status == "disabled":
                continue
            out.append(
                LiveSource(
                    source_id=source.id,
                    generation=int(source.live_generation),
                    type=source.type,
                    name=source.name,
                    priority=int(source.priority),
                    weight=source.weight,
                    last_indexed_at=source.last_indexed_at,
                    visibility_counts=dict(source.visibility_counts),
                )
            )
        return out

    def due_sources(self, now: float, limit: int = 50) -> list[Source]:
        """Sources to refresh now, oldest update first. Candidates come from the ``due`` index
        (at most ``limit`` per shard), are re-read consistently and judged again."""
        candidates: list[tuple[str, str]] = []
        for shard in range(DUE_SHARDS):
            expr = _Expr()
            cond = (
                f"{expr.n(DUE_PARTITION_KEY)} = {expr.v(f'REFRESH#{shard}')} "
                f"AND {expr.n(DUE_SORT_KEY)} <= {expr.v(now)}"
            )
            kwargs = expr._placeholders({"IndexName": DUE_INDEX, "KeyConditionExpression": cond, "Limit": limit})
            for taken, item in enumerate(self._pages("query", **kwargs), start=1):
                candidates.append((str(item[PARTITION_KEY]), str(item[SORT_KEY])))
                if taken >= limit:
                    break
        fresh = self._batch_get(candidates)
        due = []
        for item in fresh.values():
            if item.get(_KIND) != "source":
                continue
            next_at = item.get("nextRefreshAt")
            if is_due(str(item.get("status")), float(next_at) if next_at is not None else None, now):
                due.append(_decode_source(item))
        due.sort(key=lambda s: (s.updated_at, s.bot, s.id))
        return due[:limit]

    # -- leases ---------------------------------------------------------------------------

    def acquire_lease(self, bot: str, source_id: str, owner: str, now: float, ttl: float) -> bool:
        expr = _Expr()
        expr.set("leaseOwner", owner)
        expr.set("leaseExpiresAt", now + ttl)
        expr.set_raw(f"{expr.n('attempts')} = if_not_exists({expr.n('attempts')}, {expr.v(0)}) + {expr.v(1)}")
        expr.set("cancelRequested", False)
        condition = (
            f"{expr.n(_KIND)} = {expr.v('source')} AND (attribute_not_exists({expr.n('leaseOwner')}) "
            f"OR {expr.n('leaseExpiresAt')} < {expr.v(now)})"
        )
        try:
            self._call("update_item", TableName=self.table, Key=_key(_bot_pk(bot), _source_sk(source_id)),
                       **expr.update(condition))
        except _ConditionFailed:
            return False
        return True

    def extend_lease(self, bot: str, source_id: str, owner: str, now: float, ttl: float) -> bool:
        expr = _Expr()
        expr.set("leaseExpiresAt", now + ttl)
        condition = f"{expr.n('leaseOwner')} = {expr.v(owner)} AND {expr.n('leaseExpiresAt')} >= {expr.v(now)}"
        try:
            self._call("update_item", TableName=self.table, Key=_key(_bot_pk(bot), _source_sk(source_id)),
                       **expr.update(condition))
        except _ConditionFailed:
            return False
        return True

    def release_lease(self, bot: str, source_id: str, owner: str) -> None:
        expr = _Expr()
        expr.remove("leaseOwner")
        expr.remove("leaseExpiresAt")
        try:
            self._call("update_item", TableName=self.table, Key=_key(_bot_pk(bot), _source_sk(source_id)),
                       **expr.update(f"{expr.n('leaseOwner')} = {expr.v(owner)}"))
        except _ConditionFailed:
            return  # not the owner (or no such source): nothing to release

    def expired_leases(self, now: float) -> list[Source]:
        """Sources whose lease expired: the ``leases`` index's expired entries (one query),
        re-read consistently and judged on the fresh copy."""
        expr = _Expr()
        cond = f"{expr.n(LEASE_PARTITION_KEY)} = {expr.v('source')} AND {expr.n(LEASE_SORT_KEY)} < {expr.v(now)}"
        candidates = [
            (str(item[PARTITION_KEY]), str(item[SORT_KEY]))
            for item in self._pages("query", **expr._placeholders({"IndexName": LEASE_INDEX,
                                                                    "KeyConditionExpression": cond}))
        ]
        expired = [
            _decode_source(item) for item in self._batch_get(candidates).values()
            if item.get(_KIND) == "source" and item.get("leaseOwner") is not None
            and float(item.get("leaseExpiresAt", now)) < now
        ]
        return sorted(expired, key=lambda s: (s.bot, s.id))

    # -- generations ----------------------------------------------------------------------

    def begin_generation(self, bot: str, source_id: str, owner: str) -> int:
        """Hand out the next generation number (never reused) to the lease owner and record it
        as staging — one transaction."""
        pk = _bot_pk(bot)
        for _ in range(_RETRIES):
            item = self._source_item(bot, source_id)
            if item.get("leaseOwner") != owner:
                raise Conflict("lease not held", code=Code.LEASE_LOST)
            previous = item.get("lastGeneration")
            generation = max(int(previous or 0), int(item.get("liveGeneration") or 0)) + 1
            expr = _Expr()
            expr.set("lastGeneration", generation)
            condition = (
                f"{expr.n('leaseOwner')} = {expr.v(owner)} AND {expr.equals_or_absent('lastGeneration', previous)}"
            )
            update = {"TableName": self.table, "Key": _key(pk, _source_sk(source_id)), **expr.update(condition)}
            put = {"TableName": self.table, "Item": self._gen_item(bot, source_id, generation, "staging", owner)}
            try:
                self._call("transact_write_items", TransactItems=[{"Update": update}, {"Put": put}])
            except _ConditionFailed:
                continue
            return generation
        raise Conflict("lease not held", code=Code.LEASE_LOST)

    def commit_generation(
        self,
        bot: str,
        source_id: str,
        owner: str,
        generation: int,
        *,
        checksum: str,
        documents: Sequence[Document],
        counters: dict[str, int],
        now: float,
        visibility_counts: dict[str, int] | None = None,
        error_code: str | None = None,
    ) -> int | None:
        """Flip the live generation, write checksum and counters and release the lease in one
        conditional write; then replace the documents (see the module docstring for why that
        order is safe). Returns the previous live generation (now retired)."""
        pk = _bot_pk(bot)
        for _ in range(_RETRIES):
            item = self._source_item(bot, source_id)
            holder = item.get("leaseOwner")
            if holder != owner:
                if item.get("liveGeneration") == generation and item.get("committedBy") == owner:
                    # this very commit already flipped (a retried call): finish its documents
                    self._replace_documents(bot, source_id, generation, documents)
                    previous = item.get("previousGeneration")
                    return int(previous) if previous is not None else None
                raise Conflict("lease lost before commit", code=Code.LEASE_LOST)
            old = item.get("liveGeneration")
            retired = retired_generation(old, generation)
            every = item.get(_ATTR["refresh_every"])
            changes = commit_changes(
                status=item.get(_ATTR["status"]), refresh_every=float(every) if every is not None else None,
                generation=generation, checksum=checksum, counters=counters,
                visibility_counts=visibility_counts, error_code=error_code, now=now,
            )
            status, next_at = changes["status"], changes["next_refresh_at"]
            expr = _Expr()
            for name, value in changes.items():
                expr.set(_ATTR[name], _encode_field(name, value))
            expr.set("previousGeneration", retired)
            expr.set("committedBy", owner)
            expr.set_due(_due(bot, source_id, status, next_at))
            condition = (
                f"{expr.n('leaseOwner')} = {expr.v(owner)} AND {expr.equals_or_absent('liveGeneration', old)} "
                f"AND {expr.equals_or_absent(_ATTR['status'], item.get(_ATTR['status']))} "
                f"AND {expr.equals_or_absent('nextRefreshAt', item.get('nextRefreshAt'))}"
            )
            transaction: list[dict[str, Any]] = [
                {"Update": {"TableName": self.table, "Key": _key(pk, _source_sk(source_id)),
                            **expr.update(condition)}},
                {"Put": {"TableName": self.table, "Item": self._gen_item(bot, source_id, generation, "live", None)}},
            ]
            if retired is not None:
                transaction.append(
                    {"Put": {"TableName": self.table,
                             "Item": self._gen_item(bot, source_id, retired, "retired", None)}}
                )
            try:
                self._call("transact_write_items", TransactItems=transaction)
            except _ConditionFailed:
                continue  # re-read: lease lost (-> Conflict above) or a concurrent schedule change
            self._replace_documents(bot, source_id, generation, documents)
            return retired
        raise Conflict("source changed concurrently during commit", code=Code.LEASE_LOST)

    def _replace_documents(self, bot: str, source_id: str, generation: int, documents: Sequence[Document]) -> None:
        pk = _bot_pk(bot)
        prefix = _doc_prefix(source_id)
        latest = {d.id: d for d in documents}  # one item per document id (the last one wins)
        puts = [
            self._put_request(
                _item(
                    {
                        PARTITION_KEY: pk,
                        SORT_KEY: prefix + d.id,
                        _KIND: "document",
                        "id": d.id,
                        "bot": bot,
                        "sourceId": source_id,
                        "title": d.title,
                        "path": d.path,
                        "url": d.url,
                        "visibility": d.visibility,
                        "checksum": d.checksum,
                        "fragments": int(d.fragments),
                        "errorCode": d.error_code,
                        "etag": d.etag,
                        "lastModified": d.last_modified,
                        "generation": generation,
                    }
                )
            )
            for d in latest.values()
        ]
        keep = {prefix + doc_id for doc_id in latest}
        stale = [str(i[SORT_KEY]) for i in self._query_prefix(pk, prefix) if str(i[SORT_KEY]) not in keep]
        stale += [str(i[SORT_KEY]) for i in self._query_prefix(pk, _legacy_doc_prefix(source_id))]
        self._batch_write(puts)
        self._batch_write([{"DeleteRequest": {"Key": _key(pk, sk)}} for sk in stale])

    def withdraw_generation(self, bot: str, source_id: str, **changes: object) -> int | None:
        """Take a source out of every search (no live generation) in one write, with any
        other field changes. Returns the generation that was live, now retired."""
        for name in changes:
            if name not in _SOURCE_FIELDS or name in ("bot", "id"):
                raise ValueError(f"unknown field {name}")
        pk = _bot_pk(bot)
        for _ in range(_RETRIES):
            item = self._source_item(bot, source_id)
            old = item.get("liveGeneration")
            merged: dict[str, object] = {"live_generation": None, "passages": 0, "visibility_counts": {}}
            merged.update(changes)
            expr = _Expr()
            for name, value in merged.items():
                expr.set(_ATTR[name], _encode_field(name, value))
            status = merged.get("status", item.get("status"))
            next_at = merged["next_refresh_at"] if "next_refresh_at" in merged else item.get("nextRefreshAt")
            expr.set_due(_due(bot, source_id, status, next_at))
            condition = f"{expr.equals_or_absent('liveGeneration', old)} AND {self._due_guard(expr, item)}"
            transaction: list[dict[str, Any]] = [
                {"Update": {"TableName": self.table, "Key": _key(pk, _source_sk(source_id)),
                            **expr.update(condition)}}
            ]
            if old is not None:
                transaction.append(
                    {"Put": {"TableName": self.table,
                             "Item": self._gen_item(bot, source_id, int(old), "retired", None)}}
                )
            try:
                self._call("transact_write_items", TransactItems=transaction)
            except _ConditionFailed:
                continue
            return int(old) if old is not None else None
        raise Conflict("source changed concurrently; try again")

    def finish_generation(self, bot: str, source_id: str, generation: int) -> None:
        """The index no longer holds this (retired or abandoned) generation: forget it."""
        for sk in (_gen_sk(source_id, generation), _legacy_gen_sk(source_id, generation)):
            expr = _Expr()
            try:
                self._call("delete_item", TableName=self.table, Key=_key(_bot_pk(bot), sk),
                           **expr.condition(f"{expr.n('state')} <> {expr.v('live')}"))
            except _ConditionFailed:
                continue  # live (kept) or already gone

    def _pending_generations(self) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
        """Non-live generation items (consistently re-read) with their source items."""
        expr = _Expr()
        cond = f"{expr.n(DUE_PARTITION_KEY)} = {expr.v(GENERATIONS_SHARD)}"
        listed = [
            (str(i[PARTITION_KEY]), str(i[SORT_KEY]))
            for i in self._pages("query", **expr._placeholders({"IndexName": DUE_INDEX,
                                                                 "KeyConditionExpression": cond}))
        ]
        gens = self._batch_get(listed)
        sources = self._batch_get([(pk, _source_sk(str(g["sourceId"]))) for (pk, _), g in gens.items()])
        out = []
        for (pk, _), gen in sorted(gens.items()):
            if gen.get(_KIND) != "generation" or gen.get("state") == "live":
                continue
            source = sources.get((pk, _source_sk(str(gen["sourceId"]))))
            if source is not None and source.get("liveGeneration") == gen.get("generation"):
                continue  # never treat the live generation as garbage, whatever the bookkeeping says
            out.append((gen, source))
        return out

    def orphan_generations(self) -> list[tuple[str, str, int]]:
        """Generations the index may still hold that no query may ever see: retired ones, and
        staging ones whose writer no longer holds the source's lease."""
        out = []
        for gen, source in self._pending_generations():
            state, owner = gen.get("state"), gen.get("owner")
            holder = source.get("leaseOwner") if source else None
            if state == "retired" or (state == "staging" and (holder is None or holder != owner)):
                out.append((str(gen["bot"]), str(gen["sourceId"]), int(gen["generation"])))
        return sorted(out)

    def stale_staging(self, now: float) -> list[tuple[str, str, int]]:
        """Staging generations whose lease expired (the writer died)."""
        out = []
        for gen, source in self._pending_generations():
            if gen.get("state") != "staging" or source is None:
                continue
            expires = source.get("leaseExpiresAt")
            if source.get("leaseOwner") == gen.get("owner") and expires is not None and float(expires) < now:
                out.append((str(gen["bot"]), str(gen["sourceId"]), int(gen["generation"])))
        return sorted(out)

    # -- documents ------------------------------------------------------------------------

    def list_documents(self, bot: str, source_id: str) -> list[Document]:
        docs = [
            Document(
                id=str(i["id"]),
                bot=bot,
                source_id=source_id,
                title=str(i.get("title", "")),
                path=str(i.get("path", "")),
                url=i.get("url"),
                visibility=str(i.get("visibility", "agent")),
                checksum=i.get("checksum"),
                fragments=int(i.get("fragments", 0)),
                error_code=i.get("errorCode"),
                etag=i.get("etag"),
                last_modified=i.get("lastModified"),
            )
            for i in (list(self._query_prefix(_bot_pk(bot), _doc_prefix(source_id)))
                      or self._query_prefix(_bot_pk(bot), _legacy_doc_prefix(source_id)))
        ]
        return sorted(docs, key=lambda d: (d.path, d.id))

    # -- agents ---------------------------------------------------------------------------

    @staticmethod
    def _agent(item: Mapping[str, Any]) -> Agent:
        return Agent(id=str(item["id"]), bot=str(item["bot"]), status=str(item.get("status", "active")),
                     source_ids=[str(s) for s in item.get("sourceIds", [])])

    def get_agent(self, bot: str, agent_id: str) -> Agent | None:
        item = self._get(_bot_pk(bot), f"AGENT#{agent_id}")
        return self._agent(item) if item else None

    def put_agent(self, agent: Agent) -> None:
        attrs = {PARTITION_KEY: _bot_pk(agent.bot), SORT_KEY: f"AGENT#{agent.id}", _KIND: "agent", "id": agent.id,
                 "bot": agent.bot, "status": agent.status, "sourceIds": list(agent.source_ids)}
        self._call("put_item", TableName=self.table, Item=_item(attrs))

    def list_agents(self, bot: str) -> list[Agent]:
        return sorted((self._agent(i) for i in self._query_prefix(_bot_pk(bot), "AGENT#")), key=lambda a: a.id)

    # -- tokens ---------------------------------------------------------------------------

    def put_token(self, token: Token) -> None:
        """The token item and the bot's item naming it, in one transaction."""
        expr = _Expr()
        attrs = {PARTITION_KEY: f"TOKEN#{token.token_hash}", SORT_KEY: "TOKEN", _KIND: "token",
                 "tokenHash": token.token_hash, "bot": token.bot, "scopes": list(token.scopes),
                 "createdAt": float(token.created_at), "expiresAt": token.expires_at,
                 "lastUsedAt": token.last_used_at}
        ref = {PARTITION_KEY: _bot_pk(token.bot), SORT_KEY: f"TOKEN#{token.id}", _KIND: "tokenref",
               "tokenHash": token.token_hash}
        put = {"TableName": self.table, "Item": _item({k: v for k, v in attrs.items() if v is not None}),
               **expr.condition(f"attribute_not_exists({expr.n(PARTITION_KEY)})")}
        try:
            self._call("transact_write_items",
                       TransactItems=[{"Put": put}, {"Put": {"TableName": self.table, "Item": _item(ref)}}])
        except _ConditionFailed as exc:
            raise Conflict("token already exists") from exc

    def get_token(self, token_hash: str) -> Token | None:
        item = self._get(f"TOKEN#{token_hash}", "TOKEN")
        return _token(item) if item is not None else None

    def list_tokens(self, bot: str) -> list[Token]:
        refs = [str(i["tokenHash"]) for i in self._query_prefix(_bot_pk(bot), "TOKEN#", kind="tokenref")]
        items = self._batch_get([(f"TOKEN#{h}", "TOKEN") for h in refs])
        tokens = [_token(item) for item in items.values() if str(item.get("bot")) == bot]
        return sorted(tokens, key=lambda t: (t.created_at, t.token_hash))

    def delete_token(self, bot: str, token_id: str) -> bool:
        ref = self._get(_bot_pk(bot), f"TOKEN#{token_id}")
        if ref is None or ref.get(_KIND) != "tokenref":
            return False
        token_hash = str(ref["tokenHash"])
        self._call("transact_write_items", TransactItems=[
            {"Delete": {"TableName": self.table, "Key": _key(f"TOKEN#{token_hash}", "TOKEN")}},
            {"Delete": {"TableName": self.table, "Key": _key(_bot_pk(bot), f"TOKEN#{token_id}")}},
        ])
        return True

    def touch_token(self, token_hash: str, now: float) -> None:
        expr = _Expr()
        expr.set("lastUsedAt", float(now))
        try:
            self._call("update_item", TableName=self.table, Key=_key(f"TOKEN#{token_hash}", "TOKEN"),
                       **expr.update(f"attribute_exists({expr.n(PARTITION_KEY)})"))
        except _ConditionFailed:
            return  # revoked meanwhile: nothing to record

    # -- retrievals -----------------------------------------------------------------------

    def put_retrieval(self, record: RetrievalRecord) -> None:
        """DynamoDB's TTL deletes the record some time after ``expiresAt`` (epoch seconds)."""
        attrs = {PARTITION_KEY: _bot_pk(record.bot), SORT_KEY: f"RETRIEVAL#{record.id}", _KIND: "retrieval",
                 "id": record.id, "bot": record.bot, "audience": record.audience,
                 "served": [list(t) for t in record.served], "createdAt": float(record.created_at),
                 TTL_ATTRIBUTE: float(record.expires_at)}
        self._call("put_item", TableName=self.table, Item=_item(attrs))

    def get_retrieval(self, bot: str, retrieval_id: str) -> RetrievalRecord | None:
        item = self._get(_bot_pk(bot), f"RETRIEVAL#{retrieval_id}")
        if item is None:
            return None
        return RetrievalRecord(
            id=str(item["id"]),
            bot=str(item["bot"]),
            audience=str(item["audience"]),
            served=[(str(a), str(b), str(c)) for a, b, c in item.get("served", [])],
            created_at=float(item["createdAt"]),
            expires_at=float(item[TTL_ATTRIBUTE]),
        )

    # -- answer time: live tables and gaps (knowledge.answer) ------------------------------

    def put_live_table(self, bot: str, source_id: str, table: str, rows: list[dict[str, Any]]) -> None:
        """One item per table (rows as JSON, which round-trips numbers exactly): one put
        replaces the whole table."""
        attrs = {PARTITION_KEY: _bot_pk(bot), SORT_KEY: f"LIVE#{source_id}#{table}", _KIND: "live_table",
                 "sourceId": source_id, "name": table, "rows": json.dumps(rows, ensure_ascii=False)}
        self._call("put_item", TableName=self.table, Item=_item(attrs))

    def get_live_tables(self, bot: str, source_id: str) -> dict[str, list[dict[str, Any]]]:
        items = self._query_prefix(_bot_pk(bot), f"LIVE#{source_id}#", kind="live_table")
        tables = {str(i["name"]): json.loads(str(i["rows"])) for i in items if i.get("sourceId") == source_id}
        return dict(sorted(tables.items()))

    def delete_live_tables(self, bot: str, source_id: str) -> int:
        pk = _bot_pk(bot)
        items = self._query_prefix(pk, f"LIVE#{source_id}#", kind="live_table")
        doomed = [str(i[SORT_KEY]) for i in items if i.get("sourceId") == source_id]
        self._batch_write([{"DeleteRequest": {"Key": _key(pk, sk)}} for sk in doomed])
        return len(doomed)

    @staticmethod
    def _gap_sk(audience: str, created_at: float, gap_id: str = "") -> str:
        return f"GAP#{audience}#{max(0, int(created_at * 1000)):015d}#{gap_id}"

    def put_gap(self, gap: GapRecord) -> None:
        """DynamoDB's TTL deletes the gap some time after ``expiresAt``; reads filter until then."""
        attrs = {PARTITION_KEY: _bot_pk(gap.bot), SORT_KEY: self._gap_sk(gap.audience, gap.created_at, gap.id),
                 _KIND: "gap", "id": gap.id, "bot": gap.bot, "audience": gap.audience, "question": gap.question,
                 "outcome": gap.outcome, "topic": gap.topic, "createdAt": float(gap.created_at),
                 TTL_ATTRIBUTE: float(gap.expires_at)}
        self._call("put_item", TableName=self.table, Item=_item(attrs))

    def put_gap_later(self, make: Callable[[], GapRecord]) -> None:
        """At once: a Lambda's process is frozen once it returns, so nothing is left to do behind it."""
        self.put_gap(make())

    def list_gaps(self, bot: str, audience: str | None, *, since: float, now: float) -> list[GapRecord]:
        """One key-range query per audience (``since`` bounds the sort key), expired items
        filtered until the TTL deletes them."""
        items: list[dict[str, Any]] = []
        for aud in (audience,) if audience is not None else AUDIENCES:
            expr = _Expr()
            key = (f"{expr.n(PARTITION_KEY)} = {expr.v(_bot_pk(bot))} AND {expr.n(SORT_KEY)} BETWEEN "
                   f"{expr.v(self._gap_sk(aud, since))} AND {expr.v(f'GAP#{aud}#~')}")
            items.extend(self._pages("query", **expr._placeholders({"KeyConditionExpression": key,
                                                                      "ConsistentRead": True})))
        gaps = [
            GapRecord(id=str(i["id"]), bot=str(i["bot"]), audience=str(i["audience"]), question=str(i["question"]),
                      outcome=str(i["outcome"]), topic=None if i.get("topic") is None else str(i["topic"]),
                      created_at=float(i["createdAt"]), expires_at=float(i[TTL_ATTRIBUTE]))
            for i in items
            if i.get(_KIND) == "gap"
        ]
        return sorted((g for g in gaps if g.created_at >= since and g.expires_at > now),
                      key=lambda g: (g.created_at, g.id))
