"""``kb search``, ``kb eval`` and ``kb gaps``: ask questions (one, or a file of JSON lines),
run a saved retrieval suite against thresholds, and list what nothing answered."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ...errors import KnowledgeError
from ...wiring import Services
from .common import open_services, print_json


def cmd_search(args: argparse.Namespace) -> int:
    services = open_services(args)
    try:
        return _search(services, args)
    finally:
        close = getattr(services.state, "close", None)  # the embedded store's: commits what it queued
        if callable(close):
            close()


def _search(services: Services, args: argparse.Namespace) -> int:
    from ...retrieve.service import RetrievalRequest, retrieve

    if args.queries:
        return _search_batch(services, args)
    if not args.question:
        print("kb search: give a QUESTION or --queries FILE", file=sys.stderr)
        return 2
    question = " ".join(args.question)
    try:
        result = retrieve(services, RetrievalRequest(args.bot, question, args.audience, args.agent))
    except KnowledgeError as exc:
        print_json({"error": {"code": exc.code, "message": exc.message}}, sys.stderr)
        return 2
    if args.json:
        print_json(result)
        return 0
    print(
        f"confidence {result['confidence']:.2f} (floor {result['floor']:.2f}), "
        f"wouldAnswer={str(result['wouldAnswer']).lower()}, corpus {result['corpusSize']} passages"
    )
    gate = result.get("gate")
    if gate:  # a fee, limit or timing question: say whether operator content settles it
        print(f"topic gate {'passed' if gate['passed'] else 'closed'}: {gate['reason']}")
    for e in result["excerpts"]:
        preview = " ".join(e["text"].split())[:160]
        print(f"{e['rank']:>2}. [{e['score']:.3f}] {e['breadcrumb']}  ({e['path']})\n    {preview}")
    if not result["excerpts"]:
        print("nothing found")
    return 0


def _search_batch(services: Services, args: argparse.Namespace) -> int:
    from ...retrieve.service import RetrievalRequest, retrieve

    stream = sys.stdin if args.queries == "-" else open(args.queries, encoding="utf-8")  # noqa: SIM115
    status = 0
    with stream:
        for number, line in enumerate(stream, start=1):
            if not line.strip():
                continue
            try:
                item = json.loads(line)
                if not isinstance(item, dict):
                    raise ValueError("not an object")
            except ValueError:
                error = {"code": "invalid_input", "message": "bad JSON line"}
                print_json({"id": None, "line": number, "error": error})
                status = 1
                continue
            try:
                req = RetrievalRequest(args.bot, str(item.get("query", "")), item.get("audience") or args.audience,
                                       item.get("agentId") or args.agent)
                result = retrieve(services, req)
                print_json({"id": item.get("id"), **result})
            except KnowledgeError as exc:
                print_json({"id": item.get("id"), "error": {"code": exc.code, "message": exc.message}})
                status = 1
    return status


def cmd_eval(args: argparse.Namespace) -> int:
    from ...evaluation import run_suite
    from ...retrieve.service import RetrievalRequest, retrieve

    services = open_services(args)

    def ask(query: str, audience: str) -> dict[str, Any]:
        return retrieve(services, RetrievalRequest(args.bot, query, audience), record=False)

    with open(args.suite, encoding="utf-8") as fh:
        report = run_suite(fh, ask, k=args.k)
    figures = report.as_dict()
    failures = []
    for name, threshold in ((f"recall@{args.k}", args.min_recall), ("ndcg@10", args.min_ndcg),
                            ("mrr", args.min_mrr)):
        if threshold is not None and figures[name] < threshold:
            failures.append(f"{name} {figures[name]:.4f} < {threshold}")
    if args.json:
        print_json({**figures, "failed": failures})
    else:
        print(f"{figures['cases']} cases: recall@{args.k} {figures[f'recall@{args.k}']:.4f}, "
              f"nDCG@10 {figures['ndcg@10']:.4f}, MRR {figures['mrr']:.4f}")
        if "answeredWhenAnswerable" in figures:
            print(f"answered {figures['answeredWhenAnswerable']:.1%} of {figures['answerable']} answerable")
        if "refusedWhenUnanswerable" in figures:
            print(f"refused {figures['refusedWhenUnanswerable']:.1%} of {figures['unanswerable']} unanswerable")
        if "confidenceAuc" in figures:
            print(f"confidence AUC {figures['confidenceAuc']:.4f}")
        for case in report.cases:
            if args.verbose_cases and case.answerable and case.recall < 1.0:
                print(f"  missed: {case.query}")
            if args.verbose_cases and case.would_answer is not None and case.would_answer != case.answerable:
                verdict = "answered" if case.would_answer else "refused"
                print(f"  {verdict} ({case.confidence:.2f}): {case.query}")
        for line in failures:
            print(f"below threshold: {line}", file=sys.stderr)
    return 1 if failures else 0


def cmd_gaps(args: argparse.Namespace) -> int:
    """What was asked that nothing answered, clustered: the body of ``GET gaps``."""
    from ...api.routes import gap_list, parse_since

    body = gap_list(open_services(args), args.bot, args.audience, parse_since(args.since))
    if args.json:
        print_json(body)
        return 0
    if not body["clusters"]:
        print(f"bot {args.bot}: no gaps")
    for c in body["clusters"]:
        outcomes = ", ".join(f"{k} {v}" for k, v in c["outcomes"].items())
        topic = f" [{c['topic']}]" if c["topic"] else ""
        print(f"{c['count']:>5}x  {c['representative']}{topic}  ({outcomes}; last {c['lastSeen']})")
        for example in c["examples"]:
            if example != c["representative"]:
                print(f"         - {example}")
    return 0
