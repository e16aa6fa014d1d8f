"""The privacy family: the shared audit, both tasks' verifiers, and the methods, in-process (seconds).

The conformance suite runs every method in the sandbox on the smoke tier; these
tests check the audit's arithmetic, that it catches a planted leaky method on both
tasks (and passes the private ones), the budget and state checks, the task's
space count, and two faithfulness checks (objective perturbation against
scikit-learn's logistic regression at a huge epsilon; the tree mechanism's noise).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from baselines.privacy.exact_counter import ExactCounter
from baselines.privacy.jain_linear import JainLinear
from baselines.privacy.objective_perturbation import objective_perturbation_fit
from bench.registry import get_task
from bench.task import InvalidSolution
from common.privacy.accounting import epsilon_of, rho_for
from common.privacy.learner import PrivateLearner
from common.privacy.streams import TreeNoise
from methods.privacy.margin_adaptive import MarginAdaptive, margin_adaptive_fit
from methods.privacy.sublinear_distinct import SublinearDistinct
from tasks.privacy.audit import epsilon_lower_bound, max_detectable
from tasks.privacy.distinct import distinct_counts, make_stream, occurrency, state_words

CLF = get_task("private-classification")
DIS = get_task("private-distinct-count")
AUDIT_CLF = "audit-g0.1-n64-d5-o0-e1-r100-s0"
AUDIT_DIS = "audit-T256-W4-e1-r400-s0"


def _drive(task, iid, learner, seed=0):
    inst = task.load(iid)
    s = task.session(inst, seed)
    while (st := s.state()) is not None:
        s.apply(learner.select(st))
    return task.evaluate(inst, s.solution())


class LeakyLearner(PrivateLearner):
    """Planted leak: the margin method without its noise, declaring the instance's epsilon anyway."""

    def train(self, X, y, epsilon, delta, rng):
        w, _, _ = margin_adaptive_fit(X, y, epsilon, delta, rng, iters=50, noise=False)
        return w, epsilon, delta


class LeakyCounter(ExactCounter):
    """Planted leak: the exact counter, declaring epsilon = 1."""

    def run(self, *args):
        est, mem, _, _ = super().run(*args)
        return est, mem, 1.0, 0.0


def test_audit_bound_is_zero_on_noise_and_maximal_on_perfect_separation():
    rng = np.random.default_rng(0)
    bits = rng.integers(0, 2, 400)
    assert epsilon_lower_bound(rng.standard_normal(400), bits, 1e-6).eps_lb == 0.0
    perfect = epsilon_lower_bound(bits.astype(float), bits, 0.0)
    assert perfect.tpr == 1.0 and perfect.fpr == 0.0
    assert perfect.eps_lb == pytest.approx(perfect.max_detectable, rel=1e-12) and 3.0 < perfect.eps_lb < 3.6
    # a shift of two standard deviations is seen, but well below what perfect separation gives
    shifted = epsilon_lower_bound(rng.standard_normal(400) + 2.0 * bits, bits, 1e-6).eps_lb
    assert 0.3 < shifted < perfect.eps_lb


def test_no_audit_exceeds_its_own_ceiling_whatever_the_split():
    # the ceiling comes from the held-out counts: an unbalanced split reaches above the balanced one
    assert max_detectable(26, 24) > max_detectable(25, 25)
    rng = np.random.default_rng(1)
    for trial in range(40):
        m = int(rng.integers(20, 200))
        bits = (rng.random(m) < rng.uniform(0.2, 0.8)).astype(int)
        stats = bits + rng.normal(0.0, rng.choice([0.01, 0.3, 1.0]), m)  # from perfect separation to noise
        res = epsilon_lower_bound(stats, bits, 1e-4)
        assert res.test_pos + res.test_neg == res.test_trials == m - m // 2
        assert res.eps_lb <= res.max_detectable + 1e-12, (trial, res)


def test_zcdp_conversion_round_trips():
    for eps, delta in ((0.1, 1e-8), (1.0, 1e-6), (8.0, 1e-4)):
        assert epsilon_of(rho_for(eps, delta), delta) == pytest.approx(eps, rel=1e-9)


def test_classification_audit_catches_the_leaky_learner_and_passes_the_paper_method():
    inst = CLF.load(AUDIT_CLF)
    leaky = _drive(CLF, AUDIT_CLF, LeakyLearner(inst, seed=0, budget=1e9))
    assert leaky["privacy_violation"] == 1.0 and leaky["eps_lb"] > 1.5
    honest = _drive(
        CLF,
        AUDIT_CLF,
        MarginAdaptive(inst, seed=0, budget=1e9, mechanism="m", accountant="a", iters=50),
    )
    assert (
        honest["privacy_violation"] == 0.0
        and honest["eps_lb"] <= 1.0
        and honest["declared_epsilon"] == pytest.approx(1.0)
    )


def test_distinct_audit_catches_the_leaky_counter_and_passes_the_sublinear_method():
    inst = DIS.load(AUDIT_DIS)
    leaky = _drive(DIS, AUDIT_DIS, LeakyCounter(inst, seed=0, budget=1e9))
    assert leaky["privacy_violation"] == 1.0 and leaky["eps_lb"] > 3.0
    honest = _drive(
        DIS,
        AUDIT_DIS,
        SublinearDistinct(
            inst, seed=0, budget=1e9, mechanism="m", accountant="a", eta=0.25, kappa=2.0
        ),
    )
    assert honest["privacy_violation"] == 0.0


