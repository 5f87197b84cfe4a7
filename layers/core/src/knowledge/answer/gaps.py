"""Gaps: what customers asked that nothing answered (DESIGN.md §7).

A retrieval that ends with nothing found, below the floor, or gated is recorded as a gap
(its question redacted first). Listing merges near-identical phrasings into clusters: each
with a representative question, a count, first and last seen, up to five examples and the
outcomes, most frequent first.

Similarity of two questions is the larger of the overlap of their content words (stop words
dropped, light suffix stripping) and the cosine of their character trigram profiles; or, when
the caller passes vectors from the bot's embedder, their cosine. A question joins the cluster
whose members it is most similar to on average, when that average reaches the threshold.
"""

from __future__ import annotations

import math
import re
import secrets
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..model import GAP_OUTCOMES, GAP_RETENTION_SECONDS, GapRecord

#: lexical similarity needed to merge (tuned on half of bench/answer/paraphrases.jsonl)
LEXICAL_THRESHOLD = 0.45
#: cosine needed to merge when the bot's embedder gives vectors
VECTOR_THRESHOLD = 0.8
#: trigram cosine counts at this share (it catches typos and inflections, and little else)
TRIGRAM_SCALE = 0.8
MAX_EXAMPLES = 5
#: members a question is compared with per cluster (the earliest, most typical ones)
MAX_COMPARED = 20

_STOP = frozenset({
    "a", "an", "the", "i", "me", "my", "mine", "we", "our", "you", "your", "yours", "it", "its", "is", "are",
    "was", "were", "be", "been", "being", "am", "do", "does", "did", "doing", "have", "has", "had", "having",
    "to", "of", "in", "on", "at", "for", "from", "by", "with", "about", "as", "into", "and", "or", "but",
    "if", "so", "than", "then", "there", "this", "that", "these", "those", "what", "whats", "what's",
    "which", "who", "whom", "how", "why", "when", "where", "can", "could", "would", "should", "will",
    "shall", "may", "might", "must", "just", "please", "hi", "hello", "thanks", "thank", "any", "some",
    "there's", "i'm", "i've", "im", "ive", "get", "got",
})
_SUFFIXES = ("ing", "als", "al", "ed", "es", "s")


def _stem(word: str) -> str:
    for suffix in _SUFFIXES:
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


#: shorthand customers write, spelled out (the words, not the meaning: no synonyms)
_SHORTHAND = {"min": "minimum", "max": "maximum", "btc": "bitcoin", "eth": "ethereum", "ltc": "litecoin",
              "xmr": "monero", "2fa": "two factor", "pwd": "password", "acct": "account", "pls": "", "plz": "",
              "u": "you", "ur": "your", "id": "identity", "kyc": "verification", "wd": "withdrawal"}


def content_words(text: str) -> list[str]:
    words = re.findall(r"[a-z0-9]+(?:'[a-z]+)?", text.lower().replace("’", "'"))
    spelled = " ".join(_SHORTHAND.get(w, w) for w in words).split()
    return [_stem(w) for w in spelled if w not in _STOP]


def _trigrams(words: Sequence[str]) -> Counter[str]:
    joined = f" {' '.join(words)} "
    return Counter(joined[i : i + 3] for i in range(len(joined) - 2))


def _cosine(a: Mapping[Any, float], b: Mapping[Any, float]) -> float:
    if not a or not b:
        return 0.0
    dot = sum(v * b.get(k, 0.0) for k, v in a.items())
    na = math.sqrt(sum(v * v for v in a.values()))
    nb = math.sqrt(sum(v * v for v in b.values()))
    return dot / (na * nb) if na and nb else 0.0


@dataclass(frozen=True)
class _Profile:
    words: frozenset[str]
    grams: Counter[str]
    vector: tuple[float, ...] | None = None


def profile(text: str, vector: Sequence[float] | None = None) -> _Profile:
    words = content_words(text)
    return _Profile(frozenset(words), _trigrams(words), tuple(vector) if vector is not None else None)


def similarity(a: _Profile, b: _Profile, idf: Mapping[str, float] | None = None) -> float:
    """0..1: the vectors' cosine when both have one, else the larger of the word overlap
    (Jaccard, each word weighted by its rarity among the questions clustered together, so
    "bitcoin" vs "ethereum" outweighs the shared "withdrawal fee") and the character trigram
    cosine scaled by the same overlap's evidence."""
    if a.vector is not None and b.vector is not None:
        return _cosine(dict(enumerate(a.vector)), dict(enumerate(b.vector)))
    union = a.words | b.words
    if not union:
        return 0.0
    weight = (lambda w: idf.get(w, 1.0)) if idf else (lambda w: 1.0)
    jaccard = sum(weight(w) for w in a.words & b.words) / sum(weight(w) for w in union)
    return max(jaccard, _cosine(a.grams, b.grams) * TRIGRAM_SCALE)


