"""kb's nDCG@10 margin over bm25s on every committed support question set, in one run, with a
per-question dump to read where kb loses.

    python bench/support_margins.py [--embedder none|local] [--out FILE.jsonl] [--patch FILE.py]

The answerable questions of ``bench/support_questions.jsonl`` (its tune / heldout / tune2 /
tune3 splits), ``_fresh``, ``_fresh2``, ``_hard``, ``_blind3`` to ``_blind6``, the vocabulary-mismatch set
(``vocab``) and the packs' example questions (``examples``), each set in its own row, over the
corpora ``bench/support_quality.py`` builds (the same passages, the same bm25s, the same
scoring: ``knowledge.evaluation.score_case`` by page). kb is lexical only with ``--embedder
none`` (the default), hybrid with ``--embedder local``; the rescue is off, as on the answer path.
The last line is the mean of the sets' margins (each set weighs alike) and the margin over every
question.

The corpora are built once per version of the analysis and chunking code under
``/tmp/kb-support-margins/`` and reused, so a ranking experiment reruns in seconds. ``--out``
writes one JSON line per question: the set, the question, the right pages, kb's and bm25s's
nDCG@10 and first ten pages, and kb's excerpts (page, breadcrumb, score, title and proximity
lifts). ``--patch FILE.py`` runs a Python file before the questions (a scratch experiment that
changes a constant or wraps a function), so that an idea is measured on every set at once.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT.parent / "layers" / "core" / "src"))
sys.path.insert(0, str(ROOT))

import confidence as corpora_of  # noqa: E402
from support_quality import Bm25, passages  # noqa: E402

from knowledge import analysis  # noqa: E402
from knowledge.evaluation import ranked_documents, score_case  # noqa: E402
from knowledge.model import partition_of_audience  # noqa: E402
from knowledge.retrieve.service import RetrievalOptions, RetrievalRequest, retrieve  # noqa: E402
from knowledge.settings import LocalSettings  # noqa: E402
from knowledge.wiring import build_local_services  # noqa: E402

#: the sets, and the split their questions are reported under (None: the split each line names)
SETS = {
    "support_questions.jsonl": None,
    "support_questions_fresh.jsonl": None,
    "support_questions_fresh2.jsonl": None,
    "support_questions_hard.jsonl": None,
    "support_questions_blind3.jsonl": None,
    "support_questions_blind4.jsonl": None,
    "support_questions_blind5.jsonl": None,
    "support_questions_blind6.jsonl": None,
    "vocab_mismatch_questions.jsonl": "vocab",
}
CACHE = Path("/tmp/kb-support-margins")
#: the code a built corpus depends on: another version of any of these builds anew
BUILT_FROM = ("analysis.py", "chunking.py", "settings.py", "adapters/local/tantivy_index.py")


def questions() -> list[dict[str, Any]]:
    items = []
    for name, split in SETS.items():
        for line in (ROOT / name).read_text().splitlines():
            if line.strip():
                item = json.loads(line)
                if item["answerable"]:
                    items.append({**item, "split": split or item["split"]})
    for line in corpora_of.EXAMPLES.read_text().splitlines():
        if line.strip():
            items.append({**json.loads(line), "answerable": True, "corpus": "packs", "split": "examples"})
    return items


def corpora(embedder: str) -> dict[str, Any]:
    """``{"packs": services, "harbor": services}``, built as bench/confidence.py builds them."""
    src = ROOT.parent / "layers" / "core" / "src" / "knowledge"
    digest = hashlib.sha256(repr(analysis.STOP_WORDS).encode())
    for name in BUILT_FROM:
        digest.update((src / name).read_bytes())
    base = CACHE / f"{digest.hexdigest()[:12]}-{embedder}"
    out = {}
    for name in ("packs", "harbor"):
        done = base / f"{name}.done"
        if done.exists():
            out[name] = build_local_services(LocalSettings(data_dir=base / f"{name}-kb", embedder=embedder))
            continue
        base.mkdir(parents=True, exist_ok=True)
        if name == "harbor":
            if not corpora_of.HARBOR.is_dir():
                print(f"{corpora_of.HARBOR} not found: the Harbor questions are left out", file=sys.stderr)
                continue
            tree = base / "harbor-src"
            tree.mkdir(exist_ok=True)
            if not (tree / "harbor").exists():
                (tree / "harbor").symlink_to(corpora_of.HARBOR)
            out[name] = corpora_of.build(base, name, tree, embedder)
        else:
            out[name] = corpora_of.build(base, name, corpora_of.ROOT / "examples" / "packs", embedder)
        done.write_text("built\n")
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--embedder", default="none")
    parser.add_argument("--out", type=Path, default=None, help="one JSON line per question")
    parser.add_argument("--patch", type=Path, default=None, help="a Python file run before the questions")
    args = parser.parse_args()
    if args.patch:
        exec(compile(args.patch.read_text(), str(args.patch), "exec"), {})  # a scratch experiment
    if args.embedder == "local":
        import embedding_cache

        embedding_cache.install()
    built = corpora(args.embedder)
    bm25 = {(name, part): Bm25(found) for name, s in built.items() for part in ("customer", "operator")
            if (found := passages(s, part))}
    options = RetrievalOptions(semantic=args.embedder != "none", rescue=False, upstream=False, tokens=False,
                               sentences=False)
    rows = []
    for item in questions():
        services = built.get(item["corpus"])
        if services is None:
            continue
        expected = {e.split("/", 1)[1]: 1.0 for e in item["expected"]}  # a page path inside its pack
        res = retrieve(services, RetrievalRequest("default", item["query"], item["audience"]), record=False,
                       options=options)
        kb = score_case(item["query"], expected, res["excerpts"], 5)
        found = bm25[(item["corpus"], partition_of_audience(item["audience"]))].ask(item["query"])
        ref = score_case(item["query"], expected, found, 5)
        rows.append({
            "split": item["split"], "corpus": item["corpus"], "q": item["query"], "expected": list(expected),
            "kb": round(kb.ndcg, 4), "bm": round(ref.ndcg, 4),
            "kb_pages": [e["path"] for e in ranked_documents(res["excerpts"])][:10],
            "bm_pages": [f["path"] for f in ranked_documents(found)][:10],
            "kb_ex": [(e["path"], e["breadcrumb"], e["score"], e["signals"].get("titleMatch"),
                       e["signals"].get("nearMatch")) for e in res["excerpts"]],
        })
    for s in built.values():
        s.state.close()
    margins = []
    print(f"{'set':<10}{'n':>4}{'kb':>9}{'bm25s':>9}{'margin':>9}")
    for split in dict.fromkeys(r["split"] for r in rows):
        part = [r for r in rows if r["split"] == split]
        kb_mean = sum(r["kb"] for r in part) / len(part)
        ref_mean = sum(r["bm"] for r in part) / len(part)
        margins.append(kb_mean - ref_mean)
        print(f"{split:<10}{len(part):>4}{kb_mean:>9.4f}{ref_mean:>9.4f}{kb_mean - ref_mean:>+9.4f}")
    print(f"mean of the sets' margins {sum(margins) / len(margins):+.4f}; over every question "
          f"{sum(r['kb'] - r['bm'] for r in rows) / len(rows):+.4f} ({len(rows)} questions)")
    if args.out:
        args.out.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