def test_a_declaration_above_the_budget_is_invalid():
    inst = CLF.load("erm-g0.1-n500-d10-o5-e1-r1-s0")
    s = CLF.session(inst, 0)
    s.state()
    with pytest.raises(InvalidSolution, match="exceeds the instance's budget"):
        s.apply({"w": np.zeros(10), "epsilon": 2.0, "delta": 0.0})
    with pytest.raises(InvalidSolution, match="declared privacy"):
        s.apply({"w": np.zeros(10)})


def test_classification_scores_the_planted_direction_at_its_outlier_rate():
    inst = CLF.load("erm-g0.1-n500-d10-o5-e1-r1-s0")
    assert inst.data["X"].shape == (500, 10) and "w_star" not in inst.data
    assert np.all(np.abs(inst.data["X"] @ inst.private["w_star"]) >= 0.1 - 1e-12)
    sol = {"answers": [{"w": inst.private["w_star"].copy(), "epsilon": math.inf, "delta": 0.0}]}
    m = CLF.evaluate(inst, sol)
    assert (
        m["train_risk"] == pytest.approx(5 / 500)
        and m["test_error"] == 0.0
        and m["is_private"] == 0.0
    )
    with pytest.raises(InvalidSolution, match="shape"):
        CLF.evaluate(inst, {"answers": [{"w": np.zeros(3), "epsilon": 1.0, "delta": 0.0}]})


def test_objective_perturbation_tends_to_sklearn_logistic_regression_at_huge_epsilon():
    inst = CLF.load("erm-g0.1-n500-d10-o5-e1-r1-s0")
    X, y = np.asarray(inst.data["X"]), np.asarray(inst.data["y"])
    w = objective_perturbation_fit(X, y, 1e7, np.random.default_rng(0), C=1.0)
    ref = (
        LogisticRegression(C=1.0, fit_intercept=False, tol=1e-10, max_iter=10_000)
        .fit(X, y)
        .coef_.ravel()
    )
    assert np.allclose(w, ref, atol=2e-3 * np.linalg.norm(ref))


def test_streams_keep_the_occurrency_bound_and_the_turnstile_rule():
    items, deltas = make_stream(4096, 16, 0)
    assert occurrency(items, deltas) <= 16
    D = distinct_counts(items, deltas)  # raises on a deletion below zero
    assert D.min() >= 0 and D.max() > 100


def test_the_task_counts_the_state_and_refuses_what_it_cannot_count():
    assert (
        state_words({"a": np.zeros(10, dtype=np.int64), "b": np.zeros(3, dtype=np.int32), "c": 5})
        == 10 + 2 + 1
    )
    with pytest.raises(InvalidSolution, match="numpy arrays and numbers only"):
        state_words({"a": [1, 2, 3]})
    with pytest.raises(InvalidSolution, match="dtype"):
        state_words({"a": np.array(["x"])})


def test_sublinear_state_is_smaller_than_the_linear_one_and_carries_everything():
    iid = "stream-T4096-W16-e1-r1-s0"
    inst = DIS.load(iid)
    # a fresh object every round gives the same answers: nothing survives a round outside the state
    s = DIS.session(inst, 0)
    while (st := s.state()) is not None:
        s.apply(
            SublinearDistinct(
                inst, seed=0, budget=1e9, mechanism="m", accountant="a", eta=0.25, kappa=2.0
            ).select(st)
        )
    fresh = DIS.evaluate(inst, s.solution())
    same = _drive(
        DIS,
        iid,
        SublinearDistinct(
            inst, seed=0, budget=1e9, mechanism="m", accountant="a", eta=0.25, kappa=2.0
        ),
    )
    assert fresh == same
    lin = _drive(DIS, iid, JainLinear(inst, seed=0, budget=1e9, mechanism="m", accountant="a"))
    assert lin["space_words"] >= 3 * lin["items_seen"] > same["space_words"]


def test_tree_noise_reuses_nodes_across_rounds_and_has_popcount_variance():
    tree = TreeNoise(8, 1.0)
    tree.noise(np.arange(1, 41, dtype=np.int64), np.random.default_rng(5))
    # step 32 = 2^5 is the node (5, 1), first used in the first round: the second round reuses its value
    assert tree.idx[5] == 1
    kept = tree.val[5]
    assert tree.noise(np.array([41, 64], dtype=np.int64), np.random.default_rng(9))[0] != 0.0
    again = TreeNoise(
        8, 1.0, np.array([-1, -1, -1, -1, -1, 1, -1, -1]), np.array([0, 0, 0, 0, 0, kept, 0, 0.0])
    )
    assert again.noise(np.array([32], dtype=np.int64), np.random.default_rng(11))[0] == kept
    # the release at t carries one node per set bit of t: variance popcount(t) sigma^2
    draws = np.array(
        [
            TreeNoise(8, 1.0).noise(np.array([7, 48], dtype=np.int64), np.random.default_rng(i))
            for i in range(4000)
        ]
    )
    assert draws[:, 0].var() == pytest.approx(3, rel=0.1) and draws[:, 1].var() == pytest.approx(
        2, rel=0.1
    )
