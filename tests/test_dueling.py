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
    assert {
        "gp-ngd",
        "rgd-dueling",
        "epoch-rgd-dueling",
        "beta-ngd",
        "duel-es",
        "duel-random-search",
    } <= names


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


# --- the paper's algorithms (Algorithms 1 and 2 of the full text) ----------------------------


def _theorem3(data: dict, eps: float) -> tuple[float, float]:
    """gamma and eta of Theorem 3, written out here independently of common/dueling."""
    d, p, beta, c_rho = data["d"], data["p"], data["beta"], data["rho_coef"]
    D, ct = 2.0 * data["radius"], 1.0 / 20.0
    gamma = ct * eps / (beta * np.sqrt(d) * D)
    eta = (
        p
        * c_rho
        * ct ** (2 * p - 1)
        * eps ** (2 * p)
        / (d ** ((2 * p + 1) / 2) * beta**p * D ** (2 * p - 1))
    )
    return gamma, eta


@pytest.mark.parametrize("iid", SMOKE)
def test_rgd_follows_algorithm_1(iid):
    """Every pair is (w + gamma u, w - gamma u) with unit u; every bit moves w to Proj(w - eta o u), o = 1 - 2 bit."""
    inst = TASK.load(iid)
    data, N = inst.data, inst.data["budget"]
    c = A.rgd_constants(data)
    # the budget-calibrated eps makes Theorem 3's horizon the budget, i.e. eta = D / sqrt(N - 1)
    assert c["T"] == pytest.approx(N) and c["eta"] == pytest.approx(
        2 * data["radius"] / np.sqrt(N - 1)
    )
    gamma, eta = _theorem3(data, c["eps"])
    assert (c["gamma"], c["eta"]) == (pytest.approx(gamma), pytest.approx(eta))
    rng = np.random.default_rng(3)
    prog = A.relative_gradient_descent(data, np.random.default_rng(1), eps=None, m=3)
    X, Y, point = next(prog)
    w, R = np.zeros(data["d"]), data["radius"]
    for _ in range(400):
        np.testing.assert_allclose(point, w, atol=1e-12)
        assert X.shape == (3, data["d"])
        U = (X - Y) / (2 * gamma)
        np.testing.assert_allclose(np.linalg.norm(U, axis=1), 1.0, rtol=1e-9)
        np.testing.assert_allclose((X + Y) / 2, np.tile(w, (3, 1)), atol=1e-12)
        bits = rng.integers(0, 2, 3).astype(np.int8)
        for b, u in zip(bits, U, strict=True):
            w = w - eta * (1 - 2 * int(b)) * u
            if np.linalg.norm(w) > R:  # the domain: the ball of radius ||x0 - x*|| around x0 = 0
                w = w * R / np.linalg.norm(w)
        X, Y, point = prog.send(bits)
    np.testing.assert_allclose(point, w, atol=1e-9)


def test_rgd_uses_the_whole_budget_within_the_round_cap():
    for tier in ("smoke", "standard", "full"):
        data = TASK.load(TASK.instances(tier)[0].id).data
        m = A.pairs_per_round(data)
        assert np.ceil(data["budget"] / m) < data["max_rounds"] and (
            m == 1 or np.ceil(data["budget"] / (m - 1)) >= data["max_rounds"]
        )


def test_rgd_descends_with_the_papers_constants():
    """With Theorem 3's constants at the smoke budget (eps far above the initial gap) RGD still moves towards x*."""
    iid = SMOKE[0]
    runs = [
        _play(iid, lambda data, rng: A.relative_gradient_descent(data, rng, eps=None, m=8), seed=s)
        for s in (0, 1)
    ]
    again = _play(
        iid, lambda data, rng: A.relative_gradient_descent(data, rng, eps=None, m=8), seed=0
    )
    np.testing.assert_equal(
        runs[0], again
    )  # deterministic (eps_slope is NaN here: assert_equal matches NaNs)
    for r in runs:
        assert (
            r["gap"] < 0.5 and r["dist"] < 1.0 and r["comparisons"] == TASK.load(iid).data["budget"]
        )


def test_epoch_rgd_follows_algorithm_2():
    """Epoch k: t_k = ceil(1 / (2 B^2 D_k^4p)) steps with gamma_k = c~ alpha D_k / (2 beta sqrt d) and
    eta_k = B D_k^(2p+1), then D_(k+1) = sqrt(3/4) D_k; after k_eps = ceil(log_{4/3}(beta D^2 / 2 eps)) epochs
    the last point is returned."""
    d, p, alpha, beta, D, ct = 2, 1, 1.0, 2.0, 1.0, 1.0 / 20.0
    B1 = 2 * p / (alpha + beta) * (alpha**2 / (4 * beta)) ** p * ct / d**1.5  # B for c_rho = 1
    c_rho = np.sqrt(1.0 / 20.0) / B1  # so that t_1 = 10
    data = {"d": d, "p": p, "budget": 10**6, "max_rounds": 10**6, "x0": np.zeros(d), "radius": D,
            "beta": beta, "alpha": alpha, "rho_coef": c_rho}  # fmt: skip
    B = A.epoch_rgd_constants(data)["B"]
    assert B == pytest.approx(c_rho * B1) and B == pytest.approx(np.sqrt(1 / 20))
    eps = beta * D**2 / 2 * 0.75**4.5  # k_eps = ceil(4.5) = 5
    steps, Dk = [], D  # (gamma_k, eta_k) of every step, from the paper's schedule
    for _ in range(5):
        t_k = int(np.ceil(1.0 / (2.0 * B**2 * Dk ** (4 * p))))
        steps += [(ct * alpha * Dk / (2 * beta * np.sqrt(d)), B * Dk ** (2 * p + 1))] * t_k
        Dk *= np.sqrt(0.75)
    assert steps[:10] == [steps[0]] * 10 and steps[10] != steps[9] and len(steps) > 100
    prog = A.epoch_rgd(data, np.random.default_rng(0), eps=eps, m=1)
    rng = np.random.default_rng(9)
    X, Y, point = next(prog)
    w = np.zeros(d)
    for i, (gamma, eta) in enumerate(steps):
        np.testing.assert_allclose(point, w, atol=1e-12)
        assert np.linalg.norm(X[0] - Y[0]) / 2 == pytest.approx(gamma, rel=1e-9)
        u = (X[0] - Y[0]) / (2 * gamma)
        bit = rng.integers(0, 2, 1).astype(np.int8)
        w = w - eta * (1 - 2 * int(bit[0])) * u
        w = w if np.linalg.norm(w) <= D else w * D / np.linalg.norm(w)
        try:
            X, Y, point = prog.send(bit)
        except StopIteration as stop:  # k_eps epochs done: the last point
            assert i == len(steps) - 1
            np.testing.assert_allclose(stop.value, w, atol=1e-12)
            break
    else:
        raise AssertionError("Epoch-RGD ran past k_eps epochs")


def test_epoch_rgd_skips_instances_without_strong_convexity():
    spec = discover_methods(families=["dueling"]).get("epoch-rgd-dueling")
    quartic = TASK.load("quartic-d5-k10-p1-b1-s0")
    assert isinstance(spec.supports(quartic), str) and "alpha" in spec.supports(quartic)
    assert spec.supports(TASK.load(SMOKE[0])) is True
    with pytest.raises(ValueError, match="alpha > 0"):
        next(A.epoch_rgd(quartic.data, np.random.default_rng(0), eps=None, m=None))
