"""The bot's own OpenAI-compatible embeddings integration (``POST {base}/embeddings``).

Throttling (429) and 5xx are ``rate_limited`` (the pipeline retries with backoff); anything
else is ``embedding_failed``. Error messages never include the texts."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Sequence

from ..errors import Code, SourceFailure

DEFAULT_MODEL = "text-embedding-3-small"
DEFAULT_DIMENSIONS = 1536


class OpenAIEmbedder:
    def __init__(self, base_url: str, api_key: str, *, model: str = DEFAULT_MODEL,
                 dimensions: int = DEFAULT_DIMENSIONS, timeout: float = 30.0):
        if not base_url.startswith("https://") and not base_url.startswith("http://127.0.0.1"):
            raise ValueError("the embeddings base URL must be https")
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.model = model
        self.dimensions = dimensions
        self.timeout = timeout
        self.name = f"openai-{model}-{dimensions}"

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        body = json.dumps({"model": self.model, "input": list(texts), "dimensions": self.dimensions}).encode()
        req = urllib.request.Request(f"{self.base_url}/embeddings", data=body, method="POST")
        req.add_header("Content-Type", "application/json")
        req.add_header("Authorization", f"Bearer {self.api_key}")
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                payload = json.loads(resp.read())
        except urllib.error.HTTPError as exc:
            code = Code.RATE_LIMITED if exc.code == 429 or exc.code >= 500 else Code.EMBEDDING_FAILED
            raise SourceFailure(code, f"embeddings endpoint answered {exc.code}") from exc
        except (urllib.error.URLError, TimeoutError, json.JSONDecodeError) as exc:
            raise SourceFailure(Code.EMBEDDING_FAILED, "embeddings endpoint unreachable or invalid") from exc
        try:
            rows = sorted(payload["data"], key=lambda r: r["index"])
            vectors = [list(map(float, r["embedding"])) for r in rows]
        except (KeyError, TypeError, ValueError) as exc:
            raise SourceFailure(Code.EMBEDDING_FAILED, "embeddings response has an unexpected shape") from exc
        if len(vectors) != len(texts) or any(len(v) != self.dimensions for v in vectors):
            raise SourceFailure(Code.EMBEDDING_FAILED, "embeddings response does not match the request")
        return vectors
