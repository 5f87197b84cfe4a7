"""OpenSearch index specifics: request bodies (k-NN is checked by shape: osmem-server has no
k-NN), mapping and aliases, routing, generations that share passage ids, per-bot statistics,
the ``_analyze`` fallback, error translation, the SigV4 client and the plain-HTTP query client
(``search_http``: every test against osmem-server runs through opensearch-py and through it)."""

from __future__ import annotations

import datetime as dt
import hashlib
import http.server
import itertools
import json
import socket
import sys
import threading
from collections.abc import Iterator
from typing import Any, ClassVar

import pytest
import requests
from botocore.credentials import RefreshableCredentials
from opensearchpy import RequestsHttpConnection
from opensearchpy.exceptions import ConnectionError as SearchConnectionError
from opensearchpy.exceptions import NotFoundError, RequestError, TransportError

from knowledge import analysis
from knowledge.adapters.aws.opensearch_index import (
    OpenSearchIndex,
    StoredHit,
    build_opensearch_client,
    index_body,
    knn_query,
    lexical_query,
    search_filters,
)
from knowledge.adapters.aws.search_http import (
    QueryClient,
    SearchBadRequest,
    SearchHttpError,
    SearchNotFound,
    SearchUnreachable,
)
from knowledge.adapters.local.tantivy_index import TantivySearchIndex, build_analyzer
from knowledge.errors import BackendError, Code
from knowledge.model import Passage, PassageRef


def passage(pid: str, text: str, *, bot: str = "b1", gen: int = 1, vis: str = "public", **kw: Any) -> Passage:
    return Passage(id=pid, bot=bot, source_id="s1", document_id="d1", generation=gen, ordinal=kw.pop("ordinal", 0),
                   title="T", path="a.md", breadcrumb="A", text=text, visibility=vis, **kw)


@pytest.fixture(params=["opensearch-py", "http"])
def index(request: pytest.FixtureRequest, search_client: Any, index_prefix: str) -> OpenSearchIndex:
    """Through opensearch-py, and through the Lambda functions' client (queries as plain HTTP,
    management and writes through opensearch-py)."""
    if request.param == "opensearch-py":
        return OpenSearchIndex(search_client, index_prefix, dimension=4)
    url = request.getfixturevalue("osmem_search").url
    return OpenSearchIndex(QueryClient(url, None, credentials=None, full=lambda: search_client), index_prefix,
                           dimension=4)


# -- request bodies (pure) -------------------------------------------------------------------


def test_knn_query_has_the_documented_efficient_filter_shape():
    filters = search_filters("b1", ["public", "agent"], ["s1:3", "s2:1"])
    assert knn_query([0.5, -1, 0], 7, filters) == {
        "size": 7,
        "_source": {"excludes": ["vector", "body"]},
        "query": {
            "knn": {
                "vector": {
                    "vector": [0.5, -1.0, 0.0],
                    "k": 7,
                    "filter": {
                        "bool": {
                            "filter": [
                                {"term": {"bot": "b1"}},
                                {"terms": {"visibility": ["public", "agent"]}},
                                {"terms": {"source_gen": ["s1:3", "s2:1"]}},
                            ]
                        }
                    },
                }
            }
        },
    }


def test_lexical_query_filters_without_scoring_and_dedupes_words():
    filters = search_filters("b1", ["operator"], ["s1:1"])
    body = lexical_query("Fees fees AND limits", filters, 50)
    assert body["size"] == 50
    assert body["query"]["bool"]["filter"] == filters
    assert body["query"]["bool"]["must"] == [{"match": {"body": {"query": "fees limits"}}}]
    # identifiers are expanded like the indexed text: whole and in parts; everyday words ("set",
    # "start", "send") are asked apart, at the weight the embedded index gives their terms
    body = lexical_query("Set startWithVideoMuted or SEND_ENDPOINT", filters, 50)
    assert body["query"]["bool"]["must"] == [{"bool": {"should": [
        {"match": {"body": {"query": "startwithvideomuted video muted endpoint sendendpoint"}}},
        {"match": {"body": {"query": "set start send", "boost": analysis.COMMON_WEIGHT}}}]}}]
    unweighted = lexical_query("Set startWithVideoMuted or SEND_ENDPOINT", filters, 50, weighted=False)
    assert unweighted["query"]["bool"]["must"] == [{"match": {"body": {
        "query": "startwithvideomuted video muted endpoint sendendpoint set start send"}}}]
    only = lexical_query("get it back", filters, 50)["query"]["bool"]["must"]
    assert only == [{"bool": {"should": [{"match": {"body": {"query": "get back", "boost": analysis.COMMON_WEIGHT}}}]}}]
    assert "post_filter" not in body


