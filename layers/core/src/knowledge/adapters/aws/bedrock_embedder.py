"""Embedder over Amazon Bedrock (Titan Text Embeddings v2 by default).

Titan v2 embeds one text per ``InvokeModel`` call, so a batch (32 texts from
``embed_in_batches``) is sent ``parallel`` calls at a time (4 by default: one Lambda then makes
about 40 calls a second at Titan's ~0.1 s latency, below the account's on-demand InvokeModel
quota even with a few refreshes at once; a throttled batch is retried whole with backoff).
Vectors come back in the order of the texts. Failures
become source failures with a stored code: throttling (``ThrottlingException``,
``ServiceUnavailableException``, HTTP 429) is ``rate_limited`` — the workflow retries it with
backoff — and everything else (validation, access, a malformed reply) is ``embedding_failed``.
Messages never carry the text being embedded.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from ...errors import Code, SourceFailure

DEFAULT_MODEL = "amazon.titan-embed-text-v2:0"
#: InvokeModel calls in flight per ``embed`` call (boto3 clients are thread-safe)
DEFAULT_PARALLEL = 4
_THROTTLED = frozenset({"ThrottlingException", "ServiceUnavailableException", "TooManyRequestsException"})


class BedrockEmbedder:
    def __init__(self, client: Any, model_id: str = DEFAULT_MODEL, dimensions: int = 1024, normalize: bool = True,
                 parallel: int = DEFAULT_PARALLEL):
        if parallel < 1:
            raise ValueError("parallel must be at least 1")
        self.client = client
        self.parallel = parallel
        self.model_id = model_id
        self.dimensions = dimensions
        self.normalize = normalize
        self.name = f"bedrock:{model_id}:{dimensions}"

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if self.parallel == 1 or len(texts) <= 1:
            return [self._embed_one(text) for text in texts]
        with ThreadPoolExecutor(max_workers=min(self.parallel, len(texts))) as pool:
            # map keeps the order and raises the first failure (in text order) when read
            return list(pool.map(self._embed_one, texts))

    def _embed_one(self, text: str) -> list[float]:
        body = json.dumps({"inputText": text, "dimensions": self.dimensions, "normalize": self.normalize})
        try:
            response = self.client.invoke_model(
                modelId=self.model_id, body=body, contentType="application/json", accept="application/json"
            )
            payload = json.loads(response["body"].read())
        except ClientError as exc:
            error_code = str(exc.response.get("Error", {}).get("Code", ""))
            status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
            if error_code in _THROTTLED or status == 429:
                raise SourceFailure(Code.RATE_LIMITED, "embedding service throttled",
                                    details={"awsCode": error_code}) from exc
            raise SourceFailure(Code.EMBEDDING_FAILED, "embedding request failed",
                                details={"awsCode": error_code}) from exc
        except (BotoCoreError, ValueError, KeyError) as exc:
            raise SourceFailure(Code.EMBEDDING_FAILED, "embedding request failed") from exc
        vector = payload.get("embedding") if isinstance(payload, dict) else None
        if (
            not isinstance(vector, list)
            or len(vector) != self.dimensions
            or not all(isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x) for x in vector)
        ):
            raise SourceFailure(Code.EMBEDDING_FAILED, "embedding reply is malformed")
        return [float(x) for x in vector]
