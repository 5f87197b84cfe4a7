"""The embedded vector store: filters inside the kNN, spaces kept apart, generations dropped."""

from __future__ import annotations

import numpy as np
import pytest

from knowledge.adapters.local.vectors import LocalVectorStore
from knowledge.model import Passage, key64


def psg(pid, vec, *, source="s1", gen=1, vis="public"):
    return Passage(id=pid, bot="b", source_id=source, document_id=f"d-{pid}", generation=gen, ordinal=0,
                   title="t", path="p", breadcrumb="", text="x", visibility=vis, vector=vec)


@pytest.fixture
def store(tmp_path):
    return LocalVectorStore(tmp_path)


def keys(hits):
    return [h.ref.key for h in hits]


def test_cosine_ranking_matches_numpy_reference(store):
    rng = np.random.default_rng(1)
    vecs = rng.normal(size=(40, 16))
    store.write("b", "customer", "space", [psg(f"p{i}", list(v)) for i, v in enumerate(vecs)])
    q = rng.normal(size=16)
    hits = store.search("b", "customer", {"space": list(q)}, visibilities=["public"], source_gens=["s1:1"], limit=5)
    norm = vecs / np.linalg.norm(vecs, axis=1, keepdims=True)
    expected = np.argsort(-(norm @ (q / np.linalg.norm(q))))[:5]
    assert keys(hits) == [key64(f"p{i}") for i in expected]
    assert [h.rank for h in hits] == [1, 2, 3, 4, 5]


def test_filters_apply_before_the_limit(store):
    q = [1.0, 0.0]
    store.write("b", "customer", "sp", [psg(f"agent{i}", [1.0, 0.01 * i], vis="agent") for i in range(30)]
                + [psg("pub", [0.2, 1.0])])
    store.write("b", "customer", "sp", [psg("old", [1.0, 0.0], gen=0)])
    hits = store.search("b", "customer", {"sp": q}, visibilities=["public"], source_gens=["s1:1"], limit=3)
    assert keys(hits) == [key64("pub")]


def test_vector_spaces_are_never_mixed(store):
    store.write("b", "customer", "hashing-2", [psg("h", [1.0, 0.0])])
    store.write("b", "customer", "other-2", [psg("o", [1.0, 0.0], source="s2")])
    assert store.embedders("b", "customer", ["s1:1", "s2:1"]) == {"hashing-2", "other-2"}
    hits = store.search("b", "customer", {"hashing-2": [1.0, 0.0]}, visibilities=["public"],
                        source_gens=["s1:1", "s2:1"])
    assert keys(hits) == [key64("h")]


def test_delete_generation(store):
    store.write("b", "customer", "sp", [psg("a", [1.0, 0.0])])
    store.delete_generation("b", "s1", 1)
    assert store.search("b", "customer", {"sp": [1.0, 0.0]}, visibilities=["public"], source_gens=["s1:1"]) == []
