"""The words each question of a vocabulary-mismatch set shares with its right page.

    python bench/vocab_mismatch.py [--write] [QUESTIONS]

For every question of ``bench/vocab_mismatch_questions.jsonl`` (the ``bench/support_questions.jsonl``
format), the analysed terms of the question (``knowledge.analysis.terms``: the index's stop
words, Snowball stemming, identifiers whole and split) that also occur among the analysed terms of
its expected page(s), read from ``examples/packs`` or ``../shared/data/docs/harbor/docs`` (whole
file, front matter included, so the count is never too low). Prints each question's shared
terms; ``--write`` records them as ``overlap`` in the file. Exits 1 when a question shares more
than one term with a right page, or its page is missing.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "layers" / "core" / "src"))

from knowledge import analysis  # noqa: E402

DEFAULT = ROOT / "bench" / "vocab_mismatch_questions.jsonl"
HARBOR = ROOT.parent / "shared" / "data" / "docs" / "harbor" / "docs"
MAX_SHARED = 1


def page(expected: str) -> Path:
    pack, rest = expected.split("/", 1)
    return HARBOR / rest if pack == "harbor" else ROOT / "examples" / "packs" / expected


def shared(query: str, expected: list[str]) -> list[str]:
    """The question's terms found in any of its right pages (sorted)."""
    asked = set(analysis.terms(query))
    found: set[str] = set()
    for e in expected:
        found |= asked & set(analysis.terms(page(e).read_text(encoding="utf-8")))
    return sorted(found)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("questions", nargs="?", type=Path, default=DEFAULT)
    parser.add_argument("--write", action="store_true", help="record each question's shared terms as 'overlap'")
    args = parser.parse_args()
    items = [json.loads(line) for line in args.questions.read_text().splitlines() if line.strip()]
    bad = 0
    for item in items:
        missing = [e for e in item["expected"] if not page(e).is_file()]
        if missing:
            print(f"MISSING {missing}: {item['query']}")
            bad += 1
            continue
        item["overlap"] = shared(item["query"], item["expected"])
        over = len(item["overlap"]) > MAX_SHARED
        bad += over
        print(f"{'OVER ' if over else ''}{len(item['overlap'])} {item['overlap']}  {item['query']}"
              f"  -> {item['expected']}")
    counts = [len(i.get("overlap", [])) for i in items]
    print(f"{len(items)} questions: {counts.count(0)} share no term with their page, {counts.count(1)} share one, "
          f"{bad} over {MAX_SHARED} or missing")
    if args.write:
        args.questions.write_text("".join(json.dumps(i, ensure_ascii=False) + "\n" for i in items))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
