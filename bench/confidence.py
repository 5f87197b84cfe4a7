"""Does ``wouldAnswer`` separate answerable from unanswerable questions? Fits and checks the
confidence constants of ``knowledge.retrieve.confidence``.

    python bench/confidence.py [--fit] [--embedder none|hashing|local] [--dump FILE]
                               [--rows FILE] [--lexical-rows FILE] [--fit-on all|tune]
                               [--questions FILE]

The labelled set is ``bench/support_questions.jsonl``: support questions over the example packs
(``examples/packs``, all three in one bot, as ``make run`` ingests them) and over the Harbor
documentation in ``../shared/data/docs/harbor`` (read at run time, never copied; skipped when
absent). Each line is answerable (with its right page) or not (a question that looks like the
others but that the corpus cannot answer), and belongs to a split: ``tune`` and ``heldout`` (the
first two halves, by a hash of the question), ``tune2`` (117 more, written later over the same
corpora, each unanswerable one checked with ``grep`` for the word it turns on) and ``tune3`` (92
more, written after the constants fitted on the first three were committed); all are fitted on
(:data:`FITTING`). ``bench/support_questions_fresh.jsonl`` (``--questions``) is a set of the same
kind that is never fitted on nor used to choose anything: the held-out figure is read there
(split ``fresh``).

The example questions of the packs (``examples/questions.jsonl``, all answerable, written with
the customer's words rather than the documentation's) join the two halves by the same hash rule.

Every question goes through ``retrieve()``; the components of its confidence are read from the
response. ``--fit`` uses the fitting set only (``--fit-on tune``: the tuning half alone). The
lexical model: a logistic regression (class-balanced, L2 :data:`L2`) of "answerable" on every
one of :data:`CANDIDATES`, less those whose fitted weight points against their meaning
(:data:`SIGNS`; dropped one at a time, worst first, refitting each time), so that each weight
in the code reads as its component says. Its cut: the intercept is moved so that the default
floor (0.35) answers a share of the fitted answerables, the share (one of
:data:`ANSWER_TARGETS`) whose 5-fold cross-validated rates on the set's own questions (the
example questions are fitted on, not counted) stand furthest above the targets
(:data:`TARGETS`) on the worse of the two. With rows retrieved with an embedder (``--rows``,
the lexical model fitted on ``--lexical-rows`` of a run without one) it also fits the
embedder's model the same way on the lexical model's components plus
:data:`EMBEDDER_CANDIDATES`; its cut is the share whose cross-validated rates stand furthest
above the lexical model's cross-validated rates on the worse of the two (with an embedder both
should be higher). It prints the constants to paste into ``confidence.py``. Figures are printed
for each split at the floor; "answered" is the confidence's decision (``confidence >= floor``),
before the topic gate. ``--embedder local`` caches the vectors outside the repository
(``bench/embedding_cache.py``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "layers" / "core" / "src"))

from knowledge.evaluation import auc, score_case  # noqa: E402
from knowledge.refresh import rescue_build  # noqa: E402
from knowledge.refresh.packsync import install_pack  # noqa: E402
from knowledge.refresh.reindex import reindex  # noqa: E402
from knowledge.retrieve import confidence as conf  # noqa: E402
from knowledge.retrieve.service import RetrievalRequest, retrieve  # noqa: E402
from knowledge.settings import LocalSettings  # noqa: E402
from knowledge.wiring import build_local_services  # noqa: E402

QUESTIONS = ROOT / "bench" / "support_questions.jsonl"
EXAMPLES = ROOT / "examples" / "questions.jsonl"
HARBOR = ROOT.parent / "shared" / "data" / "docs" / "harbor" / "docs"
FLOOR = 0.35
#: the splits of the fitting set (bench/support_questions.jsonl); "fresh" is never among them
FITTING = ("tune", "heldout", "tune2", "tune3")
CANDIDATES = ("coverage", "strength", "focus", "unseen", "rare", "missing", "title", "depth")
#: the direction each component's evidence points (+1: for an answer, -1: against); a
#: component whose fitted weight has the other sign is dropped, so that every weight in the
#: code reads as its component's meaning says (no component used as a correction of another)
SIGNS = {"coverage": 1, "strength": 1, "focus": 1, "unseen": -1, "rare": 1, "missing": -1, "title": 1, "depth": 1,
         "agreement": 1, "similarity": 1, "nearness": 1, "distinct": 1, "concord": 1}
#: the embedder's components: a second model, used when they are present, takes the lexical
#: model's components and these, fitted on a run with one
EMBEDDER_CANDIDATES = ("agreement", "similarity", "nearness", "distinct", "concord")
#: shares of the fitted answerables the floor may answer (the cut); chosen by cross-validation
ANSWER_TARGETS = tuple(round(0.80 + 0.01 * i, 2) for i in range(19))
TARGETS = (0.85, 0.80)  # answered when answerable, refused when not
#: the L2 penalty of the logistic regression (class weights sum to the number of questions)
L2 = 0.01


def half(query: str) -> str:
    """The rule bench/support_questions.jsonl was split by."""
    return "heldout" if int(hashlib.sha256(query.encode()).hexdigest(), 16) % 2 else "tune"


def build_corpora(tmp: Path, embedder: str, *, warn: bool = False) -> dict[str, Any]:
    """The example packs and, when ``../shared/data`` has it, the Harbor docs, each indexed in
    its own data folder under ``tmp``: ``{"packs": services, "harbor": services}``."""
    corpora = {"packs": build(tmp, "packs", ROOT / "examples" / "packs", embedder)}
    if HARBOR.is_dir():
        src = tmp / "harbor-src"
        src.mkdir()
        (src / "harbor").symlink_to(HARBOR)
        corpora["harbor"] = build(tmp, "harbor", src, embedder)
    elif warn:
        print(f"{HARBOR} not found: the Harbor questions are left out", file=sys.stderr)
    return corpora


def build(tmp: Path, name: str, src: Path, embedder: str) -> Any:
    out = tmp / f"{name}-packs"
    subprocess.run([sys.executable, str(ROOT / "examples" / "build_packs.py"), str(out), "--src", str(src)],
                   check=True, capture_output=True)
    services = build_local_services(LocalSettings(data_dir=tmp / f"{name}-kb", embedder=embedder))
    for path in sorted(out.glob("*.ndjson.gz")):
        install_pack(services, path)
    report = reindex(services, "default")
    services.index.compact("default")
    rescue_build.rebuild_if_stale(services, "default")
    print(f"{name}: {sum(o.passages for o in report.outcomes)} passages", file=sys.stderr)
    return services


def collect(embedder: str, questions: Path = QUESTIONS) -> list[dict[str, Any]]:
    items = [json.loads(line) for line in questions.read_text().splitlines() if line.strip()]
    # the example questions of the packs: answerable, never used for fitting (with the
    # fitting set only; a --questions set is reported alone)
    for line in EXAMPLES.read_text().splitlines() if questions == QUESTIONS else []:
        if line.strip():
            item = json.loads(line)
            items.append({**item, "answerable": True, "corpus": "packs", "split": half(item["query"]),
                          "examples": True})
    rows = []
    with tempfile.TemporaryDirectory(prefix="kb-confidence-") as tmp_name:
        tmp = Path(tmp_name)
        corpora = build_corpora(tmp, embedder, warn=True)
        for item in items:
            services = corpora.get(item["corpus"])
            if services is None:
                continue
            res = retrieve(services, RetrievalRequest("default", item["query"], item["audience"]), record=False)
            found = bool(item["expected"]) and score_case(
                item["query"], {e: 1.0 for e in item["expected"]}, res["excerpts"], k=10).recall > 0
            # the confidence's decision, before the topic gate (a policy on top of it, reported apart)
            decided = bool(res["excerpts"]) and res["confidence"] >= res["floor"]
            gated = bool(res.get("gate")) and not res["gate"]["passed"]
            rows.append({**item, "confidence": res["confidence"], "wouldAnswer": decided, "gated": gated,
                         "components": res["confidenceComponents"], "found": found,
                         "top": res["excerpts"][0]["path"] if res["excerpts"] else None})
        for services in corpora.values():
            services.state.close()
    return rows


def features(rows: list[dict[str, Any]], names: tuple[str, ...]) -> np.ndarray:
    return np.array([[float(r["components"].get(n) or 0.0) for n in names] for r in rows])


def logistic(x: np.ndarray, y: np.ndarray, offset: np.ndarray | None = None) -> np.ndarray:
    """Class-balanced logistic regression with a small L2 penalty: [intercept, weights...];
    ``offset``: a fixed part of each row's log-odds (the lexical model, for the optional
    components fitted on top of it)."""
    w = np.where(y == 1, 0.5 / y.mean(), 0.5 / (1 - y.mean()))  # class-balanced
    xb = np.hstack([np.ones((len(x), 1)), x])
    beta = np.zeros(xb.shape[1])
    base = np.zeros(len(x)) if offset is None else offset
    l2 = L2
    for _ in range(100):  # Newton's method
        p = 1 / (1 + np.exp(-(base + xb @ beta)))
        grad = xb.T @ (w * (p - y)) + l2 * np.r_[0, beta[1:]]
        hess = (xb * (w * p * (1 - p))[:, None]).T @ xb + l2 * np.diag(np.r_[0, np.ones(len(beta) - 1)])
        step = np.linalg.solve(hess, grad)
        beta -= step
        if np.abs(step).max() < 1e-10:
            break
    return beta


def usable(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Questions with lexical evidence (the others get confidence 0 whatever the constants)."""
    return [r for r in rows if r["components"].get("coverage") is not None]


