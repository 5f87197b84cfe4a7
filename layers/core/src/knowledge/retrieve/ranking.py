"""Pure ranking functions: fusion, weighting, tie-breaks, collapse, excerpt windows.

No I/O here; every function is tested against a small reference computation.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace

from .. import analysis
from ..model import Hit, Passage, PassageRef

RRF_K = 60
#: scores equal to 1e-9 tie, and the tie-breaks decide (an integer key: round(x * n) is ~4x
#: cheaper than round(x, 9), and fifty are made per question)
SCORE_STEPS = 1e9


@dataclass(slots=True)
class Candidate:
    ref: PassageRef
    score: float = 0.0
    reason: str = ""
    ranks: dict[str, int] = field(default_factory=dict)
    raw: dict[str, float] = field(default_factory=dict)
    rrf: float = 0.0
    recent: bool = False
    hits: list[Hit] = field(default_factory=list)

    @property
    def passage(self) -> Passage | None:
        """The stored passage, once any of the lists' hits was hydrated."""
        for hit in self.hits:
            if hit.passage is not None:
                return hit.passage
        return None

    @property
    def signals(self) -> dict[str, float | int | None]:
        """Which lists found the passage, at which rank, and what the fusion made of it."""
        ranks = self.ranks
        out: dict[str, float | int | None] = {
            "lexicalRank": ranks.get("lexical"), "semanticRank": ranks.get("semantic"), "rrf": round(self.rrf, 6),
            "weight": self.ref.weight,
        }
        for name, value in self.raw.items():
            out[name + "Score"] = round(value, 6)
        return out


def rrf(rank: int, k: int = RRF_K) -> float:
    """Reciprocal rank fusion contribution of a 1-based rank."""
    return 1.0 / (k + rank)


def fuse(lists: Mapping[str, Sequence[Hit]], *, k: int = RRF_K, shares: Mapping[str, float] | None = None,
         limits: Mapping[str, int] | None = None) -> list[Candidate]:
    """Combine ranked lists by passage key.

    With one list (lexical only) the score is the list's own score times the passage
    weight — BM25 x source weight. With several, reciprocal rank fusion (sum of
    1/(k + rank) over the lists that found the passage) times the weight; or, when
    ``shares`` gives each list its share, :func:`blend` times the weight (the reciprocal
    rank sum is kept in the signals either way)."""
    found = [(name, hits) for name, hits in lists.items() if hits]
    if len(found) == 1:
        name, hits = found[0]
        if len({hit.ref.key for hit in hits}) == len(hits):  # the usual case, built directly
            return [
                Candidate(ref=hit.ref, score=hit.score * hit.ref.weight, reason=name, ranks={name: hit.rank},
                          raw={name: hit.score}, rrf=1.0 / (k + hit.rank), hits=[hit])
                for hit in hits
            ]
    by_key: dict[int, Candidate] = {}
    for name, hits in lists.items():
        for hit in hits:
            cand = by_key.get(hit.ref.key)
            if cand is None:
                cand = by_key[hit.ref.key] = Candidate(ref=hit.ref)
            cand.hits.append(hit)
            cand.ranks[name] = hit.rank
            cand.raw[name] = hit.score
            cand.rrf += 1.0 / (k + hit.rank)
    single = sum(1 for hits in lists.values() if hits) <= 1
    blended = blend(lists, shares, limits or {}) if shares and not single else None
    for cand in by_key.values():
        names = list(cand.ranks)
        cand.reason = "hybrid" if len(names) > 1 else names[0]
        if blended is not None:
            cand.raw["blend"] = base = blended[cand.ref.key]
        else:
            base = cand.raw[names[0]] if single else cand.rrf
        cand.score = base * cand.ref.weight
    return list(by_key.values())


