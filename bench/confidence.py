"""Does ``wouldAnswer`` separate answerable from unanswerable questions? Fits and checks the
confidence constants of ``knowledge.retrieve.confidence``.

    python bench/confidence.py [--fit | --loso] [--embedder none|hashing|local] [--dump FILE [--texts]]
                               [--costly NAME,...] [--rows FILE] [--lexical-rows FILE] [--fit-on all|tune]
                               [--questions FILE ...] [--balance set|class]

The labelled sets are support questions over the example packs (``examples/packs``, all three
in one bot, as ``make run`` ingests them) and over the Harbor documentation in
``../shared/data/docs/harbor`` (read at run time, never copied; skipped when absent). Each line
is answerable (with its right page) or not (a question that looks like the others but that the
corpus cannot answer), and belongs to a split. Every set that has been read is fitted on
(:data:`FITTED_FILES`, splits :data:`FITTING`): ``bench/support_questions.jsonl`` (``tune`` and
``heldout``, halves by a hash of the question; ``tune2`` and ``tune3``, written later, each
unanswerable one checked with ``grep`` for the word it turns on), with the packs' example
questions (``examples/questions.jsonl``, answerable, joined to the halves by the same hash
rule); ``bench/support_questions_fresh.jsonl`` (``fresh``) and ``_fresh2.jsonl`` (``fresh2``,
written by another author without seeing the code), once the held-out sets, now fitted on;
``bench/support_questions_hard.jsonl`` (``hard``) and ``bench/vocab_mismatch_questions.jsonl``
(``vocab``), answerable questions in the customers' own words; ``_blind3.jsonl`` (``blind3``,
the lead's third blind set, by another author, read once held out and now fitted on) and
``_blind4.jsonl`` and ``_blind5.jsonl`` (``blind4``, ``blind5``, the fourth and fifth, likewise). A file given with
``--questions`` that is not one of these is held out: reported as its own split (named after
the file when its split is one of the fitted ones) and never fitted on (``--fit`` refuses
when nothing else is given); the held-out figure is read there (the lead's blind set).
``bench/support_questions_keywords.jsonl`` (``keywords``: keyword questions of one to three
words and one-word look-alikes) is read that way, never fitted on: fitted on, its look-alikes
(mostly words the corpus never saw) moved the weight from ``matched`` to ``known`` and cost the
other sets' left-out figures (bench/RESULTS.md, 2026-12-02 "short questions").

Every question goes through ``retrieve()`` (every component measured, ``sentence`` too); the
components of its confidence are read from the response. ``--fit`` uses the fitted sets only
(``--fit-on tune``: the tuning half alone). The lexical model: a logistic regression (L2
:data:`L2`; each class weighs alike and, with ``--balance set``, the default, each set inside
a class alike: :func:`row_weights`) of "answerable" on every one of :data:`CANDIDATES`, less
those whose fitted weight points against their meaning (:data:`SIGNS`; dropped one at a time,
worst first, refitting each time), so that each weight in the code reads as its component
says. Its cut: the intercept is moved so that the default floor (0.35) answers a share of the
fitted answerables, the share (one of :data:`ANSWER_TARGETS`) whose 5-fold cross-validated
rates (the mean of the sets' rates) stand furthest above the targets (:data:`TARGETS`) on the
worse of the two; the example questions and the paraphrased sets (:data:`CUT_SKIP`) are fitted
on but do not choose the cut. With rows retrieved with an embedder (``--rows``, the lexical
model fitted on ``--lexical-rows`` of a run without one) it also fits the embedder's model the
same way on the lexical model's components plus :data:`EMBEDDER_CANDIDATES`; its cut is the
share whose cross-validated rates stand furthest above the lexical model's on the worse of the
two (with an embedder both should be higher). It prints the constants to paste into
``confidence.py``. ``--loso`` judges the method rather than the constants: for each set of
:data:`LEFT_OUT`, everything (components, weights, cut) is fitted on the other sets and read on
it, with the components before issue 21's sentence-level ones and after (with an embedder:
after without :data:`TOKENS`, after, and after with the ``--costly`` components). ``--dump
--texts`` keeps each question's first excerpts and its words' IDFs in the rows, for components
measured from a dump (``bench/softcov.py``). Figures are printed
for each split at the floor; "answered" is the confidence's decision (``confidence >= floor``),
before the topic gate. ``--embedder local`` caches the vectors outside the repository
(``bench/embedding_cache.py``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "layers" / "core" / "src"))

from knowledge.evaluation import auc, score_case  # noqa: E402
from knowledge.model import partition_of_audience  # noqa: E402
from knowledge.refresh import rescue_build  # noqa: E402
from knowledge.refresh.packsync import install_pack  # noqa: E402
from knowledge.refresh.reindex import reindex  # noqa: E402
from knowledge.retrieve import confidence as conf  # noqa: E402
from knowledge.retrieve.service import RetrievalOptions, RetrievalRequest, _idf, retrieve  # noqa: E402
from knowledge.settings import LocalSettings  # noqa: E402
from knowledge.wiring import build_local_services  # noqa: E402

QUESTIONS = ROOT / "bench" / "support_questions.jsonl"
#: every labelled set that has been read, each fitted on (:data:`FITTING`), and the split its
#: questions get when their own would be ambiguous (the vocabulary-mismatch set names its
#: halves ``tune`` and ``heldout`` too)
FITTED_FILES: dict[Path, str | None] = {
    QUESTIONS: None,
    ROOT / "bench" / "support_questions_fresh.jsonl": None,
    ROOT / "bench" / "support_questions_fresh2.jsonl": None,
    ROOT / "bench" / "support_questions_hard.jsonl": None,
    ROOT / "bench" / "vocab_mismatch_questions.jsonl": "vocab",
    ROOT / "bench" / "support_questions_blind3.jsonl": None,
    ROOT / "bench" / "support_questions_blind4.jsonl": None,
    ROOT / "bench" / "support_questions_blind5.jsonl": None,
}
EXAMPLES = ROOT / "examples" / "questions.jsonl"
HARBOR = ROOT.parent / "shared" / "data" / "docs" / "harbor" / "docs"
FLOOR = 0.35
#: every component measured, ``sentence`` too (the answer path embeds sentences only for an
#: embedder whose model weighs them)
SENTENCES = RetrievalOptions(sentences=True, tokens=True)
#: the splits of the fitting set (bench/support_questions.jsonl); "fresh" is never among them
FITTING = ("tune", "heldout", "tune2", "tune3", "fresh", "fresh2", "hard", "vocab", "blind3", "blind4", "blind5")
#: (``sentcov`` is measured, not a candidate: computed on the answer path only for a model that
#: weighs it, it costs about a sixth of a lexical retrieval, and left out set by set it changed
#: no mean figure by more than a point once ``matched`` and ``known`` were there)
CANDIDATES = ("coverage", "strength", "focus", "unseen", "rare", "missing", "title", "depth", "nqc", "wig", "reach",
              "matched", "known")
#: the direction each component's evidence points (+1: for an answer, -1: against); a
#: component whose fitted weight has the other sign is dropped, so that every weight in the
#: code reads as its component's meaning says (no component used as a correction of another)
SIGNS = {"coverage": 1, "strength": 1, "focus": 1, "unseen": -1, "rare": 1, "missing": -1, "title": 1, "depth": 1,
         "agreement": 1, "similarity": 1, "nearness": 1, "distinct": 1, "concord": 1, "nqc": 1, "wig": 1,
         "sentcov": 1, "sentence": 1, "reach": 1, "grounded": 1, "softcov": 1, "softmin": 1, "softlow": 1,
         "softcov3": 1, "softmin3": 1, "softcovs": 1, "softmins": 1, "softcovk": 1, "softcovu": 1,
         "matched": 1, "known": 1}
#: the embedder's components: a second model, used when they are present, takes the lexical
#: model's components and these, fitted on a run with one
EMBEDDER_CANDIDATES = ("agreement", "similarity", "nearness", "distinct", "concord", "grounded", "softcov")
#: the embedder's components read from its piece vectors (the local model's only): ``--loso``
#: reads the method without them too
TOKENS = ("softcov",)
#: measured, not among the candidates: its embedding call costs five to ten times the rest of a
#: retrieval (bench/confidence_cost.py) for a gain the leave-one-set-out figures do not show at
#: the floor; ``--loso`` reads the method with it too
COSTLY = ("sentence",)
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


def load(files: list[Path]) -> list[dict[str, Any]]:
    """The questions of ``files``: a file that is not one of :data:`FITTED_FILES` is held out
    (``"blind": True``: reported, never fitted on, whatever its split is called)."""
    known = {p.resolve(): split for p, split in FITTED_FILES.items()}
    items = []
    for path in files:
        fitted = path.resolve() in known
        for line in path.read_text().splitlines():
            if line.strip():
                item = json.loads(line)
                if fitted and known[path.resolve()]:
                    item["split"] = known[path.resolve()]
                if not fitted:  # its own split, never one of the fitted ones
                    item["blind"] = True
                    if item.get("split") in FITTING or not item.get("split"):
                        item["split"] = f"{path.stem} (held out)"
                items.append(item)
    return items


def collect(embedder: str, files: list[Path] | None = None, *, every: bool = True) -> list[dict[str, Any]]:
    """Every question of ``files`` through ``retrieve()``; ``every``: measure the components no
    model weighs too (``sentence``: an embedding call per question), for fitting."""
    files = files or list(FITTED_FILES)
    items = load(files)
    # the example questions of the packs: answerable, fitted on with bench/support_questions.jsonl
    for line in EXAMPLES.read_text().splitlines() if QUESTIONS.resolve() in {f.resolve() for f in files} else []:
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
            res = retrieve(services, RetrievalRequest("default", item["query"], item["audience"]), record=False,
                           options=SENTENCES if every else RetrievalOptions())
            found = bool(item["expected"]) and score_case(
                item["query"], {e: 1.0 for e in item["expected"]}, res["excerpts"], k=10).recall > 0
            # the confidence's decision, before the topic gate (a policy on top of it, reported apart)
            decided = bool(res["excerpts"]) and res["confidence"] >= res["floor"]
            gated = bool(res.get("gate")) and not res["gate"]["passed"]
            rows.append({**item, "confidence": res["confidence"], "wouldAnswer": decided, "gated": gated,
                         "components": res["confidenceComponents"], "found": found,
                         "top": res["excerpts"][0]["path"] if res["excerpts"] else None,
                         **(reading(services, item) | {"texts": [e["text"] for e in res["excerpts"][:3]],
                                                              "excerpts": [[e["documentId"], e["score"], e["text"]]
                                                                           for e in res["excerpts"]]}
                            if TEXTS else {})})
        for services in corpora.values():
            services.state.close()
    return rows


#: keep each question's first excerpts and its words' IDFs in the rows (``--texts``), for
#: components computed from a dump (``bench/softcov.py``)
TEXTS = False
_WORD = re.compile(r"\w+")


def reading(services: Any, item: dict[str, Any]) -> dict[str, Any]:
    """The question's words as the index reads them: ``[start, end, term, idf]`` of each word
    (term None: a stop word; idf None: no passage of the partition holds it) and the IDF of a
    term one passage holds (``rarest``)."""
    partition = partition_of_audience(item["audience"])
    spans = [(m.start(), m.end(), (services.index.analyze(m.group()) or [None])[0])
             for m in _WORD.finditer(item["query"])]
    idf, n = _idf(services, "default", partition, [t for _, _, t in spans if t])
    rarest = math.log(1.0 + (n - 0.5) / 1.5) if n else 0.0
    return {"words": [[a, b, t, idf.get(t) if t else None] for a, b, t in spans], "rarest": rarest}


def features(rows: list[dict[str, Any]], names: tuple[str, ...]) -> np.ndarray:
    return np.array([[float(r["components"].get(n) or 0.0) for n in names] for r in rows])


def logistic(x: np.ndarray, y: np.ndarray, offset: np.ndarray | None = None, weights: np.ndarray | None = None
             ) -> np.ndarray:
    """Class-balanced logistic regression with a small L2 penalty: [intercept, weights...];
    ``offset``: a fixed part of each row's log-odds (the lexical model, for the optional
    components fitted on top of it)."""
    w = np.where(y == 1, 0.5 / y.mean(), 0.5 / (1 - y.mean())) if weights is None else weights  # class-balanced
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


#: "class": each class weighs alike in the fit (every question of a class alike); "set": and
#: inside a class, each set written apart weighs alike (:func:`group_of`), and the cut is chosen
#: on the mean of the sets' rates
BALANCE = "set"
#: the sets the lexical model is not fitted on (the embedder's is): paraphrased answerable
#: questions share no more words with their page than a look-alike does with its topic's
LEXICAL_SKIP: tuple[str, ...] = ()
#: the sets fitted on that do not choose the cut: the answer share and the cross-validated
#: rates that choose it are read on the other sets (answerable-only sets of paraphrased
#: questions: no weighting tells them from look-alikes, and counted they pull the cut down
#: until every look-alike passes)
CUT_SKIP: tuple[str, ...] = ("hard", "vocab")


def group_of(r: dict[str, Any]) -> str:
    """The set a question was written in (the hard and vocabulary-mismatch sets: one kind)."""
    return "paraphrased" if r["split"] in ("hard", "vocab") else str(r["split"])


def row_weights(rows: list[dict[str, Any]]) -> np.ndarray | None:
    """The fit's weight of each row (None: class-balanced, every row of a class alike)."""
    if BALANCE != "set":
        return None
    y = np.array([bool(r["answerable"]) for r in rows])
    g = np.array([group_of(r) for r in rows])
    w = np.zeros(len(rows))
    for cls in (True, False):
        sets = sorted(set(g[y == cls]))
        for name in sets:
            mask = (y == cls) & (g == name)
            w[mask] = 0.5 / len(sets) / mask.sum()
    return w * len(rows)


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
        beta = logistic(features(rows, tuple(names)), y, weights=row_weights(rows))[1:]
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
    own = np.array([not r.get("examples") and r["split"] not in CUT_SKIP for r in rows])
    cutting = np.array([r["split"] not in CUT_SKIP for r in rows])
    groups = np.array([group_of(r) for r in rows])
    w = row_weights(rows)
    hits = {t: np.zeros(4) for t in ANSWER_TARGETS}
    aucs = []
    rng = np.random.default_rng(0)
    for _ in range(repeats):
        order = rng.permutation(len(rows))
        zs = {t: np.zeros(len(rows)) for t in ANSWER_TARGETS}
        for part in np.array_split(order, folds):
            train = np.setdiff1d(order, part)
            beta = logistic(x[train], y[train], weights=None if w is None else w[train] * len(train) / w[train].sum())
            z_train = np.hstack([np.ones((len(train), 1)), x[train]]) @ beta
            z_part = np.hstack([np.ones((len(part), 1)), x[part]]) @ beta
            for t in ANSWER_TARGETS:
                zs[t][part] = z_part - cut_for(z_train[cutting[train]], y[train][cutting[train]], t)
        for t in ANSWER_TARGETS:
            z, yo = zs[t][own], y[own]
            if BALANCE == "set":  # each set's rate counts alike
                go = groups[own]
                hits[t] += [np.mean([(z[(yo == 1) & (go == g)] >= 0).mean() for g in set(go[yo == 1])]), 1,
                            np.mean([(z[(yo == 0) & (go == g)] < 0).mean() for g in set(go[yo == 0])]), 1]
            else:
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
    beta = logistic(x, y, weights=row_weights(rows))
    xb = np.hstack([np.ones((len(x), 1)), x])
    z = xb @ beta
    # move the intercept so that the threshold is confidence == FLOOR
    cutting = np.array([r["split"] not in CUT_SKIP for r in rows])
    intercept = float(beta[0] - cut_for(z[cutting], y[cutting], target) + math.log(FLOOR / (1 - FLOOR)))
    return intercept, {n: float(b) for n, b in zip(names, beta[1:], strict=True)}


