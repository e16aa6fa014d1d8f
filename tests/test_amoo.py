"""The ``aligned-multiobjective`` task, its counted oracle and its optimisers, in-process.

The conformance suite (tests/test_conformance.py) runs every method in the
sandbox on the smoke tier; these tests check the shared minimiser and the
normalisation, the oracle's derivatives against finite differences, the
counting and the verifier, the weight solvers against cvxpy, and the methods'
progress.
"""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest

import tasks.amoo as task_module
from bench.registry import UnknownNameError, discover_methods, get_task
from bench.task import InvalidSolution
from common.amoo import algorithms as A
from tasks.amoo.problems import Aligned, build

TASK = get_task("aligned-multiobjective")
SMOKE = [spec.id for spec in TASK.instances("smoke")]


def _play(iid: str, program, seed: int = 0) -> dict[str, float]:
    inst = TASK.load(iid)
    sess = TASK.session(inst, seed)
    drv = A.Driver(program(inst.data, np.random.default_rng(seed)))
    while (st := sess.state()) is not None:
        sess.apply(drv.select(st))
    return TASK.evaluate(inst, sess.solution())


def test_tiers_and_bad_ids():
    for tier in ("smoke", "standard", "full"):
        ids = [s.id for s in TASK.instances(tier)]
        assert ids and len(set(ids)) == len(ids)
    with pytest.raises(UnknownNameError):
        TASK.load("onegood-d10-m1-k100-b0-s0")


@pytest.mark.parametrize("kind", ["block", "onegood", "logreg"])
def test_shared_minimiser_normalisation_and_derivatives(kind):
    prob = build(kind, 8, 3, 100.0, 1)
    np.testing.assert_allclose(prob.gaps(np.zeros(8)), 1.0, rtol=1e-12)
    assert prob.gaps(prob.x_star).max() <= 1e-15
    _, g, _ = prob.value_grad_hess(np.tile(prob.x_star, (3, 1)), np.arange(3))
    assert np.abs(g).max() < 1e-12  # every gradient vanishes at the shared x*
    rng = np.random.default_rng(0)
    x = rng.standard_normal(8)
    v, g, h = prob.value_grad_hess(np.tile(x, (3, 1)), np.arange(3), hess=True)
    e = 1e-6
    for i in range(3):
        fd = np.array(
            [
                (
                    prob.value_grad_hess((x + e * u)[None], [i])[0][0]
                    - prob.value_grad_hess((x - e * u)[None], [i])[0][0]
                )
                / (2 * e)
                for u in np.eye(8)
            ]
        )
        np.testing.assert_allclose(fd, g[i], atol=1e-6)
        fdh = np.array(
            [
                (
                    prob.value_grad_hess((x + e * u)[None], [i])[1][0]
                    - prob.value_grad_hess((x - e * u)[None], [i])[1][0]
                )
                / (2 * e)
                for u in np.eye(8)
            ]
        )
        np.testing.assert_allclose(fdh, h[i], atol=1e-5)
        assert np.linalg.eigvalsh(h[i])[-1] <= prob.smoothness()[i] * (1 + 1e-9)


