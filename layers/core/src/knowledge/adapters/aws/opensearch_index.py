"""OpenSearch implementation of the SearchIndex port (AWS mode), the twin of
``TantivySearchIndex``.

Layout (DESIGN.md §9): one index per audience partition, ``<prefix>-customer-v1`` and
``<prefix>-operator-v1``, each reached through its alias (``<prefix>-customer``,
``<prefix>-operator``) so a mapping change is a reindex into ``-v2`` plus an alias swap. Both
are created, with their alias, on first use. Every document is written and every request is
sent with ``routing = bot``: a bot's passages live on one shard, its searches touch one shard,
and the BM25 statistics its scores use are (mostly) its own.

Every query carries the same three non-scoring filters — ``term bot``, ``terms visibility``,
``terms source_gen`` (the live ``"<source>:<generation>"`` keywords the asker may see) — inside
its ``bool.filter`` (lexical) or inside ``knn.vector.filter`` (vector: efficient k-NN
filtering, applied during the graph search, never a post-filter that would return fewer than
``k`` hits). The request bodies are built by the pure functions :func:`search_filters`,
:func:`lexical_query` and :func:`knn_query`.

Writes use the ``_bulk`` API with ``refresh=wait_for``: when :meth:`OpenSearchIndex.write`
returns, the passages are searchable, without forcing a segment per call. A generation is
dropped with ``_delete_by_query`` on ``bot`` + ``source_gen``. Document ids combine bot,
generation and passage id, because a passage keeps its id across generations and the new
generation must not overwrite the live one while it is being staged.

Text is analysed as :mod:`knowledge.analysis` defines, like the embedded twin: the custom
analyser :data:`ANALYZER` (set up by :func:`knowledge.analysis.opensearch_analysis`) indexes
``body``, the passage text after :func:`knowledge.analysis.expand`; ``text`` keeps the passage as
written and is stored only. An alias still on an index of an older :data:`INDEX_VERSION` is moved
to a new index on first use (the old index is left for the operator to delete); the ingest
version that moved with it re-ingests every source into it.

Vectors of several embedders can live side by side (a bot moving to another embedder keeps
answering from the old vectors while its sources are re-embedded): each passage stores the
``space`` (embedder name) its vector belongs to, and a vector search compares the question's
vector of a space only with passages of that space (``term space`` inside the k-NN filter).

Hits carry the ranking fields (``PassageRef``) and, as their address, the stored source the
search already returned, so :meth:`OpenSearchIndex.hydrate` needs no second round trip.
Vectors are kept in ``_source`` (so a reindex can copy them) but never returned by searches.

The corpus-learned rescue reads the whole live corpus of a bot (:meth:`OpenSearchIndex.iter_passages`,
pages of :data:`SCAN_PAGE` passages walked with ``search_after`` on the unique, exact keyword
pair ``source_gen`` + ``id``: no search context is held open between pages) and checks the
passage it proposes with :meth:`OpenSearchIndex.find_key` (``term pkey`` plus the very filters of
a search).
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple
from urllib.parse import urlsplit

from ... import analysis
from ...errors import BackendError
from ...model import (
    PARTITION_VISIBILITIES,
    PARTITIONS,
    Hit,
    Passage,
    PassageRef,
    key64,
    partition_of_visibility,
    stable_id,
)
from .search_http import SearchBadRequest, SearchHttpError, SearchNotFound, SearchUnreachable

if TYPE_CHECKING:
    from opensearchpy import OpenSearch

INDEX_VERSION = "v2"
#: word-search scores are multiplied by this to read on the embedded index's scale: Lucene's
#: BM25 (OpenSearch's default similarity, k1 = 1.2, b = 0.75, as tantivy's) left out the constant
#: ``k1 + 1`` of BM25's numerator in Lucene 8, so a term's score saturates at its IDF there and at
#: ``(k1 + 1)`` times it in tantivy. The order of a list does not change; what reads scores
#: against the most a question could score (the confidence's ``strength``, ``reach``, ``wig``,
#: ``nqc``, in units of ``(k1 + 1)`` x IDF) read about 2.2 times too little on AWS without it (a
#: two-page corpus: ``strength`` 0.27 on AWS against 0.48 embedded for the same question)
LUCENE_BM25_SCALE = 1.2 + 1.0
DEFAULT_DIMENSION = 1024
ANALYZER = "kb_en"
#: Fields returned with every hit: everything but the vector and the indexed copy of the text.
SOURCE_FILTER = {"excludes": ["vector", "body"]}
_BULK_CHUNK = 200
_BULK_BYTES = 5 * 1024 * 1024  # well under the 10 MB request limit of small OpenSearch instances
#: passages per page of a corpus scan (``iter_passages``): a few MB of text per response
SCAN_PAGE = 1000
#: the order a corpus scan walks in: exact keywords whose pair is unique among the generations
#: scanned (``search_after`` needs a total order; the document ``_id`` is not sortable everywhere)
SCAN_SORT = [{"source_gen": "asc"}, {"id": "asc"}]


class _ErrorKinds(NamedTuple):
    """The exception classes of each kind of failure a client raises."""

    not_found: tuple[type[Exception], ...]  # 404
    failed: tuple[type[Exception], ...]  # any failure of the client
    request: tuple[type[Exception], ...]  # 400 (``error``: the server's error type)
    connection: tuple[type[Exception], ...]  # no answer
    transport: tuple[type[Exception], ...]  # an HTTP status (``status_code``), or no answer


_HTTP_ERRORS = _ErrorKinds((SearchNotFound,), (SearchHttpError,), (SearchBadRequest,), (SearchUnreachable,),
                           (SearchHttpError,))
_BOTH_ERRORS: list[_ErrorKinds] = []


def _errors() -> _ErrorKinds:
    """What each ``except`` catches: the errors of the HTTP read path (``search_http``) and,
    once opensearch-py is loaded, its own (none of them can be raised before: the module
    does not import opensearch-py for a process that only queries)."""
    if _BOTH_ERRORS:
        return _BOTH_ERRORS[0]
    if "opensearchpy" not in sys.modules:
        return _HTTP_ERRORS
    from opensearchpy import exceptions as found

    both = _ErrorKinds(*((*own, theirs) for own, theirs in zip(_HTTP_ERRORS, (
        found.NotFoundError, found.OpenSearchException, found.RequestError, found.ConnectionError,
        found.TransportError), strict=True)))
    _BOTH_ERRORS.append(both)
    return both


def _analyze_chain() -> dict[str, Any]:
    """:data:`ANALYZER` spelled out for ``_analyze`` (tokenizer and filters inline)."""
    defined = analysis.opensearch_analysis(ANALYZER)
    chain = defined["analyzer"][ANALYZER]
    return {"tokenizer": defined["tokenizer"][chain["tokenizer"]],
            "filter": [defined["filter"].get(name, name) for name in chain["filter"]]}


_ANALYZE_CHAIN = _analyze_chain()


def index_name(prefix: str, partition: str) -> str:
    return f"{prefix}-{partition}-{INDEX_VERSION}"


def alias_name(prefix: str, partition: str) -> str:
    return f"{prefix}-{partition}"


def index_body(prefix: str, partition: str, *, dimension: int = DEFAULT_DIMENSION, shards: int = 1,
               replicas: int = 0) -> dict[str, Any]:
    """Settings, mapping and alias of one partition index."""

    def keyword(indexed: bool = True) -> dict[str, Any]:
        # stored-only keywords are neither indexed nor given doc values: no term-length limit
        return {"type": "keyword"} if indexed else {"type": "keyword", "index": False, "doc_values": False}

    return {
        "settings": {
            "index": {
                "knn": True,
                "number_of_shards": shards,
                "number_of_replicas": replicas,
            },
            "analysis": analysis.opensearch_analysis(ANALYZER),
        },
        "mappings": {
            "dynamic": "strict",
            "properties": {
                "body": {"type": "text", "analyzer": ANALYZER},
                "text": keyword(indexed=False),
                "bot": keyword(),
                "source_gen": keyword(),
                "visibility": keyword(),
                "source_id": keyword(),
                "document_id": keyword(),
                "id": keyword(),
                "space": keyword(),
                "path": keyword(indexed=False),
                "url": keyword(indexed=False),
                "title": keyword(indexed=False),
                "breadcrumb": keyword(indexed=False),
                "ordinal": {"type": "integer"},
                "priority": {"type": "integer"},
                "generation": {"type": "integer"},
                "weight": {"type": "double"},
                "indexed_at": {"type": "double"},
                "pkey": {"type": "long"},
                "skey": {"type": "long"},
                "dkey": {"type": "long"},
                "vector": {
                    "type": "knn_vector",
                    "dimension": dimension,
                    "method": {"name": "hnsw", "space_type": "cosinesimil", "engine": "lucene"},
                },
            },
        },
        "aliases": {alias_name(prefix, partition): {}},
    }


def search_filters(bot: str, visibilities: Sequence[str], source_gens: Sequence[str]) -> list[dict[str, Any]]:
    """The filters every search carries (DESIGN.md §9); identical for BM25 and k-NN."""
    return [
        {"term": {"bot": bot}},
        {"terms": {"visibility": list(visibilities)}},
        {"terms": {"source_gen": list(source_gens)}},
    ]


def lexical_query(text: str, filters: list[dict[str, Any]], limit: int, *, weighted: bool = True) -> dict[str, Any]:
    """BM25 over ``body``; the filters restrict without scoring, before ranking and ``size``.

    The question is expanded like the passages (identifiers whole and in parts), then its
    words are de-duplicated (lower-cased), as the embedded index does with its terms: a word
    repeated in a question does not weigh more, and a long question produces fewer boolean
    clauses. Its everyday English words are asked in a second clause at
    :data:`knowledge.analysis.COMMON_WEIGHT` (:func:`knowledge.analysis.weighted_words`), as the
    embedded index weighs them (``weighted=False``: every word at full weight); a passage
    matches when it holds any word of either."""
    full, common = analysis.weighted_words(text)
    if not weighted:  # every word at full weight
        full, common = full + common, []
    match: dict[str, Any] = {"match": {"body": {"query": " ".join(full)}}}  # no word: matches nothing
    if common:
        weak = {"match": {"body": {"query": " ".join(common), "boost": analysis.COMMON_WEIGHT}}}
        match = {"bool": {"should": [match, weak] if full else [weak]}}
    return {
        "size": limit,
        "_source": SOURCE_FILTER,
        "query": {"bool": {"must": [match], "filter": filters}},
    }


def scan_query(filters: list[dict[str, Any]], size: int, after: Sequence[Any] | None = None) -> dict[str, Any]:
    """One page of a filtered scan in :data:`SCAN_SORT` order, resuming after the sort values
    of the previous page's last hit; only what the rescue learns from is returned."""
    body: dict[str, Any] = {
        "size": size,
        "_source": ["id", "visibility", "text"],
        "track_total_hits": False,
        "query": {"bool": {"filter": filters}},
        "sort": SCAN_SORT,
    }
    if after is not None:
        body["search_after"] = list(after)
    return body


