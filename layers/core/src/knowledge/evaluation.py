"""Saved retrieval regression suites (``kb eval SUITE.jsonl``): recall@k, nDCG@10, MRR, and
whether the service knows when not to answer.

A suite line is ``{"query": ..., "expected": [page paths or URLs], "audience": ...}``. An
excerpt matches an expected item when the item is its path, its URL, or ends with
``/<path>`` (so ``product/help/page.md`` names a page of the ``product`` pack). Relevance is
judged per document: several excerpts of one page count once.

A line with ``"answerable": false`` (``expected`` then may be empty or absent) is a question
the corpus cannot answer: it takes no part in the ranking figures. When the answers carry
their decision (``wouldAnswer``, ``confidence``), the report adds the share of answerable
questions answered, the share of unanswerable ones refused, and the area under the ROC curve
of the confidence (answerable against unanswerable).
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
    answerable: bool = True
    confidence: float | None = None
    would_answer: bool | None = None


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
        ranked = [c for c in self.cases if c.answerable]
        if not ranked:
            return 0.0
        return sum(getattr(c, name) for c in ranked) / len(ranked)

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"cases": len(self.cases), f"recall@{self.k}": round(self.metric("recall"), 4),
                               "ndcg@10": round(self.metric("ndcg"), 4), "mrr": round(self.metric("rr"), 4)}
        decided = [c for c in self.cases if c.would_answer is not None]
        if not decided:
            return out
        answerable = [c for c in decided if c.answerable]
        unanswerable = [c for c in decided if not c.answerable]
        out["answerable"] = len(answerable)
        out["unanswerable"] = len(unanswerable)
        if answerable:
            out["answeredWhenAnswerable"] = round(sum(bool(c.would_answer) for c in answerable) / len(answerable), 4)
        if unanswerable:
            out["refusedWhenUnanswerable"] = round(sum(not c.would_answer for c in unanswerable) / len(unanswerable),
                                                   4)
        if answerable and unanswerable:
            out["confidenceAuc"] = round(auc([c.confidence or 0.0 for c in answerable],
                                             [c.confidence or 0.0 for c in unanswerable]), 4)
        return out


Answer = list[dict[str, Any]] | dict[str, Any]


def run_suite(lines: Iterable[str], ask: Callable[[str, str], Answer], *, k: int = 10) -> Report:
    """Score every line of a suite. ``ask(query, audience)`` returns the excerpts, or the whole
    retrieval response (``excerpts`` plus ``confidence`` and ``wouldAnswer``)."""
    cases = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
            query = str(item["query"])
            answerable = item.get("answerable", True)
            if not isinstance(answerable, bool):
                raise TypeError("answerable must be true or false")
            expected_raw = item["expected"] if answerable else item.get("expected") or []
            if isinstance(expected_raw, dict):
                expected = {str(key): float(v) for key, v in expected_raw.items()}
            else:
                expected = {str(x): 1.0 for x in expected_raw}
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise ValueError(f"suite line {number}: needs query and expected (or answerable: false)") from exc
        answer = ask(query, item.get("audience") or "customer")
        excerpts = answer.get("excerpts", []) if isinstance(answer, dict) else answer
        case = score_case(query, expected, excerpts, k)
        case.answerable = answerable
        if isinstance(answer, dict) and "wouldAnswer" in answer:
            case.would_answer = bool(answer["wouldAnswer"])
            case.confidence = float(answer.get("confidence") or 0.0)
        cases.append(case)
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