def blend(lists: Mapping[str, Sequence[Hit]], shares: Mapping[str, float], limits: Mapping[str, int]
          ) -> dict[int, float]:
    """{passage key: sum over the lists of share x the list's score for it / the list's top
    score}: a score blend, where a much weaker list does not get the equal vote rank fusion
    gives it. A list that did not find a passage gives it the lowest score it holds when it
    is full (``len >= limits[name]``: the passage scored at most that) and 0 when it is not
    (the passage did not match at all). A passage found twice by one list (two vector
    spaces) counts its better score."""
    parts: list[tuple[float, dict[int, float], float]] = []
    for name, hits in lists.items():
        if not hits:
            continue
        best: dict[int, float] = {}
        for hit in hits:
            key = hit.ref.key
            if key not in best or hit.score > best[key]:
                best[key] = hit.score
        top = max(best.values())
        if top <= 0:  # no scale to read the list's scores on: it adds nothing
            parts.append((0.0, dict.fromkeys(best, 0.0), 0.0))
            continue
        norm = {key: score / top for key, score in best.items()}
        floor = min(hit.score for hit in hits) / top if len(hits) >= limits.get(name, len(hits) + 1) else 0.0
        parts.append((shares.get(name, 0.0), norm, floor))
    keys = {key for _, norm, _ in parts for key in norm}
    return {key: sum(share * norm.get(key, floor) for share, norm, floor in parts) for key in keys}


def lift(hits: Sequence[Hit], match: Mapping[int, float], boost: float) -> list[Hit]:
    """A ranked list rescored ``score * (1 + boost * match[key])`` (a passage key missing from
    ``match`` counts 0) and reordered by it (ties keep their order), ranks renumbered from 1:
    new hits, the list given is left as it was."""
    if not boost or not any(match.get(hit.ref.key) for hit in hits):
        return list(hits)
    lifted = [hit.score * (1.0 + boost * match.get(hit.ref.key, 0.0)) for hit in hits]
    keyed = sorted(range(len(hits)), key=lambda i: -lifted[i])
    return [replace(hits[i], score=lifted[i], rank=rank) for rank, i in enumerate(keyed, start=1)]


def order(
    cands: list[Candidate], *, priorities: Mapping[int, int], now: float, recency_seconds: float
) -> list[Candidate]:
    """Best first: score, then source priority, then recently indexed (tie-breaks only).
    ``priorities`` maps a source key (``key64(source id)``) to the source's priority."""
    keyed = []
    for cand in cands:
        ref = cand.ref
        cand.recent = recent = (now - ref.indexed_at) <= recency_seconds
        tie = -priorities.get(ref.source_key, 0)
        keyed.append(((-round(cand.score * SCORE_STEPS), tie, 0 if recent else 1, ref.key), cand))
    keyed.sort(key=lambda kc: kc[0])
    return [cand for _, cand in keyed]


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


def ranked(
    lists: Mapping[str, Sequence[Hit]], *, priorities: Mapping[int, int], now: float, recency_seconds: float,
    k: int = RRF_K, shares: Mapping[str, float] | None = None, limits: Mapping[str, int] | None = None,
) -> Iterator[Candidate]:
    """``collapse(order(fuse(lists), ...))``, best first, built as the caller takes them.

    A question reads about a dozen of the fifty ranked passages. With one list (lexical only,
    the usual case) only sort keys are made for all fifty, and a candidate only for each one
    taken; several lists are fused, ordered and collapsed as those functions do."""
    found = [(name, hits) for name, hits in lists.items() if hits]
    if len(found) != 1 or len({hit.ref.key for hit in found[0][1]}) != len(found[0][1]):
        yield from collapse(order(fuse(lists, k=k, shares=shares, limits=limits), priorities=priorities, now=now,
                                  recency_seconds=recency_seconds))
        return
    name, hits = found[0]
    keyed: list[_Row] = []
    for hit in hits:
        ref = hit.ref
        score = hit.score * ref.weight
        recent = (now - ref.indexed_at) <= recency_seconds
        # the first four fields are unique (the passage key): the rest is never compared
        tie = -priorities.get(ref.source_key, 0)
        keyed.append((-round(score * SCORE_STEPS), tie, 0 if recent else 1, ref.key, score, hit))
    keyed.sort()
    for _, _, not_recent, _, score, hit in _collapsed(keyed):
        yield Candidate(ref=hit.ref, score=score, reason=name, ranks={name: hit.rank}, raw={name: hit.score},
                        rrf=1.0 / (k + hit.rank), recent=not not_recent, hits=[hit])


_Row = tuple[int, int, int, int, float, Hit]  # sort key (score, priority, recency, key), score, hit


