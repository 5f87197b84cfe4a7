"""tantivy implementation of the SearchIndex port (embedded mode).

One tantivy index per (bot, audience partition), so BM25 term statistics (document
frequency, average length) are the partition's own: the half a question cannot be answered
from does not distort the ranking of the half it can. Every query carries its filters —
bot, visibility set and the live ``source:generation`` keywords — as non-scoring clauses of
one boolean query, so filtering happens inside the search, before ranking and limit (see
``_PartitionIndex.boundary`` for how they are encoded so that they cost next to nothing).

Text is analysed as :mod:`knowledge.analysis` defines (the OpenSearch twin uses the same
definition): identifiers written again whole and in parts, then a split at every character
that is not a letter or digit, long tokens dropped, lower-cased, English stop words removed,
Snowball English stemming. The indexed copy of a passage is the expanded one; the stored text
(inside ``meta``) is the passage as written.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import itertools
import json
import logging
import os
import re
import shutil
import struct
import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import tantivy

from ... import analysis
from ...errors import BackendError
from ...model import (
    PARTITION_VISIBILITIES,
    PARTITIONS,
    VISIBILITIES,
    Hit,
    Passage,
    PassageRef,
    key64,
    partition_of_visibility,
    valid_bot_id,
)
from .vectors import KeyedAt, LocalVectorStore

ANALYZER = "kb_en"
#: Bump with any schema change (and bump settings.INGEST_VERSION with it).
INDEX_FORMAT = "tantivy-8"  # 8: the boundary keys (botkey, viskey, sgkey)
log = logging.getLogger(__name__)
_WRITER_HEAP = 128 * 1024 * 1024
_WRITER_THREADS = 2  # tantivy indexes on its own threads while Python chunks the next batch
_LOCK_WAIT_SECONDS = 60.0
#: strings up to FIELD_CHARS characters are analysed through a cache of FIELD_CACHE entries
FIELD_CHARS = 160
FIELD_CACHE = 16384

# Compaction (``TantivySearchIndex.compact``): a partition is rewritten as one segment when a
# search would visit this many segments or more, or when this share of its documents is
# deleted (old generations waiting for a merge that tantivy's policy may never schedule).
# Measured on 100k passages and 323 questions: five segments -> one took tantivy's top-50
# search from about 346 to 162 us, and a fast-field column read from about 9 to 1.5 us.
COMPACT_MIN_SEGMENTS = 3
COMPACT_DELETED_SHARE = 0.25
# A rewrite holds the partition's writer (about 20 s per 100k passages here); past this many
# passages it is left to tantivy's own merging, so that no writer waits minutes for it.
COMPACT_MAX_PASSAGES = 300_000
_COMPACT_HEAP = 512 * 1024 * 1024  # one indexing thread: one segment up to ~150k passages

# How stored documents are kept. Loading the served passages is on every question's path, and
# tantivy's default (lz4 over 16 KB blocks) decompresses a whole block for each one. Measured
# loading a question's 13 passages (100k passages, one segment): lz4 / 16 KB about 210 us,
# lz4 / 4 KB about 120 us, uncompressed / 4 KB about 80 us; the index grew from 127 to 193 MB.
STORE_SETTINGS = {"docstore_compression": "none", "docstore_blocksize": 4096}


def build_analyzer() -> tantivy.TextAnalyzer:
    """The analyser of the ``text`` field; what it is given has gone through
    :func:`knowledge.analysis.expand` first."""
    analyzer: tantivy.TextAnalyzer = analysis.tantivy_analyzer()
    return analyzer


def build_schema() -> tantivy.Schema:
    sb = tantivy.SchemaBuilder()
    # filters: indexed, never loaded
    sb.add_text_field("bot", stored=False, tokenizer_name="raw", index_option="basic")
    sb.add_text_field("source_gen", stored=False, tokenizer_name="raw", index_option="basic")
    sb.add_text_field("visibility", stored=False, tokenizer_name="raw", index_option="basic")
    # the same three as numbers in fast-field columns, which is what every search filters on
    # (``_PartitionIndex.boundary``): key64(bot), the visibility's place in VISIBILITIES,
    # key64("source:generation")
    for name in _BOUNDARY_KEYS.values():
        sb.add_unsigned_field(name, fast=True)
    # the expanded text (``analysis.expand``), indexed only: the text as written is in ``meta``
    sb.add_text_field("text", stored=False, tokenizer_name=ANALYZER, index_option="position")
    # what a loaded passage shows, text included, in one stored-only field: a stored
    # document decodes per field, and loading twelve is part of every question (measured
    # about 35 us per passage with fourteen stored fields, about 22 us with two)
    sb.add_bytes_field("meta", stored=True, indexed=False, fast=False)
    # numeric keys as fast fields: ranking and collapse read them column-wise for the top 50
    # without decompressing stored documents; only the survivors are loaded
    sb.add_integer_field("ordinal", fast=True)
    sb.add_float_field("weight", fast=True)
    sb.add_float_field("indexed_at", fast=True)
    sb.add_unsigned_field("pkey", fast=True, indexed=True)  # indexed: semantic-only hits load by key
    sb.add_unsigned_field("skey", fast=True)
    sb.add_unsigned_field("dkey", fast=True)
    return sb.build()


# The ``meta`` field: the numbers, whether there is a url, and where each string ends (in
# characters), then the strings back to back in UTF-8: id, source id, document id,
# title, path, url, breadcrumb, visibility, text. Decoding is one unpack, one decode and eight
# slices, no loop (measured about 8 us per passage as JSON; this is part of loading the twelve
# served passages of every question).
_META = struct.Struct("<qqqdd?9I")  # generation, ordinal, priority, weight, indexed_at, has url, 9 ends


def _meta(p: Passage) -> bytes:
    """The stored-only ``meta`` field of a passage (see :func:`build_schema`)."""
    strings = (p.id, p.source_id, p.document_id, p.title, p.path, p.url or "", p.breadcrumb, p.visibility, p.text)
    ends = list(itertools.accumulate(len(v) for v in strings))  # past 4 G characters: struct.error
    head = _META.pack(p.generation, p.ordinal, p.priority, float(p.weight), float(p.indexed_at), p.url is not None,
                      *ends)
    return head + "".join(strings).encode("utf-8")


def _passage_of(raw: bytes, bot: str) -> Passage:
    """The passage whose ``meta`` field is ``raw``."""
    try:
        generation, ordinal, priority, weight, indexed_at, has_url, a, b, c, d, e, f, g, h, i = _META.unpack_from(raw)
        s = raw[_META.size :].decode("utf-8")
    except (struct.error, UnicodeDecodeError) as exc:
        raise BackendError("damaged passage record in the search index") from exc
    if not a <= b <= c <= d <= e <= f <= g <= h <= i == len(s):
        raise BackendError("damaged passage record in the search index")
    return Passage(id=s[:a], bot=bot, source_id=s[a:b], document_id=s[b:c], generation=generation,
                   ordinal=ordinal, title=s[c:d], path=s[d:e], breadcrumb=s[f:g], text=s[h:i], visibility=s[g:h],
                   weight=weight, priority=priority, indexed_at=indexed_at, url=s[e:f] if has_url else None)


class FoundAt(NamedTuple):
    """Where a lexical hit's passage is: its document address in the searcher that found it
    (an address means nothing to a searcher opened after a merge renumbered the segments)."""

    partition: str
    address: Any
    searcher: tantivy.Searcher


class _LeaveAsIs(Exception):
    """Raised inside a writer block to end it without a commit."""


def _open_or_create(path: Path, schema: tantivy.Schema) -> tantivy.Index:
    """The index in ``path``, created with ``STORE_SETTINGS`` if there is none yet.

    tantivy-py takes no index settings; tantivy keeps them in ``meta.json``, writes them when
    it creates an index, reads them on open and writes them back with every commit. So a new
    index is created, its settings are changed in ``meta.json`` while it has no segment, and
    only then is it opened for use. Every opener takes the same file lock, so no process can
    open it (and commit the defaults back) in between. An index that already holds segments
    is opened as it is: settings only decide how new segments are written."""
    with open(path / "open.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            meta = path / "meta.json"
            if not meta.exists():
                tantivy.Index(schema, path=str(path), reuse=True)  # writes meta.json, opens nothing for long
            data = json.loads(meta.read_text())
            settings = data.get("index_settings")
            if not data.get("segments") and isinstance(settings, dict) and any(
                    settings.get(k) != v for k, v in STORE_SETTINGS.items()):
                if set(STORE_SETTINGS) <= set(settings):
                    settings.update(STORE_SETTINGS)
                    tmp = path / f"meta.json.{os.getpid()}.tmp"
                    tmp.write_text(json.dumps(data))
                    os.replace(tmp, meta)
                else:  # a tantivy whose settings are named otherwise: its defaults, slower loads
                    log.warning("tantivy index settings have no %s: keeping its defaults", sorted(STORE_SETTINGS))
            return tantivy.Index(schema, path=str(path), reuse=True)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


_SAFE = re.compile(r"[^A-Za-z0-9_.-]")
#: each boundary field and the fast-field column that holds its key
_BOUNDARY_KEYS = {"bot": "botkey", "visibility": "viskey", "source_gen": "sgkey"}
_VISIBILITY_KEY: dict[str, int] = {v: i for i, v in enumerate(VISIBILITIES)}


def boundary_key(field: str, value: str) -> int | None:
    """The number a boundary field's value is filtered by: its place in ``VISIBILITIES`` for a
    visibility (None for a value that is not one), ``key64`` otherwise."""
    if field == "visibility":
        return _VISIBILITY_KEY.get(value)
    return key64(value)

_REF_FIELDS = ("pkey", "skey", "dkey", "ordinal", "weight", "indexed_at")


class _PartitionIndex:
    """One on-disk tantivy index plus the bookkeeping to keep its reader fresh."""

    def __init__(self, path: Path, schema: tantivy.Schema, analyzer: tantivy.TextAnalyzer):
        path.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.schema = schema
        self.index = _open_or_create(path, schema)
        self.index.register_tokenizer(ANALYZER, analyzer)
        self._analyzer = analyzer
        # Searchers come from an Index object of their own that never writes: read through the
        # object that wrote (and merged) the segments, the same searches measured ~20% slower
        # in one process at 100k (eight alternating rounds, every pair slower); opened on first
        # search, it sees the writer's commits through reload() like another process would.
        self._reading: tantivy.Index | None = None
        self.write_lock = threading.Lock()
        self._meta = str(path / "meta.json")
        self._view: tuple[tantivy.Searcher, tuple[int, ...]] | None = None  # a searcher and the meta.json stamp it saw
        self._reload_lock = threading.Lock()
        # commits made through this object: the stamp's first part, so a commit of this process
        # is seen even when meta.json's inode number is reused and its time and size repeat
        self._commits = 0
        # per searcher: what its snapshot holds in each boundary field, and the clauses built
        # for each (bot, visibilities, generations) asked (see ``boundary``)
        self._census: tuple[tantivy.Searcher | None, dict[str, dict[str, bool | None]],
                            dict[tuple[Any, ...], list[Any]]] = (None, {}, {})

    def searcher(self) -> tantivy.Searcher:
        # Another process (or this one) may have committed: reload when meta.json moved on.
        # Asked several times per question (search, loading, term statistics): the searcher
        # of an unchanged index is reused. A commit replaces meta.json (a new file renamed over
        # it), so its inode tells two commits apart even when both fall within one tick of the
        # file system's clock, where the modification time alone would not; the file system
        # may hand a freed inode number to the next commit's file, so this process's own
        # commits are also counted
        try:
            st = os.stat(self._meta)
            stamp: tuple[int, ...] = (self._commits, st.st_ino, st.st_mtime_ns, st.st_size)
        except FileNotFoundError:
            stamp = (self._commits,)
        view = self._view
        if view is None or view[1] != stamp:
            with self._reload_lock:
                view = self._view
                if view is None or view[1] != stamp:
                    if self._reading is None:
                        reading = tantivy.Index.open(str(self.path))
                        reading.register_tokenizer(ANALYZER, self._analyzer)
                        self._reading = reading
                    self._reading.reload()
                    view = self._view = (self._reading.searcher(), stamp)
        return view[0]

    def boundary(self, searcher: tantivy.Searcher, bot: str, visibilities: tuple[str, ...],
                 source_gens: tuple[str, ...]) -> list[Any]:
        """The clauses that keep a search through ``searcher`` inside its boundary: the asking
        bot, the visibilities its audience may see, the live generations. They are in every
        query, and a document passes exactly when its bot, visibility and ``source:generation``
        are among those given.

        Each field is filtered by its key column (``boundary_key``): a required range from the
        smallest to the largest allowed key. A range over a fast field is the one filter tantivy
        checks against each segment's column first: where every document's key lies inside,
        the clause becomes a match-all that the boolean query drops, so the question's words
        keep their block-max pruning (term clauses, one posting list per allowed value OR-ed
        together, cost about five times the search itself at 100k passages: bench/boundary.py). A range can admit
        values between the allowed ones: every value this searcher's snapshot holds in the
        field (its term dictionary) that is not allowed, has a key inside the range and has a
        live document is excluded by name with a prohibited term clause — during a refresh
        the generation being built, for a moment after a commit the one it replaces, and
        another bot whose key64 were equal. Read from the snapshot being searched, not from a
        record kept beside it, so no document can be in it without being counted. Keys are
        written by ``_document``, the only writer, from the same values as the names.

        Built once per snapshot and question scope (a handful of scopes per bot)."""
        census_of, census, built = self._census
        if census_of is not searcher:
            census, built = {}, {}
            self._census = (searcher, census, built)
        scope = (bot, visibilities, source_gens)
        clauses = built.get(scope)
        if clauses is not None:
            return clauses
        q, schema = tantivy.Query, self.schema
        clauses = []
        for field, allowed in (("bot", (bot,)), ("visibility", visibilities), ("source_gen", source_gens)):
            keys = [k for k in (boundary_key(field, v) for v in allowed) if k is not None]
            if not keys:  # nothing can be allowed
                clauses.append((tantivy.Occur.Must, q.empty_query()))
                continue
            lo, hi = min(keys), max(keys)
            clauses.append((tantivy.Occur.Must, q.range_query(
                schema, _BOUNDARY_KEYS[field], tantivy.FieldType.Unsigned, lo, hi)))
            held = census.get(field)
            if held is None:  # the term dictionary lists deleted documents' values too: None = not counted yet
                held = census[field] = dict.fromkeys(value for value, _ in searcher.terms_with_prefix(field, ""))
            allowed_set = set(allowed)
            for value, live in held.items():
                key = boundary_key(field, value)
                if value in allowed_set or (key is not None and not lo <= key <= hi):
                    continue  # allowed, or outside the range already
                if live is None:
                    count = searcher.search(q.term_query(schema, field, value), 1, count=True).count  # type: ignore[attr-defined]
                    live = held[value] = count > 0
                if live:
                    clauses.append((tantivy.Occur.MustNot, q.term_query(schema, field, value)))
        if len(built) >= 64:
            built.clear()
        built[scope] = clauses
        return clauses

    def layout(self) -> tuple[int, int, int]:
        """(segments, documents, deleted documents) of the last commit, from ``meta.json``."""
        try:
            segments = json.loads(Path(self._meta).read_text())["segments"]
            docs = sum(int(seg["max_doc"]) for seg in segments)
            deleted = sum(int((seg.get("deletes") or {}).get("num_deleted_docs", 0)) for seg in segments)
        except FileNotFoundError:
            return 0, 0, 0
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            raise BackendError("unreadable search index metadata") from exc
        return len(segments), docs, deleted

    def _open_writer(self, heap: int, threads: int) -> tantivy.IndexWriter:
        """tantivy allows one writer per index across processes: wait for it."""
        deadline = time.monotonic() + _LOCK_WAIT_SECONDS
        while True:
            try:
                return self.index.writer(heap, threads)
            except ValueError as exc:  # "LockBusy": another process is writing
                if time.monotonic() > deadline:
                    raise BackendError("search index is locked by another writer") from exc
                time.sleep(0.05)

    def compact(self, bot: str, *, force: bool = False) -> dict[str, Any] | None:
        """Rewrite every live document of this partition as one segment, in one commit, when
        the layout is worth it (see ``COMPACT_MIN_SEGMENTS``) or ``force``; what it did, or
        None when it left the index as it was.

        tantivy merges only when eight segments of a size have piled up, and a refresh commits
        a segment or more per batch, so a bot with a few large sources stays at several
        segments, each searched for its own top 50. The rewrite runs under the writer lock, so
        no commit can slip in between reading and replacing; it deletes every document and
        adds each back, rebuilt from its stored record, which holds everything a document is
        made of. Searchers opened before keep their segments; a failure rolls back and
        leaves the index as it was."""
        try:
            with self.writer(_COMPACT_HEAP, 1) as writer:
                segments, docs, deleted = self.layout()
                alive = docs - deleted
                worth = segments >= COMPACT_MIN_SEGMENTS or (docs and deleted >= COMPACT_DELETED_SHARE * docs)
                if alive > COMPACT_MAX_PASSAGES or not (force or worth) or segments == 0:
                    raise _LeaveAsIs
                started = time.perf_counter()
                searcher = self.searcher()  # the last commit: nobody can commit while we hold the lock
                total = int(searcher.num_docs)
                found = searcher.search(tantivy.Query.all_query(), max(total, 1), count=False).hits
                writer.delete_all_documents()
                for _score, address in found:
                    writer.add_document(TantivySearchIndex._document(
                        TantivySearchIndex._passage(bot, searcher.doc(address))))
        except _LeaveAsIs:
            return None  # rolled back: not even an empty commit
        return {"segmentsBefore": segments, "segmentsAfter": self.layout()[0], "passages": total,
                "deletedDropped": deleted, "seconds": round(time.perf_counter() - started, 2)}

    @contextlib.contextmanager
    def writer(self, heap: int = _WRITER_HEAP, threads: int = _WRITER_THREADS) -> Iterator[tantivy.IndexWriter]:
        """An exclusive writer, committed (and its merges waited for) when the block ends, rolled
        back when it raises."""
        with self.write_lock:
            writer = self._open_writer(heap, threads)
            try:
                yield writer
                writer.commit()
                self._commits += 1
                writer.wait_merging_threads()
                self._commits += 1  # merges rewrite meta.json too
            except BaseException:
                with contextlib.suppress(ValueError):
                    writer.rollback()
                raise
            finally:
                del writer


class TantivySearchIndex:
    """SearchIndex over a folder of tantivy indexes: ``<root>/<bot>/<partition>/``."""

    def __init__(self, root: str | Path):
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        marker = self.root / "FORMAT"
        found = marker.read_text().strip() if marker.exists() else None
        if found != INDEX_FORMAT:
            if any(p.name != "FORMAT" for p in self.root.iterdir()):
                # an index written by another schema cannot be opened: start empty. INGEST_VERSION
                # moves with INDEX_FORMAT, so the next reindex rebuilds every source.
                log.warning("search index format %s != %s: rebuilding from scratch", found, INDEX_FORMAT)
                for child in self.root.iterdir():
                    if child.is_dir():
                        shutil.rmtree(child)
                    else:
                        child.unlink()
            marker.write_text(INDEX_FORMAT)
        self.schema = build_schema()
        self.analyzer = build_analyzer()
        self._indexes: dict[tuple[str, str], _PartitionIndex] = {}
        self._lock = threading.Lock()
        self.vectors = LocalVectorStore(self.root / "_vectors")  # "_" never starts a bot id
        self._analyze_short = functools.lru_cache(maxsize=4096)(
            lambda text: tuple(self.analyzer.analyze(analysis.expand(text))))
        # short strings (titles, breadcrumbs, file names; short questions): every served passage's
        # title and breadcrumb are analysed for the title lift, two strings for each of ten passages
        # a question, so they get a larger cache of their own (at most FIELD_CACHE x FIELD_CHARS
        # characters, a few MB) that long questions do not evict
        self._analyze_field = functools.lru_cache(maxsize=FIELD_CACHE)(
            lambda text: tuple(self.analyzer.analyze(analysis.expand(text))))

    # -- helpers --------------------------------------------------------------------------

    def _dir(self, bot: str, partition: str) -> Path:
        if not valid_bot_id(bot):
            raise ValueError(f"invalid bot id {bot!r}")
        if partition not in PARTITIONS:
            raise ValueError(f"invalid partition {partition!r}")
        return self.root / _SAFE.sub("_", bot) / partition

    def _part(self, bot: str, partition: str, create: bool = True) -> _PartitionIndex | None:
        key = (bot, partition)
        part = self._indexes.get(key)
        if part is not None:
            return part
        path = self._dir(bot, partition)
        if not create and not (path / "meta.json").exists():
            return None
        with self._lock:
            part = self._indexes.get(key)
            if part is None:
                try:
                    part = _PartitionIndex(path, self.schema, self.analyzer)
                except (OSError, ValueError) as exc:
                    raise BackendError("cannot open search index") from exc
                self._indexes[key] = part
        return part

    def analyze(self, text: str) -> list[str]:
        if len(text) <= FIELD_CHARS:
            return list(self._analyze_field(text))
        if len(text) <= 2048:  # questions repeat within a request (search, confidence, excerpts)
            return list(self._analyze_short(text))
        return list(self.analyzer.analyze(analysis.expand(text)))

    # -- writes ---------------------------------------------------------------------------

    def write(self, bot: str, passages: Iterable[Passage], *, space: str | None = None) -> int:
        """Add passages (text, and vectors of the embedder ``space`` when they carry one)."""
        by_partition: dict[str, list[Passage]] = {}
        for p in passages:
            if p.bot != bot:
                raise ValueError("passage of another bot")
            by_partition.setdefault(partition_of_visibility(p.visibility), []).append(p)
        written = 0
        for partition, items in by_partition.items():
            part = self._part(bot, partition)
            assert part is not None
            try:
                with part.writer() as writer:
                    for p in items:
                        writer.add_document(self._document(p))
                        written += 1
            except (ValueError, OSError) as exc:
                raise BackendError("search index write failed") from exc
            if space is not None:
                self.vectors.write(bot, partition, space, items)
        return written

    @staticmethod
    def _document(p: Passage) -> tantivy.Document:
        doc = tantivy.Document()
        doc.add_text("bot", p.bot)
        doc.add_text("source_gen", p.source_gen)
        doc.add_text("visibility", p.visibility)
        for field, value in (("bot", p.bot), ("visibility", p.visibility), ("source_gen", p.source_gen)):
            key = boundary_key(field, value)
            if key is None:
                raise ValueError(f"unknown {field} {value!r}")
            doc.add_unsigned(_BOUNDARY_KEYS[field], key)
        doc.add_text("text", analysis.expand(p.text))
        doc.add_bytes("meta", _meta(p))
        doc.add_integer("ordinal", p.ordinal)
        doc.add_float("weight", float(p.weight))
        doc.add_float("indexed_at", float(p.indexed_at))
        ref = PassageRef.of(p)
        doc.add_unsigned("pkey", ref.key)
        doc.add_unsigned("skey", ref.source_key)
        doc.add_unsigned("dkey", ref.doc_key)
        return doc

    def delete_generation(self, bot: str, source_id: str, generation: int) -> None:
        key = f"{source_id}:{generation}"
        self.vectors.delete_generation(bot, source_id, generation)
        for partition in PARTITIONS:
            part = self._part(bot, partition, create=False)
            if part is None:
                continue
            try:
                with part.writer() as writer:
                    writer.delete_documents_by_term("source_gen", key)
            except (ValueError, OSError) as exc:
                raise BackendError("search index delete failed") from exc

    def compact(self, bot: str, *, force: bool = False) -> list[dict[str, Any]]:
        """Rewrite each of the bot's partitions whose layout slows its searches (several
        segments, or many deleted documents) as one segment; run after a refresh, once its
        passages are searchable. Changes no search result, except that BM25 term statistics,
        which count deleted documents until a merge drops them, become exact. Returns one
        entry per partition rewritten."""
        done = []
        for partition in PARTITIONS:
            part = self._part(bot, partition, create=False)
            if part is None:
                continue
            try:
                result = part.compact(bot, force=force)
            except (ValueError, OSError) as exc:
                raise BackendError("search index compaction failed") from exc
            if result is not None:
                done.append({"partition": partition, **result})
        return done

    def delete_bot(self, bot: str) -> None:
        with self._lock:
            for partition in PARTITIONS:
                self._indexes.pop((bot, partition), None)
            shutil.rmtree(self.root / _SAFE.sub("_", bot), ignore_errors=True)

    # -- reads ----------------------------------------------------------------------------

    def _filters(self, part: _PartitionIndex, searcher: tantivy.Searcher, bot: str, visibilities: Sequence[str],
                 source_gens: Sequence[str]) -> list[Any]:
        """The boundary clauses every search through ``searcher`` carries (the asking bot, its
        audience's visibility set, the live generations), whatever the partition holds: they
        are the tenant and audience boundary, and a damaged or foreign document must still be
        excluded by the query itself. See ``_PartitionIndex.boundary``."""
        return part.boundary(searcher, bot, tuple(visibilities), tuple(source_gens))

    def search_lexical(
        self,
        bot: str,
        partition: str,
        query: str,
        *,
        visibilities: Sequence[str],
        source_gens: Sequence[str],
        limit: int = 50,
        weighted: bool = True,
    ) -> list[Hit]:
        if not source_gens or not visibilities:
            return []
        terms = list(dict.fromkeys(self.analyze(query)))
        if not terms:
            return []
        part = self._part(bot, partition, create=False)
        if part is None:
            return []
        schema = self.schema
        should = []
        for t in terms:  # each term at its weight (analysis.weight: an everyday word counts less)
            q = tantivy.Query.term_query(schema, "text", t)
            w = analysis.weight(t) if weighted else 1.0
            should.append((tantivy.Occur.Should, q if w == 1.0 else tantivy.Query.boost_query(q, w)))
        text_query = tantivy.Query.boolean_query(should)
        searcher = part.searcher()
        query_obj = tantivy.Query.boolean_query(
            [(tantivy.Occur.Must, text_query), *self._filters(part, searcher, bot, visibilities, source_gens)]
        )
        try:
            found = searcher.search(query_obj, limit, count=False).hits  # a new list per access: once
            if not found:
                return []
            scores = [float(s) for s, _ in found]
            addresses = [a for _, a in found]
            columns = [searcher.fast_field_values(name, addresses) for name in _REF_FIELDS]
        except ValueError as exc:
            raise BackendError("search failed") from exc
        refs = (PassageRef(*row) for row in zip(*columns, strict=True))
        return [
            Hit(ref, score, rank, None, FoundAt(partition, address, searcher))
            for rank, (ref, score, address) in enumerate(zip(refs, scores, addresses, strict=True), start=1)
        ]

    def search_vector(
        self,
        bot: str,
        partition: str,
        queries: Mapping[str, Sequence[float]],
        *,
        visibilities: Sequence[str],
        source_gens: Sequence[str],
        limit: int = 50,
    ) -> list[Hit]:
        """Cosine kNN; ``queries`` maps a vector space (embedder name) to the question's vector
        in it. Hits carry their partition's key address, hydrated like lexical hits."""
        if not source_gens or not visibilities or not queries:
            return []
        hits = self.vectors.search(bot, partition, queries, visibilities=visibilities, source_gens=source_gens,
                                   limit=limit)
        return hits

    def iter_passages(self, bot: str, source_gens: Sequence[str]) -> Iterator[tuple[int, str, str]]:
        """(key, visibility, text) of every passage of the given generations, both partitions:
        what the corpus-learned rescue is built from."""
        if not source_gens:
            return
        for partition in PARTITIONS:
            part = self._part(bot, partition, create=False)
            if part is None:
                continue
            searcher = part.searcher()
            query = tantivy.Query.boolean_query(
                self._filters(part, searcher, bot, PARTITION_VISIBILITIES[partition], source_gens))
            total = int(searcher.search(query, 1, count=True).count)  # type: ignore[attr-defined]
            if not total:
                continue
            for _score, address in searcher.search(query, total, count=False).hits:
                p = self._passage(bot, searcher.doc(address))
                yield key64(p.id), p.visibility, p.text

    def find_key(
        self, bot: str, partition: str, key: int, *, visibilities: Sequence[str], source_gens: Sequence[str]
    ) -> Passage | None:
        """The passage with this key, if the same filters as a search admit it."""
        part = self._part(bot, partition, create=False)
        if part is None or not source_gens or not visibilities:
            return None
        searcher = part.searcher()
        query = tantivy.Query.boolean_query(
            [(tantivy.Occur.Must, tantivy.Query.term_query(self.schema, "pkey", key)),
             *self._filters(part, searcher, bot, visibilities, source_gens)]
        )
        hits = searcher.search(query, 1, count=False).hits
        return self._passage(bot, searcher.doc(hits[0][1])) if hits else None

    def vector_spaces(self, bot: str, partition: str, source_gens: Sequence[str]) -> set[str]:
        return self.vectors.embedders(bot, partition, source_gens)

    def hydrate(self, bot: str, hits: Sequence[Hit]) -> None:
        """Load the stored passage of each hit that has none yet. A lexical hit is loaded
        through the searcher that found it: a document address means nothing to a searcher
        opened after a merge renumbered the segments."""
        searchers: dict[str, tantivy.Searcher] = {}
        for hit in hits:
            if hit.passage is not None:
                continue
            if isinstance(hit.address, FoundAt):
                hit.passage = self._passage(bot, hit.address.searcher.doc(hit.address.address))
                continue
            if not isinstance(hit.address, KeyedAt):
                raise BackendError("a hit of another index cannot be loaded here")
            partition, key, source_gen = hit.address
            searcher = searchers.get(partition)
            if searcher is None:
                part = self._part(bot, partition, create=False)
                if part is None:
                    continue
                searcher = searchers[partition] = part.searcher()
            found = searcher.search(tantivy.Query.boolean_query([
                (tantivy.Occur.Must, tantivy.Query.term_query(self.schema, "pkey", key)),
                (tantivy.Occur.Must, tantivy.Query.term_query(self.schema, "source_gen", source_gen)),
            ]), 1, count=False).hits
            if found:
                hit.passage = self._passage(bot, searcher.doc(found[0][1]))

    @staticmethod
    def _passage(bot: str, doc: tantivy.Document) -> Passage:
        meta = doc.get_first("meta")
        if not isinstance(meta, bytes):
            raise BackendError("damaged passage record in the search index")
        return _passage_of(meta, bot)

    def count(self, bot: str, partition: str, source_gens: Sequence[str]) -> int:
        part = self._part(bot, partition, create=False)
        if part is None or not source_gens:
            return 0
        query = tantivy.Query.boolean_query(
            [
                (tantivy.Occur.Must, tantivy.Query.term_query(self.schema, "bot", bot)),
                (tantivy.Occur.Must, tantivy.Query.term_set_query(self.schema, "source_gen", list(source_gens))),
            ]
        )
        result = part.searcher().search(query, 1, count=True)
        return int(result.count)  # type: ignore[attr-defined]  # present at run time, missing in the stubs

    def doc_freqs(self, bot: str, partition: str, terms: Sequence[str]) -> tuple[dict[str, int], int]:
        """({analysed term: documents containing it}, documents in the partition), read from
        one searcher."""
        part = self._part(bot, partition, create=False)
        if part is None:
            return {term: 0 for term in terms}, 0
        searcher = part.searcher()
        return {term: int(searcher.doc_freq("text", term)) for term in terms}, int(searcher.num_docs)

    def stored_generations(self, bot: str, partition: str) -> int:
        part = self._part(bot, partition, create=False)
        return 0 if part is None else int(part.searcher().num_docs)


def index_size_bytes(root: str | os.PathLike[str]) -> int:
    return sum(p.stat().st_size for p in Path(root).rglob("*") if p.is_file())
