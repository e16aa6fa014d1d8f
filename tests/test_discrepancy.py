"""The ``discrepancy`` task, its method and baselines, tested in-process (seconds).

The conformance suite (tests/test_conformance.py) runs every method in the
sandbox on the smoke tier; these tests check the task itself (ids, the
generator, the references, the verifier) and the walk: the lazy projection
equals the QR one, the walk ends in a full colouring, and seeds repeat.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import scipy.sparse as sp

import tasks.discrepancy as T
from baselines.discrepancy import greedy, local_search
from bench.registry import UnknownNameError, get_task
from bench.task import InvalidSolution
from common.discrepancy import walk as W

TASK = get_task("discrepancy")
SMOKE = [spec.id for spec in TASK.instances("smoke")]


def test_tiers_list_distinct_ids_and_bad_ids_are_refused():
    for tier in ("smoke", "standard", "full"):
        ids = [spec.id for spec in TASK.instances(tier)]
        assert ids and len(set(ids)) == len(ids)
    sparse = {s.params["n"] for s in TASK.instances("standard") if s.params["kind"] == "sparse"}
    assert len(sparse) >= 4  # the slope needs four sizes at fixed nnz/n
    with pytest.raises(UnknownNameError, match="malformed"):
        TASK.load("gaussian-n64")


def test_generation_is_deterministic_and_the_matrices_are_what_they_say():
    G = T.generate("gaussian", "tall", 16, 0)
    np.testing.assert_array_equal(G, T.generate("gaussian", "tall", 16, 0))
    assert G.shape == (T.TALL * 16, 16)
    R = T.generate("rademacher", "square", 16, 1)
    assert R.shape == (16, 16) and set(np.unique(R)) == {-1.0, 1.0}
    S = T.generate("sparse", "tall", 32, 0)
    assert sp.issparse(S) and S.nnz == T.SPARSE_S * 32  # distinct rows per column
    assert np.all(np.diff(sp.csc_matrix(S).indptr) == T.SPARSE_S)
    assert set(np.unique(S.data)) <= {-1.0, 1.0}
    back = T.matrix(T.to_data(S))
    assert (back != S).nnz == 0 and np.array_equal(T.matrix(T.to_data(G)), G)


def test_lower_bound_is_below_the_brute_force_optimum():
    for kind, shape in [("gaussian", "tall"), ("rademacher", "tall"), ("sparse", "tall")]:
        A = T.generate(kind, shape, 10, 3)
        D = A.toarray() if sp.issparse(A) else A
        opt = min(np.abs(D @ np.array(s)).max() for s in itertools.product((-1.0, 1.0), repeat=10))
        low, _ = T.lower_bound(A)
        assert 0 < low <= opt + 1e-12
        assert T.random_median(A) >= opt


def test_verifier_recomputes_and_refuses():
    inst = TASK.load(SMOKE[0])
    A = T.matrix(inst.data)
    n = A.shape[1]
    x = np.ones(n, dtype=np.int64)
    x[::3] = -1
    got = TASK.evaluate(inst, x)
    assert got["disc"] == pytest.approx(np.abs(A @ x).max())
    assert got["disc"] == TASK.evaluate(inst, x.astype(float))["disc"]
    assert got["ratio"] == pytest.approx(got["disc"] / inst.references["random_scale"].value)
    assert got["over_lower"] >= 1.0
    for bad, message in [
        (np.ones(n - 1), "shape"),
        (np.r_[np.ones(n - 1), 0.0], f"entry {n - 1} is"),
        (np.r_[0.5, np.ones(n - 1)], "entry 0 is"),
        (np.array(["+"] * n), "dtype"),
        ("ones", "got str"),
    ]:
        with pytest.raises(InvalidSolution, match=message):
            TASK.evaluate(inst, bad)


@pytest.mark.parametrize("K", [1, 5, 16])
def test_the_lazy_projection_equals_the_qr_projection(K):
    A = T.generate("gaussian", "tall", 48, 0)
    Q = W.project_to_small_rows(A, lambda i: A[i], 12, rows="exact", rng=np.random.default_rng(0))
    assert Q.shape == (12, 48) and np.allclose(Q @ Q.T, np.eye(12))
    x0 = np.random.default_rng(1).uniform(-0.5, 0.5, 48)
    xa, fa, ka = W.partial_colouring(x0, Q, np.random.default_rng(7), engine="lazy", K=K)
    xb, fb, kb = W.partial_colouring(x0, Q, np.random.default_rng(7), engine="qr", K=K)
    assert ka == kb == 24 and np.array_equal(fa, fb)
    np.testing.assert_allclose(xa, xb, atol=1e-7)
    assert np.all(np.abs(xa[fa]) == 1.0) and np.all(np.abs(xa) <= 1.0)
    # the walk never moved along the chosen rows: Q (x - x0) = 0
    np.testing.assert_allclose(Q @ (xa - x0), 0.0, atol=1e-8)


def test_lazy_projector_restarts_every_K_queries_and_projects_exactly():
    rng = np.random.default_rng(0)
    Q, _ = np.linalg.qr(rng.standard_normal((20, 4)))
    P = W.LazyProjector(Q.T.copy(), np.random.default_rng(3), K=3)
    frozen = []
    for i in range(7):
        u = P.query()
        B = np.vstack([Q.T] + [np.eye(20)[j] for j in frozen])
        assert np.allclose(B @ u, 0.0, atol=1e-10)  # orthogonal to every constraint
        P.freeze(i)
        frozen.append(i)
    assert P.restarts == 3  # initial + after queries 3 and 6


def test_walks_are_full_colourings_and_seeded():
    A = T.generate("sparse", "tall", 64, 0)
    x1, info = W.iterated_colouring(A, 5, rows="sketch", engine="lazy")
    x2, _ = W.iterated_colouring(A, 5, rows="sketch", engine="lazy")
    x3, _ = W.iterated_colouring(A, 6, rows="sketch", engine="lazy")
    assert set(np.unique(x1)) <= {-1, 1} and len(x1) == 64
    assert np.array_equal(x1, x2) and not np.array_equal(x1, x3)
    assert info["steps"] == 64 and info["rounds"] == math.ceil(math.log2(64)) + 1


@pytest.mark.parametrize("basis", ["svd", "lss"])
def test_walks_with_eigenvector_bases_are_full_colourings_and_seeded(basis):
    A = T.generate("gaussian", "tall", 48, 0)
    x1, info = W.iterated_colouring(A, 2, rows="sketch", engine="lazy", basis=basis)
    x2, _ = W.iterated_colouring(A, 2, rows="sketch", engine="lazy", basis=basis)
    assert set(np.unique(x1)) <= {-1, 1} and len(x1) == 48 and np.array_equal(x1, x2)
    Q = W.project_to_small_rows(
        A, lambda i: A[i], 12, rows="exact", rng=np.random.default_rng(0), basis=basis
    )
    assert Q.shape == (12, 48) and np.allclose(Q @ Q.T, np.eye(12), atol=1e-10)


def test_implicit_leverage_sample_approximates_the_projected_gram_spectrally():
    """The leverage-score sample of B = A_C (I - Q^T Q), built without forming B, is a spectral approximation."""
    rng = np.random.default_rng(0)
    n, c = 40, 2000
    A_C = rng.standard_normal((c, n)) * rng.uniform(0.2, 3.0, (c, 1))  # uneven row norms
    A_C[:5] *= 30.0  # a few rows with high leverage
    Q, _ = np.linalg.qr(rng.standard_normal((n, 6)))
    Q = Q.T
    B = A_C - (A_C @ Q.T) @ Q
    idx, wts = W.implicit_leverage_sample(A_C, Q, np.random.default_rng(1))
    Bs = (A_C[idx] * wts[:, None]) - ((A_C[idx] * wts[:, None]) @ Q.T) @ Q
    G, Gs = B.T @ B, Bs.T @ Bs
    # on the complement of Q (where B lives): (1 - eps) G <= Gs <= (1 + eps) G with eps < 1
    U = np.linalg.svd(B, full_matrices=False)[2][: n - 6]
    ev = np.linalg.eigvalsh(np.linalg.solve(U @ G @ U.T, U @ Gs @ U.T))
    assert 0.3 < ev.min() and ev.max() < 1.7
    assert len(idx) < c / 3  # a sample of O(r log r) rows, not B
    assert np.all(np.isin(np.arange(5), idx))  # the high-leverage rows are kept


def test_greedy_follows_the_potential_and_local_search_never_worsens():
    A = T.generate("rademacher", "tall", 32, 0)
    order = np.arange(32)
    x = greedy.greedy_colouring(A, order, 0.3)
    y = np.zeros(A.shape[0])
    for k in order:  # each sign is the one with the smaller sum cosh
        phi = [np.cosh(0.3 * (y + s * A[:, k])).sum() for s in (1, -1)]
        assert x[k] == (1 if phi[0] <= phi[1] else -1)
        y += x[k] * A[:, k]
    start = greedy.best_greedy(A, 0)
    x2, _ = local_search.local_search(A, start, 64)
    assert np.abs(A @ x2).max() <= np.abs(A @ start).max()
