"""Saved retrieval regression suites (``kb eval SUITE.jsonl``): recall@k, nDCG@10, MRR.

A suite line is ``{"query": ..., "expected": [page paths or URLs], "audience": ...}``. An
excerpt matches an expected item when the item is its path, its URL, or ends with
``/<path>`` (so ``product/help/page.md`` names a page of the ``product`` pack). Relevance is
judged per document: several excerpts of one page count once.
"""

from __future__ import annotations

import bisect
import json
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any


def matches(expected: str, excerpt: dict[str, Any]) -> bool:
    path, url = excerpt.get("path") or "", excerpt.get("url") or ""
    return expected in (path, url) or (bool(path) and expected.endswith("/" + path))


def ranked_documents(excerpts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    seen, out = set(), []
    for e in excerpts:
        key = (e.get("sourceId"), e.get("documentId"))
        if key not in seen:
            seen.add(key)
            out.append(e)
    return out


def ndcg(gains: list[float], ideal: list[float], k: int) -> float:
    dcg = sum(g / math.log2(i + 2) for i, g in enumerate(gains[:k]))
    best = sum(g / math.log2(i + 2) for i, g in enumerate(sorted(ideal, reverse=True)[:k]))
    return dcg / best if best > 0 else 0.0


@dataclass
class CaseResult:
    query: str
    recall: float
    ndcg: float
    rr: float
    found: list[str] = field(default_factory=list)


def score_case(query: str, expected: dict[str, float], excerpts: list[dict[str, Any]], k: int) -> CaseResult:
    """``expected`` maps an expected item to its graded relevance (1 for plain suites)."""
    docs = ranked_documents(excerpts)
    gains, hit_items, rr = [], [], 0.0
    for rank, e in enumerate(docs, start=1):
        gain = 0.0
        for item, rel in expected.items():
            if item not in hit_items and matches(item, e):
                gain = rel
                hit_items.append(item)
                break
        gains.append(gain)
        if gain > 0 and rr == 0.0:
            rr = 1.0 / rank
    within = sum(1 for g in gains[:k] if g > 0)
    recall = within / len(expected) if expected else 0.0
    return CaseResult(query, recall, ndcg(gains, list(expected.values()), 10), rr, hit_items)


@dataclass
class Report:
    cases: list[CaseResult]
    k: int

    def metric(self, name: str) -> float:
        if not self.cases:
            return 0.0
        return sum(getattr(c, name) for c in self.cases) / len(self.cases)

    def as_dict(self) -> dict[str, Any]:
        return {"cases": len(self.cases), f"recall@{self.k}": round(self.metric("recall"), 4),
                "ndcg@10": round(self.metric("ndcg"), 4), "mrr": round(self.metric("rr"), 4)}


def run_suite(lines: Iterable[str], ask: Callable[[str, str], list[dict[str, Any]]], *, k: int = 10) -> Report:
    cases = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
            query = str(item["query"])
            expected_raw = item["expected"]
        except (ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"suite line {number}: needs query and expected") from exc
        if isinstance(expected_raw, dict):
            expected = {str(key): float(v) for key, v in expected_raw.items()}
        else:
            expected = {str(x): 1.0 for x in expected_raw}
        cases.append(score_case(query, expected, ask(query, item.get("audience") or "customer"), k))
    return Report(cases, k)


def auc(positives: Iterable[float], negatives: Iterable[float]) -> float:
    """Area under the ROC curve of a score that should be higher for ``positives``: the chance
    that a random positive scores above a random negative (ties count half). 0.5 when either
    side is empty."""
    pos, neg = sorted(positives), sorted(negatives)
    if not pos or not neg:
        return 0.5
    wins = 0.0
    for p in pos:
        below = bisect.bisect_left(neg, p)
        ties = bisect.bisect_right(neg, p) - below
        wins += below + ties / 2
    return wins / (len(pos) * len(neg))