def _collapsed(rows: Iterable[_Row]) -> Iterator[_Row]:
    """:func:`collapse` over sort rows that end with their hit."""
    taken: dict[int, set[int]] = {}
    for row in rows:
        ref = row[5].ref
        ords = taken.setdefault(ref.doc_key, set())
        o = ref.ordinal
        if (o - 1) in ords or (o + 1) in ords or o in ords:
            continue
        ords.add(o)
        yield row


def _search_key(term: str) -> str:
    """A prefix every word stemming to ``term`` starts with (Snowball English changes at most
    the stem's last letter: ``warranti`` <- warranty, ``hope`` <- hoping, ``possibl`` <-
    possibility). Short stems ending otherwise are searched whole."""
    return term[:-1] if len(term) > 3 or (len(term) > 1 and term[-1] in "ei") else term


@functools.lru_cache(maxsize=256)
def _lower(text: str) -> str:
    """``text.lower()`` with one character per character (a few, such as "İ", lower-case to
    two: those are kept as they are, so that positions in the result are positions in ``text``).
    Remembered for the last few texts: one question reads each served passage several times
    (the proximity lift, the excerpt window, the confidence's coverage), and lower-casing a
    passage that is not pure ASCII costs more than all of its word searches together."""
    low = text.lower()
    if len(low) == len(text):
        return low
    return "".join(c if len(c.lower()) != 1 else c.lower() for c in text)


def _word_start(text: str, low: str, i: int) -> bool:
    """Whether a word (or a camelCase part of one) starts at ``i``."""
    if i == 0 or not low[i - 1].isalnum():
        return True
    c = text[i]
    if c.isupper():  # fooBar, HTTPServer
        prev = text[i - 1]
        return prev.islower() or prev.isdigit() or (prev.isupper() and i + 1 < len(text) and text[i + 1].islower())
    return False


_RUN = re.compile(r"[^\W_]+")


def _stems_to(text: str, low: str, i: int, term: str) -> bool:
    """Whether the word starting at ``i`` (whole, or its first camelCase part) has stem ``term``."""
    m = _RUN.match(low, i)
    j = m.end() if m is not None else i
    word = low[i:j]
    if word == term or analysis.stem(word) == term:
        return True
    if text[i + 1 : j] == word[1:]:  # no capital inside: no camelCase part to try
        return False
    k = i + 1
    while k < j and not _word_start(text, low, k):
        k += 1
    return k < j and analysis.stem(low[i:k]) == term


def _occurrences(text: str, low: str, term: str) -> Iterator[int]:
    """Where a word whose stem is ``term`` starts in ``text``."""
    key = _search_key(term)
    i = low.find(key)
    while i >= 0:
        if _word_start(text, low, i) and _stems_to(text, low, i, term):
            yield i
        i = low.find(key, i + 1)


def term_positions(text: str, terms: Sequence[str], per_term: int = 64, low: str | None = None
                   ) -> list[tuple[int, str]]:
    """Where each analysed query term occurs as a word of ``text`` — a word whose stem is the
    term, compared by stem (shared with the index's analysis), never by prefix — sorted by
    position. ``str.find`` on a prefix of the stem, then the stem of each word found there:
    an order of magnitude faster than tokenising the whole text. ``low``: ``_lower(text)``
    when the caller has it."""
    low = _lower(text) if low is None else low
    found: list[tuple[int, str]] = []
    for term in dict.fromkeys(terms):
        if not term:
            continue
        for n, i in enumerate(_occurrences(text, low, term)):
            if n >= per_term:
                break
            found.append((i, term))
    found.sort()
    return found


#: how many occurrences of each term :func:`together` compares (the first ones)
NEAR_OCCURRENCES = 32


