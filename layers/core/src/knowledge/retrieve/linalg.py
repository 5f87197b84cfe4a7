"""The numpy linear algebra behind the rescue: a sparse matrix product laid out for BLAS, an
orthonormal basis, a randomized truncated SVD (range finder with power iterations, after
Halko, Martinsson and Tropp) and top-k nearest rows. Pure functions of their arrays; each is
compared with numpy's dense equivalent in ``tests/unit/test_linalg.py``."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

F32 = npt.NDArray[np.float32]
I64 = npt.NDArray[np.int64]

#: padded non-zeros per chunk of a sparse product (x ~150 floats: ~40 MB)
CHUNK_CELLS = 1 << 16


class SparseMatrix:
    """A sparse matrix laid out for ``self @ dense`` with BLAS doing the sums.

    Rows are grouped by length into power-of-two buckets and padded (index 0, weight 0) to
    the bucket's width, so a chunk of rows is one gather ``x[idx]`` of shape (R, L, l) and
    one batched product ``w[:, None, :] @ gathered``; padding costs at most 2x. This is
    several times faster than ``np.add.reduceat`` or per-column ``bincount`` in numpy, and
    each chunk is bounded to ``chunk_cells`` cells whatever the row lengths.
    """

    __slots__ = ("chunks", "shape")

    def __init__(self, rows: I64, cols: I64, data: F32, shape: tuple[int, int], *,
                 chunk_cells: int = CHUNK_CELLS) -> None:
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
            step = max(1, chunk_cells // width)
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


def orthonormal(y: F32) -> F32:
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


def normalise_rows(m: F32) -> F32:
    """Each row scaled to unit length (rows of zeros stay zero)."""
    norms = np.linalg.norm(m, axis=1)
    norms[norms == 0] = 1.0
    return (m / norms[:, None]).astype(np.float32, copy=False)


def randomized_svd(a: SparseMatrix, at: SparseMatrix, k: int, seed: int, *, oversample: int = 16,
                   power_iterations: int = 1) -> tuple[F32, F32]:
    """Top-``k`` left singular vectors ``U`` of the sparse ``a`` (``at`` is its transpose)
    and the matching ``V S``: the terms' basis and the passages' coordinates in it."""
    m, n = a.shape
    width = min(k + oversample, m, n)
    rng = np.random.default_rng(seed)
    q = orthonormal(a.matmul(rng.standard_normal((n, width), dtype=np.float32)))
    for _ in range(power_iterations):
        q = orthonormal(a.matmul(orthonormal(at.matmul(q))))
    bt = at.matmul(q)  # (n, width) = (Q^T A)^T = V_B S U_B^T
    eigval, eigvec = np.linalg.eigh((bt.T @ bt).astype(np.float64))  # U_B S^2 U_B^T, ascending
    order = np.argsort(-eigval, kind="stable")
    eigval, eigvec = eigval[order], eigvec[:, order]
    k = min(k, int(np.count_nonzero(eigval > max(float(eigval[0]) if eigval.size else 0.0, 0.0) * 1e-10)))
    ub = eigvec[:, :k].astype(np.float32)
    return (q @ ub).astype(np.float32), (bt @ ub).astype(np.float32)


def nearest(passage_vectors: F32, term_vectors: F32, keep: int, *,
            block_cells: int = 1 << 25) -> tuple[npt.NDArray[np.int32], F32]:
    """For each term (row of ``term_vectors``), the positions of the ``keep`` passages whose
    dot product with it is highest, best first, and those products (non-increasing along
    each row); computed a block of terms at a time, each block at most ``block_cells``
    products."""
    n = passage_vectors.shape[0]
    m = min(keep, n)
    lists = np.empty((term_vectors.shape[0], m), dtype=np.int32)
    scores = np.empty((term_vectors.shape[0], m), dtype=np.float32)
    step = max(1, block_cells // max(n, 1))  # memory bounded whatever the corpus size
    for at in range(0, term_vectors.shape[0], step):
        sims = term_vectors[at : at + step] @ passage_vectors.T  # (terms, passages), rows contiguous
        top = np.argpartition(sims, n - m, axis=1)[:, n - m :]
        top_sims = np.take_along_axis(sims, top, axis=1)
        order = np.argsort(-top_sims, axis=1, kind="stable")
        lists[at : at + step] = np.take_along_axis(top, order, axis=1)
        scores[at : at + step] = np.take_along_axis(top_sims, order, axis=1)
    return lists, scores
