"""The ``log-concave-sampling`` task, its method and baselines, tested in-process (seconds).

The conformance suite (tests/test_conformance.py) runs every method in the sandbox on
the smoke tier; these tests check the oracle's counting, the metrics, the verifier, and
that the Picard schemes reach the Euler chain in the rounds their schedules say.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import tasks.sampling as T
from baselines.sampling.picard_acv import PicardLMCACV
from baselines.sampling.randomized_midpoint import RandomizedMidpoint
from baselines.sampling.ula import ULA
from bench.registry import UnknownNameError, get_task
from bench.task import InvalidSolution
from common.sampling.driver import schedule
from common.sampling.picard import brownian, picard_sweep
from methods.sampling.picard_parallel import PicardParallel

TASK = get_task("log-concave-sampling")
GAUSS = "gauss-d10-k4-s0"


def drive(cls, iid=GAUSS, seed=0, **params):
    inst = TASK.load(iid)
    sess = TASK.session(inst, seed)
    m = cls(inst, seed=seed, budget=60.0, **params)
    first = None
    while (st := sess.state()) is not None:
        first = first or st
        sess.apply(m.select(st))
    return inst, first, sess.solution()


def test_tiers_and_ids():
    for tier in ("smoke", "standard", "full"):
        ids = [s.id for s in TASK.instances(tier)]
        assert ids and len(set(ids)) == len(ids)
    ds = {
        s.params["d"]
        for s in TASK.instances("standard")
        if s.params["target"] == "gauss" and s.params["kappa"] == 4
    }
    assert len(ds) >= 4  # the rounds-vs-log d fit needs four dimensions
    with pytest.raises(UnknownNameError):
        TASK.load("gauss-d10-s0")


def test_debiased_w2_is_near_zero_for_exact_draws_and_sees_a_shift():
    rng = np.random.default_rng(0)
    d, n = 200, 400
    lam = np.geomspace(1, 10, d)
    mean = rng.standard_normal(d)
    exact = mean + rng.standard_normal((n, d)) / np.sqrt(lam)
    w2, raw = T.w2_diag_debiased(exact, mean, lam)
    assert raw > 0.5 and w2 < 0.5 * raw
    shifted, _ = T.w2_diag_debiased(exact + 1.0 / math.sqrt(d), mean, lam)
    assert 0.8 < shifted < 1.2  # a shift of norm 1
    wide, _ = T.w2_diag_debiased(mean + 2 * (exact - mean), mean, lam)
    assert abs(wide - math.sqrt(np.sum(1 / lam))) < 0.3 * math.sqrt(np.sum(1 / lam))


def test_sliced_w2_is_zero_on_itself_and_positive_on_a_shift():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((100, 5))
    dirs = T._directions(5, 0)
    assert T.sliced_w2(a, a, dirs) == 0.0
    assert T.sliced_w2(a + 1.0, a, dirs) > 0.2


def test_picard_sweep_fixed_point_is_the_euler_chain():
    rng = np.random.default_rng(2)
    lam = np.array([1.0, 3.0])
    M, n, d, delta = 6, 4, 2, 0.05
    x0 = rng.standard_normal((n, d))
    noise = brownian(rng, M, n, d, delta)
    traj = np.broadcast_to(x0, (M + 1, n, d))
    for _ in range(40):
        traj = picard_sweep(x0, lam * traj[:M], noise, delta)
    x = x0.copy()
    for m in range(M):
        x = x - delta * lam * x + (noise[m + 1] - noise[m])
    np.testing.assert_allclose(traj[M], x, atol=1e-10)


def test_oracle_counts_rounds_and_gradients_and_rejects_bad_answers():
    inst = TASK.load(GAUSS)
    sess = TASK.session(inst, 0)
    st = sess.state()
    assert st["x0"].shape == (T.N_PART, 10) and st["beta"] == 4.0
    sess.apply({"query": np.zeros((7, 10))})
    st = sess.state()
    np.testing.assert_allclose(st["grad"], -inst.data["mean"] * inst.data["lam"] * np.ones((7, 1)))
    sess.apply({"query": np.zeros((3, 10), dtype=np.float32)})
    assert sess.state()["grad"].dtype == np.float32
    assert (sess.rounds, sess.grads) == (2, 10)
    with pytest.raises(InvalidSolution, match="query"):
        sess.apply({"query": np.zeros((3, 9))})
    with pytest.raises(InvalidSolution, match="rows"):
        sess.apply({"samples": np.zeros((3, 10))})
    with pytest.raises(InvalidSolution, match="answer"):
        sess.apply({"grad": np.zeros((3, 10))})
    sess.apply({"snapshot": np.array(inst.data["x0"])})
    sess.apply({"samples": np.array(inst.data["x0"])})
    assert sess.state() is None
    out = TASK.evaluate(inst, sess.solution())
    assert out["rounds"] == 2 and out["grad_evals"] == 10 and out["reached"] == 0.0
    assert out["rounds_to_eps"] == 3.0
    assert out["w2"] == pytest.approx(inst.references["init"].value)
    assert out["w2_r0004"] == pytest.approx(
        inst.references["init"].value
    )  # the snapshot came after 2 rounds
    with pytest.raises(InvalidSolution):
        TASK.evaluate(inst, {"samples": np.zeros((T.N_PART, 10))})


def test_picard_schemes_reach_the_same_euler_chain_in_their_round_counts():
    inst, first, zs = drive(PicardParallel)
    _, _, acv = drive(PicardLMCACV)
    s = schedule(first)
    J = math.ceil(math.e * 4.0 * s.T) + s.K
    assert zs["rounds"] == s.N + J - 1
    assert acv["rounds"] == s.N * s.K
    assert zs["grad_evals"] > acv["grad_evals"]  # more parallel work for fewer rounds
    # same noise stream, both converged to the Euler chain (float32 queries)
    np.testing.assert_allclose(zs["samples"], acv["samples"], atol=1e-3)
    out = TASK.evaluate(inst, zs)
    assert out["reached"] == 1.0 and out["w2"] <= inst.references["eps"].value
    # nothing is final before J rounds: the curve stays at the starting error
    assert out["w2_r0016"] == inst.references["init"].value and out["w2_r1024"] == out["w2"]


def test_sequential_baselines_reach_eps_and_repeat():
    for cls in (ULA, RandomizedMidpoint):
        inst, _, sol = drive(cls, seed=3)
        out = TASK.evaluate(inst, sol)
        assert out["reached"] == 1.0 and out["rounds_to_eps"] <= out["rounds"]
        _, _, again = drive(cls, seed=3)
        np.testing.assert_array_equal(sol["samples"], again["samples"])


def test_logistic_reference_is_a_posterior_sample():
    inst = TASK.load("logreg-d10-k4-s0")
    ref = inst.private["reference"]
    data = inst.data
    # the score's mean vanishes under the posterior (Stein): E grad V = 0
    g = T.gradient(data, ref)
    assert np.linalg.norm(g.mean(0)) < 4 * np.linalg.norm(g.std(0)) / math.sqrt(len(ref))
    assert (
        0
        < inst.references["floor_raw"].value
        < inst.references["eps"].value
        < inst.references["init"].value
    )
