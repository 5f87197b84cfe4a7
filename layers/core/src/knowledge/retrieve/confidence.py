"""How likely the excerpts answer the question: a confidence in [0, 1] from signals kb has,
each one shown to the operator (``confidenceComponents`` of a retrieval).

Components (None when absent; an absent component drops out of the sum):

- ``coverage``: the IDF-weighted share of the question's content words (analysed terms: stop
  words never count, stems compared as the index compares them) that the top excerpt holds
  close together — inside its best :data:`SPAN`-character stretch — among the words the
  corpus knows. Words scattered over a long passage ("opening" here, "hours" there) are not
  an answer.
- ``strength``: the best word-match (BM25) score as a share of the most that the question's
  known words could score (each present, BM25's saturation ``k1 + 1`` times its IDF).
- ``focus``: how far the best word match stands above the fifth-best page (one minus the
  ratio of their scores; 1 when fewer than five pages match). Words spread thinly over many
  pages point at no answer in particular.
- ``unseen``: the share of the question's weight that lies in content words no passage of the
  asker's partition holds, each such word weighted like the rarest word the corpus knows. A
  question about something the corpus never mentions ("discount", "PayPal") is strong
  evidence against an answer.
- ``title``: the IDF-weighted share of the question's known content words that the top
  excerpt's title, breadcrumb or file name holds: a page whose heading names what is asked is
  about it, one that holds the words only in its body often merely mentions them.
- ``rare``: the IDF-weighted share of the question's :data:`RARE` rarest known words (the
  ones that say what it is about) that the top excerpt holds anywhere.
- ``missing``: the IDF of the most telling known question word the top excerpt lacks, as a
  share of the IDF of a word one passage holds.
- ``depth``: as ``focus``, against the :data:`DEPTH`-th best page.
- ``agreement``: with an embedder, the share of the five best passages of the word list that
  the semantic list also ranks in its five best (by document).
- ``similarity``: with an embedder, the cosine similarity of the question and the passage the
  semantic list ranks first (how close the nearest text comes in meaning).
- ``nearness``: with an embedder, the cosine similarity of the question and the top excerpt
  (the one the agent reads first), or the semantic list's lowest when that list did not reach it.
- ``distinct``: with an embedder, how far the semantic list's best page stands above its fifth
  (the difference of their cosines): a question close to one page in meaning, not to all of
  them alike, is about something the corpus holds; one about what the corpus never covers is
  about as close to many pages (0 with fewer than five pages: no evidence either way).
- ``concord``: with an embedder, one over the rank of the word list's best page among the
  semantic list's pages (1: both lists put the same page first; 0: the semantic list's 50
  best passages miss it): the words and the meaning point at the same page.
- ``nqc``: the spread of the word list's :data:`QPP_DEPTH` best passage scores (their
  standard deviation) as a share of the most the question's known words could score (the
  normalised query commitment of the query-performance-prediction literature, normalised by
  that most instead of the corpus's own score): a list whose best stands clear of the rest
  points at an answer; a flat one at words spread over everything.
- ``wig``: the mean of the word list's :data:`WIG_DEPTH` best passage scores less the score of
  an average passage (each known word held once by a passage of average length scores its IDF,
  weighted by the share of passages holding it), as a share of the most the question's known
  words could score (weighted information gain, normalised by that most instead of the square
  root of the question's length).
- ``sentcov``: the IDF-weighted share of the question's known content words that the single
  best sentence (:func:`sentences`) of the :data:`SENTENCE_EXCERPTS` first excerpts holds: an
  answer is usually one sentence; words met one per sentence are a topic, not an answer.
  Computed, like ``sentence``, only when a model weighs it (:func:`wants_sentences`; it costs
  about a sixth of a lexical retrieval) or a benchmark asks; no model weighs it.
- ``sentence``: with an embedder, the best cosine similarity of the question and one sentence
  (:func:`sentences`, at most :data:`SENTENCES_PER_EXCERPT` of each) of the
  :data:`SENTENCE_EXCERPTS` first excerpts, embedded at query time in one batch: a look-alike
  question is near the page's topic but near none of its sentences. Computed only when the
  embedder's model weighs it (:func:`wants_sentences`): one more embedding call per question,
  five to ten times the cost of the rest of a retrieval with the local model, for a gain the
  leave-one-set-out figures do not show at the floor (bench/RESULTS.md); no model weighs it.
- ``reach``: the best word-match score as a share of the most the WHOLE question could score,
  a word no passage holds counted as the rarest word the corpus knows (``strength`` times one
  minus ``unseen``): ``strength`` measures the known words only, so a question half about
  something the corpus never mentions can reach full strength on its other half.
- ``grounded``: with an embedder, ``nearness`` (the cosine of the question and the top
  excerpt) times the share of the question's weight the corpus knows (one minus ``unseen``):
  text near the question in meaning counts for as much of the question as the corpus can
  speak to.
- ``softcov``: with the local embedder, how well the top excerpt covers each concept of the
  question, paraphrase allowed: each content word of the question (a word the index's analyser
  keeps; its vector the mean of its word pieces') is matched with the closest word piece of the
  excerpt (cosine of the model's last-layer vectors, each text read on its own: the MaxSim of
  late-interaction retrievers, untrained), and the best matches are averaged weighted by IDF (a
  word no passage holds weighs as the rarest word the corpus knows). A synonym in the excerpt
  scores nearly as high as the word itself; a concept the excerpt never touches (a look-alike's
  "just one project") scores low and pulls the mean down, where a cosine of whole texts barely
  moves. A forward pass over the question and one over the top excerpt (about three times the
  rest of a retrieval with the local model, bench/RESULTS.md; :data:`TOKEN_COMPONENTS`:
  computed only when the embedder's model weighs it and the embedder gives piece vectors;
  Bedrock's do not, and the lexical model decides there). The local model weighs it: left out
  set by set, it raised the refused share of the other author's look-alikes by nine points.
- ``matched``: how much evidence the top excerpt holds, counted rather than shared: the summed
  IDF of the question's distinct known content words (:func:`content_words`: each word as
  written, an identifier's parts not counted apart; "PayPal" is one word the corpus may never
  have seen, not "pay" and "pal") the top excerpt holds anywhere, in units
  of the IDF of a word one passage holds, over :data:`UNITS` or the question's number of
  distinct content words when it has fewer (capped at 1): a one-word question whose word only
  one passage holds ("tapestry") is fully matched by that passage, as a four-word question is
  by one holding four such words (over :data:`UNITS` alone, a keyword question could reach a
  quarter at best and fell under the floor over a long page). ``reach``,
  ``coverage`` and ``unseen`` are shares, and a share penalises a question told in many words:
  a customer who says when, where and what they tried ("withdrew a big amount yesterday around
  3pm") adds words the corpus never saw, or words the answer has no reason to hold, while the
  telling words the excerpt does hold still say as much. A look-alike of something the corpus
  does not cover matches few of them ("can I deposit dogecoin": one).
- ``known``: as ``matched``, of the words some passage holds, always over :data:`UNITS` (the
  question alone: how much of it the corpus can speak to, counted; a one-word question says
  little). With ``matched``, left out set by set, it raised the
  area under the curve on each of the five sets with both kinds of question (bench/RESULTS.md,
  2026-12-02).
- ``rescue``: the similarity of the passage the corpus-learned rescue appended, when it did.
- ``reranker``: the reranker's score (in [0, 1]) for the top excerpt, when the bot reranks.
  Shown; its weight stays 0 until it is fitted on questions retrieved with a reranker (no
  cross-encoder model was at hand where the other constants were fitted).

The confidence is a logistic function of a weighted sum of the components present: the
lexical model's (:data:`WEIGHTS`) without an embedder, the embedder's model
(:data:`EMBEDDER_MODELS`) when the semantic components are there and one was fitted for it; a
component that is absent drops out. The constants are fitted on labelled questions
(answerable with their right page, and similar ones the corpus cannot answer) by
``bench/confidence.py``, which prints them; the default floor (0.35) then separates "related
text exists but does not answer" (below) from an answer.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING

from . import ranking

if TYPE_CHECKING:
    from ..model import TokenVectors

#: Fitted by ``python bench/confidence.py --fit`` on every labelled set that has been read
#: (bench/support_questions.jsonl's tune, heldout, tune2 and tune3 with examples/questions.jsonl;
#: bench/support_questions_fresh.jsonl, _fresh2, _hard, _blind3, _blind4, _blind5 and
#: bench/vocab_mismatch_questions.jsonl: 1,211 questions, lexical only): logistic regression (small
#: L2) in which each class weighs alike and, inside a class, each set written apart weighs alike.
#: The components: every lexical one, less those whose fitted weight pointed against their
#: meaning (shown, not weighted; ``focus``, ``depth`` and ``unseen`` since ``matched`` and
#: ``known``: ``reach`` already counts the unseen words against the question), and ``missing``
#: since ``matched`` counts a short question in its own words (no longer chosen). The intercept is
#: then moved so that 0.35 answers 84% of the answerables of the sets with both kinds of
#: question, the share whose 5-fold cross-validated rates stand furthest above issue 21's
#: targets (85% answered, 80% refused) on the worse of the two; the paraphrased sets (hard,
#: vocabulary mismatch: answerable only) are fitted on but do not choose the cut: no weighting of
#: these components tells them from look-alike questions, and counted they pull the cut down
#: until most look-alikes pass. The method was chosen by leaving one set out (fitted on the
#: others, read on it: bench/RESULTS.md); the held-out figure is read on a set never fitted on.
INTERCEPT = -4.9282
WEIGHTS: Mapping[str, float] = {
    "title": 0.2642,
    "wig": 0.5117,
    "reach": 4.9038,
    "matched": 4.3350,
    "known": 1.4418,
}
#: The models used when an embedder gave the semantic components, by the embedder's name (a
#: cosine means something else in each model's space): the lexical model's components plus the
#: semantic ones, less those whose weight pointed against their meaning, fitted the same way on
#: the same questions retrieved with that embedder (``bench/confidence.py --fit --rows ...
#: --lexical-rows ...``). Its cut answers 85% of the answerables of the sets with both kinds:
#: the share whose cross-validated rates improve most on both of the lexical model's. An
#: embedder without a model here has its components shown but decided by the lexical model; a
#: model decides only when every semantic component it weighs is there (``softcov`` included:
#: when the forward pass fails, the lexical model decides). ``sentence`` is not among its
#: candidates (see the list of components at the top of this module).
EMBEDDER_MODELS: Mapping[str, tuple[float, Mapping[str, float]]] = {
    "local-minilm-l6-v2-384": (-7.4191, {
        "wig": 0.4105,
        "reach": 1.0410,
        "matched": 1.5743,
        "known": 1.6214,
        "nearness": 0.5673,
        "distinct": 0.5828,
        "concord": 0.5815,
        "grounded": 0.0522,
        "softcov": 7.4329,
    }),
}
#: the components an embedder gives (the others are read from the words)
SEMANTIC = frozenset({"agreement", "similarity", "nearness", "distinct", "concord", "sentence", "grounded",
                      "softcov"})
#: the components read sentence by sentence (``sentence`` embeds them): computed only for a
#: model that weighs one of them
SENTENCE_COMPONENTS = frozenset({"sentence", "sentcov"})
#: the components read from the embedder's per-piece vectors (``TokenEmbedder``): computed only
#: for a model that weighs one of them
TOKEN_COMPONENTS = frozenset({"softcov"})
#: the stretch of the top excerpt the coverage looks at, in characters (a few sentences)
SPAN = 300
#: how many of the question's rarest known terms ``rare`` looks for
RARE = 2
#: the rank ``depth`` compares the best page with (``focus`` looks at the fifth)
DEPTH = 10
#: how many of the word list's best passage scores ``nqc`` spreads over
QPP_DEPTH = 10
#: how many of the word list's best passage scores ``wig`` averages
WIG_DEPTH = 5
#: the first excerpts whose sentences ``sentcov`` and ``sentence`` read
SENTENCE_EXCERPTS = 3
#: the most sentences of one excerpt ``sentence`` embeds (3 x 8: one batch of at most 24)
SENTENCES_PER_EXCERPT = 8
#: a piece shorter than this (characters: a list marker, a heading word) joins the next sentence
MIN_SENTENCE = 30
#: the weight of question words ``matched`` and ``known`` count as full, in units of the IDF of
#: a word one passage holds (four such words; ``matched`` counts a question of fewer words in its
#: own number). Left out set by set (bench/RESULTS.md, 2026-12-02 "short questions"): 3, 4 and 5
#: are within a point of each other, 6 and 8 lower; 4 keeps the mean figures and lifts a
#: one-word question over a long page above the floor, 5 leaves it just under)
UNITS = 4.0
#: BM25's k1 (tantivy's and OpenSearch's default): a term's score saturates at (k1 + 1) * IDF
BM25_K1 = 1.2
#: Components fitted or set apart from the lexical model: each adds ``weight * (value - centre)``,
#: so that a component near its usual value leaves the lexical decision as it is. A weight of
#: 0 means "not fitted yet": shown, but without effect.
OPTIONAL: Mapping[str, tuple[float, float]] = {
    "rescue": (0.0, 0.0),  # cross-validation: no separation (mean 0.755 answerable, 0.753 not)
    "reranker": (0.0, 0.0),
}


@dataclass(frozen=True)
class Components:
    coverage: float | None = None
    strength: float | None = None
    focus: float | None = None
    unseen: float | None = None
    agreement: float | None = None
    similarity: float | None = None
    rescue: float | None = None
    reranker: float | None = None
    rare: float | None = None
    missing: float | None = None
    title: float | None = None
    depth: float | None = None
    nearness: float | None = None
    distinct: float | None = None
    concord: float | None = None
    nqc: float | None = None
    wig: float | None = None
    sentcov: float | None = None
    sentence: float | None = None
    reach: float | None = None
    grounded: float | None = None
    softcov: float | None = None
    matched: float | None = None
    known: float | None = None

    def as_json(self) -> dict[str, float | None]:
        return {k: (None if (v := getattr(self, k)) is None else round(v, 4)) for k in _FIELDS}


_FIELDS = tuple(f.name for f in fields(Components))


def score(c: Components, embedder: str | None = None) -> float:
    """The confidence of components ``c``, in [0, 1]; 0 when there is no lexical evidence at
    all. ``embedder``: the name of the embedder that gave the semantic components."""
    if c.coverage is None:
        return 0.0
    model = EMBEDDER_MODELS.get(embedder or "") if c.similarity is not None else None
    if model is not None and any(getattr(c, n) is None for n in model[1] if n in SEMANTIC):
        model = None  # a semantic component it weighs is missing: the lexical model decides
    intercept, weights = model if model is not None else (INTERCEPT, WEIGHTS)
    z = intercept
    for name, weight in weights.items():
        value = getattr(c, name)
        if value is not None:
            z += weight * value
    for name, (weight, centre) in OPTIONAL.items():
        value = getattr(c, name)
        if value is not None and weight:
            z += weight * (value - centre)
    return 1.0 / (1.0 + math.exp(-z))


def coverage(text: str, query_terms: Sequence[str], idf: Mapping[str, float | None], span: int = SPAN
             ) -> float | None:
    """IDF-weighted share of the known distinct query terms found inside the best ``span``
    characters of ``text`` (the window holding the most distinct terms); None when the
    question has no term the corpus knows."""
    known = [t for t in dict.fromkeys(query_terms) if idf.get(t) is not None]
    total = sum(float(idf[t] or 0.0) for t in known)
    if total <= 0:
        return None
    matches = ranking.term_positions(text, known)
    start = ranking.best_window(matches, span)
    inside = {term for pos, term in matches if start <= pos < start + span}
    return sum(float(idf[t] or 0.0) for t in known if t in inside) / total


def strength(best_score: float | None, query_terms: Sequence[str], idf: Mapping[str, float | None]) -> float | None:
    """The best word-match score over the most the known query terms could score, in [0, 1]."""
    if best_score is None:
        return None
    most = (BM25_K1 + 1) * sum(float(v) for t, v in {t: idf.get(t) for t in query_terms}.items() if v is not None)
    if most <= 0:
        return None
    return max(0.0, min(1.0, best_score / most))


def unseen(query_terms: Sequence[str], idf: Mapping[str, float | None], rarest: float) -> float | None:
    """Share of the question's IDF weight in terms no passage holds, each such term weighted
    ``rarest`` (the IDF of a term one passage holds); None for a question without terms."""
    distinct = list(dict.fromkeys(query_terms))
    if not distinct:
        return None
    missing = rarest * sum(1 for t in distinct if idf.get(t) is None)
    total = missing + sum(float(v) for t in distinct if (v := idf.get(t)) is not None)
    return missing / total if total > 0 else 1.0


def known(query_terms: Sequence[str], idf: Mapping[str, float | None], rarest: float,
          units: float = UNITS) -> float | None:
    """The summed IDF of the distinct query terms some passage holds over ``units`` times
    ``rarest`` (the IDF of a term one passage holds), capped at 1; None for a question without
    terms or a corpus without passages."""
    distinct = list(dict.fromkeys(query_terms))
    if not distinct or rarest <= 0 or units <= 0:
        return None
    return min(1.0, sum(float(v) for t in distinct if (v := idf.get(t)) is not None) / (units * rarest))


def matched(text: str, query_terms: Sequence[str], idf: Mapping[str, float | None], rarest: float,
            units: float = UNITS, *, present: Collection[str] | None = None) -> float | None:
    """The summed IDF of the distinct known query terms that ``text`` holds anywhere over
    ``rarest`` times ``units`` or the number of distinct query terms (known or not) when fewer,
    capped at 1; None without a query term or a corpus.
    ``present``: :func:`held` of ``text``, when the caller has it."""
    if not query_terms or rarest <= 0 or units <= 0:
        return None
    known = {t: float(v) for t in query_terms if (v := idf.get(t)) is not None}
    if present is None:
        present = held(text, query_terms, idf)
    unit = min(units, len(set(query_terms)))  # a short question needs fewer words to be answered
    return min(1.0, sum(v for t, v in known.items() if t in present) / (unit * rarest))


def focus(doc_scores: Sequence[tuple[int, float]], depth: int = 5) -> float | None:
    """1 - (score of the ``depth``-th best document) / (score of the best), over (document,
    score) pairs in any order, a document's best score counting; None when nothing matched."""
    best: dict[int, float] = {}
    for doc, s in doc_scores:
        if s > best.get(doc, float("-inf")):
            best[doc] = s
    ranked = sorted(best.values(), reverse=True)
    if not ranked or ranked[0] <= 0:
        return None
    return 1.0 - (ranked[depth - 1] / ranked[0] if len(ranked) >= depth else 0.0)


