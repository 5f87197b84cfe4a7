"""Choosing ``FIELD_BOOST`` (knowledge.retrieve.service): kb lexical nDCG@10 on one half of
the support suite for each boost, same index, same run.

    SPLIT=tune BOOSTS=0,0.25,0.5,1,2,3,5,10 python bench/field_boost.py

Decide on ``tune``; run ``heldout`` only with the boost already chosen.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT.parent / "layers" / "core" / "src"))
sys.path.insert(0, str(ROOT))

import support_quality as S  # noqa: E402
from confidence import EXAMPLES, QUESTIONS, build_corpora, half  # noqa: E402

from knowledge.evaluation import score_case  # noqa: E402
from knowledge.retrieve import service  # noqa: E402
from knowledge.retrieve.service import RetrievalRequest, retrieve  # noqa: E402


def main() -> int:
    split = os.environ.get("SPLIT", "tune")
    boosts = [float(x) for x in os.environ.get("BOOSTS", "0,0.25,0.5,1,2,3,5,10").split(",")]
    items = [i for i in map(json.loads, filter(str.strip, QUESTIONS.read_text().splitlines())) if i["answerable"]]
    items += [{**i, "corpus": "packs", "split": half(i["query"])}
              for i in map(json.loads, filter(str.strip, EXAMPLES.read_text().splitlines()))]
    items = [i for i in items if i["split"] == split]
    with tempfile.TemporaryDirectory(prefix="kb-boost-") as tmp_name:
        tmp = Path(tmp_name)
        corpora = build_corpora(tmp, "none")
        items = [i for i in items if i["corpus"] in corpora]
        for boost in boosts:
            service.FIELD_BOOST = boost
            total = 0.0
            for item in items:
                expected = {e.split("/", 1)[1]: 1.0 for e in item["expected"]}
                res = retrieve(corpora[item["corpus"]], RetrievalRequest("default", item["query"], item["audience"]),
                               record=False, options=S.MODES["kb lexical"])
                total += score_case(item["query"], expected, res["excerpts"], 5).ndcg
            print(f"{split:<8} field boost {boost:<5} kb lexical nDCG@10 {total / len(items):.4f} "
                  f"({len(items)} questions)")
        for services in corpora.values():
            services.state.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
