"""SQLite implementation of the StateStore port (embedded mode).

One file, WAL journal, one connection per thread. Every multi-row change runs in one
transaction (``with self._tx() as db``), so a reader sees the state before or after it.
Leases are conditional updates on (owner, expiry), the same rule DynamoDB applies with a
condition expression.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, fields, replace
from pathlib import Path
from typing import Any

from ...errors import BackendError, Conflict, NotFound
from ...model import (
    TOKEN_ID_CHARS,
    TYPE_WEIGHT,
    Agent,
    BotSettings,
    Document,
    GapRecord,
    LiveSource,
    RetrievalRecord,
    Source,
    Token,
)
from ...schedule import NEVER_DUE, QUEUED
from ...store_rules import check_update, commit_changes, retired_generation
from .group_commit import GroupCommitWriter

SCHEMA = """
CREATE TABLE IF NOT EXISTS bots (
    bot TEXT PRIMARY KEY,
    settings TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS sources (
    bot TEXT NOT NULL,
    id TEXT NOT NULL,
    type TEXT NOT NULL,
    name TEXT NOT NULL,
    visibility TEXT NOT NULL,
    priority INTEGER NOT NULL DEFAULT 0,
    config TEXT NOT NULL DEFAULT '{}',
    status TEXT NOT NULL,
    error_code TEXT,
    error_message TEXT,
    attempts INTEGER NOT NULL DEFAULT 0,
    documents_processed INTEGER NOT NULL DEFAULT 0,
    fragments_processed INTEGER NOT NULL DEFAULT 0,
    documents_failed INTEGER NOT NULL DEFAULT 0,
    documents_unchanged INTEGER NOT NULL DEFAULT 0,
    checksum TEXT,
    live_generation INTEGER,
    passages INTEGER NOT NULL DEFAULT 0,
    last_indexed_at REAL,
    refresh_every INTEGER,
    next_refresh_at REAL,
    lease_owner TEXT,
    lease_expires_at REAL,
    cancel_requested INTEGER NOT NULL DEFAULT 0,
    visibility_counts TEXT NOT NULL DEFAULT '{}',
    created_at REAL NOT NULL DEFAULT 0,
    updated_at REAL NOT NULL DEFAULT 0,
    last_generation INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (bot, id)
);
CREATE INDEX IF NOT EXISTS sources_due ON sources (next_refresh_at) WHERE next_refresh_at IS NOT NULL;
CREATE TABLE IF NOT EXISTS generations (
    bot TEXT NOT NULL,
    source_id TEXT NOT NULL,
    generation INTEGER NOT NULL,
    state TEXT NOT NULL,           -- staging | live | retired
    owner TEXT,
    PRIMARY KEY (bot, source_id, generation)
);
CREATE TABLE IF NOT EXISTS documents (
    bot TEXT NOT NULL,
    source_id TEXT NOT NULL,
    id TEXT NOT NULL,
    title TEXT NOT NULL,
    path TEXT NOT NULL,
    url TEXT,
    visibility TEXT NOT NULL,
    checksum TEXT,
    fragments INTEGER NOT NULL DEFAULT 0,
    error_code TEXT,
    etag TEXT,
    last_modified TEXT,
    PRIMARY KEY (bot, source_id, id)
);
CREATE TABLE IF NOT EXISTS agents (
    bot TEXT NOT NULL,
    id TEXT NOT NULL,
    status TEXT NOT NULL,
    source_ids TEXT NOT NULL,
    PRIMARY KEY (bot, id)
);
CREATE TABLE IF NOT EXISTS tokens (
    token_hash TEXT PRIMARY KEY,
    bot TEXT NOT NULL,
    scopes TEXT NOT NULL,
    created_at REAL NOT NULL,
    expires_at REAL,
    last_used_at REAL
);
"""

#: columns added to tables an older version created
ADDED_COLUMNS = (("tokens", "expires_at", "REAL"), ("tokens", "last_used_at", "REAL"),
                 ("sources", "documents_unchanged", "INTEGER NOT NULL DEFAULT 0"),
                 ("documents", "etag", "TEXT"), ("documents", "last_modified", "TEXT"))
#: the bot settings that are secrets: kept out of the database, in a 0600 file beside it
SECRETS_FILE = "secrets.json"

#: retrieval records live in a file of their own (see ``GroupCommitWriter``)
RECORDS_SCHEMA = """
CREATE TABLE IF NOT EXISTS retrievals (
    bot TEXT NOT NULL,
    id TEXT NOT NULL,
    audience TEXT NOT NULL,
    served TEXT NOT NULL,
    created_at REAL NOT NULL,
    expires_at REAL NOT NULL,
    PRIMARY KEY (bot, id)
);
CREATE INDEX IF NOT EXISTS retrievals_expiry ON retrievals (expires_at);
"""

def _token(r: sqlite3.Row) -> Token:
    return Token(token_hash=r["token_hash"], bot=r["bot"], scopes=tuple(s for s in r["scopes"].split(",") if s),
                 created_at=r["created_at"], expires_at=r["expires_at"], last_used_at=r["last_used_at"])


def _split_secrets(settings: BotSettings) -> tuple[BotSettings, dict[str, str]]:
    """(the settings without their secrets, the secrets by name)."""
    secrets: dict[str, str] = {}
    options = dict(settings.embedder_options or {})
    if options.get("apiKey"):
        secrets["embedderApiKey"] = str(options["apiKey"])
    options.pop("apiKey", None)
    upstream = dict(settings.upstream) if settings.upstream else None
    if upstream is not None:
        if upstream.get("token"):
            secrets["upstreamToken"] = str(upstream["token"])
        upstream.pop("token", None)
    return replace(settings, embedder_options=options, upstream=upstream), secrets


def _with_secrets(settings: BotSettings, secrets: dict[str, str]) -> BotSettings:
    if "embedderApiKey" in secrets:
        settings.embedder_options = {**(settings.embedder_options or {}), "apiKey": secrets["embedderApiKey"]}
    if "upstreamToken" in secrets and settings.upstream is not None:
        settings.upstream = {**settings.upstream, "token": secrets["upstreamToken"]}
    return settings


#: answer time (knowledge.answer): live tables in the main file, gaps beside the retrieval
#: records (recording a gap is not a change of state, so it leaves the per-thread caches valid)
ANSWER_SCHEMA = """
CREATE TABLE IF NOT EXISTS live_tables (
    bot TEXT NOT NULL,
    source_id TEXT NOT NULL,
    name TEXT NOT NULL,
    rows TEXT NOT NULL,
    PRIMARY KEY (bot, source_id, name)
);
"""
GAPS_SCHEMA = """
CREATE TABLE IF NOT EXISTS gaps (
    bot TEXT NOT NULL,
    id TEXT NOT NULL,
    audience TEXT NOT NULL,
    question TEXT NOT NULL,
    outcome TEXT NOT NULL,
    topic TEXT,
    created_at REAL NOT NULL,
    expires_at REAL NOT NULL,
    PRIMARY KEY (bot, id)
);
CREATE INDEX IF NOT EXISTS gaps_time ON gaps (bot, created_at);
CREATE INDEX IF NOT EXISTS gaps_expiry ON gaps (expires_at);
"""

_SOURCE_FIELDS = [f.name for f in fields(Source)]
_JSON_FIELDS = {"config", "visibility_counts"}
_BOOL_FIELDS = {"cancel_requested"}

log = logging.getLogger(__name__)


def _own_copy(settings: BotSettings) -> BotSettings:
    """A copy of cached settings that the caller may change without changing the cache."""
    return replace(settings, products=list(settings.products), embedder_options=dict(settings.embedder_options),
                   upstream=None if settings.upstream is None else dict(settings.upstream),
                   answer=None if settings.answer is None else dict(settings.answer))

_INSERT_RETRIEVAL = (
    "INSERT INTO retrievals (bot, id, audience, served, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)"
)
_PURGE_EVERY = 64  # expired retrieval records are purged every this many inserts, not per question
def _source_from_row(row: sqlite3.Row) -> Source:
    values: dict[str, Any] = {}
    for name in _SOURCE_FIELDS:
        value = row[name]
        if name in _JSON_FIELDS:
            value = json.loads(value or "{}")
        elif name in _BOOL_FIELDS:
            value = bool(value)
        values[name] = value
    return Source(**values)


def _encode(name: str, value: object) -> object:
    if name in _JSON_FIELDS:
        return json.dumps(value, sort_keys=True)
    if name in _BOOL_FIELDS:
        return int(bool(value))
    return value


class SqliteStateStore:
    """StateStore over one SQLite file."""

    def __init__(self, path: str | Path):
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        self._retrieval_puts = 0
        self._write_serial = 0  # bumped by every transaction this process commits
        self._conn().executescript(SCHEMA)  # idempotent DDL; executescript commits itself
        self._add_columns()
        self._memory_secrets: dict[str, dict[str, str]] = {}
        # Retrieval records go to a second file, written behind the question by a background
        # thread: a commit there is not a change of state, so it leaves the per-thread caches
        # of this file (keyed on its data_version) valid.
        if self.path == ":memory:":
            self.records_path = ":memory:"
        else:
            main = Path(self.path)
            self.records_path = str(main.with_name(f"{main.stem}-retrievals{main.suffix}"))
        self._records_conn().executescript(RECORDS_SCHEMA)
        self._conn().executescript(ANSWER_SCHEMA)
        self._records_conn().executescript(GAPS_SCHEMA)
        self._adopt_older_records()
        self._records = GroupCommitWriter(self._insert_retrievals)
        # gaps are built (their questions redacted) and committed by the background thread only
        self._gaps = GroupCommitWriter(self._insert_gaps, batch=None)

    # -- connection handling --------------------------------------------------------------

    def _conn(self) -> sqlite3.Connection:
        return self._thread_conn("conn", self.path, foreign_keys=True)

    def _records_conn(self) -> sqlite3.Connection:
        if self.records_path == ":memory:":  # one in-memory database per connection: share the main one
            return self._conn()
        return self._thread_conn("records", self.records_path, foreign_keys=False)

    def _thread_conn(self, name: str, path: str, *, foreign_keys: bool) -> sqlite3.Connection:
        """This thread's connection to ``path`` (WAL, NORMAL sync), opened on first use."""
        conn: sqlite3.Connection | None = getattr(self._local, name, None)
        if conn is None:
            # a file that cannot be opened (its folder gone, no permission, disk full) is a
            # backend error like any failed statement: callers retry or report it with a code
            try:
                conn = sqlite3.connect(path, timeout=30.0, isolation_level=None, check_same_thread=False)
                conn.row_factory = sqlite3.Row
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=NORMAL")
                if foreign_keys:
                    conn.execute("PRAGMA foreign_keys=ON")
            except sqlite3.Error as exc:
                raise BackendError("state store unavailable") from exc
            setattr(self._local, name, conn)
        return conn

    def _add_columns(self) -> None:
        db = self._conn()
        for table, column, kind in ADDED_COLUMNS:
            present = {r[1] for r in db.execute(f"PRAGMA table_info({table})").fetchall()}
            if column not in present:
                with self._tx() as tx:
                    tx.execute(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")

    def _adopt_older_records(self) -> None:
        """Records an older version kept in the main file move to the records file (once)."""
        if self.records_path == ":memory:":
            return
        db = self._conn()
        found = db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'retrievals'").fetchall()
        if not found:
            return
        rows = db.execute("SELECT bot, id, audience, served, created_at, expires_at FROM retrievals").fetchall()
        if rows:
            self._insert_retrievals([tuple(r) for r in rows])
        with self._tx() as tx:
            tx.execute("DROP TABLE retrievals")

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        """One write transaction (BEGIN IMMEDIATE takes the write lock up front)."""
        db = self._conn()
        try:
            db.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            raise BackendError("state store unavailable") from exc
        try:
            yield db
        except BaseException:
            db.execute("ROLLBACK")
            raise
        else:
            db.execute("COMMIT")
            self._write_serial += 1

    @contextmanager
    def _records_tx(self) -> Iterator[sqlite3.Connection]:
        """One write transaction on the retrieval-records file (records and gaps); any SQLite
        error, from the body too, is a BackendError."""
        db = self._records_conn()
        try:
            db.execute("BEGIN IMMEDIATE")
            try:
                yield db
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")
        except sqlite3.Error as exc:
            raise BackendError("state store write failed") from exc

    def _read(self, sql: str, params: Sequence[object] = ()) -> list[sqlite3.Row]:
        try:
            return self._conn().execute(sql, params).fetchall()
        except sqlite3.Error as exc:
            raise BackendError("state store read failed") from exc

    def close(self) -> None:
        self._records.flush()
        self._gaps.flush()
        for name in ("conn", "records"):
            conn = getattr(self._local, name, None)
            if conn is not None:
                conn.close()
                setattr(self._local, name, None)

    # -- bots -----------------------------------------------------------------------------

    def get_bot(self, bot: str) -> BotSettings:
        return _own_copy(self._cached(("bot", bot), lambda: self._load_bot(bot)))

    def _load_bot(self, bot: str) -> BotSettings:
        rows = self._read("SELECT settings FROM bots WHERE bot = ?", (bot,))
        if not rows:
            settings = BotSettings(bot=bot)
        else:
            data = json.loads(rows[0]["settings"])
            data["bot"] = bot
            settings = BotSettings(**data)
        return _with_secrets(settings, self._read_secrets().get(bot, {}))

    def put_bot(self, settings: BotSettings) -> None:
        public, secrets = _split_secrets(settings)
        with self._tx() as db:
            stored = self._read_secrets()
            if stored.get(settings.bot, {}) != secrets:
                if secrets:
                    stored[settings.bot] = secrets
                else:
                    stored.pop(settings.bot, None)
                self._write_secrets(stored)
            db.execute(
                "INSERT INTO bots (bot, settings) VALUES (?, ?) "
                "ON CONFLICT (bot) DO UPDATE SET settings = excluded.settings",
                (settings.bot, json.dumps(asdict(public), sort_keys=True)),
            )

    # -- secrets (provider keys, upstream tokens): a 0600 file beside the database ---------

    @property
    def secrets_path(self) -> Path | None:
        return None if self.path == ":memory:" else Path(self.path).with_name(SECRETS_FILE)

    def _read_secrets(self) -> dict[str, dict[str, str]]:
        path = self.secrets_path
        if path is None:
            return {bot: dict(values) for bot, values in self._memory_secrets.items()}
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            raise BackendError("the secrets file cannot be read") from exc
        return {str(bot): dict(values) for bot, values in data.get("bots", {}).items()}

    def _write_secrets(self, secrets: dict[str, dict[str, str]]) -> None:
        """Replace the file (under the database's write lock), readable by its owner only."""
        path = self.secrets_path
        if path is None:
            self._memory_secrets = secrets
            return
        tmp = path.with_name(f".{path.name}.tmp")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                json.dump({"bots": secrets}, out, sort_keys=True)
            os.chmod(tmp, 0o600)  # an older file left with other bits by hand
            os.replace(tmp, path)
        except OSError as exc:
            raise BackendError("the secrets file cannot be written") from exc

    def set_rescue_version(self, bot: str, version: str | None) -> None:
        with self._tx() as db:  # the read and the write under one write lock
            row = db.execute("SELECT settings FROM bots WHERE bot = ?", (bot,)).fetchone()
            data = json.loads(row[0]) if row else asdict(BotSettings(bot=bot))
            data["rescue_version"] = version
            db.execute(
                "INSERT INTO bots (bot, settings) VALUES (?, ?) "
                "ON CONFLICT (bot) DO UPDATE SET settings = excluded.settings",
                (bot, json.dumps(data, sort_keys=True)),
            )

    def list_bots(self) -> list[str]:
        rows = self._read("SELECT bot FROM bots UNION SELECT DISTINCT bot FROM sources ORDER BY 1")
        return [r[0] for r in rows]

    # -- sources --------------------------------------------------------------------------

    def put_source(self, source: Source) -> None:
        cols = ", ".join(_SOURCE_FIELDS)
        marks = ", ".join("?" for _ in _SOURCE_FIELDS)
        updates = ", ".join(f"{n} = excluded.{n}" for n in _SOURCE_FIELDS if n not in ("bot", "id"))
        with self._tx() as db:
            db.execute(
                f"INSERT INTO sources ({cols}) VALUES ({marks}) "
                f"ON CONFLICT (bot, id) DO UPDATE SET {updates}",
                [_encode(n, getattr(source, n)) for n in _SOURCE_FIELDS],
            )

    def get_source(self, bot: str, source_id: str) -> Source | None:
        rows = self._read("SELECT * FROM sources WHERE bot = ? AND id = ?", (bot, source_id))
        return _source_from_row(rows[0]) if rows else None

    def list_sources(self, bot: str) -> list[Source]:
        rows = self._read("SELECT * FROM sources WHERE bot = ? ORDER BY created_at, id", (bot,))
        return [_source_from_row(r) for r in rows]

    def delete_source(self, bot: str, source_id: str) -> None:
        with self._tx() as db:
            db.execute("DELETE FROM documents WHERE bot = ? AND source_id = ?", (bot, source_id))
            db.execute("DELETE FROM sources WHERE bot = ? AND id = ?", (bot, source_id))
            # any generation left becomes an orphan for the index cleanup
            db.execute(
                "UPDATE generations SET state = 'retired' WHERE bot = ? AND source_id = ?", (bot, source_id)
            )

    def update_source(self, bot: str, source_id: str, **changes: object) -> Source:
        check_update(changes)
        with self._tx() as db:
            if changes:
                sets = ", ".join(f"{n} = ?" for n in changes)
                cur = db.execute(
                    f"UPDATE sources SET {sets} WHERE bot = ? AND id = ?",
                    [*(_encode(n, v) for n, v in changes.items()), bot, source_id],
                )
                if cur.rowcount == 0:
                    raise NotFound(f"source {source_id} not found")
            rows = db.execute("SELECT * FROM sources WHERE bot = ? AND id = ?", (bot, source_id)).fetchall()
        if not rows:
            raise NotFound(f"source {source_id} not found")
        return _source_from_row(rows[0])

    def version(self) -> tuple[int, int]:
        """Changes whenever anything committed: ``data_version`` moves on commits by other
        connections (threads, processes), the serial on this store's own transactions."""
        return int(self._conn().execute("PRAGMA data_version").fetchone()[0]), self._write_serial

    def _cached(self, key: tuple[str, str], load: Callable[[], Any]) -> Any:
        cache: dict[tuple[str, str], tuple[tuple[int, int], Any]] | None = getattr(self._local, "cache", None)
        if cache is None:
            cache = self._local.cache = {}
        version = self.version()
        hit = cache.get(key)
        if hit is not None and hit[0] == version:
            return hit[1]
        value = load()
        cache[key] = (version, value)
        return value

    def live_sources(self, bot: str) -> list[LiveSource]:
        """Read on every question: cached per thread until anything commits."""
        return list(self._cached(("live", bot), lambda: self._load_live_sources(bot)))

    def retrieval_view(self, bot: str) -> tuple[BotSettings, list[LiveSource]]:
        """Settings and live sources under one check of the store's version (each check is a
        statement; a question made two): cached per thread until anything commits."""
        settings, live = self._cached(("view", bot), lambda: (self._load_bot(bot), self._load_live_sources(bot)))
        return _own_copy(settings), list(live)

    def _load_live_sources(self, bot: str) -> list[LiveSource]:
        rows = self._read(
            "SELECT id, live_generation, type, name, priority, last_indexed_at, visibility_counts "
            "FROM sources WHERE bot = ? AND live_generation IS NOT NULL AND status != 'disabled'",
            (bot,),
        )
        out = []
        for r in rows:
            src_type = r["type"]
            out.append(
                LiveSource(
                    source_id=r["id"],
                    generation=int(r["live_generation"]),
                    type=src_type,
                    name=r["name"],
                    priority=int(r["priority"]),
                    weight=TYPE_WEIGHT.get(src_type, 1.0),
                    last_indexed_at=r["last_indexed_at"],
                    visibility_counts=json.loads(r["visibility_counts"] or "{}"),
                )
            )
        return out

    def due_sources(self, now: float, limit: int = 50) -> list[Source]:
        # ``knowledge.schedule.is_due`` in SQL, on the partial index ``sources_due``
        never, queued = sorted(NEVER_DUE), sorted(QUEUED)
        rows = self._read(
            f"SELECT * FROM sources WHERE status NOT IN ({', '.join('?' * len(never))}) AND ("
            f"(status IN ({', '.join('?' * len(queued))}) AND next_refresh_at IS NULL) "
            "OR (next_refresh_at IS NOT NULL AND next_refresh_at <= ?)) "
            "ORDER BY updated_at LIMIT ?",
            (*never, *queued, now, limit),
        )
        return [_source_from_row(r) for r in rows]

    # -- leases ---------------------------------------------------------------------------

    def acquire_lease(self, bot: str, source_id: str, owner: str, now: float, ttl: float) -> bool:
        with self._tx() as db:
            cur = db.execute(
                "UPDATE sources SET lease_owner = ?, lease_expires_at = ?, attempts = attempts + 1, "
                "cancel_requested = 0 WHERE bot = ? AND id = ? "
                "AND (lease_owner IS NULL OR lease_expires_at < ?)",
                (owner, now + ttl, bot, source_id, now),
            )
            return cur.rowcount == 1

    def extend_lease(self, bot: str, source_id: str, owner: str, now: float, ttl: float) -> bool:
        with self._tx() as db:
            cur = db.execute(
                "UPDATE sources SET lease_expires_at = ? WHERE bot = ? AND id = ? AND lease_owner = ? "
                "AND lease_expires_at >= ?",
                (now + ttl, bot, source_id, owner, now),
            )
            return cur.rowcount == 1

    def release_lease(self, bot: str, source_id: str, owner: str) -> None:
        with self._tx() as db:
            db.execute(
                "UPDATE sources SET lease_owner = NULL, lease_expires_at = NULL "
                "WHERE bot = ? AND id = ? AND lease_owner = ?",
                (bot, source_id, owner),
            )

    def expired_leases(self, now: float) -> list[Source]:
        rows = self._read(
            "SELECT * FROM sources WHERE lease_owner IS NOT NULL AND lease_expires_at < ?", (now,)
        )
        return [_source_from_row(r) for r in rows]

    # -- generations ----------------------------------------------------------------------

    def begin_generation(self, bot: str, source_id: str, owner: str) -> int:
        with self._tx() as db:
            row = db.execute(
                "SELECT lease_owner, last_generation, live_generation FROM sources WHERE bot = ? AND id = ?",
                (bot, source_id),
            ).fetchone()
            if row is None:
                raise NotFound(f"source {source_id} not found")
            if row["lease_owner"] != owner:
                raise Conflict("lease not held", code="lease_lost")
            generation = max(int(row["last_generation"] or 0), int(row["live_generation"] or 0)) + 1
            db.execute(
                "UPDATE sources SET last_generation = ? WHERE bot = ? AND id = ?", (generation, bot, source_id)
            )
            db.execute(
                "INSERT OR REPLACE INTO generations (bot, source_id, generation, state, owner) "
                "VALUES (?, ?, ?, 'staging', ?)",
                (bot, source_id, generation, owner),
            )
            return generation

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
        """Flip the live generation, write checksum and counters, replace documents and
        release the lease — one transaction, conditioned on the lease. Returns the previous
        live generation (now retired, to be dropped from the index)."""
        with self._tx() as db:
            row = db.execute(
                "SELECT lease_owner, live_generation, status, refresh_every FROM sources WHERE bot = ? AND id = ?",
                (bot, source_id),
            ).fetchone()
            if row is None:
                raise NotFound(f"source {source_id} not found")
            if row["lease_owner"] != owner:
                raise Conflict("lease lost before commit", code="lease_lost")
            old = row["live_generation"]
            changes = commit_changes(
                status=row["status"], refresh_every=row["refresh_every"], generation=generation, checksum=checksum,
                counters=counters, visibility_counts=visibility_counts, error_code=error_code, now=now,
            )
            db.execute(
                f"UPDATE sources SET {', '.join(f'{n} = ?' for n in changes)} WHERE bot = ? AND id = ?",
                [*(_encode(n, v) for n, v in changes.items()), bot, source_id],
            )
            db.execute("DELETE FROM documents WHERE bot = ? AND source_id = ?", (bot, source_id))
            db.executemany(
                "INSERT INTO documents (bot, source_id, id, title, path, url, visibility, checksum, "
                "fragments, error_code, etag, last_modified) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (bot, source_id, d.id, d.title, d.path, d.url, d.visibility, d.checksum, d.fragments,
                     d.error_code, d.etag, d.last_modified)
                    for d in documents
                ],
            )
            db.execute(
                "UPDATE generations SET state = 'live' WHERE bot = ? AND source_id = ? AND generation = ?",
                (bot, source_id, generation),
            )
            retired = retired_generation(old, generation)
            if retired is not None:
                db.execute(
                    "INSERT OR REPLACE INTO generations (bot, source_id, generation, state, owner) "
                    "VALUES (?, ?, ?, 'retired', NULL)",
                    (bot, source_id, retired),
                )
            return retired

    def withdraw_generation(self, bot: str, source_id: str, **changes: object) -> int | None:
        """Take a source out of every search (no live generation), in one write. Returns the
        generation that was live, now retired."""
        with self._tx() as db:
            row = db.execute(
                "SELECT live_generation FROM sources WHERE bot = ? AND id = ?", (bot, source_id)
            ).fetchone()
            if row is None:
                raise NotFound(f"source {source_id} not found")
            old = row["live_generation"]
            sets = ["live_generation = NULL", "passages = 0", "visibility_counts = '{}'"]
            params: list[object] = []
            for name, value in changes.items():
                if name not in _SOURCE_FIELDS:
                    raise ValueError(f"unknown field {name}")
                sets.append(f"{name} = ?")
                params.append(_encode(name, value))
            db.execute(
                f"UPDATE sources SET {', '.join(sets)} WHERE bot = ? AND id = ?", [*params, bot, source_id]
            )
            if old is not None:
                db.execute(
                    "INSERT OR REPLACE INTO generations (bot, source_id, generation, state, owner) "
                    "VALUES (?, ?, ?, 'retired', NULL)",
                    (bot, source_id, int(old)),
                )
            return int(old) if old is not None else None

    def finish_generation(self, bot: str, source_id: str, generation: int) -> None:
        """The index no longer holds this (retired or abandoned) generation: forget it."""
        with self._tx() as db:
            db.execute(
                "DELETE FROM generations WHERE bot = ? AND source_id = ? AND generation = ? AND state != 'live'",
                (bot, source_id, generation),
            )

    def orphan_generations(self) -> list[tuple[str, str, int]]:
        """Generations the index may still hold that no query may ever see: retired ones, and
        staging ones whose writer no longer holds the source's lease."""
        rows = self._read(
            "SELECT g.bot, g.source_id, g.generation FROM generations g "
            "LEFT JOIN sources s ON s.bot = g.bot AND s.id = g.source_id "
            "WHERE g.state = 'retired' OR (g.state = 'staging' AND "
            "(s.id IS NULL OR s.lease_owner IS NULL OR s.lease_owner != g.owner)) "
            "ORDER BY 1, 2, 3"
        )
        return [(r[0], r[1], int(r[2])) for r in rows]

    def stale_staging(self, now: float) -> list[tuple[str, str, int]]:
        """Staging generations whose lease expired (the writer died)."""
        rows = self._read(
            "SELECT g.bot, g.source_id, g.generation FROM generations g JOIN sources s "
            "ON s.bot = g.bot AND s.id = g.source_id WHERE g.state = 'staging' "
            "AND s.lease_owner = g.owner AND s.lease_expires_at < ?",
            (now,),
        )
        return [(r[0], r[1], int(r[2])) for r in rows]

    # -- documents ------------------------------------------------------------------------

    def list_documents(self, bot: str, source_id: str) -> list[Document]:
        rows = self._read(
            "SELECT * FROM documents WHERE bot = ? AND source_id = ? ORDER BY path, id", (bot, source_id)
        )
        return [
            Document(
                id=r["id"],
                bot=r["bot"],
                source_id=r["source_id"],
                title=r["title"],
                path=r["path"],
                url=r["url"],
                visibility=r["visibility"],
                checksum=r["checksum"],
                fragments=r["fragments"],
                error_code=r["error_code"],
                etag=r["etag"],
                last_modified=r["last_modified"],
            )
            for r in rows
        ]

    # -- agents ---------------------------------------------------------------------------

    def get_agent(self, bot: str, agent_id: str) -> Agent | None:
        rows = self._read("SELECT * FROM agents WHERE bot = ? AND id = ?", (bot, agent_id))
        if not rows:
            return None
        r = rows[0]
        return Agent(id=r["id"], bot=r["bot"], status=r["status"], source_ids=json.loads(r["source_ids"]))

    def put_agent(self, agent: Agent) -> None:
        with self._tx() as db:
            db.execute(
                "INSERT INTO agents (bot, id, status, source_ids) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (bot, id) DO UPDATE SET status = excluded.status, source_ids = excluded.source_ids",
                (agent.bot, agent.id, agent.status, json.dumps(list(agent.source_ids))),
            )

    def list_agents(self, bot: str) -> list[Agent]:
        rows = self._read("SELECT * FROM agents WHERE bot = ? ORDER BY id", (bot,))
        return [
            Agent(id=r["id"], bot=r["bot"], status=r["status"], source_ids=json.loads(r["source_ids"]))
            for r in rows
        ]

    # -- tokens ---------------------------------------------------------------------------

    def put_token(self, token: Token) -> None:
        with self._tx() as db:
            db.execute(
                "INSERT INTO tokens (token_hash, bot, scopes, created_at, expires_at, last_used_at) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (token.token_hash, token.bot, ",".join(token.scopes), token.created_at, token.expires_at,
                 token.last_used_at),
            )

    def get_token(self, token_hash: str) -> Token | None:
        rows = self._read("SELECT * FROM tokens WHERE token_hash = ?", (token_hash,))
        return _token(rows[0]) if rows else None

    def list_tokens(self, bot: str) -> list[Token]:
        rows = self._read("SELECT * FROM tokens WHERE bot = ? ORDER BY created_at, token_hash", (bot,))
        return [_token(r) for r in rows]

    def delete_token(self, bot: str, token_id: str) -> bool:
        if len(token_id) != TOKEN_ID_CHARS or not all(c in "0123456789abcdef" for c in token_id):
            return False
        with self._tx() as db:
            cur = db.execute("DELETE FROM tokens WHERE bot = ? AND substr(token_hash, 1, ?) = ?",
                             (bot, TOKEN_ID_CHARS, token_id))
            return cur.rowcount > 0

    def touch_token(self, token_hash: str, now: float) -> None:
        with self._tx() as db:
            db.execute("UPDATE tokens SET last_used_at = ? WHERE token_hash = ?", (now, token_hash))

    # -- retrievals -----------------------------------------------------------------------

    def put_retrieval(self, record: RetrievalRecord) -> None:
        # runs on every question: queued, committed in batches by a background thread
        row = (record.bot, record.id, record.audience, json.dumps(record.served), record.created_at,
               record.expires_at)
        if self.records_path == ":memory:":  # each thread would see its own database
            self._insert_retrievals([row])
        else:
            self._records.put(row)

    def _insert_retrievals(self, rows: list[tuple[Any, ...]]) -> None:
        """Commit queued retrieval records in one transaction; purge expired ones now and then."""
        with self._records_tx() as db:
            db.executemany(_INSERT_RETRIEVAL, rows)
            before, self._retrieval_puts = self._retrieval_puts, self._retrieval_puts + len(rows)
            if before % _PURGE_EVERY == 0 or before // _PURGE_EVERY != self._retrieval_puts // _PURGE_EVERY:
                db.execute("DELETE FROM retrievals WHERE expires_at < ?", (max(float(r[4]) for r in rows),))

    def get_retrieval(self, bot: str, retrieval_id: str) -> RetrievalRecord | None:
        self._records.flush()  # read this store's own writes
        try:
            rows = self._records_conn().execute(
                "SELECT * FROM retrievals WHERE bot = ? AND id = ?", (bot, retrieval_id)
            ).fetchall()
        except sqlite3.Error as exc:
            raise BackendError("state store read failed") from exc
        if not rows:
            return None
        r = rows[0]
        return RetrievalRecord(
            id=r["id"],
            bot=r["bot"],
            audience=r["audience"],
            served=[(a, b, c) for a, b, c in json.loads(r["served"])],
            created_at=r["created_at"],
            expires_at=r["expires_at"],
        )

    # -- answer time: live tables and gaps (knowledge.answer) ------------------------------

    def put_live_table(self, bot: str, source_id: str, table: str, rows: list[dict[str, Any]]) -> None:
        with self._tx() as db:
            db.execute(
                "INSERT INTO live_tables (bot, source_id, name, rows) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (bot, source_id, name) DO UPDATE SET rows = excluded.rows",
                (bot, source_id, table, json.dumps(rows, ensure_ascii=False)),
            )

    def get_live_tables(self, bot: str, source_id: str) -> dict[str, list[dict[str, Any]]]:
        rows = self._read("SELECT name, rows FROM live_tables WHERE bot = ? AND source_id = ? ORDER BY name",
                          (bot, source_id))
        return {r["name"]: json.loads(r["rows"]) for r in rows}

    def delete_live_tables(self, bot: str, source_id: str) -> int:
        with self._tx() as db:
            return db.execute("DELETE FROM live_tables WHERE bot = ? AND source_id = ?", (bot, source_id)).rowcount

    def put_gap(self, gap: GapRecord) -> None:
        self._write_gaps([gap])

    def put_gap_later(self, make: Callable[[], GapRecord]) -> None:
        if self.records_path == ":memory:":  # each thread would see its own database
            self.put_gap(make())
        else:
            self._gaps.put((make,))

    def _insert_gaps(self, rows: list[tuple[Any, ...]]) -> None:
        """Build the queued gaps (a gap that cannot be built is logged and left out: the others
        and the writer thread go on) and commit them in one transaction."""
        gaps = []
        for (make,) in rows:
            try:
                gaps.append(make())
            except Exception:  # a bug in building one gap must not stop the writer thread
                log.exception("a gap could not be built; it is not recorded")
        if gaps:
            self._write_gaps(gaps)

    def _write_gaps(self, gaps: list[GapRecord]) -> None:
        with self._records_tx() as db:
            db.executemany(
                "INSERT OR REPLACE INTO gaps (bot, id, audience, question, outcome, topic, created_at, "
                "expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [(g.bot, g.id, g.audience, g.question, g.outcome, g.topic, g.created_at, g.expires_at) for g in gaps],
            )
            db.execute("DELETE FROM gaps WHERE expires_at <= ?", (max(g.created_at for g in gaps),))

    def list_gaps(self, bot: str, audience: str | None, *, since: float, now: float) -> list[GapRecord]:
        self._gaps.flush()  # read this store's own writes
        sql = "SELECT * FROM gaps WHERE bot = ? AND created_at >= ? AND expires_at > ?"
        params: list[object] = [bot, since, now]
        if audience is not None:
            sql += " AND audience = ?"
            params.append(audience)
        try:
            rows = self._records_conn().execute(sql + " ORDER BY created_at, id", params).fetchall()
        except sqlite3.Error as exc:
            raise BackendError("state store read failed") from exc
        return [GapRecord(id=r["id"], bot=r["bot"], audience=r["audience"], question=r["question"],
                          outcome=r["outcome"], topic=r["topic"], created_at=r["created_at"],
                          expires_at=r["expires_at"]) for r in rows]
