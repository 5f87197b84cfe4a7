"""Ranking quality on support questions: kb beside bm25s, same passages, same run.

    python bench/support_quality.py [--embedder none|hashing|local] [--questions FILE]

The answerable questions of ``bench/support_questions.jsonl`` and ``examples/questions.jsonl``
(judged by page) over the example packs and the Harbor documentation in
``../shared/data/docs/harbor`` (read at run time, never copied), ingested as
``bench/confidence.py`` does. bm25s indexes exactly the passages kb indexed (the asker's
partition), with its English stop words and the same Snowball stemmer; a passage counts for its
page. nDCG@10, recall@5 and MRR per half, by ``knowledge.evaluation.score_case``.

``--questions FILE`` measures another set of the same format alone (without the example
questions), e.g. ``bench/vocab_mismatch_questions.jsonl``, with a row per split the set names
(any name: a new blind set's ``"split": "blind3"`` gets its own rows) and kb's margin over
bm25s. Each run also counts, per half, the questions the rescue appended a passage to, how many
of those passages belong to a right page, and how many brought a right page the list without
the rescue did not have.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT.parent / "layers" / "core" / "src"))
sys.path.insert(0, str(ROOT))

import bm25s  # noqa: E402
import tantivy  # noqa: E402
from confidence import EXAMPLES, QUESTIONS, build_corpora, half  # noqa: E402

from knowledge import analysis  # noqa: E402
from knowledge.adapters.local.tantivy_index import TantivySearchIndex  # noqa: E402
from knowledge.evaluation import matches, score_case  # noqa: E402
from knowledge.model import partition_of_audience  # noqa: E402
from knowledge.retrieve.service import RetrievalOptions, RetrievalRequest, retrieve  # noqa: E402

MODES = {
    "kb lexical": RetrievalOptions(semantic=False, rescue=False, upstream=False),
    "kb lexical + rescue": RetrievalOptions(semantic=False, rescue=True, upstream=False),
    "kb hybrid": RetrievalOptions(rescue=False, upstream=False),
    "kb hybrid + rescue": RetrievalOptions(upstream=False),
}


def passages(services: Any, partition: str) -> list[Any]:
    """Every stored passage of the bot's partition, read from the embedded index."""
    index = services.index
    assert isinstance(index, TantivySearchIndex)
    part = index._part("default", partition, create=False)
    if part is None:
        return []
    searcher = part.searcher()
    found = searcher.search(tantivy.Query.all_query(), max(int(searcher.num_docs), 1), count=False).hits
    return [TantivySearchIndex._passage("default", searcher.doc(address)) for _, address in found]