def test_oracle_counts_and_refuses():
    inst = TASK.load(SMOKE[0])
    sess = TASK.session(inst, 0)
    d, m = inst.data["d"], inst.data["m"]
    sess.apply({"x": np.zeros((m, d)), "obj": np.arange(m), "hess": True, "point": np.zeros(d)})
    st = sess.state()
    assert st["grad_calls"] == m and st["hess_calls"] == m
    np.testing.assert_allclose(st["reply"]["values"], 1.0)
    for bad, msg in [
        (
            {"x": np.zeros((2, d)), "obj": np.array([0, m]), "hess": False, "point": np.zeros(d)},
            "outside",
        ),
        (
            {
                "x": np.zeros((2, d)),
                "obj": np.array([0.0, 1.0]),
                "hess": False,
                "point": np.zeros(d),
            },
            "integer",
        ),
        (
            {"x": np.zeros((3, d)), "obj": np.array([0, 1]), "hess": False, "point": np.zeros(d)},
            "shape",
        ),
        ({"x": np.zeros((2, d)), "obj": np.array([0, 1]), "hess": 1, "point": np.zeros(d)}, "bool"),
        ({"x": np.zeros((2, d)), "obj": np.array([0, 1])}, "exactly the keys"),
        (
            {
                "x": np.zeros((10**4, d)),
                "obj": np.zeros(10**4, dtype=np.int64),
                "hess": False,
                "point": np.zeros(d),
            },
            "left",
        ),
    ]:
        with pytest.raises(InvalidSolution, match=msg):
            sess.apply(bad)
    prob = Aligned(**inst.private)
    sess.apply({"done": prob.x_star.copy()})
    met = TASK.evaluate(inst, sess.solution())
    assert (
        met["max_gap"] == 0.0
        and met["dist"] == 0.0
        and met["grad_calls"] == m
        and met["hess_calls"] == m
    )


def test_curve_metrics():
    used = np.array([0, 10, 20, 30])
    gap = np.array([1.0, 1e-7, 1e-2, 1e-7])  # the pass at 10 does not count
    out = task_module.curve_metrics(used, gap, 100)
    assert out["frac_to_eps00"] == pytest.approx(0.1) and out["frac_to_eps01"] == pytest.approx(0.1)
    assert out["frac_to_eps02"] == pytest.approx(0.3) and out["frac_to_target"] == pytest.approx(
        0.3
    )
    assert out["levels_reached"] == 7 and out["frac_to_eps07"] == 1.0


def test_weight_solvers_agree_with_cvxpy():
    rng = np.random.default_rng(3)
    H = np.array(
        [
            (lambda q: q @ np.diag(rng.uniform(0.01, 1, 6)) @ q.T)(
                np.linalg.qr(rng.standard_normal((6, 6)))[0]
            )
            for _ in range(4)
        ]
    )
    w = A.max_min_eig_weights(H, iters=2000)
    wv = cp.Variable(4, nonneg=True)
    prob = cp.Problem(
        cp.Maximize(cp.lambda_min(sum(wv[i] * H[i] for i in range(4)))), [cp.sum(wv) == 1]
    )
    prob.solve()
    assert np.linalg.eigvalsh(np.tensordot(w, H, axes=1))[0] >= prob.value - 1e-3
    G = rng.standard_normal((4, 6))
    wm = A.min_norm_weights(G)
    v = cp.Variable(4, nonneg=True)
    cp.Problem(cp.Minimize(cp.sum_squares(G.T @ v)), [cp.sum(v) == 1]).solve()
    assert np.linalg.norm(G.T @ wm) <= np.linalg.norm(G.T @ v.value) + 1e-6
    gaps = rng.uniform(0.1, 1, 4)
    wp = A.polyak_weights(G, gaps)
    ratio = lambda u: (gaps @ u) ** 2 / np.sum((G.T @ u) ** 2)  # noqa: E731
    assert all(ratio(wp) >= ratio(u) - 1e-9 for u in rng.dirichlet(np.ones(4), 500))


def test_methods_progress_and_are_deterministic():
    iid = SMOKE[0]
    first, again = _play(iid, A.camoo), _play(iid, A.camoo)
    assert first == again and first["max_gap"] < 1e-6
    assert _play(iid, A.pamoo)["max_gap"] < 1e-10
    ew = _play(iid, A.equal_weights)
    assert first["max_gap"] < ew["max_gap"]  # the flat objectives dilute equal weights


def test_registered_methods():
    names = {
        n
        for n, m in discover_methods(families=["amoo"]).items()
        if "aligned-multiobjective" in m.tasks
    }
    assert {
        "camoo",
        "pamoo",
        "amoo-equal-weights",
        "amoo-ew-polyak",
        "mgda",
        "amoo-random-single",
        "amoo-best-single",
    } <= names
