"""The ``decentralized-optimization`` task (SPDO): generator, references, oracles, verifier, baselines.

Methods run in-process against the task's session (``run_inline``), so the
tests see the same counters and trace as a published run, without a
subprocess per job.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import minimize

from baselines.decentralized.dgd import DGD
from baselines.decentralized.diging import DIGing
from baselines.decentralized.extra import EXTRA
from baselines.decentralized.network_dane import NetworkDANE
from bench.registry import get_task
from bench.task import InvalidSolution
from common.decentralized.program import NodeProgram, mix, oracle
from methods.decentralized.spdo import SPDO
from tasks.decentralized.gossip import run_inline
from tasks.decentralized.optimization import CATALOG, Problem, generate, optimum

TASK = get_task("decentralized-optimization")
RIDGE = "ridge-ring-n16-d10-delta0.1-r400-s0"
LOGIT = "logistic-torus-n16-d10-delta0.1-r400-s0"


def test_tiers_and_ids():
    assert [s.id for s in TASK.instances("smoke")] == [RIDGE, LOGIT]
    assert len(TASK.instances("standard")) == 2 * 3 * 3 * 3
    with pytest.raises(KeyError, match="did you mean 'ridge'"):
        CATALOG.form.parse("rigde-ring-n16-d10-delta0.1-r400-s0")
    with pytest.raises(KeyError, match="unknown decentralized-optimization instance"):
        TASK.load("ridge-torus-n15-d10-delta0.1-r400-s0")


def test_generator_is_seeded_and_delta_controls_dissimilarity():
    a1, b1 = generate("ridge", 8, 5, 0.3, 1)
    a2, b2 = generate("ridge", 8, 5, 0.3, 1)
    assert np.array_equal(a1, a2) and np.array_equal(b1, b2)
    dis = []
    for delta in (0.0, 1.0):
        prob = Problem("ridge", *generate("ridge", 8, 5, delta, 0))
        H = prob.hessian(np.zeros(5))
        dis.append(max(np.abs(np.linalg.eigvalsh(prob.hessian(np.zeros(5), i) - H)).max() for i in range(8)))
    assert dis[1] > 2 * dis[0]


@pytest.mark.parametrize("loss", ["ridge", "logistic"])
def test_f_star_agrees_with_an_independent_solve(loss):
    prob = Problem(loss, *generate(loss, 6, 4, 0.2, 0))
    x, f_star, _ = optimum(prob)
    # gradient check of the objective, and scipy's BFGS from another start as a second opinion
    e = 1e-6 * np.eye(4)
    num = np.array([(prob.f(x + e[k]) - prob.f(x - e[k])) / 2e-6 for k in range(4)])
    assert np.allclose(num, prob.grad(x), atol=1e-7)
    res = minimize(prob.f, np.ones(4), jac=prob.grad, method="BFGS", options={"gtol": 1e-12})
    assert res.fun >= f_star - 1e-13 and res.fun == pytest.approx(f_star, abs=1e-10)


@pytest.mark.parametrize("loss", ["ridge", "logistic"])
def test_the_prox_oracle_solves_its_subproblem(loss):
    prob = Problem(loss, *generate(loss, 4, 3, 0.2, 0))
    rng = np.random.default_rng(0)
    V, G = rng.standard_normal((4, 3)), rng.standard_normal((4, 3))
    Y = prob.prox(V, G, 0.5)
    for i in range(4):
        def sub(y, i=i):
            return prob.local_grad(np.tile(y, (4, 1)))[i] - G[i] + (y - V[i]) / 0.5
        assert np.linalg.norm(sub(Y[i])) < 1e-10


def test_the_counts_and_the_trace_come_from_the_simulator():
    inst = TASK.load(RIDGE)
    m = run_inline(TASK, inst, DGD)
    assert m["rounds"] == 400 and m["grads"] == 400 and m["prox_calls"] == 0
    m = run_inline(TASK, inst, NetworkDANE)
    assert m["prox_calls"] >= 1 and m["grads"] == m["prox_calls"] + 1


def test_exact_methods_reach_1e8_and_dgd_stalls_on_the_smoke_instances():
    for iid in (RIDGE, LOGIT):
        inst = TASK.load(iid)
        assert run_inline(TASK, inst, EXTRA)["reached_eps4"] == 1.0
        assert run_inline(TASK, inst, NetworkDANE)["gap_final"] < 1e-6
        dgd = run_inline(TASK, inst, DGD)
        assert dgd["gap_final"] > 1e-10 and dgd["consensus_final"] > 0


def test_diging_converges_and_keeps_the_average_gradient_tracked():
    inst = TASK.load(RIDGE)
    m = run_inline(TASK, inst, DIGing)
    assert m["gap_final"] < 1e-2 and math.isfinite(m["log2_rounds_eps8"])


def test_spdo_with_inexact_subproblems_keeps_the_exact_prox_trajectory():
    """With lam equal to network-dane's mu and 10 local gradient steps instead of the exact prox,
    spdo's stabilised centre step reaches 1e-4 in the same rounds (49), and ends where it does."""
    inst = TASK.load(RIDGE)
    ours, exact = run_inline(TASK, inst, SPDO), run_inline(TASK, inst, NetworkDANE)
    assert abs(ours["rounds_eps4"] - exact["rounds_eps4"]) <= 2
    assert ours["gap_final"] < 1e-6 and ours["gap_final"] == pytest.approx(exact["gap_final"], rel=0.5)
    assert ours["prox_calls"] == 0 and ours["grads"] == 1 + 12 * 400 - 1
    assert run_inline(TASK, inst, DIGing)["gap_final"] > 100 * ours["gap_final"]


def test_a_method_that_never_reports_is_scored_from_its_answer():
    class Silent(NodeProgram):
        def program(self):
            x = np.zeros((self.n, 10))
            for _ in range(3):
                g = yield oracle("grad", x)
                x = yield mix(x - g / self.data["smoothness"])
            return x

    m = run_inline(TASK, TASK.load(RIDGE), Silent)
    assert m["rounds"] == 3 and m["reached_eps4"] == 0.0 and m["rounds_eps8"] == 400.0


def test_evaluate_refuses_what_the_session_does_not_build():
    inst = TASK.load(RIDGE)
    with pytest.raises(InvalidSolution, match="session's dict"):
        TASK.evaluate(inst, np.zeros((16, 10)))
    with pytest.raises(InvalidSolution, match=r"field 'x': expected 10 column"):
        TASK.evaluate(inst, {"x": np.zeros((16, 3)), "rounds": 0, "oracle": {}, "trace": {}})


def test_bad_oracle_arguments_are_refused_by_field():
    inst = TASK.load(RIDGE)
    sess = TASK.session(inst, 0)
    sess.state()
    with pytest.raises(InvalidSolution, match="field 'eta' must be a positive"):
        sess.apply(oracle("prox", np.zeros((16, 10)), shift=np.zeros((16, 10)), eta=-1.0))
    with pytest.raises(InvalidSolution, match=r"field 'x' must be \(16, 10\)"):
        sess.apply(oracle("grad", np.zeros((16, 4))))