def held(text: str, query_terms: Sequence[str], idf: Mapping[str, float | None]) -> set[str]:
    """The distinct known query terms that ``text`` holds anywhere (as a word whose stem is the
    term): what ``rare``, ``missing`` and ``matched`` read of one excerpt, found once."""
    known = [t for t in dict.fromkeys(query_terms) if idf.get(t) is not None]
    return {term for _, term in ranking.term_positions(text, known, per_term=1)} if known else set()


def rare(text: str, query_terms: Sequence[str], idf: Mapping[str, float | None], count: int = RARE, *,
         present: Collection[str] | None = None) -> float | None:
    """IDF-weighted share of the question's ``count`` rarest known terms (highest IDF: the words
    that say what the question is about) that ``text`` holds anywhere; None without a known term.
    ``present``: :func:`held` of ``text``, when the caller has it."""
    known = sorted({t: float(v) for t in query_terms if (v := idf.get(t)) is not None}.items(),
                   key=lambda kv: -kv[1])[:count]
    total = sum(v for _, v in known)
    if total <= 0:
        return None
    if present is None:
        present = {term for _, term in ranking.term_positions(text, [t for t, _ in known])}
    return sum(v for t, v in known if t in present) / total


def missing(text: str, query_terms: Sequence[str], idf: Mapping[str, float | None], rarest: float, *,
            present: Collection[str] | None = None) -> float | None:
    """The IDF of the most telling known question term that ``text`` lacks, as a share of
    ``rarest`` (the IDF of a term one passage holds): 0 when every known term is there, near 1
    when a word the corpus holds only once or twice is missing; None without a known term.
    ``present``: :func:`held` of ``text``, when the caller has it."""
    known = {t: float(v) for t in query_terms if (v := idf.get(t)) is not None}
    if not known or rarest <= 0:
        return None
    if present is None:
        present = held(text, query_terms, idf)
    return min(1.0, max((v for t, v in known.items() if t not in present), default=0.0) / rarest)


