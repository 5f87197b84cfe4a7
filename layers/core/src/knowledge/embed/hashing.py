"""A deterministic hashing embedder: signed feature hashing of analysed terms (unigrams and
adjacent pairs), L2-normalised. No model, no network; similar wording -> similar vectors."""

from __future__ import annotations

import hashlib
import itertools
import math
import re
from collections.abc import Callable, Sequence

_WORD = re.compile(r"\w+")


def _default_analyze(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


class HashingEmbedder:
    def __init__(self, dimensions: int = 256, analyze: Callable[[str], list[str]] | None = None):
        if dimensions < 8:
            raise ValueError("dimensions must be at least 8")
        self.dimensions = dimensions
        self.name = f"hashing-{dimensions}"
        self._analyze = analyze or _default_analyze

    def _slot(self, feature: str) -> tuple[int, float]:
        digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
        value = int.from_bytes(digest, "little")
        return value % self.dimensions, (1.0 if (value >> 63) & 1 else -1.0)

    def embed_one(self, text: str) -> list[float]:
        vec = [0.0] * self.dimensions
        terms = self._analyze(text)
        features = terms + [f"{a} {b}" for a, b in itertools.pairwise(terms)]
        for feature in features:
            slot, sign = self._slot(feature)
            vec[slot] += sign
        norm = math.sqrt(sum(v * v for v in vec))
        return [v / norm for v in vec] if norm else vec

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [self.embed_one(t) for t in texts]