def together(text: str, terms: Sequence[str], distance: int) -> float:
    """The share of the question's neighbouring term pairs (distinct analysed terms, in the
    question's order) that occur within ``distance`` characters of each other in ``text``, in
    either order: a proximity signal ("credit card" as a phrase, not "card" in one paragraph
    and "credit" in another). 0 when the question has fewer than two distinct terms.

    Each term counts its first :data:`NEAR_OCCURRENCES` occurrences. Found cheaply: every place
    a term's search key appears is listed first (``str.find``), and only places of two terms
    that lie within ``distance`` of each other are checked as words whose stem is the term;
    a term whose key appears more often than that is listed word by word, as the count says."""
    distinct = [t for t in dict.fromkeys(terms) if t]
    if len(distinct) < 2:
        return 0.0
    low = _lower(text)
    places: dict[str, list[int]] = {}
    for term in distinct:
        key, found = _search_key(term), []
        i = low.find(key)
        while i >= 0:
            found.append(i)
            i = low.find(key, i + 1)
        places[term] = found
    checked: dict[tuple[str, int], bool] = {}

    def word(term: str, i: int) -> bool:
        seen = checked.get((term, i))
        if seen is None:
            seen = checked[(term, i)] = _word_start(text, low, i) and _stems_to(text, low, i, term)
        return seen

    near = 0
    for a, b in itertools.pairwise(distinct):
        xs, ys = places[a], places[b]
        if len(xs) > NEAR_OCCURRENCES or len(ys) > NEAR_OCCURRENCES:  # the first ones only
            near += _within(list(itertools.islice(_occurrences(text, low, a), NEAR_OCCURRENCES)),
                            list(itertools.islice(_occurrences(text, low, b), NEAR_OCCURRENCES)), distance)
        elif any(abs(x - y) <= distance and word(a, x) and word(b, y) for x in xs for y in ys):
            near += 1
    return near / (len(distinct) - 1)


def _within(xs: Sequence[int], ys: Sequence[int], distance: int) -> bool:
    """Whether some x of ``xs`` and y of ``ys`` (both sorted) are at most ``distance`` apart."""
    i = j = 0
    while i < len(xs) and j < len(ys):
        if abs(xs[i] - ys[j]) <= distance:
            return True
        if xs[i] < ys[j]:
            i += 1
        else:
            j += 1
    return False


def best_window(matches: Sequence[tuple[int, str]], width: int) -> int:
    """Start of the ``width``-wide window (beginning at a match) holding the most distinct
    terms; 0 when nothing matches. Two pointers over the sorted matches: O(n)."""
    counts: dict[str, int] = {}
    best_start, best, j = 0, 0, 0
    for i, (pos, _) in enumerate(matches):
        while j < len(matches) and matches[j][0] < pos + width:
            term = matches[j][1]
            counts[term] = counts.get(term, 0) + 1
            j += 1
        if len(counts) > best:
            best_start, best = pos, len(counts)
        term = matches[i][1]
        counts[term] -= 1
        if not counts[term]:
            del counts[term]
    return best_start


def _first(text: str, low: str, term: str, key: str) -> int:
    """``next(_occurrences(text, low, term), -1)`` without the generator (``key``:
    ``_search_key(term)``); most finds are a word start whose stem is the term."""
    i = low.find(key)
    while i >= 0:
        if (i == 0 or not low[i - 1].isalnum() or _word_start(text, low, i)) and _stems_to(text, low, i, term):
            return i
        i = low.find(key, i + 1)
    return -1


def window_start(text: str, terms: Sequence[str], width: int, low: str | None = None) -> int:
    """``best_window(term_positions(text, terms), width)``, found cheaply in the usual case.

    The first start that holds the most distinct terms is the first match when every term
    present occurs within ``width`` of it: one window then holds them all, and no later one
    can hold more. That needs each term's first occurrence only, not every one; otherwise
    every match is listed and scanned. ``low``: ``_lower(text)`` when the caller has it."""
    low = _lower(text) if low is None else low
    first = -1
    last = -1
    for term in dict.fromkeys(terms):
        if not term:
            continue
        i = _first(text, low, term, _search_key(term))
        if i < 0:
            continue
        if first < 0 or i < first:
            first = i
        if i > last:
            last = i
    if first < 0:
        return 0
    if last - first < width:
        return first
    return best_window(term_positions(text, terms, low=low), width)


def excerpt(passage: Passage, terms: Sequence[str], max_chars: int) -> str:
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
    # the body ends the text: its lower case is the end of the text's (one per character),
    # which the proximity lift has already made for this passage
    start = window_start(body, terms, room, _lower(text)[len(text) - len(body):])
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