def title(field_terms: Collection[str], query_terms: Sequence[str], idf: Mapping[str, float | None]
          ) -> float | None:
    """IDF-weighted share of the question's known terms that the top excerpt's title,
    breadcrumb or file name holds (``field_terms``, analysed); None without a known term."""
    known = {t: float(v) for t in query_terms if (v := idf.get(t)) is not None}
    total = sum(known.values())
    if total <= 0:
        return None
    return sum(v for t, v in known.items() if t in field_terms) / total


def agreement(lexical_docs: Sequence[int], semantic_docs: Sequence[int], depth: int = 5) -> float | None:
    """Share of the word list's ``depth`` best documents that the semantic list's ``depth`` best
    also hold; None unless both lists found something."""
    lex = list(dict.fromkeys(lexical_docs))[:depth]
    sem = set(list(dict.fromkeys(semantic_docs))[:depth])
    if not lex or not sem:
        return None
    return sum(1 for d in lex if d in sem) / len(lex)


def nearness(top_cosine: float | None, semantic_scores: Sequence[float]) -> float | None:
    """The cosine similarity of the question and the top excerpt's passage: its score in the
    semantic list, or, when that list did not reach it, the list's lowest (it is at most that
    close); None without a semantic list."""
    if not semantic_scores:
        return None
    value = top_cosine if top_cosine is not None else min(semantic_scores)
    return max(-1.0, min(1.0, float(value)))