def cut_for(z: np.ndarray, y: np.ndarray, target: float) -> float:
    """The threshold on z that answers ``target`` of the answerables."""
    answerable_z = np.sort(z[y == 1])
    return float(answerable_z[math.floor((1 - target) * len(answerable_z))] - 1e-6)


def signed(rows: list[dict[str, Any]], candidates: tuple[str, ...]) -> tuple[str, ...]:
    """``candidates`` less those whose fitted weight points against their meaning (:data:`SIGNS`):
    fit them all, drop the one that contradicts its meaning most, refit, until none does."""
    rows = usable(rows)
    y = np.array([1.0 if r["answerable"] else 0.0 for r in rows])
    names = list(candidates)
    while names:
        beta = logistic(features(rows, tuple(names)), y)[1:]
        wrong = [(float(b) * SIGNS[n], n) for n, b in zip(names, beta, strict=True) if b * SIGNS[n] < 0]
        if not wrong:
            break
        names.remove(min(wrong)[1])
    return tuple(names)


def cross_validate(rows: list[dict[str, Any]], names: tuple[str, ...], folds: int = 5, repeats: int = 5
                   ) -> dict[float, tuple[float, float, float]]:
    """For each answer share of :data:`ANSWER_TARGETS`: the answered and refused rates and the
    AUC of the model on ``names``, each question scored by a model fitted without it (``folds``
    folds, ``repeats`` shuffles, the same shuffles for every call). The rates and the AUC are
    read on the labelled set's own questions: the packs' example questions are fitted on but
    not counted (answerable only and mostly worded unlike their page, they are not of the kind
    the targets are about, and an embedder would look better on them than on such a set)."""
    rows = usable(rows)
    x = features(rows, names)
    y = np.array([1.0 if r["answerable"] else 0.0 for r in rows])
    own = np.array([not r.get("examples") for r in rows])
    hits = {t: np.zeros(4) for t in ANSWER_TARGETS}
    aucs = []
    rng = np.random.default_rng(0)
    for _ in range(repeats):
        order = rng.permutation(len(rows))
        zs = {t: np.zeros(len(rows)) for t in ANSWER_TARGETS}
        for part in np.array_split(order, folds):
            train = np.setdiff1d(order, part)
            beta = logistic(x[train], y[train])
            z_train = np.hstack([np.ones((len(train), 1)), x[train]]) @ beta
            z_part = np.hstack([np.ones((len(part), 1)), x[part]]) @ beta
            for t in ANSWER_TARGETS:
                zs[t][part] = z_part - cut_for(z_train, y[train], t)
        for t in ANSWER_TARGETS:
            z, yo = zs[t][own], y[own]
            hits[t] += [(z[yo == 1] >= 0).sum(), (yo == 1).sum(), (z[yo == 0] < 0).sum(), (yo == 0).sum()]
        z, yo = zs[ANSWER_TARGETS[0]][own], y[own]
        aucs.append(auc(z[yo == 1].tolist(), z[yo == 0].tolist()))
    return {t: (h[0] / h[1], h[2] / h[3], float(np.mean(aucs))) for t, h in hits.items()}


