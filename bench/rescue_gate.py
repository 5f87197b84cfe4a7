"""What the rescue adds, question by question, and which gate (if any) lets it earn its place.

    python bench/rescue_gate.py [--nfcorpus ../shared/data/nfcorpus]

Every question is asked once, lexical only, with the rescue as it is (the passage it appends,
at the similarity floor of ``knowledge.retrieve.rescue``, never reorders the others, so the list
without it is the same answer minus that passage). Sets: ``bench/vocab_mismatch_questions.jsonl``
and ``bench/support_questions.jsonl`` (tune / held-out halves, over the example packs and the
Harbor docs, as ``bench/confidence.py`` builds them) and NFCorpus's 323 judged test questions over
its 3,162 abstracts (as ``bench/quality.py`` builds them; no halves).

For each set and half it prints, with the rescue off, on as it is, and under each gate: nDCG@10
and recall@10 (``knowledge.evaluation.score_case``, by page), the questions given a passage, how
many of those passages are of a right page, how many bring a right page the list did not hold,
and how many are wrong (no right page: noise in the agent's context). A gate appends the
passage only when its similarity is at least ``T`` and, for the "weak" gates, only when the
answer without it is below the bot's floor (the lexical evidence is weak). Choose on the tune
halves; the held-out halves and NFCorpus are read only for the chosen gate.
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

import quality  # noqa: E402
from confidence import build_corpora  # noqa: E402

from knowledge.evaluation import matches, score_case  # noqa: E402
from knowledge.refresh import rescue_build  # noqa: E402
from knowledge.refresh.packsync import install_pack  # noqa: E402
from knowledge.refresh.reindex import reindex  # noqa: E402
from knowledge.retrieve.service import RetrievalOptions, RetrievalRequest, retrieve  # noqa: E402
from knowledge.settings import LocalSettings  # noqa: E402
from knowledge.wiring import build_local_services  # noqa: E402

ON = RetrievalOptions(semantic=False, rescue=True, upstream=False)
THRESHOLDS = (0.6, 0.7, 0.8, 0.85, 0.9, 0.95)
SETS = {"vocab": ROOT / "vocab_mismatch_questions.jsonl", "support": ROOT / "support_questions.jsonl"}


def row(services: Any, bot: str, q: str, audience: str, expected: dict[str, float]) -> dict[str, Any]:
    """One question: scores without and with the rescued passage, and what decides a gate."""
    res = retrieve(services, RetrievalRequest(bot, q, audience), record=False, options=ON)
    excerpts = res["excerpts"]
    rescued = excerpts[-1] if excerpts and excerpts[-1]["reason"] == "rescue" else None
    base = excerpts[:-1] if rescued else excerpts
    off = score_case(q, expected, base, 10)
    on = score_case(q, expected, excerpts, 10)
    pages = [x for x in expected if rescued is not None and matches(x, rescued)]  # the right pages it is
    new = any(not any(matches(x, e) for e in base) for x in pages)  # one the list did not hold
    return {"sim": rescued["signals"]["rescueSimilarity"] if rescued else None, "weak": not res["wouldAnswer"],
            "right": bool(pages), "new": new, "off": (off.ndcg, off.recall), "on": (on.ndcg, on.recall),
            "answerable": bool(expected)}


def gates() -> list[tuple[str, float | None, bool]]:
    out: list[tuple[str, float | None, bool]] = [("off", None, False), ("on (as it is)", 0.0, False)]
    for weak in (False, True):
        out += [(f"{'weak & ' if weak else ''}sim >= {t}", t, weak) for t in THRESHOLDS[1:]]
    out += [("weak & sim >= 0.6", 0.6, True)]
    return out


def report(name: str, rows: list[dict[str, Any]]) -> None:
    answerable = [r for r in rows if r["answerable"]]
    print(f"\n{name}: {len(rows)} questions ({len(answerable)} answerable)")
    print(f"  {'gate':<24}{'nDCG@10':>9}{'recall':>8}{'given':>7}{'right':>7}{'new':>5}{'wrong':>7}")
    for label, t, weak in gates():
        ndcg = recall = 0.0
        given = right = new = wrong = 0
        for r in rows:
            fire = t is not None and r["sim"] is not None and r["sim"] >= t and (r["weak"] or not weak)
            if r["answerable"]:
                n, rc = r["on"] if fire else r["off"]
                ndcg += n
                recall += rc
            if fire:
                given += 1
                right += r["right"]
                new += r["new"]
                wrong += not r["right"]
        k = max(1, len(answerable))
        print(f"  {label:<24}{ndcg / k:>9.4f}{recall / k:>8.4f}{given:>7}{right:>7}{new:>5}{wrong:>7}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nfcorpus", type=Path, default=ROOT.parent.parent / "shared" / "data" / "nfcorpus")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="kb-rescue-gate-") as tmp_name:
        tmp = Path(tmp_name)
        corpora = build_corpora(tmp, "none")
        for set_name, path in SETS.items():
            items = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
            rows: dict[str, list[dict[str, Any]]] = {}
            for item in items:
                services = corpora.get(item["corpus"])
                if services is None:
                    continue
                expected = {e.split("/", 1)[1]: 1.0 for e in item["expected"]} if item["answerable"] else {}
                rows.setdefault(item["split"], []).append(row(services, "default", item["query"], item["audience"],
                                                              expected))
            for split in ("tune", "heldout"):
                report(f"{set_name} {split}", rows.get(split, []))
        for s in corpora.values():
            s.state.close()
        if (args.nfcorpus / "corpus.jsonl").exists():
            docs, queries, qrels = quality.load(args.nfcorpus)
            services = build_local_services(LocalSettings(data_dir=tmp / "nfcorpus-kb"))
            pack = tmp / "nfcorpus.ndjson.gz"
            pack.write_bytes(quality.pack(docs))
            install_pack(services, pack)
            reindex(services, "bench")
            services.index.compact("bench")
            rescue_build.rebuild_if_stale(services, "bench")
            report("nfcorpus", [row(services, "bench", queries[qid][:16_000], "customer", qrels[qid])
                                for qid in queries if qid in qrels])
            services.state.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