class RecordingClient:
    """Stands in for an OpenSearch client where osmem-server cannot (k-NN)."""

    def __init__(self, hits: list[dict[str, Any]] | None = None):
        self.searches: list[dict[str, Any]] = []
        self.hits = hits or []

    def search(self, **kwargs: Any) -> dict[str, Any]:
        self.searches.append(kwargs)
        return {"hits": {"hits": self.hits}}


def stored(p: Passage, score: float) -> dict[str, Any]:
    ref = PassageRef.of(p)
    source = {"id": p.id, "bot": p.bot, "source_gen": p.source_gen, "visibility": p.visibility,
              "source_id": p.source_id, "document_id": p.document_id, "text": p.text, "title": p.title,
              "path": p.path, "breadcrumb": p.breadcrumb, "generation": p.generation, "ordinal": p.ordinal,
              "priority": p.priority, "weight": p.weight, "indexed_at": p.indexed_at, "pkey": ref.key,
              "skey": ref.source_key, "dkey": ref.doc_key}
    return {"_index": "x-customer-v1", "_id": "id-" + p.id, "_score": score, "_source": source}


def test_vector_and_lexical_searches_share_filters_and_routing():
    p = passage("v", "vector hit", vis="agent")
    client = RecordingClient([stored(p, 0.9)])
    index = OpenSearchIndex(client, "x", dimension=3)
    kwargs: dict[str, Any] = {"visibilities": ["public", "agent"], "source_gens": ["s1:1"], "limit": 5}
    [hit] = index.search_vector("b1", "customer", [0.1, 0.2, 0.3], **kwargs)
    [word_hit] = index.search_lexical("b1", "customer", "vector", **kwargs)
    knn, lexical = client.searches
    assert knn["routing"] == lexical["routing"] == "b1"
    assert knn["index"] == lexical["index"] == "x-customer"
    expected = search_filters("b1", ["public", "agent"], ["s1:1"])
    assert knn["body"]["query"]["knn"]["vector"]["filter"]["bool"]["filter"] == expected
    assert lexical["body"]["query"]["bool"]["filter"] == expected
    assert knn["body"] == knn_query([0.1, 0.2, 0.3], 5, expected)
    # Lucene's cosine space scores (1 + cos) / 2: the hit carries the cosine, as the embedded
    # index's do (the confidence's similarity means the same on both); BM25 scores get back the
    # k1 + 1 that Lucene's BM25 leaves out (tantivy's scale)
    assert (hit.ref, hit.rank, hit.score) == (PassageRef.of(p), 1, pytest.approx(0.8))
    assert word_hit.score == pytest.approx(0.9 * 2.2)
    index.hydrate("b1", [hit])  # from the search's own fields: the recording client has no mget
    assert hit.passage is not None
    assert (hit.passage.id, hit.passage.text, hit.passage.visibility) == ("v", "vector hit", "agent")
    with pytest.raises(ValueError):
        index.search_vector("b1", "customer", [0.1], **kwargs)
    assert index.search_vector("b1", "customer", [0.1, 0.2, 0.3], visibilities=["public"], source_gens=[]) == []
    with pytest.raises(ValueError):
        index.search_vector("b1", "everyone", [0.1, 0.2, 0.3], **kwargs)
    assert len(client.searches) == 2  # empty filters never reach the server


