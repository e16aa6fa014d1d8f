"""The ``dueling-optimization`` task, its comparison oracle and its optimisers, in-process.

The conformance suite (tests/test_conformance.py) runs every method in the
sandbox on the smoke tier; these tests check the task (ids, generator, the
normalisation f* = 0 and f(x0) = 1, the logistic-regression optimum against
scipy, the oracle's probabilities, the counting and the verifier) and that the
optimisers are deterministic and make progress.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.optimize

import tasks.dueling as task_module
from bench.registry import UnknownNameError, discover_methods, get_task
from bench.task import InvalidSolution
from common.dueling import algorithms as A
from common.dueling.driver import ProgramDriver
from tasks.dueling.problems import Problem, build, transfer

TASK = get_task("dueling-optimization")
SMOKE = [spec.id for spec in TASK.instances("smoke")]


def _play(iid: str, program, seed: int = 0) -> dict[str, float]:
    inst = TASK.load(iid)
    sess = TASK.session(inst, seed)
    drv = ProgramDriver(program(inst.data, np.random.default_rng(seed)), inst.data["x0"])
    while (st := sess.state()) is not None:
        sess.apply(drv.select(st))
    return TASK.evaluate(inst, sess.solution())


def test_tiers_and_bad_ids():
    for tier in ("smoke", "standard", "full"):
        ids = [s.id for s in TASK.instances(tier)]
        assert ids and len(set(ids)) == len(ids)
    with pytest.raises(UnknownNameError):
        TASK.load("quad-d5-k10-p2-b0-s0")
    with pytest.raises(UnknownNameError):
        TASK.load("quad-d7-k10-p1-b0-s0")


@pytest.mark.parametrize("fn", ["quad", "quartic", "logreg"])
def test_normalisation_and_optimum(fn):
    prob = build(fn, 6, 10.0, 3)
    assert prob.values(np.zeros(6)) == pytest.approx(1.0, rel=1e-12)
    assert prob.values(prob.x_star) == pytest.approx(0.0, abs=1e-12)
    rng = np.random.default_rng(0)
    assert np.all(prob.values(prob.x_star + 1e-3 * rng.standard_normal((20, 6))) > 0)
    if fn == "logreg":  # the Newton optimum against an independent solver

        def raw(w):
            m = (prob.X @ w) * prob.y
            return np.logaddexp(0.0, -m).mean() + 0.5 * prob.lam * w @ w

        res = scipy.optimize.minimize(raw, np.zeros(6), method="BFGS", options={"gtol": 1e-12})
        np.testing.assert_allclose(res.x, prob.x_star, atol=1e-5)
        assert raw(prob.x_star) <= res.fun + 1e-14


def test_transfer_degrees():
    z = np.array([-1e-3, 0.0, 1e-3])
    for p in (1, 3):
        r = transfer(z, p)
        assert r[1] == 0.5 and r[0] < 0.5 < r[2]
        # minimal degree p: (rho(z) - 1/2) / z^p tends to a non-zero constant
        small = transfer(np.array([1e-4, 2e-4]), p) - 0.5
        assert small[1] / small[0] == pytest.approx(2.0**p, rel=1e-3)


def test_oracle_answers_with_rho_and_counts():
    inst = TASK.load(SMOKE[1])  # p = 3
    sess = TASK.session(inst, 0)
    prob = Problem(**inst.private)
    d = prob.d
    x = np.tile(
        prob.x_star * (1.0 - np.sqrt(0.9)), (20000, 1)
    )  # f(x) = 0.9 on a quadratic, f(y) = 1
    y = np.zeros((20000, d))
    sess.apply({"x": x, "y": y, "point": np.zeros(d)})
    want = transfer(prob.values(y[:1]) - prob.values(x[:1]), 3)[0]
    assert want == pytest.approx(0.5 + (0.1 / 0.25) ** 3)
    assert abs(sess.bits.mean() - want) < 4 * np.sqrt(want * (1 - want) / 20000)
    assert sess.state()["used"] == 20000 and sess.state()["left"] == inst.data["budget"] - 20000
    with pytest.raises(InvalidSolution, match="comparisons are left"):
        sess.apply(
            {
                "x": np.zeros((inst.data["budget"], d)),
                "y": np.zeros((inst.data["budget"], d)),
                "point": np.zeros(d),
            }
        )
    for bad, msg in [
        ({"x": np.zeros((2, d)), "y": np.zeros((3, d)), "point": np.zeros(d)}, "same shape"),
        ({"x": np.zeros((2, d + 1)), "y": np.zeros((2, d + 1)), "point": np.zeros(d)}, "shape"),
        (
            {"x": np.zeros((2, d), dtype=np.float32), "y": np.zeros((2, d)), "point": np.zeros(d)},
            "float32",
        ),
        ({"x": np.zeros((2, d)), "y": np.full((2, d), np.nan), "point": np.zeros(d)}, "not finite"),
        ({"x": np.zeros((2, d))}, "exactly the keys"),
        ([1, 2], "must be a dict"),
    ]:
        with pytest.raises(InvalidSolution, match=msg):
            sess.apply(bad)
    sess.apply({"done": prob.x_star.copy()})
    assert sess.state() is None
    m = TASK.evaluate(inst, sess.solution())
    assert m["gap"] == pytest.approx(0.0, abs=1e-14) and m["comparisons"] == 20000
    with pytest.raises(InvalidSolution, match="without a final point"):
        TASK.evaluate(inst, {"x": None})


def test_curve_metrics_count_the_last_entry_into_each_level():
    used = np.array([0, 10, 20, 30, 40])
    gap = np.array([1.0, 0.05, 0.5, 0.05, 0.005])  # a lucky pass at 10 does not count
    m = task_module.curve_metrics(used, gap, 100)
    assert m["frac_to_eps00"] == pytest.approx(0.30)  # 0.316: from 30 on
    assert m["frac_to_eps01"] == pytest.approx(0.30)  # 0.1
    assert m["frac_to_eps03"] == pytest.approx(0.40)  # 0.01
    assert m["frac_to_eps04"] == 1.0 and m["levels_reached"] == 4


def test_slope_of_a_known_curve():
    # N(eps) = eps^-2 exactly: the fitted slope is 2
    eps = np.array(task_module.EPS_LEVELS[:8])
    used = np.concatenate([[0], np.ceil(eps**-2.0)])
    gap = np.concatenate([[1.0], eps * 0.999])
    m = task_module.curve_metrics(used, gap, int(used[-1]) + 10)
    assert m["eps_slope"] == pytest.approx(2.0, abs=0.02)


def test_optimisers_progress_and_are_deterministic():
    iid = SMOKE[0]

    def gp(data, rng):
        return A.general_ngd(
            data, rng, c_eta=2.0, c_gamma=64.0, c_batch=0.25, c_steps=1.0, max_batch=100_000
        )

    first, again = _play(iid, gp, seed=1), _play(iid, gp, seed=1)
    assert first == again
    assert first["gap"] < 1e-2 and first["comparisons"] <= TASK.load(iid).data["budget"]
    rs = _play(iid, lambda data, rng: A.random_search(data, rng, repeats=16, per_round=64))
    assert first["gap"] < rs["gap"]


def test_registered_methods():
    names = {
        n
        for n, m in discover_methods(families=["dueling"]).items()
        if "dueling-optimization" in m.tasks
    }
    assert {"gp-ngd", "beta-ngd", "duel-es", "duel-random-search"} <= names


def test_gp_ngd_with_noiseless_bits_is_sign_ngd():
    """Faithfulness: fed exact comparisons, gp-ngd's step is x + eta * sign(-<grad f(x), u>) u (exact on a quadratic)."""
    inst = TASK.load(SMOKE[0])
    prob = Problem(**inst.private)
    H = prob.Q @ np.diag(prob.coef) @ prob.Q.T
    rng_m, rng_ref = np.random.default_rng(5), np.random.default_rng(5)
    prog = A.general_ngd(
        inst.data, rng_m, c_eta=2.0, c_gamma=64.0, c_batch=0.25, c_steps=1.0, max_batch=100_000
    )
    x_ref = np.zeros(prob.d)
    X, Y, point = next(prog)
    for _ in range(50):
        np.testing.assert_allclose(point, x_ref, atol=1e-12)
        u = (X[0] - Y[0]) / np.linalg.norm(X[0] - Y[0])
        u_ref = rng_ref.standard_normal(prob.d)
        np.testing.assert_allclose(u, u_ref / np.linalg.norm(u_ref), atol=1e-9)
        eta = np.linalg.norm(X[0] - Y[0]) / 2 / 64.0
        x_ref = x_ref - eta * np.sign(H @ (x_ref - prob.x_star) @ u) * u
        bits = (prob.values(X) < prob.values(Y)).astype(np.int8)
        X, Y, point = prog.send(bits)
