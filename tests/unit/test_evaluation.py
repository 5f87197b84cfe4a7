"""Regression-suite metrics against hand computations."""

from __future__ import annotations

import json
import math

import pytest

from knowledge.evaluation import matches, ndcg, run_suite, score_case


def ex(path, doc=None, url=None):
    return {"path": path, "url": url, "sourceId": "s", "documentId": doc or path}


def test_matching_by_path_url_or_pack_prefix():
    e = ex("help/a.md", url="https://docs.x/help/a")
    assert matches("help/a.md", e) and matches("https://docs.x/help/a", e) and matches("coinvault/help/a.md", e)
    assert not matches("help/b.md", e) and not matches("a.md", e)


def test_ndcg_reference():
    # gains at ranks 1..3 = [0, 1, 1]; ideal [1, 1]
    expected = (1 / math.log2(3) + 1 / math.log2(4)) / (1 + 1 / math.log2(3))
    assert ndcg([0, 1, 1], [1, 1], 10) == pytest.approx(expected)
    assert ndcg([0, 0], [1], 10) == 0.0


def test_case_scoring_counts_documents_once():
    excerpts = [ex("help/x.md"), ex("help/a.md"), ex("help/a.md"), ex("help/b.md")]
    case = score_case("q", {"help/a.md": 1.0, "help/b.md": 1.0, "help/z.md": 1.0}, excerpts, k=10)
    assert case.rr == pytest.approx(0.5)
    assert case.recall == pytest.approx(2 / 3)


def test_recall_cutoff_and_graded_relevance():
    excerpts = [ex(f"p{i}") for i in range(5)]
    case = score_case("q", {"p4": 2.0, "p0": 1.0}, excerpts, k=3)
    assert case.recall == pytest.approx(0.5)  # p4 is beyond the cut-off
    gains = [1.0, 0, 0, 0, 2.0]
    assert case.ndcg == pytest.approx(ndcg(gains, [2.0, 1.0], 10))


def test_run_suite_passes_audience_and_rejects_bad_lines():
    seen = []

    def ask(q, audience):
        seen.append((q, audience))
        return [ex("help/a.md")]

    lines = [json.dumps({"query": "one", "expected": ["help/a.md"]}),
             json.dumps({"query": "two", "expected": ["help/b.md"], "audience": "operator"})]
    report = run_suite(lines, ask)
    assert seen == [("one", "customer"), ("two", "operator")]
    assert report.as_dict() == {"cases": 2, "recall@10": 0.5, "ndcg@10": 0.5, "mrr": 0.5}
    with pytest.raises(ValueError):
        run_suite(['{"query": "no expected"}'], ask)


def test_auc_reference():
    from knowledge.evaluation import auc

    # every pair counted by hand: (0.9 > 0.1, 0.9 > 0.5), (0.5 > 0.1, 0.5 == 0.5 -> half)
    assert auc([0.9, 0.5], [0.1, 0.5]) == pytest.approx(3.5 / 4)
    assert auc([1.0], [0.0]) == 1.0 and auc([0.0], [1.0]) == 0.0
    assert auc([], [0.3]) == 0.5


def test_unanswerable_questions_are_scored_on_the_decision_only():
    answers = {
        "a1": {"excerpts": [ex("help/a.md")], "confidence": 0.9, "wouldAnswer": True},
        "a2": {"excerpts": [ex("help/x.md"), ex("help/b.md")], "confidence": 0.3, "wouldAnswer": False},
        "u1": {"excerpts": [ex("help/a.md")], "confidence": 0.2, "wouldAnswer": False},
        "u2": {"excerpts": [ex("help/a.md")], "confidence": 0.6, "wouldAnswer": True},
        "u3": {"excerpts": [], "confidence": 0.0, "wouldAnswer": False},
    }
    lines = [json.dumps({"query": "a1", "expected": ["help/a.md"]}),
             json.dumps({"query": "a2", "expected": ["help/b.md"]}),
             json.dumps({"query": "u1", "answerable": False}),
             json.dumps({"query": "u2", "expected": [], "answerable": False}),
             json.dumps({"query": "u3", "answerable": False})]
    report = run_suite(lines, lambda q, audience: answers[q])
    # ranking figures over the two answerable questions only
    assert report.as_dict() == {
        "cases": 5, "recall@10": 1.0, "ndcg@10": pytest.approx((1 + 1 / math.log2(3)) / 2, abs=1e-4),
        "mrr": 0.75, "answerable": 2, "unanswerable": 3, "answeredWhenAnswerable": 0.5,
        "refusedWhenUnanswerable": 0.6667,
        # pairs: 0.9 beats all three; 0.3 beats 0.2 and 0.0, loses to 0.6 -> 5 / 6
        "confidenceAuc": 0.8333}
    with pytest.raises(ValueError):
        run_suite([json.dumps({"query": "x", "answerable": "no"})], lambda q, a: answers["u1"])
