"""What the confidence's title, rare and missing components cost per question, beside the
whole ``retrieve()`` of the same questions in the same run (the Harbor questions of
bench/support_questions.jsonl, lexical only, three rounds).

    python bench/confidence_cost.py
"""

from __future__ import annotations

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
from knowledge.retrieve.service import RetrievalRequest, retrieve  # noqa: E402


def main() -> int:
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
        services = build(tmp, "harbor", src, "none")
        whole: list[float] = []
        parts: list[float] = []
        for _ in range(3):
            for item in items:
                start = time.perf_counter()
                res = retrieve(services, RetrievalRequest("default", item["query"], item["audience"]), record=False)
                whole.append((time.perf_counter() - start) * 1000)
                if not res["excerpts"]:
                    continue
                terms = services.index.analyze(item["query"])
                idf, n = service._idf(services, "default", partition_of_audience(item["audience"]), terms)
                top = res["excerpts"][0]
                rarest = math.log(1.0 + (max(n, 1) - 0.5) / 1.5)
                start = time.perf_counter()
                conf.rare(top["text"], terms, idf)
                conf.missing(top["text"], terms, idf, rarest)
                conf.title(service._field_terms(services, top["title"], top["breadcrumb"], top["path"]), terms, idf)
                parts.append((time.perf_counter() - start) * 1000)
        services.state.close()
    print(f"retrieve() p50 {statistics.median(whole):.3f} ms ({len(whole)} calls); "
          f"title + rare + missing p50 {statistics.median(parts):.3f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