class Bm25:
    def __init__(self, items: list[Any]):
        self.items = items
        self.index = bm25s.BM25()
        self.index.index(bm25s.tokenize([p.text for p in items], stopwords="en", stemmer=self._stem,
                                        show_progress=False), show_progress=False)

    @staticmethod
    def _stem(words: list[str]) -> list[str]:
        return [analysis.stem(w) for w in words]

    def ask(self, q: str, k: int = 50) -> list[dict[str, Any]]:
        tokens = bm25s.tokenize([q], stopwords="en", stemmer=self._stem, show_progress=False)
        if not tokens.vocab:
            return []
        docs, scores = self.index.retrieve(tokens, k=min(k, len(self.items)), show_progress=False)
        return [{"path": self.items[i].path, "sourceId": self.items[i].source_id,
                 "documentId": self.items[i].document_id}
                for i, s in zip(docs[0], scores[0], strict=True) if s > 0]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--embedder", default="none")
    parser.add_argument("--questions", type=Path, default=None,
                        help="a question set of the same format, measured alone")
    args = parser.parse_args()
    if args.embedder == "local":  # embed each text once across runs (a cache outside the repository)
        import embedding_cache

        print(f"embedding cache: {embedding_cache.install()}", file=sys.stderr)
    items = [json.loads(line) for line in (args.questions or QUESTIONS).read_text().splitlines() if line.strip()]
    items = [i for i in items if i["answerable"]]
    if not args.questions:  # the example questions of the packs, with the suite only
        items += [{**json.loads(line), "corpus": "packs", "split": half(json.loads(line)["query"]), "examples": True}
                  for line in EXAMPLES.read_text().splitlines() if line.strip()]
    modes = dict(MODES) if args.embedder != "none" else {k: v for k, v in MODES.items() if "hybrid" not in k}
    scores: dict[tuple[str, str], list[Any]] = {}
    rescued: dict[tuple[str, str], list[int]] = {}  # (mode, group) -> [appended, right page, new right page]
    with tempfile.TemporaryDirectory(prefix="kb-support-") as tmp_name:
        tmp = Path(tmp_name)
        corpora = build_corpora(tmp, args.embedder)
        bm25 = {(name, part): Bm25(found) for name, s in corpora.items() for part in ("customer", "operator")
                if (found := passages(s, part))}
        for item in items:
            services = corpora.get(item["corpus"])
            if services is None:
                continue
            expected = {e.split("/", 1)[1]: 1.0 for e in item["expected"]}  # a page path inside its pack
            groups = [item["split"], "all"] + (["examples"] if item.get("examples") else ["own questions"])
            for name, options in modes.items():
                res = retrieve(services, RetrievalRequest("default", item["query"], item["audience"]), record=False,
                               options=options)
                for g in groups:
                    scores.setdefault((name, g), []).append(score_case(item["query"], expected, res["excerpts"], 5))
                extra = [e for e in res["excerpts"] if e.get("reason") == "rescue"]
                if extra:
                    right = any(matches(x, extra[0]) for x in expected)
                    before = any(matches(x, e) for x in expected for e in res["excerpts"] if e is not extra[0])
                    for g in groups:
                        tally = rescued.setdefault((name, g), [0, 0, 0])
                        tally[0] += 1
                        tally[1] += right
                        tally[2] += right and not before
            found = bm25[(item["corpus"], partition_of_audience(item["audience"]))].ask(item["query"])
            for g in groups:
                scores.setdefault(("bm25s", g), []).append(score_case(item["query"], expected, found, 5))
        for s in corpora.values():
            s.state.close()
    print(f"\n{'system':<22}{'questions':<16}{'n':>4}{'nDCG@10':>10}{'recall@5':>10}{'MRR':>8}")
    splits = list(dict.fromkeys(i["split"] for i in items))  # any split a set names (e.g. a new blind set's)
    for group in dict.fromkeys([*splits, "own questions", "examples", "all"]):
        for name in [*modes, "bm25s"]:
            cases = scores.get((name, group), [])
            if not cases:
                continue
            n = len(cases)
            print(f"{name:<22}{group:<16}{n:>4}{sum(c.ndcg for c in cases) / n:>10.4f}"
                  f"{sum(c.recall for c in cases) / n:>10.4f}{sum(c.rr for c in cases) / n:>8.4f}")
    print("\nnDCG@10 margin over bm25s in this run (issue 14 asks lexical >= +0.03, hybrid >= +0.11)")
    for group in dict.fromkeys([*splits, "all"]):
        base = scores.get(("bm25s", group), [])
        for name in ("kb lexical", "kb hybrid"):
            cases = scores.get((name, group), [])
            if cases and base:
                margin = sum(c.ndcg for c in cases) / len(cases) - sum(c.ndcg for c in base) / len(base)
                print(f"{name + ' - bm25s':<22}{group:<16}{len(cases):>4}{margin:>+10.4f}")
    print("\nrescue: questions given a rescued passage / of a right page / a right page not listed without it")
    for (name, group), (appended, right, new) in sorted(rescued.items()):
        print(f"{name:<22}{group:<16}{appended:>4}{right:>6}{new:>6}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