def knn_query(vector: Sequence[float], k: int, filters: list[dict[str, Any]]) -> dict[str, Any]:
    """k-NN over ``vector`` with the filters applied *inside* the approximate search
    (OpenSearch efficient filtering: ``query.knn.<field>.filter``)."""
    return {
        "size": k,
        "_source": SOURCE_FILTER,
        "query": {
            "knn": {
                "vector": {
                    "vector": [float(x) for x in vector],
                    "k": k,
                    "filter": {"bool": {"filter": filters}},
                }
            }
        },
    }


@dataclass(frozen=True)
class StoredHit:
    """A hit's address: the index and id, plus the stored fields the search returned."""

    index: str
    id: str
    source: Mapping[str, Any] | None = None


def _document(p: Passage, space: str | None = None) -> dict[str, Any]:
    ref = PassageRef.of(p)
    doc: dict[str, Any] = {
        "id": p.id,
        "bot": p.bot,
        "source_gen": p.source_gen,
        "visibility": p.visibility,
        "source_id": p.source_id,
        "document_id": p.document_id,
        "text": p.text,
        "body": analysis.expand(p.text),
        "title": p.title,
        "path": p.path,
        "breadcrumb": p.breadcrumb,
        "generation": p.generation,
        "ordinal": p.ordinal,
        "priority": p.priority,
        "weight": float(p.weight),
        "indexed_at": float(p.indexed_at),
        "pkey": ref.key,
        "skey": ref.source_key,
        "dkey": ref.doc_key,
    }
    if p.url:
        doc["url"] = p.url
    if p.vector is not None:
        doc["vector"] = [float(x) for x in p.vector]
        if space:
            doc["space"] = space
    return doc


