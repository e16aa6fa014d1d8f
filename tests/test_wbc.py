"""The ``wasserstein-ball-center`` task, its method and baselines, tested in-process (seconds).

The conformance suite (tests/test_conformance.py) runs every method in the
sandbox on the smoke tier; these tests check the task (ids, generator, LP,
verifier) and the faithfulness of the paper's IPM against HiGHS.
"""

from __future__ import annotations

import numpy as np
import pytest

import tasks.wbc as T
from baselines.wbc import entropic_minimax, mean_histogram
from bench.registry import UnknownNameError, get_task
from bench.task import InvalidSolution
from methods.wbc import ipm

TASK = get_task("wasserstein-ball-center")
SMOKE = [spec.id for spec in TASK.instances("smoke")]


def test_tiers_list_distinct_ids_and_bad_ids_are_refused():
    for tier in ("smoke", "standard", "full"):
        ids = [spec.id for spec in TASK.instances(tier)]
        assert ids and len(set(ids)) == len(ids)
    with pytest.raises(UnknownNameError, match="malformed"):
        TASK.load("blobs1d-N10")
    with pytest.raises(ValueError, match="square m"):
        T._check({"kind": "blobs2d", "N": 5, "m": 30, "seed": 0})


def test_generation_is_deterministic_and_minorities_are_far():
    C, A = T.generate("minority1d", 10, 30, 0)
    C2, A2 = T.generate("minority1d", 10, 30, 0)
    np.testing.assert_array_equal(A, A2)
    assert np.allclose(A.sum(1), 1) and A.min() >= T.UNIFORM_MIX / 30 * 0.99
    x = T.support("minority1d", 30)[:, 0]
    assert C[0, -1] == pytest.approx(1.0) and np.allclose(np.diag(C), 0)
    means = A @ x
    assert means[-2:].min() > means[:-2].max()  # the minority (N // 5 = 2) sits to the right
    pts = T.support("blobs2d", 25)
    assert pts.shape == (25, 2) and T.cost_matrix(pts).max() == pytest.approx(2.0)


def test_lp_optimum_is_a_lower_bound_and_is_attained():
    C, A = T.generate("blobs1d", 4, 12, 1)
    lp = T.solve_lp_highs(C, A)
    w = np.clip(lp["w"], 0, None)
    w /= w.sum()
    assert T.distances(w, A, C).max() == pytest.approx(lp["r"], rel=1e-6)
    for other in (A.mean(0), A[0], np.full(12, 1 / 12)):  # no histogram beats the optimum
        assert T.distances(other, A, C).max() >= lp["r"] - 1e-9


@pytest.mark.parametrize(
    "kind,N,m",
    [("blobs1d", 5, 16), ("minority2d", 6, 16), ("blobs2d", 10, 36), ("blobs2d", 10, 16)],
)
def test_ipm_matches_highs_to_1e_6(kind, N, m):
    """Faithfulness: the paper's IPM reaches the LP optimum that HiGHS finds (relative 1e-6).

    On ``blobs2d-N10-m16`` the structured solve loses accuracy near the optimum
    (as on the standard ``blobs2d-N20-m36``); the dense endgame fallback takes over there.
    """
    C, A = T.generate(kind, N, m, 0)
    out = ipm.wbc_ipm(C, A)
    lp = T.solve_lp_highs(C, A)
    assert out["status"] == "optimal"
    assert out["r"] == pytest.approx(lp["r"], rel=1e-6)
    assert T.distances(out["w"], A, C).max() == pytest.approx(lp["r"], rel=1e-6)


def test_the_endgame_fallback_is_what_reaches_the_optimum():
    """Without the dense fallback (version 1) the run stops short; with it, it is optimal."""
    C, A = T.generate("blobs2d", 10, 16, 0)
    lp = T.solve_lp_highs(C, A)
    v1 = ipm.wbc_ipm(C, A, dense=False)
    v2 = ipm.wbc_ipm(C, A)
    gap1 = T.distances(v1["w"], A, C).max() / lp["r"] - 1
    gap2 = T.distances(v2["w"], A, C).max() / lp["r"] - 1
    assert v1["status"] == "diverging" and v1["dense_iters"] == 0
    assert v2["status"] == "optimal" and 0 < v2["dense_iters"] < v2["iterations"] / 2
    assert abs(gap2) < 1e-8 < gap1  # version 1: 3.8e-7 short; version 2: 3.8e-9