@dataclass
class _Cluster:
    members: list[int] = field(default_factory=list)


def cluster_indices(texts: Sequence[str], vectors: Sequence[Sequence[float]] | None = None, *,
                    threshold: float | None = None) -> list[list[int]]:
    """Groups of indices into ``texts`` whose phrasings are near-identical, in first-seen order."""
    if vectors is not None and len(vectors) != len(texts):
        raise ValueError("one vector per text, or none")
    limit = threshold if threshold is not None else (VECTOR_THRESHOLD if vectors is not None else LEXICAL_THRESHOLD)
    profiles = [profile(t, vectors[i] if vectors is not None else None) for i, t in enumerate(texts)]
    df = Counter(w for p in profiles for w in p.words)
    idf = {w: math.log(1 + len(profiles) / n) for w, n in df.items()}
    clusters: list[_Cluster] = []
    exact: dict[str, _Cluster] = {}
    for i, p in enumerate(profiles):
        key = " ".join(sorted(p.words)) or texts[i].strip().lower()
        same = exact.get(key)
        if same is not None:  # identical wording: no need to compare
            same.members.append(i)
            continue
        best, best_score = None, limit
        for c in clusters:
            compared = c.members[:MAX_COMPARED]
            score = sum(similarity(p, profiles[j], idf) for j in compared) / len(compared)
            if score >= best_score:
                best, best_score = c, score
        if best is None:
            best = _Cluster()
            clusters.append(best)
        best.members.append(i)
        exact[key] = best
    return [c.members for c in clusters]


def cluster_gaps(gaps: Sequence[GapRecord], vectors: Sequence[Sequence[float]] | None = None, *,
                 threshold: float | None = None) -> list[dict[str, Any]]:
    """The response of ``GET gaps``: clusters, most frequent first (ties: most recent first)."""
    ordered = sorted(range(len(gaps)), key=lambda i: (gaps[i].created_at, gaps[i].id))
    texts = [gaps[i].question for i in ordered]
    vecs = [vectors[i] for i in ordered] if vectors is not None else None
    out: list[tuple[int, float, dict[str, Any]]] = []
    for members in cluster_indices(texts, vecs, threshold=threshold):
        items = [gaps[ordered[m]] for m in members]
        phrasing = Counter(" ".join(g.question.split()) for g in items)
        representative = max(phrasing, key=lambda q: (phrasing[q], -len(q)))
        examples = list(dict.fromkeys(" ".join(g.question.split()) for g in reversed(items)))[:MAX_EXAMPLES]
        topics = Counter(g.topic for g in items if g.topic)
        last_seen = max(g.created_at for g in items)
        out.append((len(items), last_seen, {
            "representative": representative,
            "count": len(items),
            "firstSeen": min(g.created_at for g in items),
            "lastSeen": last_seen,
            "examples": examples,
            "outcomes": dict(sorted(Counter(g.outcome for g in items).items())),
            "topic": topics.most_common(1)[0][0] if topics else None,
            "audiences": sorted({g.audience for g in items}),
        }))
    out.sort(key=lambda t: (-t[0], -t[1]))
    return [c for *_, c in out]


# -- recording ------------------------------------------------------------------------------


def outcome_of(response: Mapping[str, Any]) -> str | None:
    """How a retrieval response ended without an answer, or None when it answered."""
    if not response.get("excerpts"):
        return "nothing_found"
    gate = response.get("gate")
    if isinstance(gate, Mapping) and gate.get("passed") is False:
        return "gated"
    if float(response.get("confidence") or 0.0) < float(response.get("floor") or 0.0):
        return "below_floor"
    return None


def new_gap(bot: str, audience: str, question: str, outcome: str, topic: str | None, now: float, *,
            retention_seconds: float = GAP_RETENTION_SECONDS) -> GapRecord:
    """A gap record; the question is redacted here, so nothing unredacted is ever stored."""
    if outcome not in GAP_OUTCOMES:
        raise ValueError(f"unknown gap outcome {outcome!r}")
    from .redact import redact  # phonenumbers and stdnum load on the first gap, not at start-up

    # a question is its asker's own message: read as a customer's (every amount in it is the
    # asker's or their customer's, unless a policy word makes it a general figure)
    text = " ".join(redact(question, speaker="customer").text.split())[:1000]
    gap_id = f"{int(now * 1000):012x}{secrets.token_hex(8)}"
    return GapRecord(id=gap_id, bot=bot, audience=audience, question=text, outcome=outcome, topic=topic,
                     created_at=now, expires_at=now + retention_seconds)


def retention_of(settings: Mapping[str, Any] | None) -> float:
    """A bot's gap retention (``{"gapRetentionDays": N}``, 1-365), 90 days by default."""
    days = (settings or {}).get("gapRetentionDays")
    if isinstance(days, int) and not isinstance(days, bool) and 1 <= days <= 365:
        return days * 24 * 3600.0
    return float(GAP_RETENTION_SECONDS)
