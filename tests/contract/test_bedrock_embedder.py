"""Bedrock embedder against botocore's Stubber (no network): one call per text, the Titan v2
request body, and failure codes the workflow acts on."""

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
    embedder = BedrockEmbedder(client, dimensions=4)
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
    embedder = BedrockEmbedder(client, dimensions=4)
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
    embedder = BedrockEmbedder(client, dimensions=4)
    with Stubber(client) as stub:
        stub.add_response("invoke_model", reply(payload), expect("t"))
        with pytest.raises(SourceFailure) as info:
            embedder.embed(["t"])
    assert info.value.code == Code.EMBEDDING_FAILED


def test_a_body_that_is_not_json_fails_the_embedding(client):
    embedder = BedrockEmbedder(client, dimensions=4)
    with Stubber(client) as stub:
        stub.add_response("invoke_model", {"body": StreamingBody(io.BytesIO(b"<html>"), 6),
                                           "contentType": "text/html"}, expect("t"))
        with pytest.raises(SourceFailure) as info:
            embedder.embed(["t"])
    assert info.value.code == Code.EMBEDDING_FAILED