def distinct(doc_scores: Sequence[tuple[int, float]], depth: int = 5) -> float | None:
    """How far the semantic list's best page stands above its ``depth``-th: the difference
    of their cosines (0 when fewer pages); None without a semantic list."""
    best: dict[int, float] = {}
    for doc, s in doc_scores:
        if s > best.get(doc, float("-inf")):
            best[doc] = s
    ranked = sorted(best.values(), reverse=True)
    if not ranked:
        return None
    return max(0.0, ranked[0] - ranked[depth - 1]) if len(ranked) >= depth else 0.0


def concord(lexical_docs: Sequence[int], semantic_docs: Sequence[int]) -> float | None:
    """One over the rank of the word list's best document among the semantic list's documents
    (0 when that list does not hold it); None unless both lists found something."""
    if not lexical_docs or not semantic_docs:
        return None
    pages = list(dict.fromkeys(semantic_docs))
    return 1.0 / (1 + pages.index(lexical_docs[0])) if lexical_docs[0] in pages else 0.0


def wants_sentences(embedder: str | None) -> bool:
    """Whether the lexical model or the model of ``embedder`` (by name) weighs a component read
    sentence by sentence (:data:`SENTENCE_COMPONENTS`): only then are they worth their cost
    (for ``sentence``, an embedding call)."""
    model = EMBEDDER_MODELS.get(embedder or "")
    weights = [WEIGHTS, *([model[1]] if model is not None else [])]
    return any(w.get(n) for w in weights for n in SENTENCE_COMPONENTS)


