"""A cross-encoder on the CPU through sentence-transformers, read from a local directory
(``KB_RERANK_MODEL``): no model is fetched at run time. Install the runtime with
``make local-embeddings``; the model directory is the operator's (a sentence-transformers
cross-encoder such as an MS MARCO MiniLM)."""

from __future__ import annotations

import math
import os
import threading
from collections.abc import Sequence
from typing import Any

from ..errors import BackendError

INSTALL_HINT = "install the runtime with `make local-embeddings` and set KB_RERANK_MODEL to a cross-encoder directory"


def missing_requirement(model_dir: str | None) -> str | None:
    """What keeps the local reranker from loading here, or None (nothing is imported)."""
    from ..embed.local import missing_runtime

    missing = missing_runtime()
    if missing:
        return missing
    if not model_dir:
        return "KB_RERANK_MODEL is not set"
    if not os.path.isdir(model_dir):
        return f"the cross-encoder directory {model_dir} does not exist"
    return None


def relevance(raw: float) -> float:
    """A cross-encoder's output as a score in [0, 1]: a probability stays as it is, a logit
    (MS MARCO cross-encoders give logits) goes through the logistic function."""
    if 0.0 <= raw <= 1.0:
        return raw
    return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, raw))))


class LocalCrossEncoder:
    def __init__(self, model_dir: str) -> None:
        self.model_dir = model_dir
        self.name = f"local-cross-encoder:{os.path.basename(os.path.normpath(model_dir))}"
        self._model: Any = None
        self._lock = threading.Lock()

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                missing = missing_requirement(self.model_dir)
                if missing:
                    raise BackendError(f"the local reranker cannot load: {missing}; {INSTALL_HINT}")
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
                from sentence_transformers import CrossEncoder

                self._model = CrossEncoder(self.model_dir, device="cpu")
            return self._model

    def score(self, question: str, texts: Sequence[str]) -> list[float]:
        if not texts:
            return []
        raw = self._load().predict([(question, t) for t in texts], convert_to_numpy=True)
        return [relevance(float(v)) for v in raw]