def test_index_body_mapping():
    body = index_body("kb", "operator", dimension=1024, replicas=1)
    assert body["settings"]["index"] == {"knn": True, "number_of_shards": 1, "number_of_replicas": 1}
    props = body["mappings"]["properties"]
    assert props["vector"] == {"type": "knn_vector", "dimension": 1024,
                               "method": {"name": "hnsw", "space_type": "cosinesimil", "engine": "lucene"}}
    assert props["body"] == {"type": "text", "analyzer": "kb_en"}
    assert props["text"] == {"type": "keyword", "index": False, "doc_values": False}
    assert body["settings"]["analysis"] == analysis.opensearch_analysis("kb_en")
    assert {props[k]["type"] for k in ("pkey", "skey", "dkey")} == {"long"}
    assert props["breadcrumb"] == {"type": "keyword", "index": False, "doc_values": False}
    assert body["aliases"] == {"kb-operator": {}}


# -- against osmem-server ------------------------------------------------------------------------


def test_indexes_are_created_behind_aliases_and_writes_routed_by_bot(index, search_client, index_prefix):
    index.write("b1", [passage("c", "customer words"), passage("o", "operator words", vis="operator")])
    aliases = search_client.indices.get_alias(name=f"{index_prefix}-*")
    assert aliases == {f"{index_prefix}-customer-v2": {"aliases": {f"{index_prefix}-customer": {}}},
                       f"{index_prefix}-operator-v2": {"aliases": {f"{index_prefix}-operator": {}}}}
    mapping = search_client.indices.get_mapping(index=f"{index_prefix}-customer")
    vector = mapping[f"{index_prefix}-customer-v2"]["mappings"]["properties"]["vector"]
    assert (vector["dimension"], vector["method"]["space_type"]) == (4, "cosinesimil")
    found = search_client.search(index=f"{index_prefix}-customer", body={"query": {"match_all": {}}})
    assert [(h["_source"]["id"], h["_routing"]) for h in found["hits"]["hits"]] == [("c", "b1")]
    assert found["hits"]["hits"][0]["_source"]["text"] == "customer words"
    # a second adapter (another Lambda) reuses what exists
    OpenSearchIndex(search_client, index_prefix, dimension=4).write("b1", [passage("c2", "more words")])
    assert index.count("b1", "customer", ["s1:1"]) == 2


def test_a_staged_generation_does_not_overwrite_the_live_one(index):
    index.write("b1", [passage("doc-0", "same passage id", gen=1)])
    index.write("b1", [passage("doc-0", "same passage id", gen=2)])
    assert index.count("b1", "customer", ["s1:1"]) == 1
    assert index.count("b1", "customer", ["s1:2"]) == 1
    index.delete_generation("b1", "s1", 1)
    hits = index.search_lexical("b1", "customer", "passage", visibilities=["public"], source_gens=["s1:1", "s1:2"])
    index.hydrate("b1", hits)
    assert [h.passage.generation for h in hits] == [2]


def test_statistics_and_deletes_are_per_bot(index):
    index.write("b1", [passage("a", "rebalance wallet"), passage("b", "fees"), passage("c", "limits")])
    index.write("b2", [passage("x", "rebalance", bot="b2"), passage("y", "rebalance fees", bot="b2")])
    assert index.doc_freqs("b1", "customer", ["rebal", "fee", "zzz"]) == ({"rebal": 1, "fee": 1, "zzz": 0}, 3)
    assert index.doc_freqs("b2", "customer", ["rebal", "fee"]) == ({"rebal": 2, "fee": 1}, 2)
    assert index.doc_freqs("b1", "operator", ["rebal"]) == ({"rebal": 0}, 0)  # never written
    index.delete_bot("b2")
    assert index.doc_freqs("b2", "customer", ["rebal"]) == ({"rebal": 0}, 0)
    assert index.count("b1", "customer", ["s1:1"]) == 3


def test_hydrate_fetches_by_id_when_a_hit_has_no_fields(index):
    index.write("b1", [passage("a", "alpha")])
    [hit] = index.search_lexical("b1", "customer", "alpha", visibilities=["public"], source_gens=["s1:1"])
    bare = StoredHit(hit.address.index, hit.address.id, None)
    hit.address = bare
    index.hydrate("b1", [hit])
    assert hit.passage.text == "alpha"