def wants_tokens(embedder: str | None) -> bool:
    """Whether the model of ``embedder`` (by name) weighs a component read from the embedder's
    per-piece vectors (:data:`TOKEN_COMPONENTS`): only then is the forward pass worth its cost."""
    model = EMBEDDER_MODELS.get(embedder or "")
    return model is not None and any(model[1].get(n) for n in TOKEN_COMPONENTS)


_WORD = re.compile(r"\w+")


def content_words(question: str, analyze: Callable[[str], list[str]]) -> list[tuple[int, int, str]]:
    """The question's content words: ``(start, end, term)`` of each word the index's analyser
    keeps (stop words and punctuation out), ``term`` its analysed form."""
    out = []
    for m in _WORD.finditer(question):
        terms = analyze(m.group())
        if terms:
            out.append((m.start(), m.end(), terms[0]))
    return out


def soft_coverage(words: Sequence[tuple[int, int, float]], question: TokenVectors, excerpt: TokenVectors
                  ) -> float | None:
    """``softcov``: the ``weight``-weighted mean, over the question's content ``words`` (their
    ``(start, end, weight)`` in the question), of each word's best cosine with a piece of the
    excerpt; a word's vector is the mean of the vectors of the question's pieces it overlaps.
    None without a word or an excerpt piece."""
    import numpy as np  # with the local model only (the caller has its piece vectors)

    q = np.asarray(question.vectors, dtype=float)
    d = np.asarray(excerpt.vectors, dtype=float)
    if not len(q) or not len(d) or not words:
        return None
    spans = np.asarray(question.spans, dtype=float).reshape(-1, 2)
    vectors, weights = [], []
    for start, end, weight in words:
        inside = (spans[:, 0] < end) & (spans[:, 1] > start)
        if inside.any() and weight > 0:
            vectors.append(q[inside].mean(axis=0))
            weights.append(weight)
    if not vectors:
        return None
    v = np.array(vectors)
    v /= np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-9)
    d = d / np.maximum(np.linalg.norm(d, axis=1, keepdims=True), 1e-9)
    best = (v @ d.T).max(axis=1)
    w = np.array(weights)
    return float(max(-1.0, min(1.0, (best * w).sum() / w.sum())))