def _passage(bot: str, src: Mapping[str, Any]) -> Passage:
    return Passage(
        id=str(src["id"]),
        bot=bot,
        source_id=str(src["source_id"]),
        document_id=str(src["document_id"]),
        generation=int(src.get("generation", 0)),
        ordinal=int(src.get("ordinal", 0)),
        title=str(src.get("title", "")),
        path=str(src.get("path", "")),
        breadcrumb=str(src.get("breadcrumb", "")),
        text=str(src.get("text", "")),
        visibility=str(src["visibility"]),
        weight=float(src.get("weight", 1.0)),
        priority=int(src.get("priority", 0)),
        indexed_at=float(src.get("indexed_at", 0.0)),
        url=src.get("url"),
    )


def _ref(src: Mapping[str, Any]) -> PassageRef:
    return PassageRef(int(src["pkey"]), int(src["skey"]), int(src["dkey"]), int(src["ordinal"]),
                      float(src["weight"]), float(src["indexed_at"]))


def document_id(bot: str, p: Passage) -> str:
    return stable_id(bot, p.source_gen, p.id, length=40)


class OpenSearchIndex:
    """SearchIndex over two OpenSearch indexes (one per audience partition), routed by bot."""

    def __init__(self, client: Any, prefix: str, *, dimension: int = DEFAULT_DIMENSION, shards: int = 1,
                 replicas: int = 0, read_roles: Sequence[str] = ()):
        if not prefix or prefix != prefix.lower() or not all(c.isalnum() or c in "-_" for c in prefix) \
                or prefix[0] in "-_":
            raise ValueError(f"invalid index prefix {prefix!r}")
        self.client = client
        self.prefix = prefix
        self.dimension = dimension
        self.shards = shards
        self.replicas = replicas
        #: IAM role ARNs mapped to a read-only role of the security plugin when this
        #: process first creates or opens the indexes (only the master user can do that)
        self.read_roles = tuple(r for r in read_roles if r)
        self._ready: set[str] = set()
        self._lock = threading.Lock()
        self._analyze_supported = True

    # -- helpers --------------------------------------------------------------------------

    def _alias(self, partition: str) -> str:
        if partition not in PARTITIONS:
            raise ValueError(f"invalid partition {partition!r}")
        return alias_name(self.prefix, partition)

    def _ensure(self, partition: str) -> str:
        """Create the partition's index and alias on first use (idempotent across processes)."""
        alias = self._alias(partition)
        if partition in self._ready:
            return alias
        with self._lock:
            if partition not in self._ready:
                try:
                    if not self.client.indices.exists_alias(name=alias):
                        body = index_body(self.prefix, partition, dimension=self.dimension, shards=self.shards,
                                          replicas=self.replicas)
                        self.client.indices.create(index=index_name(self.prefix, partition), body=body)
                    else:
                        self._move_alias(partition)
                except _errors().request as exc:
                    # another process won the race
                    if getattr(exc, "error", None) != "resource_already_exists_exception":
                        raise BackendError("cannot create the search index") from exc
                except _errors().failed as exc:
                    raise BackendError("cannot create the search index") from exc
                if self.read_roles and not self._ready:
                    ensure_read_role(self.client, self.prefix, self.read_roles)
                self._ready.add(partition)
        return alias

    def _move_alias(self, partition: str) -> None:
        """Point an alias still on an older index version at a new index of this version."""
        alias, current = self._alias(partition), index_name(self.prefix, partition)
        held = set(self.client.indices.get_alias(name=alias))
        if current in held:
            return
        body = index_body(self.prefix, partition, dimension=self.dimension, shards=self.shards,
                          replicas=self.replicas)
        body.pop("aliases")
        try:
            self.client.indices.create(index=current, body=body)
        except _errors().request as exc:
            if getattr(exc, "error", None) != "resource_already_exists_exception":
                raise
        actions: list[dict[str, Any]] = [{"remove": {"index": old, "alias": alias}} for old in sorted(held)]
        actions.append({"add": {"index": current, "alias": alias}})
        self.client.indices.update_aliases(body={"actions": actions})

    @staticmethod
    def _failed(operation: str, exc: Exception) -> BackendError:
        status = getattr(exc, "status_code", None)
        return BackendError(f"search index {operation} failed",
                            details={"status": status} if isinstance(status, int) else None)

    # -- writes ---------------------------------------------------------------------------

    def write(self, bot: str, passages: Iterable[Passage], *, space: str | None = None) -> int:
        """Bulk-index passages (and their vectors, tagged with the embedder ``space``)."""
        by_partition: dict[str, list[Passage]] = {}
        for p in passages:
            if p.bot != bot:
                raise ValueError("passage of another bot")
            if p.vector is not None and len(p.vector) != self.dimension:
                raise ValueError(f"vector has {len(p.vector)} dimensions, the index {self.dimension}")
            by_partition.setdefault(partition_of_visibility(p.visibility), []).append(p)
        written = 0
        for partition, items in by_partition.items():
            alias = self._ensure(partition)
            actions = (
                {"_op_type": "index", "_index": alias, "_id": document_id(bot, p), "_routing": bot,
                 "_source": _document(p, space)}
                for p in items
            )
            from opensearchpy import helpers  # writes go through opensearch-py (the full client)

            try:
                ok, _ = helpers.bulk(getattr(self.client, "full", self.client), actions, refresh="wait_for",
                                     chunk_size=_BULK_CHUNK, max_chunk_bytes=_BULK_BYTES)
            except helpers.BulkIndexError as exc:
                # the error items echo each rejected document: drop that copy of the passage
                # text before the exception is chained (and maybe logged with its cause)
                for entry in exc.errors:
                    for outcome in entry.values():
                        if isinstance(outcome, dict):
                            outcome.pop("data", None)
                kinds = sorted({str(next(iter(e.values())).get("error", {}).get("type")) for e in exc.errors})
                raise BackendError("search index write failed",
                                   details={"failed": len(exc.errors), "errors": kinds}) from exc
            except _errors().failed as exc:
                raise self._failed("write", exc) from exc
            written += int(ok)
        return written

    def _delete(self, bot: str, filters: list[dict[str, Any]]) -> None:
        for partition in PARTITIONS:
            try:
                self.client.delete_by_query(index=self._alias(partition), body={"query": {"bool": {"filter": filters}}},
                                            routing=bot, refresh=True, conflicts="proceed")
            except _errors().not_found:
                continue  # the partition was never written
            except _errors().failed as exc:
                raise self._failed("delete", exc) from exc

    def delete_generation(self, bot: str, source_id: str, generation: int) -> None:
        self._delete(bot, [{"term": {"bot": bot}}, {"term": {"source_gen": f"{source_id}:{generation}"}}])

    def delete_bot(self, bot: str) -> None:
        self._delete(bot, [{"term": {"bot": bot}}])

    # -- reads ----------------------------------------------------------------------------

    def _search(self, bot: str, partition: str, body: dict[str, Any], *, cosine: bool = False,
                scale: float = 1.0) -> list[Hit]:
        """``cosine``: a k-NN search, whose scores are turned back into cosine similarities
        (Lucene's cosine space scores ``(1 + cos) / 2``), as the embedded index gives them;
        ``scale``: a factor for the scores of a word search (:data:`LUCENE_BM25_SCALE`)."""
        alias = self._alias(partition)
        try:
            response = self.client.search(index=alias, body=body, routing=bot)
        except _errors().not_found:
            return []
        except _errors().failed as exc:
            raise self._failed("search", exc) from exc
        hits = []
        for rank, raw in enumerate(response["hits"]["hits"], start=1):
            src = raw["_source"]
            score = float(raw["_score"])
            hits.append(Hit(ref=_ref(src), score=2.0 * score - 1.0 if cosine else score * scale, rank=rank,
                            address=StoredHit(str(raw["_index"]), str(raw["_id"]), src)))
        return hits

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
        self._alias(partition)
        if not source_gens or not visibilities or not query.strip():
            return []
        body = lexical_query(query, search_filters(bot, visibilities, source_gens), limit, weighted=weighted)
        return self._search(bot, partition, body, scale=LUCENE_BM25_SCALE)

    def search_vector(
        self,
        bot: str,
        partition: str,
        queries: Mapping[str, Sequence[float]] | Sequence[float],
        *,
        visibilities: Sequence[str],
        source_gens: Sequence[str],
        limit: int = 50,
    ) -> list[Hit]:
        """Approximate nearest neighbours (cosine) under the same filters as the lexical search.

        ``queries`` maps a vector space (embedder name) to the question's vector in it: each
        space is searched with ``term space`` added to the filter and the hits are merged by
        score (cosine similarities of normalised vectors compare across spaces). A space whose
        vectors have another dimension than the index cannot be stored here and is skipped. A
        bare vector searches every stored vector regardless of its space."""
        self._alias(partition)
        if not source_gens or not visibilities or not queries:
            return []
        filters = search_filters(bot, visibilities, source_gens)
        if not isinstance(queries, Mapping):
            if len(queries) != self.dimension:
                raise ValueError(f"query vector has {len(queries)} dimensions, the index {self.dimension}")
            return self._search(bot, partition, knn_query(queries, limit, filters), cosine=True)
        merged: list[Hit] = []
        for space, vector in queries.items():
            if len(vector) != self.dimension:
                continue
            body = knn_query(vector, limit, [*filters, {"term": {"space": space}}])
            merged.extend(self._search(bot, partition, body, cosine=True))
        if len(queries) > 1:
            merged.sort(key=lambda h: -h.score)
            merged = merged[:limit]
            for rank, hit in enumerate(merged, start=1):
                hit.rank = rank
        return merged

    def iter_passages(self, bot: str, source_gens: Sequence[str]) -> Iterator[tuple[int, str, str]]:
        """(key, visibility, text) of every passage of the given generations, both partitions:
        what the corpus-learned rescue is built from. Streamed page by page (``SCAN_PAGE``
        passages per request, ``search_after``), so memory does not grow with the corpus."""
        if not source_gens:
            return
        for partition in PARTITIONS:
            alias = self._alias(partition)
            filters = search_filters(bot, PARTITION_VISIBILITIES[partition], source_gens)
            after: Sequence[Any] | None = None
            while True:
                try:
                    response = self.client.search(index=alias, body=scan_query(filters, SCAN_PAGE, after),
                                                  routing=bot)
                except _errors().not_found:
                    break  # the partition was never written
                except _errors().failed as exc:
                    raise self._failed("scan", exc) from exc
                hits = response["hits"]["hits"]
                for raw in hits:
                    src = raw["_source"]
                    yield key64(str(src["id"])), str(src["visibility"]), str(src.get("text", ""))
                if len(hits) < SCAN_PAGE:
                    break
                after = hits[-1]["sort"]

    def compact(self, bot: str, *, force: bool = False) -> list[dict[str, Any]]:
        """Nothing to do: the partition indexes are shared by every bot, and OpenSearch merges
        their segments under its own tiered policy; a force-merge of a live shared index is an
        operator's decision, not a refresh's."""
        return []

    def find_key(
        self, bot: str, partition: str, key: int, *, visibilities: Sequence[str], source_gens: Sequence[str]
    ) -> Passage | None:
        """The passage with this key (``key64`` of its id), if the same filters as a search
        admit it; else None."""
        alias = self._alias(partition)
        if not source_gens or not visibilities:
            return None
        body = {
            "size": 1,
            "_source": SOURCE_FILTER,
            "query": {"bool": {"filter": [*search_filters(bot, visibilities, source_gens),
                                          {"term": {"pkey": int(key)}}]}},
        }
        try:
            response = self.client.search(index=alias, body=body, routing=bot)
        except _errors().not_found:
            return None
        except _errors().failed as exc:
            raise self._failed("find", exc) from exc
        for raw in response["hits"]["hits"]:
            src = raw["_source"]
            if key64(str(src["id"])) == key:
                return _passage(bot, src)
        return None

    def vector_spaces(self, bot: str, partition: str, source_gens: Sequence[str]) -> set[str]:
        """The embedder spaces the given live generations hold vectors of (a terms aggregation
        on the bot's shard)."""
        self._alias(partition)
        if not source_gens:
            return set()
        body = {
            "size": 0,
            "query": {"bool": {"filter": [{"term": {"bot": bot}}, {"terms": {"source_gen": list(source_gens)}}]}},
            "aggs": {"spaces": {"terms": {"field": "space", "size": 20}}},
        }
        try:
            response = self.client.search(index=self._alias(partition), body=body, routing=bot)
        except _errors().not_found:
            return set()
        except _errors().failed as exc:
            raise self._failed("vector_spaces", exc) from exc
        buckets = response.get("aggregations", {}).get("spaces", {}).get("buckets", [])
        return {str(b["key"]) for b in buckets if b.get("doc_count", 0) > 0}

    def hydrate(self, bot: str, hits: Sequence[Hit]) -> None:
        """Fill each hit's passage from the fields its search returned (fetching by id only
        for a hit that arrived without them)."""
        missing: dict[str, list[tuple[Hit, StoredHit]]] = {}
        for hit in hits:
            address = hit.address
            if hit.passage is not None or not isinstance(address, StoredHit):
                continue
            if address.source is not None:
                hit.passage = _passage(bot, address.source)
            else:
                missing.setdefault(address.index, []).append((hit, address))
        for index, group in missing.items():
            try:
                response = self.client.mget(index=index, body={"ids": [a.id for _, a in group]}, routing=bot,
                                            _source_excludes=["vector"])
            except _errors().failed as exc:
                raise self._failed("fetch", exc) from exc
            found = {d["_id"]: d["_source"] for d in response.get("docs", []) if d.get("found")}
            for hit, address in group:
                src = found.get(address.id)
                if src is not None:
                    hit.passage = _passage(bot, src)

    def _count(self, bot: str, partition: str, body: dict[str, Any]) -> int:
        try:
            response = self.client.count(index=self._alias(partition), body=body, routing=bot)
        except _errors().not_found:
            return 0
        except _errors().failed as exc:
            raise self._failed("count", exc) from exc
        return int(response["count"])

    def count(self, bot: str, partition: str, source_gens: Sequence[str]) -> int:
        if not source_gens:
            self._alias(partition)
            return 0
        filters = [{"term": {"bot": bot}}, {"terms": {"source_gen": list(source_gens)}}]
        return self._count(bot, partition, {"query": {"bool": {"filter": filters}}})

    def doc_freqs(self, bot: str, partition: str, terms: Sequence[str]) -> tuple[dict[str, int], int]:
        """({analysed term: passages of the bot in the partition containing it}, passages of
        the bot in the partition). One request on the bot's shard for every term: a filtered
        count of the bot's passages with one ``filter`` aggregation per term. Like the
        embedded twin it counts every stored generation, not only the live ones."""
        distinct = list(dict.fromkeys(terms))
        body: dict[str, Any] = {
            "size": 0,
            "track_total_hits": True,
            "query": {"bool": {"filter": [{"term": {"bot": bot}}]}},
        }
        if distinct:
            body["aggs"] = {f"t{i}": {"filter": {"term": {"body": term}}} for i, term in enumerate(distinct)}
        try:
            response = self.client.search(index=self._alias(partition), body=body, routing=bot)
        except _errors().not_found:
            return {term: 0 for term in distinct}, 0
        except _errors().failed as exc:
            raise self._failed("doc_freqs", exc) from exc
        total = response["hits"]["total"]
        n = int(total["value"] if isinstance(total, Mapping) else total)
        aggs = response.get("aggregations") or {}
        return {term: int(aggs[f"t{i}"]["doc_count"]) for i, term in enumerate(distinct)}, n

    def analyze(self, text: str) -> list[str]:
        """Terms of ``text`` under the index's analyser (``_analyze``, given the analyser's
        definition, so no index needs to exist). A server without ``_analyze`` (or refusing this
        text, e.g. too many tokens) gets the embedded analyser instead: the same definition."""
        if self._analyze_supported:
            try:
                response = self.client.indices.analyze(body={**_ANALYZE_CHAIN, "text": analysis.expand(text)})
                return [str(t["token"]) for t in response.get("tokens", [])]
            except _errors().connection as exc:
                raise self._failed("analyze", exc) from exc
            except _errors().transport as exc:
                status = getattr(exc, "status_code", None)
                status = status if isinstance(status, int) else 0
                if status >= 500:
                    raise self._failed("analyze", exc) from exc
                if status != 400:  # 404/405/501...: the endpoint does not exist here
                    self._analyze_supported = False
        return self._local_terms(text)

    @staticmethod
    def _local_terms(text: str) -> list[str]:
        return analysis.terms(text)


