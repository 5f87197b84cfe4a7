"""Precision and recall of the default topic classifier on a labelled question set.

    python bench/answer_topics.py [bench/answer/topics.jsonl] [--show]

Each line of the set is ``{"q": "...", "topic": "fees|limits|processing_time|null"}``; half
the questions are on a topic, half are off-topic questions that share its words. ``--show``
prints every miss."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from knowledge.answer.topics import TOPICS, TopicClassifier

HERE = Path(__file__).parent


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("path", nargs="?", default=str(HERE / "answer" / "topics.jsonl"))
    parser.add_argument("--show", action="store_true")
    args = parser.parse_args()
    rows = [json.loads(line) for line in Path(args.path).read_text().splitlines() if line.strip()]
    clf = TopicClassifier.from_settings(None)
    got = [clf.classify(r["q"]) for r in rows]
    print(f"{len(rows)} questions, {sum(r['topic'] is not None for r in rows)} on a topic")
    print(f"{'topic':<16} {'precision':>9} {'recall':>7} {'tp':>4} {'fp':>4} {'fn':>4}")
    for topic in TOPICS:
        tp = sum(1 for r, g in zip(rows, got, strict=True) if g == topic and r["topic"] == topic)
        fp = sum(1 for r, g in zip(rows, got, strict=True) if g == topic and r["topic"] != topic)
        fn = sum(1 for r, g in zip(rows, got, strict=True) if g != topic and r["topic"] == topic)
        precision = tp / (tp + fp) if tp + fp else 1.0
        recall = tp / (tp + fn) if tp + fn else 1.0
        print(f"{topic:<16} {precision:>9.3f} {recall:>7.3f} {tp:>4} {fp:>4} {fn:>4}")
    off = [g for r, g in zip(rows, got, strict=True) if r["topic"] is None]
    print(f"off-topic questions given a topic: {sum(g is not None for g in off)} of {len(off)}")
    if args.show:
        for r, g in zip(rows, got, strict=True):
            if g != r["topic"]:
                print(f"  want {r['topic']!s:<16} got {g!s:<16} {r['q']}")


if __name__ == "__main__":
    main()