Model = tuple[frozenset[str], float, dict[str, float]]  # (components it needs, intercept, weights)


def _fit_one(rows: list[dict[str, Any]], names: tuple[str, ...], targets: tuple[float, float], label: str,
             prefix: str, *,
             verbose: bool) -> tuple[dict[float, tuple[float, float, float]], float, float, dict[str, float]]:
    """One model on ``names``: its cross-validated rates per answer share, the share chosen
    against ``targets`` (see :func:`choose`), and the intercept and weights fitted at that share;
    printed (as constants named with ``prefix``) when ``verbose``."""
    cv = cross_validate(rows, names)
    target = choose(cv, targets)
    intercept, weights = fit(rows, names, target)
    if verbose:
        show(label, names, cv, target)
        print(f"{label}: selected {names}, answering {target:.0%} of the answerables fitted on:")
        print(f"{prefix}INTERCEPT = {intercept:.4f}")
        print(f"{prefix}WEIGHTS = {{" + ", ".join(f'"{k}": {v:.4f}' for k, v in weights.items()) + "}")
    return cv, target, intercept, weights


def fit_models(lexical_rows: list[dict[str, Any]], embedder_rows: list[dict[str, Any]] | None,
               candidates: tuple[str, ...], embedder_candidates: tuple[str, ...], *, verbose: bool = False
               ) -> list[Model]:
    """The lexical model fitted on ``lexical_rows`` and, with ``embedder_rows`` (retrieved with
    an embedder), the embedder's model: the models to try in order (the first whose components
    are all present decides)."""
    names = signed(lexical_rows, candidates)
    lexical_cv, target, intercept, weights = _fit_one(lexical_rows, names, TARGETS, "lexical model", "",
                                                      verbose=verbose)
    models: list[Model] = [(frozenset(), intercept, weights)]
    if embedder_rows and any(r["components"].get("similarity") is not None for r in embedder_rows):
        # the lexical model's components and the embedder's, those pointing against their
        # meaning dropped; the cut: the answer share that improves most on both of the
        # lexical model's cross-validated rates (an embedder should answer more and refuse more)
        e_names = signed(embedder_rows, names + embedder_candidates)
        _, _, e_intercept, e_weights = _fit_one(embedder_rows, e_names, lexical_cv[target][:2], "embedder model",
                                                "EMBEDDER_", verbose=verbose)
        models.insert(0, (frozenset({"similarity"} | (set(e_weights) & conf.SEMANTIC)), e_intercept, e_weights))
    return models


