"""What the confidence's components cost per question, beside the whole ``retrieve()`` of the
same questions in the same run (the Harbor questions of bench/support_questions.jsonl, three
rounds).

    python bench/confidence_cost.py                   # lexical: title, rare, missing, nqc, wig, sentcov
    python bench/confidence_cost.py --embedder local  # and the sentence and softcov components

With ``--embedder local`` each question is retrieved three times: without either, with the
``sentence`` component (its sentences embedded through the model, never a cache) and with
``softcov`` (a forward pass over the question and the top excerpt): the differences are what
each component adds to a question's cost.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT.parent / "layers" / "core" / "src"))
sys.path.insert(0, str(ROOT))

from confidence import HARBOR, QUESTIONS, build  # noqa: E402

from knowledge.model import partition_of_audience  # noqa: E402
from knowledge.retrieve import confidence as conf  # noqa: E402
from knowledge.retrieve import service  # noqa: E402
from knowledge.retrieve.service import RetrievalOptions, RetrievalRequest, retrieve  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--embedder", default="none", choices=("none", "local"))
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    if not HARBOR.is_dir():
        print(f"{HARBOR} not found", file=sys.stderr)
        return 1
    items = [item for line in QUESTIONS.read_text().splitlines() if line.strip()
             if (item := json.loads(line))["corpus"] == "harbor"]
    with tempfile.TemporaryDirectory(prefix="kb-confidence-cost-") as tmp_name:
        tmp = Path(tmp_name)
        src = tmp / "src"
        src.mkdir()
        (src / "harbor").symlink_to(HARBOR)
        services = build(tmp, "harbor", src, args.embedder)
        whole: list[float] = []
        parts: list[float] = []
        qpp: list[float] = []
        with_sentences: list[float] = []
        with_tokens: list[float] = []
        sentences: list[int] = []
        for _ in range(args.rounds):
            for item in items:
                req = RetrievalRequest("default", item["query"], item["audience"])
                start = time.perf_counter()
                res = retrieve(services, req, record=False, options=RetrievalOptions(sentences=False, tokens=False))
                whole.append((time.perf_counter() - start) * 1000)
                if args.embedder != "none":
                    start = time.perf_counter()
                    retrieve(services, req, record=False, options=RetrievalOptions(sentences=True, tokens=False))
                    with_sentences.append((time.perf_counter() - start) * 1000)
                    start = time.perf_counter()
                    retrieve(services, req, record=False, options=RetrievalOptions(sentences=False, tokens=True))
                    with_tokens.append((time.perf_counter() - start) * 1000)
                    sentences.append(sum(len(conf.sentences(e["text"], conf.SENTENCES_PER_EXCERPT))
                                         for e in res["excerpts"][:conf.SENTENCE_EXCERPTS]))
                if not res["excerpts"]:
                    continue
                terms = services.index.analyze(item["query"])
                idf, n = service._idf(services, "default", partition_of_audience(item["audience"]), terms)
                top = res["excerpts"][0]
                rarest = math.log(1.0 + (max(n, 1) - 0.5) / 1.5)
                scores = [e["score"] for e in res["excerpts"]]
                start = time.perf_counter()
                conf.rare(top["text"], terms, idf)
                conf.missing(top["text"], terms, idf, rarest)
                conf.title(service._field_terms(services, top["title"], top["breadcrumb"], top["path"]), terms, idf)
                middle = time.perf_counter()
                conf.nqc(scores, terms, idf)
                conf.wig(scores, terms, idf, n)
                conf.sentence_coverage([e["text"] for e in res["excerpts"][:conf.SENTENCE_EXCERPTS]], terms, idf)
                end = time.perf_counter()
                parts.append((middle - start) * 1000)
                qpp.append((end - middle) * 1000)
        services.state.close()
    print(f"retrieve() p50 {statistics.median(whole):.3f} ms ({len(whole)} calls, embedder {args.embedder!r}); "
          f"title + rare + missing p50 {statistics.median(parts):.3f} ms; "
          f"nqc + wig + sentcov p50 {statistics.median(qpp):.3f} ms")
    if with_sentences:
        print(f"retrieve() with the sentence component p50 {statistics.median(with_sentences):.3f} ms "
              f"(+{statistics.median(with_sentences) - statistics.median(whole):.3f} ms; "
              f"{statistics.median(sentences):.0f} sentences embedded per question, p50)")
        print(f"retrieve() with the softcov component p50 {statistics.median(with_tokens):.3f} ms "
              f"(+{statistics.median(with_tokens) - statistics.median(whole):.3f} ms)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