#: role of the security plugin the read-only callers (retrieve, admin_api) are mapped to
READ_ROLE_NAME = "kb_read"


def read_role_body(prefix: str) -> dict[str, Any]:
    """Read-only access to this deployment's indexes and aliases: search, get, count,
    ``_analyze`` — nothing that writes."""
    return {
        "cluster_permissions": ["cluster_composite_ops_ro", "indices:admin/analyze"],
        "index_permissions": [
            {
                "index_patterns": [f"{prefix}-*"],
                "allowed_actions": ["read", "indices:admin/analyze", "indices:admin/aliases/get"],
            }
        ],
    }


def ensure_read_role(client: Any, prefix: str, role_arns: Sequence[str]) -> None:
    """Create (or update) the read-only role and map the IAM roles to it (fine-grained access
    control). Only the master user may call the security API: the ``ingest`` function is."""
    role = f"{READ_ROLE_NAME}_{prefix}"
    try:
        client.transport.perform_request("PUT", f"/_plugins/_security/api/roles/{role}", body=read_role_body(prefix))
        client.transport.perform_request(
            "PUT", f"/_plugins/_security/api/rolesmapping/{role}", body={"backend_roles": list(role_arns)}
        )
    except _errors().failed as exc:
        raise BackendError("cannot map the read-only search role") from exc


