"""Bedrock reranker against botocore's Stubber (no network): the Rerank request, scores put
back in the texts' order, and failures as BackendError (retrieval then keeps its order)."""

from __future__ import annotations

from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from knowledge.adapters.aws.bedrock_reranker import BedrockReranker
from knowledge.errors import BackendError

ARN = "arn:aws:bedrock:us-west-2::foundation-model/amazon.rerank-v1:0"


@pytest.fixture
def client() -> Any:
    return boto3.client("bedrock-agent-runtime", region_name="us-west-2", aws_access_key_id="x",
                        aws_secret_access_key="x")


def expected(question: str, texts: list[str]) -> dict[str, Any]:
    return {
        "queries": [{"type": "TEXT", "textQuery": {"text": question}}],
        "sources": [{"type": "INLINE", "inlineDocumentSource": {"type": "TEXT", "textDocument": {"text": t}}}
                    for t in texts],
        "rerankingConfiguration": {"type": "BEDROCK_RERANKING_MODEL", "bedrockRerankingConfiguration": {
            "numberOfResults": len(texts), "modelConfiguration": {"modelArn": ARN}}},
    }


def test_scores_come_back_in_the_texts_order(client):
    reranker = BedrockReranker(client, ARN)
    texts = ["office hours", "withdraw bitcoin: open Wallet", "fees"]
    with Stubber(client) as stub:  # Bedrock answers best first
        stub.add_response("rerank", {"results": [{"index": 1, "relevanceScore": 0.93},
                                                 {"index": 2, "relevanceScore": 0.2},
                                                 {"index": 0, "relevanceScore": 0.01}]},
                          expected("how do I withdraw bitcoin", texts))
        assert reranker.score("how do I withdraw bitcoin", texts) == [0.01, 0.93, 0.2]
    assert reranker.name == "bedrock-rerank:amazon.rerank-v1:0"
    assert reranker.score("q", []) == []  # nothing to score: no call


@pytest.mark.parametrize("results", [
    [{"index": 0, "relevanceScore": 0.5}],  # a text left unscored
    [{"index": 5, "relevanceScore": 0.5}, {"index": 1, "relevanceScore": 0.5}],  # an index out of range
])
def test_a_malformed_reply_is_a_backend_error(client, results):
    with Stubber(client) as stub:
        stub.add_response("rerank", {"results": results})
        with pytest.raises(BackendError, match="rerank reply"):
            BedrockReranker(client, ARN).score("q", ["a", "b"])


def test_a_refused_call_is_a_backend_error_without_the_question(client):
    with Stubber(client) as stub:
        stub.add_client_error("rerank", service_error_code="ThrottlingException", http_status_code=429)
        with pytest.raises(BackendError) as info:
            BedrockReranker(client, ARN).score("my secret question", ["a"])
    assert "ThrottlingException" in info.value.message and "secret" not in info.value.message
