"""A disk cache of the local embedder's vectors for repeated benchmark runs.

``install()`` wraps ``LocalEmbedder.embed`` so that a text embedded once (by any run) is read
back from an SQLite file instead of going through the model again. The file lives outside the
repository: ``$KB_BENCH_EMBED_CACHE`` or ``/tmp/kb-bench-embeddings.sqlite``. The vectors are
the model's own (float32), so a cached run ranks as an uncached one does.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np

DEFAULT = Path("/tmp/kb-bench-embeddings.sqlite")


def install(path: Path | None = None) -> Path:
    from knowledge.embed.local import LocalEmbedder

    path = path or Path(os.environ.get("KB_BENCH_EMBED_CACHE", str(DEFAULT)))
    db = sqlite3.connect(str(path), check_same_thread=False)
    db.execute("CREATE TABLE IF NOT EXISTS vectors (model TEXT, digest BLOB, vector BLOB, PRIMARY KEY (model, digest))")
    lock = threading.Lock()
    original = LocalEmbedder.embed
    if getattr(original, "cached", False):
        return path

    def embed(self: LocalEmbedder, texts: Sequence[str]) -> list[list[float]]:
        digests = [hashlib.sha256(t.encode()).digest() for t in texts]
        found: dict[bytes, list[float]] = {}
        with lock:
            for d in set(digests):
                row = db.execute("SELECT vector FROM vectors WHERE model = ? AND digest = ?", (self.name, d)).fetchone()
                if row is not None:
                    found[d] = np.frombuffer(row[0], dtype=np.float32).astype(float).tolist()
        todo = [i for i, d in enumerate(digests) if d not in found]
        if todo:
            vectors = original(self, [texts[i] for i in todo])
            with lock:
                for i, v in zip(todo, vectors, strict=True):
                    found[digests[i]] = np.asarray(v, dtype=np.float32).astype(float).tolist()
                    db.execute("INSERT OR REPLACE INTO vectors VALUES (?, ?, ?)",
                               (self.name, digests[i], np.asarray(v, dtype=np.float32).tobytes()))
                db.commit()
        return [found[d] for d in digests]

    embed.cached = True  # type: ignore[attr-defined]
    LocalEmbedder.embed = embed  # type: ignore[method-assign]
    return path