def test_rejected_documents_become_backend_errors_without_their_text(index):
    with pytest.raises(BackendError) as info:
        index.write("b1", [passage("a", "confidential operator text", priority=2**40)])
    assert info.value.details["failed"] == 1
    assert "confidential" not in repr(info.value.details) + str(info.value) + str(info.value.__cause__)
    with pytest.raises(ValueError):
        index.write("b1", [passage("v", "x", vector=[1.0, 0.0])])  # 2 dimensions, the index has 4
    with pytest.raises(ValueError):
        index.write("b1", [passage("o", "x", bot="b2")])


def test_search_errors_become_backend_errors(index):
    index.write("b1", [passage("a", "alpha", vector=[1.0, 0.0, 0.0, 0.0])])
    with pytest.raises(BackendError) as info:  # osmem-server rejects k-NN queries
        index.search_vector("b1", "customer", [1.0, 0.0, 0.0, 0.0], visibilities=["public"], source_gens=["s1:1"])
    assert isinstance(info.value.__cause__, (TransportError, SearchBadRequest))
    assert info.value.details == {"status": 400}


def test_analyze_uses_the_server_english_analyzer(index):
    assert index.analyze("The withdrawals are processing") == ["withdraw", "process"]


ANALYSED = [
    "The withdrawals are processing",
    "Can I get my warranty policy delivery? I can't find it",
    "Set startWithVideoMuted, SEND_ENDPOINT_TEXT_MESSAGE and config.max-retries in the e-mail",
    "HTTPServer URLs APIs 2024-01-01 v1.2 Über naïve façade x" + "y" * 45,
]


@pytest.mark.parametrize("text", ANALYSED)
def test_both_engines_analyse_alike(index, text):
    # one definition: the server's analyser, the embedded index's and the Python one agree
    assert index.analyze(text) == analysis.terms(text) == list(build_analyzer().analyze(analysis.expand(text)))


def test_lexical_search_matches_stems_identifiers_and_ignores_stop_words(index):
    index.write("b1", [passage("w", "Our warranties cover deliveries under this policy."),
                       passage("i", "Set startWithVideoMuted to true. SEND_ENDPOINT_TEXT_MESSAGE is sent."),
                       passage("s", "How do I do it? Can you? I can, you can, we all can.")])
    kwargs: dict[str, Any] = {"visibilities": ["public"], "source_gens": ["s1:1"]}

    def found(q: str) -> list[str]:
        hits = index.search_lexical("b1", "customer", q, **kwargs)
        index.hydrate("b1", hits)
        return [h.passage.id for h in hits]

    assert found("warranty policy delivery") == ["w"]
    assert found("how can I do it") == []  # only stop words: nothing to match
    assert found("startWithVideoMuted") == ["i"] and found("video muted") == ["i"]
    assert found("send endpoint text message") == ["i"] and found("SEND_ENDPOINT_TEXT_MESSAGE") == ["i"]
    assert index.doc_freqs("b1", "customer", ["sendendpointtextmessag", "startwithvideomut", "can"]) == (
        {"sendendpointtextmessag": 1, "startwithvideomut": 1, "can": 0}, 3)


def test_the_server_weighs_an_everyday_word_less_as_the_embedded_index_does(index, tmp_path):
    # the twin of tests/unit/test_analysis.py::test_the_search_weighs_an_everyday_word_less
    texts = {"everyday": "get started, get going, get set", "topic": "replication rules copy images"}
    index.write("b1", [passage(k, v) for k, v in texts.items()])
    embedded = TantivySearchIndex(tmp_path)
    embedded.write("b1", [passage(k, v) for k, v in texts.items()])
    kwargs: dict[str, Any] = {"visibilities": ["public"], "source_gens": ["s1:1"]}
    for engine in (index, embedded):
        hits = engine.search_lexical("b1", "customer", "get replication", **kwargs)
        engine.hydrate("b1", hits)
        assert [h.passage.id for h in hits] == ["topic", "everyday"]


