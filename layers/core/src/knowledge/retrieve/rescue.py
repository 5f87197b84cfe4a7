"""Corpus-learned rescue: one extra passage for a question asked in other words.

Lexical retrieval (BM25) cannot connect "how do I take my monero out" to a page that only
ever says "withdraw". This module builds a second, small index from the bot's own corpus —
no model, no network, numpy only — that learns which terms turn up in the same passages,
and lets retrieval append at most one passage that word matching ranked too low.

How it is built (``RescueModel.build``)
    * Input: every passage of the bot, of *both* audiences, as ``(key, visibility, text)``,
      and the lexical index's analyser (stems, stop-words removed). Learning from the whole
      corpus teaches more vocabulary than either half alone; audience filtering happens when
      answering, never when learning.
    * Vocabulary: a term is usable when it occurs in at least ``MIN_DF`` passages and in at
      most ``MAX_DF_SHARE`` of them. Very common terms carry no signal about which page
      answers a question and would only pull every passage towards every other one; terms
      seen once cannot show that they co-occur with anything.
    * Off switch: with fewer than ``MIN_PASSAGES`` passages or ``MIN_TERMS`` usable terms
      there is too little evidence; the model is built disabled and never rescues.
    * Space: a TF-IDF term x passage matrix (sublinear tf ``1 + ln tf``, ``idf = ln(N/df)``,
      each passage column L2-normalised), kept sparse (``linalg.SparseMatrix``; no scipy), is
      reduced by a randomized truncated SVD (range finder with one power iteration,
      Halko/Martinsson/Tropp) to ``k = min(dims, terms, passages // 8)`` dimensions. The
      cap by corpus size matters: 128 dimensions over a few hundred passages nearly
      reproduce the matrix itself, so terms only sit near the passages that contain them
      and nothing is bridged (measured: a taught synonym scored 0.09 at 128 dimensions over
      240 passages, 0.70 at 30). The sparse products are done in bounded row chunks
      (``linalg.SparseMatrix``: rows padded within power-of-two length buckets, one batched
      product per chunk), so memory stays near ``nnz + (terms + passages) * (k +
      oversampling)`` floats.
      A passage's vector is its projection onto the term subspace (``S v_j``); a term's
      vector is its row of ``U`` times its idf. A question is folded in as the weighted sum
      of the vectors of its usable terms. Everything is L2-normalised; similarity is cosine.

How it answers (``RescueModel.rescue``)
    * Nothing when word matching found nothing (``lexical_keys`` empty): the rescue can add
      to evidence, never invent it.
    * Nothing when the question has no usable term.
    * At most one passage: the most similar one whose similarity is at least
      ``SIMILARITY_FLOOR``, that is not among the first ``top`` lexical keys, and that the
      caller's ``allowed(key)`` accepts (audience, live generation...). A passage the lexical
      list holds below rank ``top`` may be returned; the caller appends it only when it is
      not already among the excerpts. Ties are broken by the smaller key: deterministic.
    * The returned score is the cosine similarity; the caller keeps its own lexical score
      for the appended passage and never reorders or evicts for it.

``SIMILARITY_FLOOR`` = 0.6. Measured on NFCorpus (3,162 medical abstracts, 323 queries,
BM25 top 50 as the lexical list), the best passage outside the lexical top five was
relevant 10% of the time when its similarity was below 0.5, 20% between 0.5 and 0.6, and
about 55% from 0.6 up. One appended passage that is wrong more often than right is noise for
the agent; 0.6 is where it starts being right more often than not. (Vocabulary-mismatch
questions on support documentation, the case this exists for, score well above it.)

Large corpora: above ``_EXACT_SCAN_MAX`` passages a question does not scan every passage.
At build time each usable term keeps the ``_TERM_LIST`` passages nearest its own direction,
best first, with their scores against the term's vector. A question is a weighted sum of
its terms, so the passage nearest the question is almost always among the nearest of one of
its terms: measured on NFCorpus questions over 100k passages, 166 of 170 agree with the
exact scan (``bench/lexical.py`` prints the figure each run). The lists are read best first
only as deep as a passage not yet read could still reach the floor (the weighted sum of the
lists' scores at that depth bounds it), so a question gathers a few dozen passage rows
instead of a few hundred, and when the depth is reached before the lists end, what is found
is exactly what a scan of every passage finds. When every passage above the floor in the
pool is refused (audience, top five) and the bound leaves room, the other passages are
scanned exactly, so an asker whose half of the corpus is not in the pool still gets its
answer. The lists cost one pass of ``terms x passages`` products when the model is learned
(chunked; about 10 s at 100k).

Serialisation (``to_bytes`` / ``from_bytes``) is a numpy ``.npz`` of plain arrays, loaded
with ``allow_pickle=False``; a damaged blob raises ``BackendError``.
"""