def _most(query_terms: Sequence[str], idf: Mapping[str, float | None]) -> float:
    """The most the known query terms could score: BM25's saturation ``k1 + 1`` times each IDF."""
    return (BM25_K1 + 1) * sum(float(v) for t, v in {t: idf.get(t) for t in query_terms}.items() if v is not None)


def nqc(scores: Sequence[float], query_terms: Sequence[str], idf: Mapping[str, float | None],
        depth: int = QPP_DEPTH) -> float | None:
    """The standard deviation of the ``depth`` best of ``scores`` (word-match scores of
    passages, any order) over the most the known query terms could score, in [0, 1]; None when
    nothing matched or no term is known. Fewer than ``depth`` scores: the missing ones count 0
    (a passage that does not match scores nothing)."""
    most = _most(query_terms, idf)
    top = sorted((max(0.0, float(s)) for s in scores), reverse=True)[:depth]
    if not top or most <= 0:
        return None
    top += [0.0] * (depth - len(top))
    mean = sum(top) / depth
    return min(1.0, math.sqrt(sum((s - mean) ** 2 for s in top) / depth) / most)


def wig(scores: Sequence[float], query_terms: Sequence[str], idf: Mapping[str, float | None], passages: int,
        depth: int = WIG_DEPTH) -> float | None:
    """The mean of the ``depth`` best of ``scores`` (missing ones 0) less an average passage's
    score, over the most the known query terms could score; None when nothing matched or no term
    is known. An average passage holds each known term with the probability ``df / passages``
    (``df`` read back from the term's IDF) and, holding it once at average length, scores its IDF."""
    most = _most(query_terms, idf)
    top = sorted((max(0.0, float(s)) for s in scores), reverse=True)[:depth]
    if not top or most <= 0 or passages <= 0:
        return None
    average = 0.0
    for v in {t: idf.get(t) for t in query_terms}.values():
        if v is not None:
            x = math.exp(float(v)) - 1.0  # idf = log(1 + (n - df + 0.5) / (df + 0.5))
            df = max(0.0, (passages + 0.5 - 0.5 * x) / (x + 1.0))
            average += float(v) * min(1.0, df / passages)
    return max(-1.0, min(1.0, (sum(top) / depth - average) / most))