def test_an_alias_on_an_older_index_version_moves_to_a_new_index(search_client, index_prefix):
    old = f"{index_prefix}-customer-v1"
    search_client.indices.create(index=old, body={"aliases": {f"{index_prefix}-customer": {}}})
    index = OpenSearchIndex(search_client, index_prefix, dimension=4)
    index.write("b1", [passage("c", "customer warranty")])
    aliases = search_client.indices.get_alias(name=f"{index_prefix}-customer")
    assert aliases == {f"{index_prefix}-customer-v2": {"aliases": {f"{index_prefix}-customer": {}}}}
    assert search_client.indices.exists(index=old)  # left for the operator
    hits = index.search_lexical("b1", "customer", "warranties", visibilities=["public"], source_gens=["s1:1"])
    assert len(hits) == 1


class AnalyzeClient:
    def __init__(self, error: Exception):
        self.error = error
        self.calls = 0
        self.indices = self

    def analyze(self, body: dict[str, Any]) -> dict[str, Any]:
        self.calls += 1
        raise self.error


def test_analyze_falls_back_to_the_local_english_analyzer():
    text = "The withdrawals are processed in batches"
    local = list(build_analyzer().analyze(text))
    assert local == analysis.terms(text)
    missing = AnalyzeClient(NotFoundError(404, "no handler found", {}))
    index = OpenSearchIndex(missing, "x")
    assert index.analyze(text) == local
    assert index.analyze(text) == local
    assert missing.calls == 1  # an absent endpoint is remembered
    refused = AnalyzeClient(RequestError(400, "illegal_argument_exception", {}))
    index = OpenSearchIndex(refused, "x")
    assert index.analyze(text) == local
    index.analyze(text)
    assert refused.calls == 2  # a refused text is not: the next one is asked again
    for error in (TransportError(503, "unavailable", {}), SearchConnectionError("N/A", "refused", OSError())):
        with pytest.raises(BackendError):
            OpenSearchIndex(AnalyzeClient(error), "x").analyze(text)


def test_analyze_falls_back_alike_on_the_http_client_s_errors():
    text = "The withdrawals are processed in batches"
    local = analysis.terms(text)
    missing = AnalyzeClient(SearchNotFound(404, "no handler found"))
    index = OpenSearchIndex(missing, "x")
    assert index.analyze(text) == local and index.analyze(text) == local and missing.calls == 1
    refused = AnalyzeClient(SearchBadRequest(400, "illegal_argument_exception"))
    index = OpenSearchIndex(refused, "x")
    index.analyze(text)
    assert index.analyze(text) == local and refused.calls == 2
    for error in (SearchHttpError(503, "unavailable"), SearchUnreachable("N/A", "EndpointConnectionError")):
        with pytest.raises(BackendError):
            OpenSearchIndex(AnalyzeClient(error), "x").analyze(text)


class RacingClient:
    """Both processes saw no alias; this one lost the race to create the index."""

    def __init__(self) -> None:
        self.indices = self
        self.bulk_bodies: list[Any] = []

    def exists_alias(self, name: str) -> bool:
        return False

    def create(self, index: str, body: dict[str, Any]) -> None:
        raise RequestError(400, "resource_already_exists_exception", {})


def test_losing_the_index_creation_race_is_fine():
    index = OpenSearchIndex(RacingClient(), "x")
    assert index._ensure("customer") == "x-customer"
    with pytest.raises(ValueError):
        OpenSearchIndex(RacingClient(), "Upper")


# -- SigV4 client -------------------------------------------------------------------------------


class FakeSession:
    def __init__(self, credentials: Any):
        self.credentials = credentials

    def get_credentials(self) -> Any:
        return self.credentials


def renewed_per_use() -> RefreshableCredentials:
    """Credentials that expire inside botocore's refresh window: a new access key for each use
    (AKID1, AKID2, ...)."""
    issued = (f"AKID{n}" for n in itertools.count(1))

    def refresh() -> dict[str, str]:
        expiry = dt.datetime.now(dt.UTC) + dt.timedelta(seconds=5)
        return {"access_key": next(issued), "secret_key": "secret", "token": "session-token",
                "expiry_time": expiry.isoformat()}

    return RefreshableCredentials.create_from_metadata(refresh(), refresh, "test")