def test_sparse_lp_matrix_is_the_blockwise_operator():
    """The dense fallback factors ``A D A^T`` of the same LP the blockwise products apply."""
    C, A = T.generate("minority2d", 4, 9, 1)
    N, m = A.shape
    ops, M = ipm._Ops(C, A), ipm._lp_matrix(C, N, m)
    rng = np.random.default_rng(3)
    P, w, sl, r = rng.standard_normal((N, m, m)), rng.standard_normal(m), rng.standard_normal(N), 0.4
    ax = ops.Ax(P, w, sl, r)
    flat = np.concatenate([np.ravel(ax[0]), np.ravel(ax[1]), [ax[2]], np.ravel(ax[3])])
    np.testing.assert_allclose(M @ np.concatenate([P.ravel(), w, sl, [r]]), flat, atol=1e-12)
    y = rng.standard_normal(M.shape[0])
    cut = (N * m, N * (2 * m - 1), N * (2 * m - 1) + 1)
    g = ops.AT(y[: cut[0]].reshape(N, m), y[cut[0] : cut[1]].reshape(N, m - 1), y[cut[1]], y[cut[2] :])
    gflat = np.concatenate([np.ravel(g[0]), np.ravel(g[1]), np.ravel(g[2]), [g[3]]])
    np.testing.assert_allclose(M.T @ y, gflat, atol=1e-12)


def test_structured_normal_equations_solve_the_dense_system():
    """The block elimination solves A D A^T dp = rhs (checked against a dense solve)."""
    C, A = T.generate("blobs1d", 3, 6, 0)
    ops = ipm._Ops(C, A)
    N, m = A.shape
    rng = np.random.default_rng(0)
    D = (rng.uniform(0.1, 2, (N, m, m)), rng.uniform(0.1, 2, m), rng.uniform(0.1, 2, N), 0.7)
    n = N * m * m + m + N + 1
    cols = []
    for v in np.eye(n):
        a = ops.Ax(
            v[: N * m * m].reshape(N, m, m), v[N * m * m : N * m * m + m], v[-N - 1 : -1], v[-1]
        )
        cols.append(np.concatenate([np.ravel(a[0]), np.ravel(a[1]), [a[2]], np.ravel(a[3])]))
    Ad = np.array(cols).T
    d = np.concatenate([D[0].ravel(), D[1], D[2], [D[3]]])
    rhs = rng.standard_normal(Ad.shape[0])
    want = np.linalg.solve((Ad * d) @ Ad.T, rhs)
    parts = (
        rhs[: N * m].reshape(N, m),
        rhs[N * m : N * (2 * m - 1)].reshape(N, m - 1),
        float(rhs[N * (2 * m - 1)]),
        rhs[-N:],
    )
    got = ipm._factor(ops, *D)(parts, 0)
    np.testing.assert_allclose(
        np.concatenate([np.ravel(got[0]), np.ravel(got[1]), [got[2]], np.ravel(got[3])]),
        want,
        rtol=1e-8,
        atol=1e-10,
    )


def test_verifier_recomputes_and_refuses():
    inst = TASK.load(SMOKE[0])
    A, C = inst.data["A"], inst.data["C"]
    w = mean_histogram.solve(inst, seed=0, budget=1.0)
    metrics = TASK.evaluate(inst, w)
    assert metrics["max_w"] == pytest.approx(T.distances(w, A, C).max())
    assert metrics["ratio"] >= 1 - 1e-9
    assert TASK.meta.normalization.apply(metrics["max_w"], inst.references) == pytest.approx(0.0)
    m = A.shape[1]
    bad_neg = w.copy()
    bad_neg[3] = -1e-6
    bad_neg[4] += 1e-6
    for bad, message in [
        (bad_neg, r"w\[3\]"),
        (w * 1.01, "sums to"),
        (np.full(m, np.nan), "not finite"),
        (w[:-1], "shape"),
        (w.astype(np.float32), "dtype"),
    ]:
        with pytest.raises(InvalidSolution, match=message):
            TASK.evaluate(inst, bad)


def test_entropic_minimax_improves_on_the_mean():
    C, A = T.generate("minority2d", 6, 16, 0)
    w = entropic_minimax.entropic_minimax(C, A)
    assert T.distances(w, A, C).max() < T.distances(A.mean(0), A, C).max()
