"""Pure ranking functions: fusion, weighting, tie-breaks, collapse, excerpt windows.

No I/O here; every function is tested against a small reference computation.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ..model import Hit, Passage, PassageRef

RRF_K = 60


@dataclass
class Candidate:
    ref: PassageRef
    score: float
    reason: str
    signals: dict[str, float | int | None] = field(default_factory=dict)
    recent: bool = False
    hits: list[Hit] = field(default_factory=list)

    @property
    def passage(self) -> Passage | None:
        """The stored passage, once any of the lists' hits was hydrated."""
        for hit in self.hits:
            if hit.passage is not None:
                return hit.passage
        return None


def rrf(rank: int, k: int = RRF_K) -> float:
    """Reciprocal rank fusion contribution of a 1-based rank."""
    return 1.0 / (k + rank)


def fuse(lists: Mapping[str, Sequence[Hit]], *, k: int = RRF_K) -> list[Candidate]:
    """Combine ranked lists by passage id.

    With one list (lexical only) the score is the list's own score times the passage
    weight — BM25 x source weight. With several, reciprocal rank fusion (sum of
    1/(k + rank) over the lists that found the passage) times the weight: ranks are
    comparable across lists where raw scores are not."""
    by_id: dict[int, Candidate] = {}
    present = [name for name, hits in lists.items() if hits]
    for name, hits in lists.items():
        for hit in hits:
            cand = by_id.get(hit.ref.key)
            if cand is None:
                cand = Candidate(ref=hit.ref, score=0.0, reason=name,
                                 signals={"lexicalRank": None, "semanticRank": None, "rrf": 0.0})
                by_id[hit.ref.key] = cand
            cand.hits.append(hit)
            cand.signals[f"{name}Rank"] = hit.rank
            cand.signals[f"{name}Score"] = round(hit.score, 6)
            cand.signals["rrf"] = float(cand.signals["rrf"] or 0.0) + rrf(hit.rank, k)
    single = len(present) <= 1
    for cand in by_id.values():
        weight = cand.ref.weight
        cand.signals["weight"] = weight
        found_by = [n for n in lists if cand.signals.get(f"{n}Rank") is not None]
        cand.reason = "hybrid" if len(found_by) > 1 else found_by[0]
        if single:
            cand.score = float(cand.signals[f"{found_by[0]}Score"] or 0.0) * weight
        else:
            cand.score = float(cand.signals["rrf"] or 0.0) * weight
        cand.signals["rrf"] = round(float(cand.signals["rrf"] or 0.0), 6)
    return list(by_id.values())


def order(
    cands: list[Candidate], *, priorities: Mapping[int, int], now: float, recency_seconds: float
) -> list[Candidate]:
    """Best first: score, then source priority, then recently indexed (tie-breaks only).
    ``priorities`` maps a source key (``key64(source id)``) to the source's priority."""
    for cand in cands:
        cand.recent = (now - cand.ref.indexed_at) <= recency_seconds
    return sorted(
        cands,
        key=lambda c: (
            -round(c.score, 9),
            -priorities.get(c.ref.source_key, 0),
            0 if c.recent else 1,
            c.ref.key,
        ),
    )


def collapse(cands: Sequence[Candidate]) -> list[Candidate]:
    """Drop a passage when a better-ranked *kept* passage of the same document is its
    neighbour (ordinal +-1): overlapping neighbours repeat each other, while a distant
    part of the same page is a separate excerpt."""
    kept: list[Candidate] = []
    taken: dict[int, set[int]] = {}
    for cand in cands:
        ords = taken.setdefault(cand.ref.doc_key, set())
        o = cand.ref.ordinal
        if (o - 1) in ords or (o + 1) in ords or o in ords:
            continue
        ords.add(o)
        kept.append(cand)
    return kept


def term_pattern(terms: Sequence[str]) -> re.Pattern[str] | None:
    """One case-insensitive pattern matching words that start with any analysed query term
    (stems are word prefixes in the common case), for locating matches in stored text."""
    alts = sorted({re.escape(t) for t in terms if t}, key=len, reverse=True)
    if not alts:
        return None
    return re.compile(r"\b(" + "|".join(alts) + r")\w*", re.IGNORECASE)


def excerpt(passage: Passage, pattern: re.Pattern[str] | None, max_chars: int) -> str:
    """Breadcrumb plus the best-matching window of the passage body, at most ``max_chars``.

    The window is the one that holds the most distinct query terms; it starts at the line
    or sentence holding its first match when that start is close by."""
    crumb = passage.breadcrumb
    text = passage.text
    body = text[len(crumb):].lstrip("\n") if crumb and text.startswith(crumb) else text
    head = f"{crumb}\n\n" if crumb else ""
    budget = max_chars - len(head)
    if budget <= 0:
        return head[:max_chars]
    if len(body) <= budget:
        return head + body
    room = budget - 2  # an ellipsis on each side at most
    matches = [(m.start(), m.group(1).lower()) for m in pattern.finditer(body)] if pattern else []
    start, best = 0, -1
    for i, (pos, _) in enumerate(matches):
        distinct = {term for p, term in matches[i:] if p < pos + room}
        if len(distinct) > best:
            start, best = pos, len(distinct)
    if start:
        floor = max(0, start - 160)
        cut = max(body.rfind("\n", floor, start), body.rfind(". ", floor, start))
        start = cut + 1 if cut >= 0 else start
        start = max(0, min(start, len(body) - room))
        while start < len(body) and body[start] in " \n":
            start += 1
    prefix = "…" if start > 0 else ""
    window = body[start : start + room]
    if start + room < len(body):
        cut = window.rfind(" ", 0, room)
        window = (window[:cut] if cut > room // 2 else window) + "…"
    return head + prefix + window


def coverage(query_terms: Sequence[str], found_terms: set[str], idf: Mapping[str, float | None]) -> float:
    """How well the passage covers the question, in [0, 1].

    ``idf`` maps each analysed query term to its IDF in the asker's partition, or None when
    no passage of the partition contains it. The IDF-weighted share of the known terms that
    the passage contains is scaled by the square root of the share of the question's terms
    the corpus knows at all, so a question mostly about things the corpus never mentions
    cannot look confident on the strength of one shared word."""
    distinct = list(dict.fromkeys(query_terms))
    if not distinct:
        return 0.0
    known = [t for t in distinct if idf.get(t) is not None]
    total = sum(float(idf[t] or 0.0) for t in known)
    if total <= 0:
        return 0.0
    hit = sum(float(idf[t] or 0.0) for t in known if t in found_terms)
    share_known = len(known) / len(distinct)
    return max(0.0, min(1.0, (hit / total) * math.sqrt(share_known)))
