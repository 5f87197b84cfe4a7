"""The bot's own OpenAI-compatible embeddings integration (``POST {base}/embeddings``).

The base URL is a tenant's setting, so the call goes through the guarded outbound client
(:mod:`knowledge.crawl.outbound`): https only (``http`` only to the development loopback
port), every address checked on each call and connected to as checked, no redirect off the
endpoint's origin, ``timeout`` seconds for the whole call and a response cap sized to the
vectors asked for.

Throttling (429) and 5xx are ``rate_limited`` (the pipeline retries with backoff); a refused
address stays ``blocked_address``; anything else (an error status, a timeout, an oversized
or malformed answer) is ``embedding_failed`` with the transport's code in ``details``.
Error messages never include the texts, the key or the response.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from ..crawl.outbound import OutboundClient, OutboundPolicy, check_configured_url
from ..errors import Code, SourceFailure

DEFAULT_MODEL = "text-embedding-3-small"
DEFAULT_DIMENSIONS = 1536
#: JSON bytes allowed per number of the answer (``-0.012345678901234567,`` is 22)
BYTES_PER_NUMBER = 32
#: JSON bytes allowed per text besides its numbers, and for the envelope
BYTES_PER_TEXT = 512
BYTES_ENVELOPE = 64 * 1024


class OpenAIEmbedder:
    def __init__(self, base_url: str, api_key: str, *, model: str = DEFAULT_MODEL,
                 dimensions: int = DEFAULT_DIMENSIONS, timeout: float = 30.0,
                 policy: OutboundPolicy | None = None):
        # invalid_config / blocked_address (InvalidInput) for a URL that may never be called
        self.base_url = check_configured_url(base_url, policy)
        self.api_key = api_key
        self.model = model
        self.dimensions = dimensions
        self.timeout = timeout
        self.policy = policy
        self.name = f"openai-{model}-{dimensions}"

    def max_response_bytes(self, texts: int) -> int:
        """The largest answer read for ``texts`` inputs (bounded memory whatever is sent)."""
        return BYTES_ENVELOPE + texts * (self.dimensions * BYTES_PER_NUMBER + BYTES_PER_TEXT)

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        body = json.dumps({"model": self.model, "input": list(texts), "dimensions": self.dimensions}).encode()
        client = OutboundClient(self.policy, timeout=self.timeout, max_bytes=self.max_response_bytes(len(texts)))
        headers = {"Content-Type": "application/json", "Accept": "application/json",
                   "Authorization": f"Bearer {self.api_key}"}
        try:
            response = client.request("POST", f"{self.base_url}/embeddings", headers=headers, body=body)
        except SourceFailure as exc:
            if exc.code == Code.BLOCKED_ADDRESS:
                raise SourceFailure(Code.BLOCKED_ADDRESS, "the embeddings endpoint's address is not allowed") from None
            raise SourceFailure(Code.EMBEDDING_FAILED, f"embeddings endpoint failed ({exc.code})",
                                details={"cause": exc.code}) from None
        except ValueError:
            raise SourceFailure(Code.EMBEDDING_FAILED, "the api key is not a valid header value") from None
        if response.status != 200:
            code = Code.RATE_LIMITED if response.status == 429 or response.status >= 500 else Code.EMBEDDING_FAILED
            raise SourceFailure(code, f"embeddings endpoint answered {response.status}",
                                details={"status": response.status})
        try:
            payload = json.loads(response.body)
            rows = sorted(payload["data"], key=lambda r: r["index"])
            vectors = [list(map(float, r["embedding"])) for r in rows]
        except (KeyError, TypeError, ValueError):
            raise SourceFailure(Code.EMBEDDING_FAILED, "embeddings response has an unexpected shape") from None
        if len(vectors) != len(texts) or any(len(v) != self.dimensions for v in vectors):
            raise SourceFailure(Code.EMBEDDING_FAILED, "embeddings response does not match the request")
        return vectors
