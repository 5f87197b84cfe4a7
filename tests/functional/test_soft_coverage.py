"""``softcov`` over a real index and the local model: a paraphrase whose every concept the page
covers scores above a look-alike on the same page's topic that asks about something the page
never covers; it is computed only when the embedder gives piece vectors and, on the answer
path, when its model weighs it."""

from __future__ import annotations

import math

import pytest

from knowledge.embed.local import missing_requirement
from knowledge.errors import Code, SourceFailure
from knowledge.refresh.packsync import install_pack
from knowledge.refresh.reindex import reindex
from knowledge.retrieve import confidence as conf
from knowledge.retrieve.service import RetrievalOptions, RetrievalRequest, retrieve
from tests.conftest import page

PAGES = [
    page("admin/gc.md", "# Garbage collection\n\nGarbage collection frees disk space by deleting image layers "
         "that no artifact refers to any more. An administrator starts it by hand or puts it on a schedule; "
         "it always runs over the whole registry.", audience="CUSTOMER"),
    page("admin/replication.md", "# Replication\n\nReplication copies images from this registry to another "
         "one on a schedule or when an image is pushed.", audience="CUSTOMER"),
    page("admin/quotas.md", "# Quotas\n\nA quota limits how much storage a project may use.", audience="CUSTOMER"),
]
PARAPHRASE = "How does garbage collection remove unused image layers to reclaim storage?"
LOOK_ALIKE = "Can garbage collection be limited to a single user's repositories?"


def ask(services, q, **options):
    return retrieve(services, RetrievalRequest("default", q, "customer"), record=False,
                    options=RetrievalOptions(**options))


def load(services, write_pack, embedder):
    services.default_embedder = embedder
    install_pack(services, write_pack("registry", PAGES))
    reindex(services, "default")


@pytest.mark.skipif(missing_requirement() is not None, reason=f"local model: {missing_requirement()}")
def test_a_paraphrase_covering_every_concept_scores_above_a_look_alike_missing_one(services, write_pack,
                                                                                   monkeypatch):
    load(services, write_pack, "local")
    covered = ask(services, PARAPHRASE, tokens=True)
    look_alike = ask(services, LOOK_ALIKE, tokens=True)
    assert covered["excerpts"][0]["path"] == look_alike["excerpts"][0]["path"] == "admin/gc.md"
    a, b = covered["confidenceComponents"], look_alike["confidenceComponents"]
    assert a["softcov"] > b["softcov"] + 0.05

    # on the answer path: computed only for a model that weighs it, and then it decides
    embedder = services.embedder_for("default")
    calls: list[int] = []
    real = type(embedder).embed_tokens
    monkeypatch.setattr(type(embedder), "embed_tokens",
                        lambda self, texts: calls.append(len(texts)) or real(self, texts))
    monkeypatch.setattr(conf, "EMBEDDER_MODELS", {embedder.name: (-2.0, {"similarity": 1.0})})
    plain = ask(services, PARAPHRASE)
    assert plain["confidenceComponents"]["softcov"] is None and calls == []
    monkeypatch.setattr(conf, "EMBEDDER_MODELS", {embedder.name: (-2.0, {"similarity": 1.0, "softcov": 3.0})})
    weighed = ask(services, PARAPHRASE)
    c = weighed["confidenceComponents"]
    assert c["softcov"] == pytest.approx(a["softcov"], abs=1e-3) and calls == [2]  # question and top excerpt
    assert weighed["confidence"] == pytest.approx(1 / (1 + math.exp(2.0 - c["similarity"] - 3.0 * c["softcov"])),
                                                  abs=1e-3)
    # a forward pass that fails leaves the component out and the lexical model decides
    def down(self, texts):
        raise SourceFailure(Code.EMBEDDING_FAILED, "the model is not loaded")

    monkeypatch.setattr(type(embedder), "embed_tokens", down)
    failed = ask(services, PARAPHRASE)
    assert failed["confidenceComponents"]["softcov"] is None
    assert failed["confidence"] == pytest.approx(conf.score(conf.Components(**failed["confidenceComponents"]),
                                                            None), abs=1e-3)


def test_softcov_is_absent_without_an_embedder_that_gives_piece_vectors(services, write_pack):
    load(services, write_pack, "hashing")  # one vector per text, as Bedrock's embedders
    res = ask(services, PARAPHRASE, tokens=True)
    assert res["confidenceComponents"]["similarity"] is not None
    assert res["confidenceComponents"]["softcov"] is None
    lexical = ask(services, PARAPHRASE, semantic=False, tokens=True)
    assert lexical["confidenceComponents"]["softcov"] is None
