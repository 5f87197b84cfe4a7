"""Bedrock embedder against botocore's Stubber (no network): one call per text, the Titan v2
request body, and failure codes the workflow acts on (``parallel=1``: the Stubber answers in
order); then several calls in flight at once against a thread-safe fake client."""

from __future__ import annotations

import io
import json
from typing import Any

import boto3
import pytest
from botocore.response import StreamingBody
from botocore.stub import ANY, Stubber

from knowledge.adapters.aws.bedrock_embedder import BedrockEmbedder
from knowledge.errors import Code, SourceFailure


@pytest.fixture
def client() -> Any:
    return boto3.client("bedrock-runtime", region_name="us-east-1", aws_access_key_id="x",
                        aws_secret_access_key="x")


def reply(payload: Any) -> dict[str, Any]:
    raw = json.dumps(payload).encode()
    return {"body": StreamingBody(io.BytesIO(raw), len(raw)), "contentType": "application/json"}


def expect(text: str, dimensions: int = 4) -> dict[str, Any]:
    body = json.dumps({"inputText": text, "dimensions": dimensions, "normalize": True})
    return {"modelId": "amazon.titan-embed-text-v2:0", "body": body, "contentType": "application/json",
            "accept": "application/json"}


def test_one_call_per_text_in_order(client):
    embedder = BedrockEmbedder(client, dimensions=4, parallel=1)
    with Stubber(client) as stub:
        stub.add_response("invoke_model", reply({"embedding": [1, 0, 0, 0], "inputTextTokenCount": 2}),
                          expect("first"))
        stub.add_response("invoke_model", reply({"embedding": [0, 0.5, 0.5, 0]}), expect("second"))
        assert embedder.embed(["first", "second"]) == [[1.0, 0.0, 0.0, 0.0], [0.0, 0.5, 0.5, 0.0]]
        stub.assert_no_pending_responses()
    assert embedder.embed([]) == []
    assert (embedder.dimensions, embedder.name) == (4, "bedrock:amazon.titan-embed-text-v2:0:4")


@pytest.mark.parametrize(
    ("error_code", "status", "expected"),
    [
        ("ThrottlingException", 429, Code.RATE_LIMITED),
        ("ServiceUnavailableException", 503, Code.RATE_LIMITED),
        ("SomethingNew", 429, Code.RATE_LIMITED),
        ("ValidationException", 400, Code.EMBEDDING_FAILED),
        ("AccessDeniedException", 403, Code.EMBEDDING_FAILED),
        ("ModelTimeoutException", 408, Code.EMBEDDING_FAILED),
    ],
)
def test_failures_carry_their_code(client, error_code, status, expected):
    embedder = BedrockEmbedder(client, dimensions=4, parallel=1)
    with Stubber(client) as stub:
        stub.add_client_error("invoke_model", service_error_code=error_code, http_status_code=status,
                              expected_params={"modelId": ANY, "body": ANY, "contentType": ANY, "accept": ANY})
        with pytest.raises(SourceFailure) as info:
            embedder.embed(["a private question"])
    assert info.value.code == expected
    assert "private" not in info.value.message


@pytest.mark.parametrize(
    "payload",
    [{"embedding": [1, 2, 3]}, {"embedding": None}, {"nothing": True}, [1, 2, 3, 4],
     {"embedding": [1, 2, "x", 4]}, {"embedding": [1, 2, True, 4]}],
)
def test_malformed_replies_fail_the_embedding(client, payload):
    embedder = BedrockEmbedder(client, dimensions=4, parallel=1)
    with Stubber(client) as stub:
        stub.add_response("invoke_model", reply(payload), expect("t"))
        with pytest.raises(SourceFailure) as info:
            embedder.embed(["t"])
    assert info.value.code == Code.EMBEDDING_FAILED


def test_a_body_that_is_not_json_fails_the_embedding(client):
    embedder = BedrockEmbedder(client, dimensions=4, parallel=1)
    with Stubber(client) as stub:
        stub.add_response("invoke_model", {"body": StreamingBody(io.BytesIO(b"<html>"), 6),
                                           "contentType": "text/html"}, expect("t"))
        with pytest.raises(SourceFailure) as info:
            embedder.embed(["t"])
    assert info.value.code == Code.EMBEDDING_FAILED


class ConcurrentClient:
    """Answers InvokeModel only once ``parallel`` calls are in flight together (a barrier):
    sequential calls would break the barrier and fail the test."""

    def __init__(self, parallel: int, fail_on: str | None = None):
        import threading

        self.barrier = threading.Barrier(parallel, timeout=30)
        self.fail_on = fail_on
        self.calls: list[str] = []

    def invoke_model(self, **kwargs: Any) -> dict[str, Any]:
        text = json.loads(kwargs["body"])["inputText"]
        self.calls.append(text)
        self.barrier.wait()
        if text == self.fail_on:
            from botocore.exceptions import ClientError

            raise ClientError({"Error": {"Code": "ThrottlingException"}, "ResponseMetadata": {"HTTPStatusCode": 429}},
                              "InvokeModel")
        return reply({"embedding": [float(len(text)), 0.0, 0.0, 1.0]})


def test_a_batch_is_embedded_several_calls_at_a_time_in_text_order() -> None:
    client = ConcurrentClient(4)
    texts = ["a" * n for n in range(1, 9)]
    vectors = BedrockEmbedder(client, dimensions=4, parallel=4).embed(texts)
    assert [v[0] for v in vectors] == [float(n) for n in range(1, 9)]
    assert sorted(client.calls) == sorted(texts)


def test_a_throttled_call_among_parallel_ones_is_rate_limited() -> None:
    client = ConcurrentClient(2, fail_on="bb")
    with pytest.raises(SourceFailure) as caught:
        BedrockEmbedder(client, dimensions=4, parallel=2).embed(["a", "bb"])
    assert caught.value.code == Code.RATE_LIMITED
    with pytest.raises(ValueError):
        BedrockEmbedder(client, parallel=0)