def choose(cv: dict[float, tuple[float, float, float]], reference: tuple[float, float]) -> float:
    """The answer share whose cross-validated rates stand furthest above ``reference`` (answered,
    refused) on the worse of the two; ties: the share that answers more."""
    return max(cv, key=lambda t: (round(min(cv[t][0] - reference[0], cv[t][1] - reference[1]), 6), t))


def show(label: str, names: tuple[str, ...], cv: dict[float, tuple[float, float, float]], target: float) -> None:
    a, r, area = cv[target]
    print(f"  cross-validated {label} ({'+'.join(names)}), answer share {target:.2f}: answered {a:6.1%} "
          f"refused {r:6.1%} AUC {area:.3f}")


def fit(rows: list[dict[str, Any]], names: tuple[str, ...], target: float) -> tuple[float, dict[str, float]]:
    rows = usable(rows)
    x = features(rows, names)
    y = np.array([1.0 if r["answerable"] else 0.0 for r in rows])
    beta = logistic(x, y)
    xb = np.hstack([np.ones((len(x), 1)), x])
    z = xb @ beta
    # move the intercept so that the threshold is confidence == FLOOR
    intercept = float(beta[0] - cut_for(z, y, target) + math.log(FLOOR / (1 - FLOOR)))
    return intercept, {n: float(b) for n, b in zip(names, beta[1:], strict=True)}


