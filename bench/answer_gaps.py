"""Pairwise precision and recall of gap clustering on labelled paraphrase groups.

    python bench/answer_gaps.py [--split tune|heldout|all] [--threshold T] [--sweep]

``bench/answer/paraphrases.jsonl`` holds ``{"group", "q"}`` lines: groups of phrasings of one
question, next to groups that share most words but ask something else (the bitcoin fee and the
ether fee; the minimum withdrawal and the maximum deposit). Groups alternate between the
tuning half and the held-out half; the threshold was chosen on the tuning half only.

A pair of questions is merged when they land in one cluster; precision is the share of merged
pairs that are paraphrases, recall the share of paraphrase pairs that were merged."""

from __future__ import annotations

import argparse
import itertools
import json
from pathlib import Path

from knowledge.answer.gaps import LEXICAL_THRESHOLD, cluster_indices

HERE = Path(__file__).parent


def pairwise(groups: list[str], clusters: list[list[int]]) -> tuple[float, float]:
    where = {i: c for c, members in enumerate(clusters) for i in members}
    tp = fp = fn = 0
    for a, b in itertools.combinations(range(len(groups)), 2):
        same_group, same_cluster = groups[a] == groups[b], where[a] == where[b]
        tp += same_group and same_cluster
        fp += same_cluster and not same_group
        fn += same_group and not same_cluster
    return (tp / (tp + fp) if tp + fp else 1.0), (tp / (tp + fn) if tp + fn else 1.0)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--split", choices=("tune", "heldout", "all"), default="heldout")
    parser.add_argument("--threshold", type=float, default=LEXICAL_THRESHOLD)
    parser.add_argument("--sweep", action="store_true")
    parser.add_argument("--path", default=str(HERE / "answer" / "paraphrases.jsonl"))
    args = parser.parse_args()
    rows = [json.loads(line) for line in Path(args.path).read_text().splitlines() if line.strip()]
    names = list(dict.fromkeys(r["group"] for r in rows))
    keep = {g for i, g in enumerate(names) if args.split == "all" or (i % 2 == 0) == (args.split == "tune")}
    rows = [r for r in rows if r["group"] in keep]
    groups, texts = [r["group"] for r in rows], [r["q"] for r in rows]
    print(f"split {args.split}: {len(keep)} groups, {len(texts)} questions")
    thresholds = [round(0.3 + 0.05 * i, 2) for i in range(10)] if args.sweep else [args.threshold]
    for t in thresholds:
        clusters = cluster_indices(texts, threshold=t)
        p, r = pairwise(groups, clusters)
        print(f"threshold {t:.2f}: {len(clusters)} clusters, pairwise precision {p:.3f}, recall {r:.3f}")


if __name__ == "__main__":
    main()
