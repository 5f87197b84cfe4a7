"""An experiment: does expanding the question through the rescue's co-occurrence space lift
kb's lexical ranking on the support suite? (Issue 14: "expansion of the question through the
co-occurrence space before the BM25 search".)

    python bench/query_expansion.py [--split tune|heldout] [--questions FILE]

For each answerable question of ``bench/support_questions.jsonl`` and
``examples/questions.jsonl`` in the chosen half (decide on ``tune``; report ``heldout`` only
for a variant that is kept), the question is folded into the bot's rescue model as the rescue
folds it, and the ``m`` terms of the corpus nearest to it (cosine of the term vectors, at
least ``threshold``, not already in the question) are appended to the question before the
lexical search. Prints nDCG@10 per variant beside the unexpanded question, same index, same run.
``--questions FILE`` reads another set of the same format alone (for example
``bench/vocab_mismatch_questions.jsonl``).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT.parent / "layers" / "core" / "src"))
sys.path.insert(0, str(ROOT))

from confidence import EXAMPLES, QUESTIONS, build_corpora, half  # noqa: E402
from support_quality import MODES  # noqa: E402

from knowledge.evaluation import score_case  # noqa: E402
from knowledge.refresh import rescue_build  # noqa: E402
from knowledge.retrieve.service import RetrievalRequest, retrieve  # noqa: E402

VARIANTS = [(0, 0.0), (1, 0.5), (1, 0.7), (2, 0.5), (2, 0.7), (3, 0.5), (3, 0.7), (5, 0.5)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", default="tune", choices=("tune", "heldout"))
    parser.add_argument("--questions", type=Path, default=None, help="a question set of the same format, alone")
    args = parser.parse_args()
    source = args.questions or QUESTIONS
    items = [i for i in map(json.loads, filter(str.strip, source.read_text().splitlines())) if i["answerable"]]
    if not args.questions:
        items += [{**i, "corpus": "packs", "split": half(i["query"])}
                  for i in map(json.loads, filter(str.strip, EXAMPLES.read_text().splitlines()))]
    items = [i for i in items if i["split"] == args.split]
    with tempfile.TemporaryDirectory(prefix="kb-expansion-") as tmp_name:
        tmp = Path(tmp_name)
        corpora = build_corpora(tmp, "none")
        spaces = {}
        for name, services in corpora.items():
            model = rescue_build.load_version(services, "default", services.state.get_bot("default").rescue_version)
            vectors = model._term_vectors
            unit = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-9)
            spaces[name] = (model, unit, rescue_build.analyzer(services.index))
        for m, threshold in VARIANTS:
            total, n = 0.0, 0
            for item in items:
                services = corpora.get(item["corpus"])
                if services is None:
                    continue
                model, unit, analyze = spaces[item["corpus"]]
                q = item["query"]
                terms = analyze(q)
                folded = model._fold(terms) if m else None
                if folded is not None:
                    sims = unit @ folded[0]
                    near = [model._terms[i] for i in np.argsort(-sims)[:20]
                            if model._terms[i] not in terms and sims[i] >= threshold][:m]
                    q = f"{q} {' '.join(near)}"
                expected = {e.split("/", 1)[1]: 1.0 for e in item["expected"]}
                res = retrieve(services, RetrievalRequest("default", q, item["audience"]), record=False,
                               options=MODES["kb lexical"])
                total += score_case(item["query"], expected, res["excerpts"], 5).ndcg
                n += 1
            label = "question as asked" if not m else f"+{m} nearest terms (cosine >= {threshold})"
            print(f"{args.split:<8} {label:<40} nDCG@10 {total / n:.4f} ({n} questions)")
        for services in corpora.values():
            services.state.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