def test_signed_client_refreshes_its_credentials():
    credentials = renewed_per_use()
    client = build_opensearch_client("https://search-kb.eu-west-1.es.amazonaws.com", "eu-west-1",
                                     session=FakeSession(credentials))
    connection = client.transport.get_connection()
    assert isinstance(connection, RequestsHttpConnection)
    assert connection.host == "https://search-kb.eu-west-1.es.amazonaws.com:443"
    assert connection.session.verify not in (False, None)  # certificates are verified (CA bundle)
    auth: Any = connection.session.auth
    signed = [auth(requests.Request("GET", "https://search-kb.eu-west-1.es.amazonaws.com/_search").prepare())
              for _ in range(2)]
    headers = [str(s.headers["Authorization"]) for s in signed]
    keys = [h.split("Credential=")[1].split("/")[0] for h in headers]
    assert keys[0] != keys[1] and all(k.startswith("AKID") for k in keys)  # renewed, not frozen at build time
    assert "/eu-west-1/es/aws4_request" in headers[0]
    assert signed[0].headers["x-amz-security-token"] == "session-token"
    with pytest.raises(ValueError):
        build_opensearch_client("http://plain.example", "eu-west-1", session=FakeSession(credentials))
    with pytest.raises(BackendError):
        build_opensearch_client("search.example", "eu-west-1", session=FakeSession(None))


# -- the plain-HTTP query client ---------------------------------------------------------------


class Recorder(http.server.BaseHTTPRequestHandler):
    """A 127.0.0.1 server that records each request and answers what ``answers`` says."""

    answers: ClassVar[list[tuple[int, Any]]] = []
    seen: ClassVar[list[dict[str, Any]]] = []

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.seen.append({"path": self.path, "headers": dict(self.headers), "body": body})
        status, payload = self.answers.pop(0) if self.answers else (200, {"hits": {"hits": []}})
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass  # quiet


@pytest.fixture
def recorder() -> Iterator[tuple[str, type[Recorder]]]:
    handler = type("Handler", (Recorder,), {"answers": [], "seen": []})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", handler
    finally:
        server.shutdown()
        server.server_close()


def never_built() -> Any:
    raise AssertionError("a query must not build the opensearch-py client")


def test_http_queries_send_the_adapter_s_bodies_with_routing(recorder):
    url, handler = recorder
    index = OpenSearchIndex(QueryClient(url, None, credentials=None, full=never_built), "x", dimension=3)
    kwargs: dict[str, Any] = {"visibilities": ["public"], "source_gens": ["s1:1"], "limit": 5}
    assert index.search_lexical("b/1", "customer", "fees", **kwargs) == []
    handler.answers.append((200, {"count": 7}))
    assert index.count("b/1", "customer", ["s1:1"]) == 7
    lexical, count = handler.seen
    assert lexical["path"] == "/x-customer/_search?routing=b%2F1"
    assert count["path"] == "/x-customer/_count?routing=b%2F1"
    assert json.loads(lexical["body"]) == lexical_query("fees", search_filters("b/1", ["public"], ["s1:1"]), 5)
    assert lexical["headers"]["Content-Type"] == "application/json"
    assert "Authorization" not in lexical["headers"]  # unsigned: a local server only


def test_http_errors_become_the_same_backend_errors(recorder):
    url, handler = recorder
    index = OpenSearchIndex(QueryClient(url, None, credentials=None, full=never_built), "x", dimension=3)
    kwargs: dict[str, Any] = {"visibilities": ["public"], "source_gens": ["s1:1"]}
    handler.answers.append((404, {"error": {"type": "index_not_found_exception"}, "status": 404}))
    assert index.search_lexical("b1", "customer", "fees", **kwargs) == []  # a partition never written
    handler.answers.append((503, {"error": {"type": "cluster_block_exception"}, "status": 503}))
    with pytest.raises(BackendError) as info:
        index.search_lexical("b1", "customer", "fees", **kwargs)
    assert info.value.code == Code.INTERNAL and info.value.details == {"status": 503}
    assert isinstance(info.value.__cause__, SearchHttpError) and info.value.__cause__.error == "cluster_block_exception"
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{probe.getsockname()[1]}"
    unreachable = OpenSearchIndex(QueryClient(closed, None, credentials=None, full=never_built, timeout=2), "x")
    with pytest.raises(BackendError) as info:
        unreachable.count("b1", "customer", ["s1:1"])
    assert isinstance(info.value.__cause__, SearchUnreachable) and not info.value.details  # no status: no answer