from __future__ import annotations

import array
import io
import itertools
import math
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from ..errors import BackendError
from ..settings import RESCUE_FORMAT
from .linalg import F32, I64, SparseMatrix, nearest, normalise_rows, randomized_svd

SIMILARITY_FLOOR: float = 0.6
MAX_DF_SHARE = 0.18
MIN_DF = 2
MIN_PASSAGES = 50
MIN_TERMS = 100

_FORMAT_VERSION = RESCUE_FORMAT  # 4: sorted lists with scores (3: unsorted, 2: coarse lists, 1: sign sketches)
_OVERSAMPLE = 16
_PASSAGES_PER_DIM = 8  # a small corpus gets a smaller space (see the module docstring)
_POWER_ITERATIONS = 1
_CHUNK_CELLS = 1 << 16  # padded non-zeros per chunk of a sparse product (x ~150 floats: ~40 MB)
_FIRST_CANDIDATES = 32
_BOUND_MARGIN = 1e-4  # float32 sums on both sides of a bound: far above their rounding, far below a floor
_EXACT_SCAN_MAX = 16_384  # above this many passages a question scores its terms' lists only
_TERM_LIST = 128  # passages kept per term (measured: 32 -> 158/167 agree, 128 -> 166/167)
_TERM_BLOCK_CELLS = 1 << 25  # term x passage similarities per block when learning the lists (128 MB)
_MEMO_WORDS = 2_000_000  # distinct words whose analysis is remembered while learning (then: analysed each time)


def _valid_term_lists(lists: npt.NDArray[Any], scores: npt.NDArray[Any], n_terms: int, n: int) -> bool:
    return (
        lists.ndim == 2
        and lists.shape[0] == n_terms
        and 1 <= lists.shape[1] <= n
        and scores.shape == lists.shape
        and (lists.size == 0 or (int(lists.min()) >= 0 and int(lists.max()) < n))
        and bool(np.isfinite(scores).all())
        and bool((np.diff(scores, axis=1) <= 0).all())  # best first: the probe's bound relies on it
    )


class _WordTerms(dict[str, tuple[int, ...]]):
    """Whitespace-separated word -> the ids of its analysed terms, filled on first sight
    (new terms get the next id of ``vocab``)."""

    def __init__(self, analyze: Callable[[str], list[str]], vocab: dict[str, int]) -> None:
        super().__init__()
        self._analyze = analyze
        self._vocab = vocab

    def __missing__(self, word: str) -> tuple[int, ...]:
        vocab = self._vocab
        ids = tuple(vocab.setdefault(term, len(vocab)) for term in self._analyze(word))
        if len(self) < _MEMO_WORDS:  # bounded: a corpus of IDs and URLs has no end of distinct words
            self[word] = ids
        return ids


