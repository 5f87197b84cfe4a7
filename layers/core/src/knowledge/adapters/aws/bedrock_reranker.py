"""Reranker over Amazon Bedrock's rerank models (``bedrock-agent-runtime`` ``Rerank``, e.g.
``amazon.rerank-v1:0`` or Cohere Rerank 3.5), named by the model's ARN (``KB_RERANK_MODEL_ARN``).

One call scores every text against the question; Bedrock returns ``relevanceScore`` in [0, 1]
per text index, best first, which is put back in the texts' order. Any failure (throttling,
access, a malformed reply) is a ``BackendError``: retrieval then keeps its own order. Messages
never carry the question or the texts.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from ...errors import BackendError


class BedrockReranker:
    def __init__(self, client: Any, model_arn: str):
        self.client = client
        self.model_arn = model_arn
        self.name = f"bedrock-rerank:{model_arn.rsplit('/', 1)[-1]}"

    def score(self, question: str, texts: Sequence[str]) -> list[float]:
        if not texts:
            return []
        try:
            response = self.client.rerank(
                queries=[{"type": "TEXT", "textQuery": {"text": question}}],
                sources=[{"type": "INLINE", "inlineDocumentSource": {"type": "TEXT", "textDocument": {"text": t}}}
                         for t in texts],
                rerankingConfiguration={"type": "BEDROCK_RERANKING_MODEL", "bedrockRerankingConfiguration": {
                    "numberOfResults": len(texts), "modelConfiguration": {"modelArn": self.model_arn}}},
            )
        except ClientError as exc:
            code = str(exc.response.get("Error", {}).get("Code", ""))
            raise BackendError(f"the rerank request failed ({code or 'unknown'})") from exc
        except BotoCoreError as exc:
            raise BackendError("the rerank request failed") from exc
        scores: list[float | None] = [None] * len(texts)
        for item in response.get("results") or []:
            index, value = item.get("index"), item.get("relevanceScore")
            if (not isinstance(index, int) or not 0 <= index < len(texts) or not isinstance(value, int | float)
                    or isinstance(value, bool) or not math.isfinite(value)):
                raise BackendError("the rerank reply is malformed")
            scores[index] = max(0.0, min(1.0, float(value)))
        if any(s is None for s in scores):
            raise BackendError("the rerank reply left texts unscored")
        return [float(s) for s in scores if s is not None]