def test_http_queries_are_signed_with_credentials_renewed_per_request():
    from botocore.awsrequest import AWSRequest

    credentials = renewed_per_use()
    client = QueryClient("https://search-kb.eu-west-1.es.amazonaws.com", "eu-west-1", credentials=credentials,
                         full=never_built)
    assert client.base == "https://search-kb.eu-west-1.es.amazonaws.com:443"
    signed = []
    for _ in range(2):
        request = AWSRequest(method="POST", url=f"{client.base}/kb-customer/_search?routing=b1", data=b'{"size":1}',
                             headers={"Content-Type": "application/json"})
        client._sign(request)
        signed.append(request.headers)
    keys = [h["Authorization"].split("Credential=")[1].split("/")[0] for h in signed]
    assert keys[0] != keys[1] and all(k.startswith("AKID") for k in keys)
    assert "/eu-west-1/es/aws4_request" in signed[0]["Authorization"]
    assert "x-amz-content-sha256" in signed[0]["Authorization"]  # the body's hash is signed
    assert signed[0]["X-Amz-Content-SHA256"] == hashlib.sha256(b'{"size":1}').hexdigest()
    assert signed[0]["X-Amz-Security-Token"] == "session-token"
    with pytest.raises(ValueError):  # plain HTTP is for an unsigned local server only
        QueryClient("http://plain.example", "eu-west-1", credentials=credentials, full=never_built)


def test_the_functions_client_queries_over_http_and_manages_through_opensearch_py():
    from knowledge.adapters.aws.opensearch_index import build_query_client

    credentials = RefreshableCredentials.create_from_metadata(
        {"access_key": "AKID", "secret_key": "s", "token": "t",
         "expiry_time": (dt.datetime.now(dt.UTC) + dt.timedelta(hours=1)).isoformat()}, lambda: {}, "test")
    client = build_query_client("search-kb.eu-west-1.es.amazonaws.com", "eu-west-1", session=FakeSession(credentials))
    assert isinstance(client, QueryClient) and client._full is None
    full = client.full  # what index management and writes go through: the SigV4 opensearch-py client
    assert isinstance(full.transport.get_connection(), RequestsHttpConnection) and client.full is full
    assert client.indices.exists_alias.__self__ is full.indices  # type: ignore[attr-defined]
    with pytest.raises(BackendError):
        build_query_client("search.example", "eu-west-1", session=FakeSession(None))
    with pytest.raises(ValueError):
        build_query_client("http://plain.example", "eu-west-1", session=FakeSession(credentials))


def test_http_queries_are_traced_as_remote_subsegments_when_x_ray_is_loaded(recorder, monkeypatch):
    import contextlib
    import types

    url, handler = recorder
    opened: list[tuple[str, dict[str, Any]]] = []

    @contextlib.contextmanager
    def in_subsegment(name: str, **kwargs: Any) -> Iterator[None]:
        opened.append((name, kwargs))
        yield

    # what the Powertools Tracer loads in Lambda; the client never imports it itself
    fake = types.SimpleNamespace(xray_recorder=types.SimpleNamespace(in_subsegment=in_subsegment))
    client = QueryClient(url, None, credentials=None, full=never_built)
    monkeypatch.delitem(sys.modules, "aws_xray_sdk.core", raising=False)
    client.search(index="x-customer", body={"size": 0}, routing="b1")
    assert opened == []
    monkeypatch.setitem(sys.modules, "aws_xray_sdk.core", fake)
    client.search(index="x-customer", body={"size": 0}, routing="b1")
    client.indices.analyze(body={"text": "fees"})
    assert opened == [("opensearch _search", {"namespace": "remote"}), ("opensearch _analyze", {"namespace": "remote"})]
    assert len(handler.seen) == 3
