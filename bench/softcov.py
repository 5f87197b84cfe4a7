"""Soft coverage: does each concept of the question have a close token in the top excerpt?
Components computed from a dump of ``bench/confidence.py --embedder local --texts --dump FILE``
with the local model's token embeddings (MaxSim, as late-interaction retrievers score, no
training), added to the rows for ``bench/confidence.py --loso --rows OUT --costly NAME,...``.

    python bench/softcov.py ROWS OUT [--static]

For each content word of the question (a word the index's analyser keeps: stop words and
punctuation out), the word's vector (the mean of its word pieces' vectors) is compared with
every word piece of the excerpt (cosine); its best match says how well the excerpt covers it,
synonyms included. Components, each added to a row's ``components``:

- ``softcov``: the IDF-weighted mean of those best matches against the top excerpt (a word no
  passage holds weighs as the rarest word the corpus knows);
- ``softmin``: the lowest best match over the question's content words (the least-covered
  concept); ``softlow``: the IDF-weighted mean of the two lowest;
- ``softcov3``, ``softmin3``: the same against the first three excerpts (each word's best over
  all three);
- ``softcovs``, ``softmins``: ``softcov`` and ``softmin`` from the model's input embedding
  table (no forward pass: each word piece's static vector);
- ``softcovk``: ``softcov`` over the words some passage holds only (``unseen`` speaks for the
  others); ``softcovu``: every content word weighing alike (no IDF).

It prints each component's AUC (answerable against unanswerable) per set, and the cost of the
forward passes (question and top excerpt, per question) beside nothing else: the cost of
``retrieve()`` is measured by ``bench/confidence_cost.py``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "layers" / "core" / "src"))

from knowledge.embed.local import _model_path  # noqa: E402
from knowledge.evaluation import auc  # noqa: E402

SETS = ("tune", "heldout", "tune2", "tune3", "fresh", "fresh2")
NAMES = ("softcov", "softmin", "softlow", "softcov3", "softmin3", "softcovs", "softmins", "softcovk", "softcovu")


class Tokens:
    """The model's word-piece vectors of a text (contextual, or static from the input table)."""

    def __init__(self) -> None:
        import torch
        from sentence_transformers import SentenceTransformer

        self.torch = torch
        self.model = SentenceTransformer(_model_path(), device="cpu")
        self.tok = self.model.tokenizer
        self.bert = self.model[0].auto_model
        self.table = self.bert.embeddings.word_embeddings.weight.detach().numpy()
        self.seconds = 0.0
        self.calls = 0

    def pieces(self, texts: list[str]) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """For each text: (contextual vectors, static vectors, character offsets) of its word
        pieces, [CLS] and [SEP] out, vectors unit length."""
        enc = self.tok(texts, padding=True, truncation=True, max_length=256, return_offsets_mapping=True,
                       return_tensors="pt")
        offsets = enc.pop("offset_mapping").numpy()
        start = time.perf_counter()
        with self.torch.no_grad():
            out = self.bert(**enc).last_hidden_state.numpy()
        self.seconds += time.perf_counter() - start
        self.calls += 1
        result = []
        for i in range(len(texts)):
            ids = enc["input_ids"][i].numpy()
            keep = (enc["attention_mask"][i].numpy() == 1) & (offsets[i][:, 1] > offsets[i][:, 0])
            ctx = out[i][keep]
            static = self.table[ids[keep]]
            result.append((unit(ctx), unit(static), offsets[i][keep]))
        return result


def unit(x: np.ndarray) -> np.ndarray:
    return x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-9)


def word_vectors(vectors: np.ndarray, offsets: np.ndarray, words: list[list[Any]], rarest: float | None
                 ) -> tuple[np.ndarray, np.ndarray]:
    """The vectors (mean of the word's pieces) and IDF weights of the question's content words."""
    vs, ws = [], []
    for a, b, term, idf in words:
        if term is None or (idf is None and rarest is None):
            continue
        inside = (offsets[:, 0] < b) & (offsets[:, 1] > a)
        if not inside.any():
            continue
        vs.append(vectors[inside].mean(axis=0))
        ws.append(float(idf) if idf is not None else float(rarest or 0.0))
    if not vs:
        return np.zeros((0, vectors.shape[1])), np.zeros(0)
    return unit(np.array(vs)), np.array(ws)


def scores(q: np.ndarray, w: np.ndarray, docs: list[np.ndarray]) -> dict[str, float]:
    """softcov, softmin and softlow of the question's word vectors against the pieces of docs."""
    best = np.max(np.stack([(q @ d.T).max(axis=1) for d in docs]), axis=0)
    order = np.argsort(best)[:2]
    return {"cov": float((best * w).sum() / w.sum()), "min": float(best.min()),
            "low": float((best[order] * w[order]).sum() / w[order].sum())}


def compute(rows: list[dict[str, Any]], static_only: bool = False) -> Tokens:
    tokens = Tokens()
    for r in rows:
        texts = r.get("texts") or []
        if not texts or r["components"].get("coverage") is None:
            continue
        enc = tokens.pieces([r["query"], *texts])
        (qc, qs, qo), docs = enc[0], enc[1:]
        wc, w = word_vectors(qc, qo, r["words"], r["rarest"])
        ws_, _ = word_vectors(qs, qo, r["words"], r["rarest"])
        if not len(w):
            continue
        one = scores(wc, w, [docs[0][0]])
        three = scores(wc, w, [d[0] for d in docs])
        static = scores(ws_, w, [docs[0][1]])
        wk, k = word_vectors(qc, qo, r["words"], None)
        known = scores(wk, k, [docs[0][0]]) if len(k) else None
        uniform = scores(wc, np.ones(len(w)), [docs[0][0]])
        r["components"].update({"softcov": one["cov"], "softmin": one["min"], "softlow": one["low"],
                                "softcov3": three["cov"], "softmin3": three["min"],
                                "softcovs": static["cov"], "softmins": static["min"],
                                "softcovk": known["cov"] if known else None, "softcovu": uniform["cov"]})
    return tokens


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("rows", type=Path)
    parser.add_argument("out", type=Path)
    args = parser.parse_args()
    rows = [json.loads(line) for line in args.rows.read_text().splitlines()]
    tokens = compute(rows)
    args.out.write_text("".join(json.dumps(r) + "\n" for r in rows))
    n = sum(1 for r in rows if "softcov" in r["components"])
    print(f"{n} questions; forward passes (question + 3 excerpts in one batch): "
          f"{tokens.seconds / max(n, 1) * 1000:.1f} ms "
          f"each on average")
    names = (*NAMES, "grounded", "nearness", "distinct", "reach", "coverage")
    print("| component | " + " | ".join(SETS) + " | four first | paraphrased vs every unanswerable |")
    print("|---|" + "---|" * (len(SETS) + 2))
    for name in names:
        cells = []
        for split in (*SETS, "first4", "para"):
            if split == "first4":
                part = [r for r in rows if r["split"] in SETS[:4]]
            elif split == "para":
                part = [r for r in rows if r["split"] in ("hard", "vocab") or not r["answerable"]]
            else:
                part = [r for r in rows if r["split"] == split]
            a = [float(r["components"].get(name) or 0.0) for r in part if r["answerable"]]
            u = [float(r["components"].get(name) or 0.0) for r in part if not r["answerable"]]
            if split == "para":
                a = [float(r["components"].get(name) or 0.0) for r in part if r["answerable"]]
            cells.append(f"{auc(a, u):.3f}")
        print(f"| {name} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