def decide(models: list[Model], c: dict[str, Any]) -> float | None:
    """The log-odds of the first of ``models`` whose components ``c`` has; None without lexical evidence."""
    if c.get("coverage") is None:
        return None
    b0, ws = next((b0, ws) for needs, b0, ws in models if all(c.get(n) is not None for n in needs))
    return b0 + sum(w * float(c.get(n) or 0.0) for n, w in ws.items())


#: the left-out groups of :func:`leave_one_set_out`: each set written apart (the vocabulary-
#: mismatch and hard sets, answerable only, together)
LEFT_OUT = (("fresh",), ("fresh2",), ("hard", "vocab"), ("tune3",), ("tune2",), ("blind3",), ("blind4",), ("blind5",))
#: the components before issue 21's sentence-level and query-performance components
BEFORE = (("coverage", "strength", "focus", "unseen", "rare", "missing", "title", "depth"),
          ("agreement", "similarity", "nearness", "distinct", "concord"))


def leave_one_set_out(lexical_rows: list[dict[str, Any]], embedder_rows: list[dict[str, Any]] | None) -> None:
    """For each group of :data:`LEFT_OUT`: the models fitted (the whole method: components by
    sign, cut by cross-validation) on every other fitted set, read on the group; before (the
    components of :data:`BEFORE`), after (:data:`CANDIDATES`, :data:`EMBEDDER_CANDIDATES`) and,
    with an embedder, after with :data:`COSTLY` too."""
    settings = [("lexical", lexical_rows, None)]
    if embedder_rows:
        settings.append(("embedder", lexical_rows, embedder_rows))
    print("| left out | setting | components | answerable: answered | unanswerable: refused | AUC |")
    print("|---|---|---|---|---|---|")
    pooled: dict[tuple[str, str], list[list[float]]] = {}
    for group in LEFT_OUT:
        for label, lex, emb in settings:
            variants = [("before", BEFORE)]
            if emb:
                without = tuple(n for n in EMBEDDER_CANDIDATES if n not in TOKENS)
                variants += [("after, without " + "+".join(TOKENS), (CANDIDATES, without)),
                             ("after", (CANDIDATES, EMBEDDER_CANDIDATES))]
                if COSTLY:
                    variants.append(("after + " + "+".join(COSTLY), (CANDIDATES, EMBEDDER_CANDIDATES + COSTLY)))
            else:
                variants.append(("after", (CANDIDATES, EMBEDDER_CANDIDATES)))
            for when, (cands, e_cands) in variants:
                def train(rows: list[dict[str, Any]], group: tuple[str, ...] = group) -> list[dict[str, Any]]:
                    return [r for r in rows if r["split"] in FITTING and r["split"] not in group
                            and not r.get("blind")]
                models = fit_models([r for r in train(lex) if r["split"] not in LEXICAL_SKIP],
                                    train(emb) if emb else None, cands, e_cands)
                test = [r for r in (emb or lex) if r["split"] in group]
                zs = [(r["answerable"], z if (z := decide(models, r["components"])) is not None else -99.0)
                      for r in test]
                a = [z for ok, z in zs if ok]
                u = [z for ok, z in zs if not ok]
                cut = math.log(FLOOR / (1 - FLOOR))
                answered = sum(z >= cut for z in a) / len(a) if a else float("nan")
                refused = sum(z < cut for z in u) / len(u) if u else float("nan")
                area = f"{auc(a, u):.3f}" if a and u else ""
                pooled.setdefault((label, when), []).append([sum(z >= cut for z in a), len(a),
                                                             sum(z < cut for z in u), len(u),
                                                             auc(a, u) if a and u else float("nan")])
                print(f"| {'+'.join(group)} ({len(a)} / {len(u)}) | {label} | {when} | {answered:.1%} | "
                      f"{refused:.1%} | {area} |".replace("nan%", "-"))
    for (label, when), counts in pooled.items():
        both = [c for c in np.array(counts, dtype=float) if c[1] and c[3]]  # sets with both kinds
        a = np.mean([c[0] / c[1] for c in both])
        r = np.mean([c[2] / c[3] for c in both])
        area = np.mean([c[4] for c in both])
        print(f"| mean of the left-out sets with both kinds | {label} | {when} | {a:.1%} | {r:.1%} | {area:.3f} |")


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
    global BALANCE, LEXICAL_SKIP, CUT_SKIP, TEXTS, COSTLY
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fit", action="store_true", help="fit the constants on the tuning half and print them")
    parser.add_argument("--embedder", default="none")
    parser.add_argument("--fit-on", choices=("tune", "all"), default="all",
                        help="the fitting set's halves to select and fit on: 'all' (both, the default since the "
                        "held-out figure is read on bench/support_questions_fresh.jsonl) or 'tune' only")
    parser.add_argument("--questions", type=Path, action="append",
                        help="a labelled set to read (repeatable; default: every fitted set). A file that is not "
                        "one of the fitted sets is held out: reported as its own split, never fitted on")
    parser.add_argument("--loso", action="store_true", help="leave one set out: fit on the others, read on it "
                        "(--rows of a run with an embedder with --lexical-rows, or lexical --rows alone)")
    parser.add_argument("--balance", choices=("class", "set"), default=BALANCE,
                        help="weigh each class alike (class) or, inside a class, each set alike (set)")
    parser.add_argument("--lexical-skip", default=",".join(LEXICAL_SKIP),
                        help="comma-separated sets the lexical model is not fitted on")
    parser.add_argument("--cut-skip", default=",".join(CUT_SKIP),
                        help="comma-separated sets fitted on that do not choose the cut")
    parser.add_argument("--costly", default=",".join(COSTLY),
                        help="with --loso: comma-separated components read as one more candidate of the embedder's "
                        "model (the last column; e.g. softcov from bench/softcov.py's rows)")
    parser.add_argument("--dump", help="write every question's row (components, decision) to this JSONL file")
    parser.add_argument("--texts", action="store_true", help="with --dump: keep each question's first three "
                        "excerpts and its words' IDFs in the rows (for bench/softcov.py)")
    parser.add_argument("--rows", help="read the rows from a --dump file instead of retrieving again")
    parser.add_argument("--lexical-rows", help="with --fit: fit the lexical model on these rows (a --dump of a "
                        "run without an embedder), the optional components on --rows / this run's rows")
    args = parser.parse_args()
    BALANCE = args.balance
    TEXTS = args.texts
    COSTLY = tuple(x for x in args.costly.split(",") if x)
    LEXICAL_SKIP = tuple(x for x in args.lexical_skip.split(",") if x)
    CUT_SKIP = tuple(x for x in args.cut_skip.split(",") if x)
    if args.embedder == "local":  # embed each text once across runs (a cache outside the repository)
        import embedding_cache

        print(f"embedding cache: {embedding_cache.install()}", file=sys.stderr)
    if args.rows:
        rows = [json.loads(line) for line in Path(args.rows).read_text().splitlines()]
    else:
        # a plain reading decides as the answer path does; fitting and dumps measure every component
        rows = collect(args.embedder, args.questions, every=bool(args.fit or args.loso or args.dump))
    if args.dump:
        Path(args.dump).write_text("".join(json.dumps(r) + "\n" for r in rows))
    if args.fit or args.loso:
        fit_on = {"tune"} if args.fit_on == "tune" else set(FITTING)
        semantic = any(r["components"].get("similarity") is not None for r in rows)
        if args.lexical_rows:
            lexical_rows = [json.loads(line) for line in Path(args.lexical_rows).read_text().splitlines()]
        elif semantic and not args.rows:  # the lexical model is fitted on a run without an embedder
            lexical_rows = collect("none", args.questions)
        else:
            lexical_rows = rows
    if args.loso:
        leave_one_set_out(lexical_rows, rows if semantic else None)
        return 0
    if args.fit:
        tune = [r for r in rows if r["split"] in fit_on and not r.get("blind")]
        lexical_tune = [r for r in lexical_rows if r["split"] in fit_on and not r.get("blind")
                        and r["split"] not in LEXICAL_SKIP]
        if not lexical_tune:
            parser.error("none of these questions is in a fitted set: nothing to fit on "
                         "(a held-out file is never fitted on)")
        models = fit_models(lexical_tune, tune if semantic else None,
                            CANDIDATES, EMBEDDER_CANDIDATES, verbose=True)
        for r in rows:  # what the fitted constants decide
            z = decide(models, r["components"])
            if z is None:
                continue
            r["confidence"] = 1 / (1 + math.exp(-z))
            r["wouldAnswer"] = r["confidence"] >= FLOOR
        print("with the fitted constants:")
    else:
        print(f"with the constants in the code (intercept {conf.INTERCEPT}, weights {dict(conf.WEIGHTS)}; "
              f"with an embedder that has a model, its own: {dict(conf.EMBEDDER_MODELS)}), "
              f"embedder {args.embedder!r}, floor {FLOOR}:")
    report([r for r in rows if r["split"] in FITTING and not r.get("blind")], "fitting set (all)")
    held_out = sorted({r["split"] for r in rows if r.get("blind")})  # never fitted on
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