def report(rows: list[dict[str, Any]], label: str) -> dict[str, Any]:
    ans = [r for r in rows if r["answerable"]]
    una = [r for r in rows if not r["answerable"]]
    if not rows:
        return {}
    answered = sum(r["wouldAnswer"] for r in ans) / len(ans) if ans else 0.0
    refused = sum(not r["wouldAnswer"] for r in una) / len(una) if una else 0.0
    area = auc([r["confidence"] for r in ans], [r["confidence"] for r in una])
    found = sum(r["found"] for r in ans) / len(ans) if ans else 0.0
    line = f"{label:<22} answerable {len(ans):>3}: answered {answered:6.1%} (right page in top 10: {found:6.1%})"
    if una:
        line += f" | unanswerable {len(una):>3}: refused {refused:6.1%} | AUC {area:.3f}"
    print(line)
    return {"answered": answered, "refused": refused, "auc": area}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fit", action="store_true", help="fit the constants on the tuning half and print them")
    parser.add_argument("--embedder", default="none")
    parser.add_argument("--fit-on", choices=("tune", "all"), default="all",
                        help="the fitting set's halves to select and fit on: 'all' (both, the default since the "
                        "held-out figure is read on bench/support_questions_fresh.jsonl) or 'tune' only")
    parser.add_argument("--questions", type=Path, default=QUESTIONS,
                        help="the labelled set (default: the fitting set; bench/support_questions_fresh.jsonl: "
                        "the held-out set never fitted on, reported as its own split)")
    parser.add_argument("--dump", help="write every question's row (components, decision) to this JSONL file")
    parser.add_argument("--rows", help="read the rows from a --dump file instead of retrieving again")
    parser.add_argument("--lexical-rows", help="with --fit: fit the lexical model on these rows (a --dump of a "
                        "run without an embedder), the optional components on --rows / this run's rows")
    args = parser.parse_args()
    if args.embedder == "local":  # embed each text once across runs (a cache outside the repository)
        import embedding_cache

        print(f"embedding cache: {embedding_cache.install()}", file=sys.stderr)
    if args.rows:
        rows = [json.loads(line) for line in Path(args.rows).read_text().splitlines()]
    else:
        rows = collect(args.embedder, args.questions)
    if args.dump:
        Path(args.dump).write_text("".join(json.dumps(r) + "\n" for r in rows))
    if args.fit:
        fit_on = {"tune"} if args.fit_on == "tune" else set(FITTING)
        tune = [r for r in rows if r["split"] in fit_on]
        lexical_rows = ([json.loads(line) for line in Path(args.lexical_rows).read_text().splitlines()]
                        if args.lexical_rows else rows)
        lexical_tune = [r for r in lexical_rows if r["split"] in fit_on]
        names = signed(lexical_tune, CANDIDATES)
        lexical_cv = cross_validate(lexical_tune, names)
        target = choose(lexical_cv, TARGETS)
        show("lexical model", names, lexical_cv, target)
        intercept, weights = fit(lexical_tune, names, target)
        print(f"selected {names}, answering {target:.0%} of the answerables fitted on ({sorted(fit_on)}):")
        print(f"INTERCEPT = {intercept:.4f}")
        print("WEIGHTS = {" + ", ".join(f'"{k}": {v:.4f}' for k, v in weights.items()) + "}")
        models = [({}, intercept, weights)]
        if any(r["components"].get("similarity") is not None for r in tune):
            # the lexical model's components and the embedder's, those pointing against their
            # meaning dropped; the cut: the answer share that improves most on both of the
            # lexical model's cross-validated rates (an embedder should answer more and refuse more)
            e_names = signed(tune, names + EMBEDDER_CANDIDATES)
            e_cv = cross_validate(tune, e_names)
            e_target = choose(e_cv, lexical_cv[target][:2])
            show("embedder model", e_names, e_cv, e_target)
            e_intercept, e_weights = fit(tune, e_names, e_target)
            print(f"with an embedder: selected {e_names}, answering {e_target:.0%} of the answerables fitted on:")
            print(f"EMBEDDER_INTERCEPT = {e_intercept:.4f}")
            print("EMBEDDER_WEIGHTS = {" + ", ".join(f'"{k}": {v:.4f}' for k, v in e_weights.items()) + "}")
            models.insert(0, ({"similarity"}, e_intercept, e_weights))
        for r in rows:  # what the fitted constants decide
            c = r["components"]
            if c.get("coverage") is None:
                continue
            b0, ws = next((b0, ws) for needs, b0, ws in models if all(c.get(n) is not None for n in needs))
            z = b0 + sum(w * float(c.get(n) or 0.0) for n, w in ws.items())
            r["confidence"] = 1 / (1 + math.exp(-z))
            r["wouldAnswer"] = r["confidence"] >= FLOOR
        print("with the fitted constants:")
    else:
        print(f"with the constants in the code (intercept {conf.INTERCEPT}, weights {dict(conf.WEIGHTS)}), "
              f"embedder {args.embedder!r}, floor {FLOOR}:")
    report([r for r in rows if r["split"] in FITTING], "fitting set (all)")
    held_out = sorted({r["split"] for r in rows} - set(FITTING))  # fresh, fresh2: never fitted on
    for split in (*FITTING, *held_out):
        part = [r for r in rows if r["split"] == split]
        if not part:
            continue
        report(part, split)
        report([r for r in part if not r.get("examples")], f"  {split}/own questions")
        for corpus in ("packs", "harbor"):
            report([r for r in part if r["corpus"] == corpus], f"  {split}/{corpus}")
        report([r for r in part if r.get("examples")], f"  {split}/examples")
    return 0


if __name__ == "__main__":
    sys.exit(main())