_BREAK = re.compile(r"\n\s*\n|\n(?=\s*(?:[-*+#>|]|\d+[.)]\s))|(?<=[.!?])[)\"'\u201d]?\s+|\s*\n\s*")


def sentences(text: str, limit: int | None = None) -> list[str]:
    """The sentences of ``text``: split at sentence ends, line breaks, list items and headings,
    a piece shorter than :data:`MIN_SENTENCE` characters joined to the next (a heading reads
    with the sentence under it); the first ``limit`` of them."""
    out: list[str] = []
    pending = ""
    for piece in _BREAK.split(text):
        piece = piece.strip(" \t-*#>|\u2026")
        if not piece:
            continue
        pending = f"{pending} {piece}" if pending else piece
        if len(pending) >= MIN_SENTENCE:
            out.append(pending)
            pending = ""
    if pending:
        if out and len(pending) < MIN_SENTENCE:
            out[-1] = f"{out[-1]} {pending}"
        else:
            out.append(pending)
    return out if limit is None else out[:limit]


def sentence_coverage(texts: Sequence[str], query_terms: Sequence[str], idf: Mapping[str, float | None]
                      ) -> float | None:
    """The IDF-weighted share of the known distinct query terms that the best single sentence
    of ``texts`` holds; None without a known term or a sentence."""
    known = {t: float(v) for t in query_terms if (v := idf.get(t)) is not None}
    total = sum(known.values())
    if total <= 0:
        return None
    best: float | None = None
    for text in texts:
        for s in sentences(text):
            present = {term for _, term in ranking.term_positions(s, list(known))}
            share = sum(v for t, v in known.items() if t in present) / total
            best = share if best is None else max(best, share)
    return best


def best_cosine(question: Sequence[float], vectors: Sequence[Sequence[float]]) -> float | None:
    """The highest cosine similarity of ``question`` and any of ``vectors``; None without any."""
    qn = math.sqrt(sum(x * x for x in question))
    best: float | None = None
    for v in vectors:
        vn = math.sqrt(sum(x * x for x in v))
        if qn <= 0 or vn <= 0:
            continue
        c = sum(a * b for a, b in zip(question, v, strict=True)) / (qn * vn)
        best = c if best is None else max(best, c)
    return None if best is None else max(-1.0, min(1.0, best))


def known_share(value: float | None, unseen_share: float | None) -> float | None:
    """``value`` times the share of the question's weight the corpus knows (one minus
    ``unseen``): ``reach`` from ``strength``, ``grounded`` from ``nearness``; None when either is."""
    if value is None or unseen_share is None:
        return None
    return value * (1.0 - unseen_share)
