"""Per-token token buckets (``retrieval-test`` is rate limited per token, reference 003).

The limiter owns no clock: callers pass ``now`` (from ``Services.clock``), so tests drive
it with a fake clock. In AWS the same limit is applied per API Gateway usage plan; this
in-process bucket is what the embedded server and a warm Lambda enforce.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass

from ..errors import RateLimited

#: Requests per minute allowed per token on ``retrieval-test`` (burst = the same number).
ENV_RETRIEVAL_TEST_PER_MINUTE = "KB_RETRIEVAL_TEST_PER_MINUTE"
DEFAULT_PER_MINUTE = 30
MAX_BUCKETS = 10_000


@dataclass
class _Bucket:
    tokens: float
    updated: float


class TokenBucket:
    """``capacity`` requests at once, refilled at ``per_minute`` per minute, per key."""

    def __init__(self, per_minute: float = DEFAULT_PER_MINUTE, capacity: float | None = None):
        if per_minute <= 0:
            raise ValueError("per_minute must be positive")
        self.rate = per_minute / 60.0
        self.capacity = float(capacity if capacity is not None else per_minute)
        self._buckets: dict[str, _Bucket] = {}
        self._lock = threading.Lock()

    @classmethod
    def from_env(cls) -> TokenBucket:
        raw = os.environ.get(ENV_RETRIEVAL_TEST_PER_MINUTE, "").strip()
        try:
            per_minute = float(raw) if raw else DEFAULT_PER_MINUTE
        except ValueError as exc:
            raise ValueError(f"{ENV_RETRIEVAL_TEST_PER_MINUTE} must be a number") from exc
        return cls(per_minute if per_minute > 0 else DEFAULT_PER_MINUTE)

    def take(self, key: str, now: float) -> None:
        """Spend one request of ``key`` or raise ``RateLimited`` with the seconds to wait."""
        with self._lock:
            bucket = self._buckets.get(key)
            if bucket is None:
                if len(self._buckets) >= MAX_BUCKETS:
                    self._evict(now)
                bucket = self._buckets[key] = _Bucket(self.capacity, now)
            elapsed = max(0.0, now - bucket.updated)
            bucket.tokens = min(self.capacity, bucket.tokens + elapsed * self.rate)
            bucket.updated = now
            if bucket.tokens >= 1.0:
                bucket.tokens -= 1.0
                return
            wait = (1.0 - bucket.tokens) / self.rate
        raise RateLimited("too many retrieval tests; slow down", retry_after=wait)

    def _evict(self, now: float) -> None:
        """Drop buckets that would be full again (they carry no information)."""
        full_after = self.capacity / self.rate
        for key in [k for k, b in self._buckets.items() if now - b.updated >= full_after]:
            del self._buckets[key]
        if len(self._buckets) >= MAX_BUCKETS:  # all busy: forget the stalest half
            for key, _ in sorted(self._buckets.items(), key=lambda kv: kv[1].updated)[: MAX_BUCKETS // 2]:
                del self._buckets[key]
