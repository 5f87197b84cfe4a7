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
      each passage column L2-normalised), kept sparse (CSR arrays built here; no scipy), is
      reduced by a randomized truncated SVD (range finder with one power iteration,
      Halko/Martinsson/Tropp) to ``k = min(dims, terms, passages // 8)`` dimensions. The
      cap by corpus size matters: 128 dimensions over a few hundred passages nearly
      reproduce the matrix itself, so terms only sit near the passages that contain them
      and nothing is bridged (measured: a taught synonym scored 0.09 at 128 dimensions over
      240 passages, 0.70 at 30). The sparse
      products are done in bounded row chunks (gather + ``np.add.reduceat``), so memory
      stays near ``nnz + (terms + passages) * (k + oversampling)`` floats.
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

Large corpora: above ``_EXACT_SCAN_MAX`` passages a question is answered in two stages — a
Hamming scan of 256-bit sign sketches (random hyperplanes, an estimate of the angle) picks
the ~2,000 nearest passages and exact cosine ranks those. That keeps a question at 100k
passages to a few milliseconds instead of a 50 MB scan; it is approximate (on a synthetic
100k corpus it returned the exact answer for 498 of 500 questions).

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
from typing import Any

import numpy as np
import numpy.typing as npt

from ..errors import BackendError

SIMILARITY_FLOOR: float = 0.6
MAX_DF_SHARE = 0.18
MIN_DF = 2
MIN_PASSAGES = 50
MIN_TERMS = 100

_FORMAT_VERSION = 1
_OVERSAMPLE = 16
_PASSAGES_PER_DIM = 8  # a small corpus gets a smaller space (see the module docstring)
_POWER_ITERATIONS = 1
_CHUNK_CELLS = 1 << 16  # padded non-zeros per chunk of a sparse product (x ~150 floats: ~40 MB)
_FIRST_CANDIDATES = 32
_EXACT_SCAN_MAX = 16_384  # above this many passages a query scans the leading dims first
_SKETCH_BITS = 256  # sign bits per passage for the first stage of a large scan
_SKETCH_SEED = 0x5EED
_POOL = 2_048  # passages re-scored exactly after the sketch scan

F32 = npt.NDArray[np.float32]
I64 = npt.NDArray[np.int64]


class _Sparse:
    """A sparse matrix laid out for ``self @ dense`` with BLAS doing the sums.

    Rows are grouped by length into power-of-two buckets and padded (index 0, weight 0) to
    the bucket's width, so a chunk of rows is one gather ``x[idx]`` of shape (R, L, l) and
    one batched product ``w[:, None, :] @ gathered``; padding costs at most 2x. This is
    several times faster than ``np.add.reduceat`` or per-column ``bincount`` in numpy, and
    each chunk is bounded to ``_CHUNK_CELLS`` cells whatever the row lengths.
    """

    __slots__ = ("chunks", "shape")

    def __init__(self, rows: I64, cols: I64, data: F32, shape: tuple[int, int]) -> None:
        self.shape = shape
        order = np.argsort(rows, kind="stable")
        sorted_cols = cols[order].astype(np.int32)
        sorted_data = data[order]
        del order
        lens = np.bincount(rows, minlength=shape[0])
        starts = np.zeros(shape[0] + 1, dtype=np.int64)
        np.cumsum(lens, out=starts[1:])
        width_exp = np.ceil(np.log2(np.maximum(lens, 1))).astype(np.int64)
        self.chunks: list[tuple[I64, npt.NDArray[np.int32], F32]] = []
        for exp in np.unique(width_exp[lens > 0]):
            width = 1 << int(exp)
            bucket = np.flatnonzero((width_exp == exp) & (lens > 0))
            step = max(1, _CHUNK_CELLS // width)
            offsets = np.arange(width, dtype=np.int64)[None, :]
            for at in range(0, bucket.size, step):
                rr = bucket[at : at + step]
                pos = starts[rr][:, None] + offsets
                valid = pos < starts[rr + 1][:, None]
                pos = np.where(valid, pos, 0)
                idx = np.where(valid, sorted_cols[pos], 0).astype(np.int32)
                w = np.where(valid, sorted_data[pos], 0.0).astype(np.float32)
                self.chunks.append((rr, idx, w))

    def matmul(self, x: F32) -> F32:
        """``self @ x`` for a dense float32 ``x`` of shape (cols, l)."""
        out = np.zeros((self.shape[0], x.shape[1]), dtype=np.float32)
        for rr, idx, w in self.chunks:
            out[rr] = np.einsum("rl,rlk->rk", w, np.take(x, idx, axis=0))
        return out


def _orthonormal(y: F32) -> F32:
    """An orthonormal basis of ``y``'s columns via its Gram matrix (Cholesky-QR style,
    twice for accuracy): numpy's Householder QR is several times slower on tall matrices.
    Directions with no energy are dropped."""
    for _ in range(2):
        gram = (y.T @ y).astype(np.float64)
        eigval, eigvec = np.linalg.eigh(gram)
        keep = eigval > max(float(eigval.max()), 0.0) * 1e-10
        if not keep.any():
            return np.zeros((y.shape[0], 0), dtype=np.float32)
        y = (y @ (eigvec[:, keep] / np.sqrt(eigval[keep])).astype(np.float32)).astype(np.float32)
    return y


def _sign_codes(vectors: F32, hyperplanes: F32) -> npt.NDArray[np.uint64]:
    """Sign sketches, one row of 64-bit words per word position: shape (bits/64, rows)."""
    bits = np.packbits(vectors @ hyperplanes > 0, axis=1)  # (rows, bits/8), big-endian bits
    return np.ascontiguousarray(bits.view(np.uint64).T)


_POPCOUNT8 = np.array([bin(i).count("1") for i in range(256)], dtype=np.int16)


def _popcount(words: npt.NDArray[np.uint64]) -> npt.NDArray[np.int16]:
    """Set bits per 64-bit word (``np.bitwise_count`` on numpy >= 2, a byte table before)."""
    bitwise_count = getattr(np, "bitwise_count", None)
    if bitwise_count is not None:
        return np.asarray(bitwise_count(words), dtype=np.int16)
    return np.asarray(_POPCOUNT8[words.view(np.uint8)].reshape(-1, 8).sum(axis=1), dtype=np.int16)


def _normalise_rows(m: F32) -> F32:
    norms = np.linalg.norm(m, axis=1)
    norms[norms == 0] = 1.0
    return (m / norms[:, None]).astype(np.float32, copy=False)


def _randomized_svd(a: _Sparse, at: _Sparse, k: int, seed: int) -> tuple[F32, F32]:
    """Top-``k`` left singular vectors ``U`` of the sparse ``a`` (``at`` is its transpose)
    and the matching ``V S``: the terms' basis and the passages' coordinates in it."""
    m, n = a.shape
    width = min(k + _OVERSAMPLE, m, n)
    rng = np.random.default_rng(seed)
    q = _orthonormal(a.matmul(rng.standard_normal((n, width), dtype=np.float32)))
    for _ in range(_POWER_ITERATIONS):
        q = _orthonormal(a.matmul(_orthonormal(at.matmul(q))))
    bt = at.matmul(q)  # (n, width) = (Q^T A)^T = V_B S U_B^T
    eigval, eigvec = np.linalg.eigh((bt.T @ bt).astype(np.float64))  # U_B S^2 U_B^T, ascending
    order = np.argsort(-eigval, kind="stable")
    eigval, eigvec = eigval[order], eigvec[:, order]
    k = min(k, int(np.count_nonzero(eigval > max(float(eigval[0]) if eigval.size else 0.0, 0.0) * 1e-10)))
    ub = eigvec[:, :k].astype(np.float32)
    return (q @ ub).astype(np.float32), (bt @ ub).astype(np.float32)


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
        codes: npt.NDArray[np.uint64] | None = None,
    ) -> None:
        self.enabled = enabled
        self._n_passages = n_passages
        self._n_terms = n_terms
        self._keys = keys
        self._vis_codes = vis_codes
        self._vis_names = list(vis_names)
        self._terms = list(terms)
        self._term_index = {t: i for i, t in enumerate(self._terms)}
        self._term_vectors = term_vectors
        self._passage_vectors = passage_vectors
        self._hyperplanes: F32 | None = None
        self._codes: npt.NDArray[np.uint64] | None = None
        if keys.size > _EXACT_SCAN_MAX and passage_vectors.shape[1] > 0:
            rng = np.random.default_rng(_SKETCH_SEED)
            self._hyperplanes = rng.standard_normal((passage_vectors.shape[1], _SKETCH_BITS), dtype=np.float32)
            expected = (_SKETCH_BITS // 64, keys.size)
            self._codes = codes if codes is not None and codes.shape == expected else None
            if self._codes is None:
                self._codes = _sign_codes(passage_vectors, self._hyperplanes)
        self._key_order = np.argsort(keys, kind="stable")
        self._sorted_keys = keys[self._key_order]

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
        """
        if dims < 1:
            raise ValueError("dims must be at least 1")
        # term -> id. Ids come from one running counter that also advances for terms already
        # known (so the whole mapping runs in C via map/setdefault); they are increasing in
        # first-seen order, with gaps, and are compacted below.
        vocab: dict[str, int] = {}
        next_id = itertools.count()
        vis_index: dict[str, int] = {}
        keys: list[int] = []
        vis_codes: list[int] = []
        lengths = array.array("q")  # distinct terms per passage
        pair_terms = array.array("q")  # per passage, its distinct term ids ...
        pair_tfs = array.array("q")  # ... and how often each occurs
        for key, visibility, text in passages:
            keys.append(key)
            vis_codes.append(vis_index.setdefault(visibility, len(vis_index)))
            counts = Counter(analyze(text))
            pair_terms.extend(map(vocab.setdefault, counts, next_id))
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
        id_space = next(next_id)

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

        a = _Sparse(rows, cols, weights, (n_terms, n))
        at = _Sparse(cols, rows, weights, (n, n_terms))
        del rows, cols, weights
        u, vs = _randomized_svd(a, at, min(dims, n_terms, max(1, n // _PASSAGES_PER_DIM)), seed)
        del a, at

        term_vectors = (u * idf[:, None]).astype(np.float32)
        passage_vectors = _normalise_rows(vs)
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

    def _fold_in(self, query_terms: Sequence[str]) -> F32 | None:
        counts: dict[int, int] = {}
        for term in query_terms:
            idx = self._term_index.get(term)
            if idx is not None:
                counts[idx] = counts.get(idx, 0) + 1
        if not counts:
            return None
        idx_arr = np.fromiter(sorted(counts), dtype=np.int64, count=len(counts))
        tf = np.fromiter((counts[int(i)] for i in idx_arr), dtype=np.float32, count=len(counts))
        q = ((1.0 + np.log(tf))[:, None] * self._term_vectors[idx_arr]).sum(axis=0)
        norm = float(np.linalg.norm(q))
        if not math.isfinite(norm) or norm == 0.0:
            return None
        return (q / norm).astype(np.float32)

    def rescue(
        self,
        query_terms: Sequence[str],
        lexical_keys: Sequence[int],
        allowed: Callable[[int], bool],
        *,
        top: int = 5,
        floor: float = SIMILARITY_FLOOR,
    ) -> tuple[int, float] | None:
        """The one passage to append to the lexical results, as ``(key, similarity)``, or None.

        ``query_terms`` are the question analysed by the same analyser as the corpus;
        ``lexical_keys`` the lexical ranking, best first; ``allowed(key)`` says whether the
        asker may see a passage (audience, live generation, ...).
        """
        if not self.enabled or not lexical_keys:
            return None
        q = self._fold_in(query_terms)
        if q is None:
            return None
        excluded = {int(k) for k in list(lexical_keys)[: max(top, 0)]}
        n = self._keys.size
        if self._codes is not None:
            # two stages: Hamming distance between sign sketches (random hyperplanes, so it
            # estimates the angle) picks a pool, exact cosine ranks it. Only when the pool has
            # passages above the floor that were all refused (audience, top five) does the
            # full scan run; a pool with nothing above the floor ends the search.
            pool = self._sketch_pool(q)
            pool_sims = self._passage_vectors[pool] @ q
            found = self._pick(pool, pool_sims, excluded, allowed, floor, skip=None)
            if found is not None or not bool((pool_sims >= floor).any()):
                return found
            skip: I64 | None = pool
        else:
            skip = None
        return self._pick(np.arange(n), self._passage_vectors @ q, excluded, allowed, floor, skip=skip)

    def _pick(
        self,
        idx: I64,
        sims: F32,
        excluded: set[int],
        allowed: Callable[[int], bool],
        floor: float,
        *,
        skip: I64 | None,
    ) -> tuple[int, float] | None:
        """The best acceptable passage among positions ``idx`` (similarities ``sims``), in
        order of similarity then key; ``skip`` lists positions already examined."""
        above = np.flatnonzero(sims >= floor)
        if skip is not None and above.size:
            above = above[~np.isin(idx[above], skip)]
        if above.size == 0:
            return None
        batches = [above]
        if above.size > _FIRST_CANDIDATES:
            # sort only the best few (ties at the cut all kept), the rest only if needed
            nth = above.size - _FIRST_CANDIDATES
            cut = np.partition(sims[above], nth)[nth]
            best = sims[above] >= cut
            batches = [above[best], above[~best]]
        for batch in batches:
            order = batch[np.lexsort((self._keys[idx[batch]], -sims[batch]))]
            for i in order:
                key = int(self._keys[idx[i]])
                if key in excluded or not allowed(key):
                    continue
                return key, float(sims[i])
        return None

    def _sketch_pool(self, q: F32) -> I64:
        """Positions of the passages whose sketches are nearest the query's (ties at the
        cut all kept, so at least ``_POOL`` of them)."""
        assert self._codes is not None and self._hyperplanes is not None
        qcode = _sign_codes(q[None, :], self._hyperplanes)[:, 0]
        dist = np.zeros(self._codes.shape[1], dtype=np.int16)
        scratch = np.empty(self._codes.shape[1], dtype=np.uint64)
        for word, qword in zip(self._codes, qcode, strict=True):
            np.bitwise_xor(word, qword, out=scratch)
            dist += _popcount(scratch)
        cumulative = np.cumsum(np.bincount(dist, minlength=_SKETCH_BITS + 1))
        cut = int(np.searchsorted(cumulative, min(_POOL, dist.size)))
        return np.flatnonzero(dist <= cut)

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
            codes=self._codes if self._codes is not None else np.zeros((0, 0), dtype=np.uint64),
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
            codes = arrays["codes"].astype(np.uint64, copy=False)
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
            codes=codes,
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