def build_opensearch_client(endpoint: str, region: str, *, session: Any = None, service: str = "es",
                            timeout: float = 10.0) -> OpenSearch:
    """An OpenSearch client signing every request with SigV4 (requests-aws4auth).

    ``AWS4Auth`` is given the session's credentials object itself (``RefreshableCredentials``
    under an assumed role) and asks it for fresh frozen credentials on every request, so the
    client can live for the whole Lambda environment. TLS certificates are verified.
    """
    from opensearchpy import OpenSearch, RequestsHttpConnection
    from requests_aws4auth import AWS4Auth

    parts, credentials = _endpoint_and_credentials(endpoint, session)
    auth = AWS4Auth(region=region, service=service, refreshable_credentials=credentials)
    return OpenSearch(
        hosts=[{"host": parts.hostname, "port": parts.port or 443}],
        http_auth=auth,
        use_ssl=True,
        verify_certs=True,
        ssl_show_warn=True,
        connection_class=RequestsHttpConnection,
        timeout=timeout,
        max_retries=2,
        retry_on_timeout=True,
    )


def build_query_client(endpoint: str, region: str, *, session: Any = None, service: str = "es",
                       timeout: float = 10.0) -> Any:
    """The client of the Lambda functions: queries as plain SigV4-signed HTTP
    (``search_http.QueryClient``: botocore signs and sends, opensearch-py is not imported),
    index management and writes through :func:`build_opensearch_client`'s client, created by
    the first of them. Same endpoint rule, same credentials (renewed per request)."""
    from .search_http import QueryClient

    _, credentials = _endpoint_and_credentials(endpoint, session)
    return QueryClient(endpoint, region, credentials=credentials, service=service, timeout=timeout,
                       full=lambda: build_opensearch_client(endpoint, region, session=session, service=service,
                                                            timeout=timeout))


def _endpoint_and_credentials(endpoint: str, session: Any) -> tuple[Any, Any]:
    """The endpoint's parts (https only) and the credentials that sign its requests (the
    session's, renewed by botocore; the default session when None)."""
    parts = urlsplit(endpoint if "://" in endpoint else f"https://{endpoint}")
    if parts.scheme != "https" or not parts.hostname:
        raise ValueError("the search endpoint must be an https URL or a host name")
    if session is None:
        from botocore.session import get_session

        session = get_session()
    credentials = session.get_credentials()
    if credentials is None:
        raise BackendError("no AWS credentials to sign search requests with")
    return parts, credentials