class Probe(NamedTuple):
    """A question folded into a model and scored against its candidate passages."""

    q: F32  # the question's unit vector
    pool: npt.NDArray[Any] | None  # positions scored, a position possibly twice (None: every passage)
    sims: F32  # their cosine similarities
    rows: tuple[int, ...] = ()  # the question's usable terms (rows of the term vectors)
    weights: F32 | None = None  # their weights in the question vector
    scale: float = 1.0  # the norm the weighted sum of term vectors was divided by
    bound: float = math.inf  # no passage outside the pool scores above this
    floor: float = SIMILARITY_FLOOR  # the similarity the pool was cut for


class RescueModel:
    """The co-occurrence space of one bot's corpus. Build with :meth:`build`."""

    def __init__(
        self,
        *,
        enabled: bool,
        n_passages: int,
        n_terms: int,
        keys: I64,
        vis_codes: npt.NDArray[np.int32],
        vis_names: Sequence[str],
        terms: Sequence[str],
        term_vectors: F32,
        passage_vectors: F32,
        term_lists: npt.NDArray[np.int32] | None = None,
        term_scores: F32 | None = None,
    ) -> None:
        """``term_lists`` and ``term_scores`` are a large model's per-term passage lists and
        their scores as ``to_bytes`` stores them; a large model without them learns them here."""
        self._term_lists: npt.NDArray[np.int32] | None = None
        self._term_scores: F32 | None = None
        n, dims = passage_vectors.shape
        if n > _EXACT_SCAN_MAX and dims > 0:
            if (term_lists is not None and term_scores is not None
                    and _valid_term_lists(term_lists, term_scores, term_vectors.shape[0], n)):
                self._term_lists, self._term_scores = term_lists, term_scores
            else:
                self._term_lists, self._term_scores = nearest(passage_vectors, term_vectors, _TERM_LIST,
                                                              block_cells=_TERM_BLOCK_CELLS)
        self.enabled = enabled
        self._n_passages = n_passages
        self._n_terms = n_terms
        self._keys = keys
        self._vis_codes = vis_codes
        self._vis_names = list(vis_names)
        self._terms = list(terms)
        self._term_index = {t: i for i, t in enumerate(self._terms)}
        self._dims = term_vectors.shape[1] if term_vectors.ndim == 2 else 0
        # a term's vector and its list scores side by side: a question reads both (see _fold)
        self._term_block: F32 = (
            term_vectors if self._term_scores is None else np.concatenate([term_vectors, self._term_scores], axis=1)
        )
        self._term_vectors = self._term_block[:, : self._dims]
        if self._term_scores is not None:
            self._term_scores = self._term_block[:, self._dims :]
        self._passage_vectors = passage_vectors
        self._key_order = np.argsort(keys, kind="stable")
        self._sorted_keys = keys[self._key_order]
        self._all_positions: I64 | None = None
        self._ones = np.ones(max(1, len(self._terms)), dtype=np.float32)  # weights of distinct terms

    # -- building ------------------------------------------------------------------------

    @classmethod
    def _disabled(cls, n_passages: int, n_terms: int) -> RescueModel:
        return cls(
            enabled=False,
            n_passages=n_passages,
            n_terms=n_terms,
            keys=np.zeros(0, dtype=np.int64),
            vis_codes=np.zeros(0, dtype=np.int32),
            vis_names=[],
            terms=[],
            term_vectors=np.zeros((0, 0), dtype=np.float32),
            passage_vectors=np.zeros((0, 0), dtype=np.float32),
        )

    @classmethod
    def build(
        cls,
        passages: Iterable[tuple[int, str, str]],
        analyze: Callable[[str], list[str]],
        *,
        dims: int = 128,
        seed: int = 0,
    ) -> RescueModel:
        """Learn the space from every passage of the bot (both audiences).

        ``passages`` yields ``(key, visibility, text)``; keys must be distinct signed 64-bit
        integers. ``analyze`` is the lexical index's analyser, so that question terms
        analysed the same way land on the same vocabulary. Raises ``ValueError`` on a
        duplicate key or ``dims < 1``.

        Each distinct whitespace-separated word is analysed once (a corpus of 100k passages
        has some 20 million words, a few hundred thousand distinct ones). That is exact for
        analysers whose tokens never span whitespace and whose filters act on one token at
        a time — lower-casing, stop words, stemming — as tantivy's simple tokenizer and the
        standard tokenizer of OpenSearch's English analyser both are.
        """
        if dims < 1:
            raise ValueError("dims must be at least 1")
        vocab: dict[str, int] = {}  # term -> id, in first-seen order
        word_terms = _WordTerms(analyze, vocab).__getitem__
        chain = itertools.chain.from_iterable
        vis_index: dict[str, int] = {}
        keys: list[int] = []
        vis_codes: list[int] = []
        lengths = array.array("q")  # distinct terms per passage
        pair_terms = array.array("q")  # per passage, its distinct term ids ...
        pair_tfs = array.array("q")  # ... and how often each occurs
        for key, visibility, text in passages:
            keys.append(key)
            vis_codes.append(vis_index.setdefault(visibility, len(vis_index)))
            counts = Counter(chain(map(word_terms, text.split())))
            pair_terms.extend(counts.keys())
            pair_tfs.extend(counts.values())
            lengths.append(len(counts))
        n = len(keys)
        try:
            key_arr = np.asarray(keys, dtype=np.int64)
        except OverflowError as exc:
            raise ValueError("passage keys must fit a signed 64-bit integer") from exc
        if np.unique(key_arr).size != n:
            raise ValueError("passage keys must be distinct")
        if n == 0:
            return cls._disabled(0, 0)

        cols = np.repeat(np.arange(n, dtype=np.int64), np.frombuffer(lengths, dtype=np.int64))
        term_ids = np.frombuffer(pair_terms, dtype=np.int64)
        tfs = np.frombuffer(pair_tfs, dtype=np.int64)
        id_space = len(vocab)

        df = np.bincount(term_ids, minlength=id_space)
        usable = (df >= MIN_DF) & (df <= MAX_DF_SHARE * n)
        n_terms = int(np.count_nonzero(usable))
        if n < MIN_PASSAGES or n_terms < MIN_TERMS:
            return cls._disabled(n, n_terms)

        remap = np.full(id_space, -1, dtype=np.int64)
        remap[usable] = np.arange(n_terms, dtype=np.int64)
        keep = usable[term_ids]
        rows = remap[term_ids[keep]]
        cols = cols[keep]
        idf = np.log(n / df[usable]).astype(np.float32)
        weights = ((1.0 + np.log(tfs[keep])).astype(np.float32)) * idf[rows]
        col_norm = np.sqrt(np.bincount(cols, weights=weights.astype(np.float64) ** 2, minlength=n))
        col_norm[col_norm == 0] = 1.0
        weights = (weights / col_norm[cols]).astype(np.float32)
        del term_ids, tfs, keep, pair_terms, pair_tfs

        a = SparseMatrix(rows, cols, weights, (n_terms, n), chunk_cells=_CHUNK_CELLS)
        at = SparseMatrix(cols, rows, weights, (n, n_terms), chunk_cells=_CHUNK_CELLS)
        del rows, cols, weights
        u, vs = randomized_svd(a, at, min(dims, n_terms, max(1, n // _PASSAGES_PER_DIM)), seed,
                               oversample=_OVERSAMPLE, power_iterations=_POWER_ITERATIONS)
        del a, at

        term_vectors = (u * idf[:, None]).astype(np.float32)
        passage_vectors = normalise_rows(vs)
        kept_terms = [t for t, i in vocab.items() if usable[i]]  # in id order
        names = list(vis_index)
        return cls(
            enabled=True,
            n_passages=n,
            n_terms=n_terms,
            keys=key_arr,
            vis_codes=np.asarray(vis_codes, dtype=np.int32),
            vis_names=names,
            terms=kept_terms,
            term_vectors=term_vectors,
            passage_vectors=passage_vectors,
        )

    # -- answering -----------------------------------------------------------------------

    def _fold(self, query_terms: Sequence[str]) -> tuple[F32, list[int], F32, float, F32] | None:
        """The question's unit vector (its usable terms' vectors weighted by ``1 + ln tf``),
        those terms' rows, their weights, the norm the sum was divided by, and the same sum
        over the terms' list scores (empty without lists). One row of ``_term_block`` holds a
        term's vector and its list scores, so one gather and one product give both; a single
        term needs neither. Few numpy calls: each costs microseconds, and more when the rest
        of a question's work has cooled the caches."""
        index = self._term_index
        found = [i for i in map(index.get, query_terms) if i is not None]
        if not found:
            return None
        if len(found) == 1:
            rows = found
            weights = self._ones[:1]
            summed = self._term_block[found[0]]  # a view: weight 1
        else:
            if len(set(found)) == len(found):
                rows = sorted(found)
                weights = self._ones[: len(rows)]
            else:
                counts = Counter(found)
                rows = sorted(counts)
                weights = np.array([1.0 + math.log(counts[i]) for i in rows], dtype=np.float32)
            summed = weights @ self._term_block[rows]
        q = summed[: self._dims]
        norm = math.sqrt(float(q @ q))
        if not math.isfinite(norm) or norm == 0.0:
            return None
        return q / np.float32(norm), rows, weights, norm, summed[self._dims :]

    def rescue(
        self,
        query_terms: Sequence[str],
        lexical_keys: Sequence[int],
        allowed: Callable[[int], bool],
        *,
        top: int = 5,
        floor: float = SIMILARITY_FLOOR,
        exact: bool = False,
    ) -> tuple[int, float] | None:
        """The one passage to append to the lexical results, as ``(key, similarity)``, or None.

        ``query_terms`` are the question analysed by the same analyser as the corpus;
        ``lexical_keys`` the lexical ranking, best first; ``allowed(key)`` says whether the
        asker may see a passage (audience, live generation, ...). ``exact`` scans every
        passage even in a large model (to measure what the term lists miss). The same as
        :meth:`pick` over :meth:`probe`, which a caller may run apart (the probe needs only
        the question, so it can run while the lexical search does).
        """
        if not self.enabled or not lexical_keys:
            return None
        return self.pick(self.probe(query_terms, exact=exact, floor=floor), lexical_keys, allowed, top=top)

    def probe(self, query_terms: Sequence[str], *, exact: bool = False,
              floor: float = SIMILARITY_FLOOR) -> Probe | None:
        """The question's similarities to the passages it may be rescued with (every passage
        in a small model, or ``exact``), and a bound on every other passage's. None when the
        model is off or the question has no usable term.

        In a large model the candidates come from the question's terms' lists, read best
        first. A passage not among the first ``d`` entries of any of the lists scores at most
        the weighted sum of the lists' ``d``-th scores (the lists are sorted, and a passage
        in none of them scores below each list's last), so the lists are read only up to the
        first depth where that sum falls below ``floor``: every passage that can reach the
        floor is then among those read, and usually far fewer rows are gathered than the
        whole lists hold (each row is a cache miss in a large matrix)."""
        if not self.enabled:
            return None
        folded = self._fold(query_terms)
        if folded is None:
            return None
        q, rows, weights, norm, tau = folded
        if self._term_lists is None or exact:
            return Probe(q, None, self._passage_vectors @ q, tuple(rows), weights, norm, floor=floor)
        # tau[d] / norm bounds every passage not among the first d entries of any list
        below = tau < (floor - _BOUND_MARGIN) * norm
        depth = int(below.argmax())
        whole = not below[depth]  # the lists never fall below the floor: read them whole
        if whole:
            depth = tau.size - 1
        bound = float(tau[depth]) / norm + _BOUND_MARGIN
        if len(rows) == 1:
            pool = self._term_lists[rows[0]] if whole else self._term_lists[rows[0], :depth]  # views
        else:
            pool = (self._term_lists[rows] if whole else self._term_lists[rows, :depth]).ravel()
        return Probe(q, pool, self._passage_vectors[pool] @ q, tuple(rows), weights, norm, bound, floor)

    def pick(
        self,
        probe: Probe | None,
        lexical_keys: Sequence[int],
        allowed: Callable[[int], bool],
        *,
        top: int = 5,
        floor: float | None = None,
    ) -> tuple[int, float] | None:
        """The passage :meth:`rescue` returns, from a :meth:`probe` of the question, at the
        probe's floor unless a higher one is given."""
        if probe is None or not lexical_keys:
            return None
        floor = probe.floor if floor is None else floor
        if floor < probe.floor:
            raise ValueError("a probe cut at a floor cannot pick below it")
        excluded = {int(k) for k in list(lexical_keys)[: max(top, 0)]}
        above = np.flatnonzero(probe.sims >= floor)
        if probe.pool is None:
            return self._pick(self._everything(), probe.sims, above, excluded, allowed)
        # the pool was scored exactly; only when it holds passages above the floor that were
        # all refused (audience, top five) and something outside it might reach the floor
        # does the full scan run; a pool with nothing above the floor ends the search
        if above.size == 0:
            return None
        found = self._pick(probe.pool, probe.sims, above, excluded, allowed)
        if found is not None or probe.bound < floor:
            return found
        sims = self._passage_vectors @ probe.q
        sims[probe.pool] = -np.inf  # the pool's passages were examined (cheaper than np.isin)
        return self._pick(self._everything(), sims, np.flatnonzero(sims >= floor), excluded, allowed)

    def _everything(self) -> I64:
        """Every passage position (built on first need: most questions never scan them all)."""
        if self._all_positions is None:
            self._all_positions = np.arange(self._keys.size)
        return self._all_positions

    def _pick(
        self, idx: npt.NDArray[Any], sims: F32, above: I64, excluded: set[int], allowed: Callable[[int], bool]
    ) -> tuple[int, float] | None:
        """The best acceptable passage among ``above`` (indexes into positions ``idx`` and
        their similarities ``sims``, all at least the floor), in order of similarity then key.
        A position listed twice is examined once."""
        if above.size == 0:
            return None
        batches = [above]
        if above.size > _FIRST_CANDIDATES:
            # sort only the best few (ties at the cut all kept), the rest only if needed
            nth = above.size - _FIRST_CANDIDATES
            cut = np.partition(sims[above], nth)[nth]
            best = sims[above] >= cut
            batches = [above[best], above[~best]]
        seen: set[int] = set()
        for batch in batches:
            for neg, key in sorted(zip((-sims[batch]).tolist(), self._keys[idx[batch]].tolist(), strict=True)):
                if key in seen:
                    continue
                seen.add(key)
                if key in excluded or not allowed(key):
                    continue
                return key, -neg
        return None

    def visibility(self, key: int) -> str | None:
        """The visibility the passage had when the model was built (None if unknown)."""
        pos = int(np.searchsorted(self._sorted_keys, key))
        if pos >= self._sorted_keys.size or int(self._sorted_keys[pos]) != key:
            return None
        return self._vis_names[int(self._vis_codes[self._key_order[pos]])]

    @property
    def stats(self) -> dict[str, int]:
        return {
            "passages": self._n_passages,
            "terms": self._n_terms,
            "dims": int(self._passage_vectors.shape[1]) if self.enabled else 0,
        }

    # -- serialisation -------------------------------------------------------------------

    def to_bytes(self) -> bytes:
        term_bytes, term_offsets = _pack_strings(self._terms)
        vis_bytes, vis_offsets = _pack_strings(self._vis_names)
        buf = io.BytesIO()
        np.savez(
            buf,
            header=np.asarray([_FORMAT_VERSION, int(self.enabled), self._n_passages, self._n_terms], dtype=np.int64),
            keys=self._keys,
            vis_codes=self._vis_codes,
            vis_bytes=vis_bytes,
            vis_offsets=vis_offsets,
            term_bytes=term_bytes,
            term_offsets=term_offsets,
            term_vectors=self._term_vectors,
            passage_vectors=self._passage_vectors,
            term_lists=self._term_lists if self._term_lists is not None else np.zeros((0, 0), dtype=np.int32),
            term_scores=self._term_scores if self._term_scores is not None else np.zeros((0, 0), dtype=np.float32),
        )
        return buf.getvalue()

    @classmethod
    def from_bytes(cls, data: bytes) -> RescueModel:
        """Load a model written by :meth:`to_bytes`; ``BackendError`` if the blob is damaged."""
        try:
            with np.load(io.BytesIO(data), allow_pickle=False) as z:
                arrays: dict[str, Any] = {name: z[name] for name in z.files}
            header = arrays["header"]
            if header.shape != (4,) or int(header[0]) != _FORMAT_VERSION:
                raise ValueError("unknown rescue model format")
            enabled, n_passages, n_terms = bool(header[1]), int(header[2]), int(header[3])
            keys = arrays["keys"].astype(np.int64, copy=False)
            vis_codes = arrays["vis_codes"].astype(np.int32, copy=False)
            vis_names = _unpack_strings(arrays["vis_bytes"], arrays["vis_offsets"])
            terms = _unpack_strings(arrays["term_bytes"], arrays["term_offsets"])
            tv = arrays["term_vectors"].astype(np.float32, copy=False)
            pv = arrays["passage_vectors"].astype(np.float32, copy=False)
            term_lists = arrays["term_lists"].astype(np.int32, copy=False)
            term_scores = arrays["term_scores"].astype(np.float32, copy=False)
            consistent = (
                keys.ndim == 1
                and vis_codes.shape == keys.shape
                and tv.ndim == 2
                and pv.ndim == 2
                and tv.shape[0] == len(terms)
                and pv.shape[0] == keys.size
                and (not enabled or (tv.shape[1] == pv.shape[1] and len(terms) == n_terms and keys.size == n_passages))
                and (vis_codes.size == 0 or (int(vis_codes.min()) >= 0 and int(vis_codes.max()) < len(vis_names)))
            )
            if not consistent:
                raise ValueError("inconsistent rescue model arrays")
        except BackendError:
            raise
        except Exception as exc:  # any damage in the blob: numpy/zip/key/value errors
            raise BackendError(f"unreadable rescue model: {exc}") from exc
        return cls(
            enabled=enabled,
            n_passages=n_passages,
            n_terms=n_terms,
            keys=keys,
            vis_codes=vis_codes,
            vis_names=vis_names,
            terms=terms,
            term_vectors=tv,
            passage_vectors=pv,
            term_lists=term_lists,
            term_scores=term_scores,
        )


def _pack_strings(values: Sequence[str]) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.int64]]:
    encoded = [v.encode("utf-8") for v in values]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    if encoded:
        np.cumsum([len(e) for e in encoded], out=offsets[1:])
    return np.frombuffer(b"".join(encoded), dtype=np.uint8).copy(), offsets


def _unpack_strings(blob: npt.NDArray[Any], offsets: npt.NDArray[Any]) -> list[str]:
    raw = blob.astype(np.uint8, copy=False).tobytes()
    off = offsets.astype(np.int64, copy=False)
    if off.ndim != 1 or off.size == 0 or off[0] != 0 or off[-1] != len(raw) or np.any(np.diff(off) < 0):
        raise ValueError("bad string table")
    return [raw[int(off[i]) : int(off[i + 1])].decode("utf-8") for i in range(off.size - 1)]
