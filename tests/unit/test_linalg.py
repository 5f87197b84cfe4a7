"""The rescue's linear algebra against numpy's dense reference on the same arrays."""

from __future__ import annotations

import numpy as np
import pytest

from knowledge.retrieve.linalg import SparseMatrix, nearest, normalise_rows, orthonormal, randomized_svd


def random_sparse(rng: np.random.Generator, shape: tuple[int, int], density: float) -> np.ndarray:
    dense = rng.random(shape, dtype=np.float32) * (rng.random(shape) < density)
    dense[3] = 0.0  # an empty row
    dense[5, :] = rng.random(shape[1], dtype=np.float32)  # a full row: the widest bucket
    return dense.astype(np.float32)


def as_sparse(dense: np.ndarray, chunk_cells: int) -> tuple[SparseMatrix, SparseMatrix]:
    rows, cols = np.nonzero(dense)
    data = dense[rows, cols].astype(np.float32)
    rows, cols = rows.astype(np.int64), cols.astype(np.int64)
    return (SparseMatrix(rows, cols, data, dense.shape, chunk_cells=chunk_cells),
            SparseMatrix(cols, rows, data, dense.shape[::-1], chunk_cells=chunk_cells))


@pytest.mark.parametrize("chunk_cells", [8, 1 << 16])
def test_sparse_product_equals_the_dense_one(chunk_cells: int) -> None:
    rng = np.random.default_rng(1)
    dense = random_sparse(rng, (60, 45), 0.1)
    a, at = as_sparse(dense, chunk_cells)
    x = rng.standard_normal((45, 7)).astype(np.float32)
    y = rng.standard_normal((60, 3)).astype(np.float32)
    np.testing.assert_allclose(a.matmul(x), dense @ x, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(at.matmul(y), dense.T @ y, rtol=1e-5, atol=1e-5)


def test_orthonormal_basis_spans_the_columns_and_drops_empty_directions() -> None:
    rng = np.random.default_rng(2)
    base = rng.standard_normal((200, 4)).astype(np.float32)
    y = np.hstack([base, base[:, :2] * 3.0, np.zeros((200, 1), dtype=np.float32)])  # rank 4 of 7 columns
    q = orthonormal(y)
    assert q.shape == (200, 4)
    np.testing.assert_allclose(q.T @ q, np.eye(4), atol=1e-4)
    np.testing.assert_allclose(q @ (q.T @ y), y, atol=1e-3)  # every column lies in the span
    assert orthonormal(np.zeros((10, 3), dtype=np.float32)).shape == (10, 0)


def test_randomized_svd_finds_the_top_singular_subspace() -> None:
    rng = np.random.default_rng(3)
    # an exactly rank-6 term x passage matrix with well separated singular values, kept sparse
    u0, _ = np.linalg.qr(rng.standard_normal((300, 6)))
    v0, _ = np.linalg.qr(rng.standard_normal((120, 6)))
    sigma = np.array([40.0, 25.0, 15.0, 9.0, 5.0, 3.0])
    dense = (u0 * sigma) @ v0.T
    dense[np.abs(dense) < 0.02] = 0.0
    dense = dense.astype(np.float32)
    a, at = as_sparse(dense, 1 << 16)
    u, vs = randomized_svd(a, at, 4, seed=7, oversample=8, power_iterations=1)
    ref_u, ref_s, _ = np.linalg.svd(dense.astype(np.float64), full_matrices=False)
    assert u.shape == (300, 4) and vs.shape == (120, 4)
    # the same singular values (the norms of V S's columns) ...
    np.testing.assert_allclose(np.linalg.norm(vs, axis=0), ref_s[:4], rtol=1e-3)
    # ... and the same subspace: equal projectors, whatever the signs and order within it
    np.testing.assert_allclose(u @ u.T, ref_u[:, :4] @ ref_u[:, :4].T, atol=1e-3)
    # V S is A^T U: the passages' coordinates in the terms' basis
    np.testing.assert_allclose(vs, dense.T @ u, atol=1e-3)


def test_randomized_svd_never_returns_more_directions_than_the_rank() -> None:
    rng = np.random.default_rng(4)
    dense = np.outer(rng.random(50), rng.random(30)).astype(np.float32)  # rank 1
    a, at = as_sparse(dense, 1 << 16)
    u, vs = randomized_svd(a, at, 5, seed=1)
    assert u.shape[1] == vs.shape[1] == 1


def test_normalise_rows_gives_unit_rows_and_keeps_zero_rows() -> None:
    m = np.array([[3.0, 4.0], [0.0, 0.0], [1e-3, 0.0]], dtype=np.float32)
    out = normalise_rows(m)
    np.testing.assert_allclose(out, [[0.6, 0.8], [0.0, 0.0], [1.0, 0.0]], rtol=1e-6)


@pytest.mark.parametrize("block_cells", [1, 90, 1 << 25])
def test_nearest_equals_a_full_sort_of_the_dense_products(block_cells: int) -> None:
    rng = np.random.default_rng(5)
    passages = rng.standard_normal((90, 8)).astype(np.float32)
    terms = rng.standard_normal((13, 8)).astype(np.float32)
    lists, scores = nearest(passages, terms, 10, block_cells=block_cells)
    products = terms @ passages.T
    expected = np.argsort(-products, axis=1, kind="stable")[:, :10]
    np.testing.assert_array_equal(lists, expected)
    np.testing.assert_allclose(scores, np.take_along_axis(products, expected, axis=1), rtol=1e-6)
    # fewer passages than asked for: every passage, best first
    short, _ = nearest(passages[:4], terms, 10)
    assert short.shape == (13, 4)
