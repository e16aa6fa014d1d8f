"""The ``conformal-decentralized`` task (DCP): scores, the centralised reference, the verifier, the methods.

Methods run in-process against the task's session (``run_inline``), so the
tests see the same counters and trace as a published run.
"""

from __future__ import annotations

import numpy as np
import pytest

from baselines.decentralized.cp_centralized import CentralizedCP
from baselines.decentralized.cp_gossip_quantile import GossipQuantile
from baselines.decentralized.cp_local import LocalCP
from bench.registry import get_task
from bench.task import InvalidSolution
from common.decentralized.program import NodeProgram, mix
from methods.decentralized.h_dcp import HDCP
from methods.decentralized.q_dcp import QDCP, smooth_pinball_grad, solve_local
from tasks.decentralized.conformal import CATALOG, MAX_ROUNDS, settling_round
from tasks.decentralized.conformal.scores import coverage_and_size, make_scores, split_cp_quantile
from tasks.decentralized.gossip import run_inline

TASK = get_task("conformal-decentralized")
RING = "digits-noniid-ring-k10-a0.1-s0"
TORUS = "dirichlet-iid-torus-k16-a0.05-s0"


def test_tiers_and_ids():
    assert [s.id for s in TASK.instances("smoke")] == [RING, TORUS]
    assert len(TASK.instances("standard")) == 66
    with pytest.raises(KeyError, match="did you mean 'digits'"):
        CATALOG.form.parse("digts-noniid-ring-k10-a0.1-s0")
    with pytest.raises(KeyError, match="unknown conformal-decentralized instance"):
        TASK.load("digits-noniid-torus-k15-a0.1-s0")


def test_scores_are_seeded_and_the_noniid_split_sorts_labels():
    a, b = make_scores("digits", "noniid", 10, 0), make_scores("digits", "noniid", 10, 0)
    assert np.array_equal(a.calib, b.calib) and np.array_equal(a.test, b.test)
    assert a.calib.shape == (10, 60) and a.test.shape[1] == 10
    assert np.all(np.diff(a.calib_labels.ravel()) >= 0)  # label-sorted shards
    assert len(set(a.calib_labels[0])) <= 2
    iid = make_scores("digits", "iid", 10, 0)
    assert len(set(iid.calib_labels[0])) >= 5
    # LAC: the calibration score is 1 - p_y of the softmax behind it
    assert np.allclose(a.calib, 1 - np.take_along_axis(a.calib_probs, a.calib_labels[..., None], 2)[..., 0])


@pytest.mark.parametrize("alpha", [0.1, 0.05, 0.2])
def test_the_centralised_reference_agrees_with_crepes(alpha):
    from crepes import ConformalClassifier

    sc = make_scores("synth", "iid", 10, 1)
    q = split_cp_quantile(sc.calib, alpha)
    cc = ConformalClassifier()
    cc.fit(sc.calib.ravel())
    sets = cc.predict_set(sc.test, confidence=1 - alpha, smoothing=False).astype(bool)
    assert np.array_equal(sets, sc.test <= q)
    cov, size = coverage_and_size(sc.test, sc.test_labels, np.array([q]))
    assert cov[0] == pytest.approx(sets[np.arange(len(sets)), sc.test_labels].mean())
    assert size[0] == pytest.approx(sets.sum(1).mean())


def test_centralised_cp_covers_on_average_over_draws():
    covs = []
    for seed in range(12):
        sc = make_scores("dirichlet", "iid", 10, seed)
        q = split_cp_quantile(sc.calib, 0.1)
        covs.append(coverage_and_size(sc.test, sc.test_labels, np.array([q]))[0][0])
    # E[coverage] is in [0.9, 0.9 + 1/(N+1)]; 12 draws of sd ~0.0067/sqrt(12)
    assert 0.9 - 0.006 <= np.mean(covs) <= 0.9 + 0.006


def test_evaluate_refuses_bad_answers_by_field():
    inst = TASK.load(RING)
    good = {"x": np.full((10, 1), 0.5), "rounds": 0, "scalars": np.zeros(10), "trace": {}}
    assert TASK.evaluate(inst, good)["rounds"] == 0
    with pytest.raises(InvalidSolution, match="session's dict"):
        TASK.evaluate(inst, np.zeros((10, 1)))
    with pytest.raises(InvalidSolution, match=r"field 'x': entry \(3, 0\) is nan"):
        TASK.evaluate(inst, {**good, "x": np.r_[np.full(3, 0.5), np.nan, np.full(6, 0.5)][:, None]})
    with pytest.raises(InvalidSolution, match=r"field 'x': expected 1 column"):
        TASK.evaluate(inst, {**good, "x": np.zeros((10, 2))})
    with pytest.raises(InvalidSolution, match=r"field 'x': expected shape \(10, d\)"):
        TASK.evaluate(inst, {**good, "x": np.zeros((9, 1))})
    with pytest.raises(InvalidSolution, match=r"field 'x'.*inf"):
        TASK.evaluate(inst, {**good, "x": np.full((10, 1), np.inf)})


def test_the_verifier_recomputes_coverage_and_flags_undercoverage():
    inst = TASK.load(RING)
    q = inst.references["centralized_q"].value
    m = TASK.evaluate(inst, {"x": np.full((10, 1), q), "rounds": 0, "scalars": np.zeros(10), "trace": {}})
    assert m["coverage_gap"] < 1e-12 and m["size_ratio"] == pytest.approx(1.0) and m["valid"] == 1
    m = TASK.evaluate(inst, {"x": np.zeros((10, 1)), "rounds": 0, "scalars": np.zeros(10), "trace": {}})
    assert m["valid"] == 0 and m["valid_size"] == 10.0 and m["coverage_mean"] < 0.5


def test_counts_come_from_the_simulator_and_centralised_cp_is_exact():
    inst = TASK.load(RING)
    m = run_inline(TASK, inst, CentralizedCP)
    assert m["coverage_gap"] < 1e-12 and m["threshold_gap"] == 0.0
    assert m["rounds"] == 5 and m["scalars"] == 5 * (600 + 10)  # ring of 10: diameter 5, rows of N + K
    assert run_inline(TASK, inst, LocalCP)["rounds"] == 0
    g = run_inline(TASK, inst, GossipQuantile)
    assert g["rounds"] == 150 and g["scalars"] == 150 and g["threshold_spread"] < 1e-6


def test_hdcp_with_enough_rounds_matches_centralised_cp():
    inst = TASK.load(TORUS)
    m = run_inline(TASK, inst, HDCP, params={"rounds": 400, "levels": 1000})
    assert m["threshold_spread"] == 0.0
    assert m["scalars"] == 400 * 1001 and m["rounds"] == 400
    assert m["coverage_excess"] >= 0.0 and m["coverage_gap"] <= 0.015 and m["size_ratio"] <= 1.1
    # the (N + K) rank costs about K(1 - alpha)/N of coverage: never within 0.01 here (README, rounds table)
    # too few rounds: the spectral-gap correction keeps it conservative (full sets at T = 0)
    m0 = run_inline(TASK, inst, HDCP, params={"rounds": 0, "levels": 1000})
    assert m0["coverage_mean"] == 1.0 and m0["set_size"] == 10.0


def test_qdcp_converges_and_covers():
    inst = TASK.load(RING)
    m = run_inline(TASK, inst, QDCP, params={"rounds": 1500})
    assert m["rounds"] == 1500 + 2 * 5 and m["threshold_spread"] < 1e-12
    assert m["coverage_excess"] >= 0.0
    # without the eps0 margin the ADMM answer is the (N+K) quantile up to the smoothing: near centralised
    m0 = run_inline(TASK, inst, QDCP, params={"rounds": 1500, "eps0": 0.0})
    assert abs(m0["threshold_gap"]) < 0.02 and m0["coverage_gap"] <= 0.03


def test_the_local_solve_finds_the_root():
    rng = np.random.default_rng(0)
    V = rng.random((4, 50))
    q0 = np.full(4, 0.5)
    shift, slope = rng.normal(size=4) * 1e3, np.full(4, 1e4)
    x = solve_local(np.zeros(4), shift, slope, 0.1, 2000.0, 2000.0, q0, V)
    g, _ = smooth_pinball_grad(x, 0.1, 2000.0, 2000.0, q0, V)
    assert np.all(np.abs(g + slope * x - shift) < 1e-8 * np.abs(shift).max())


def test_rounds_to_coverage_is_a_settling_round():
    r = np.arange(5.0)
    assert settling_round(np.array([0.9, 0.95, 0.9, 0.9, 0.9]), r, 0.9, True, 5) == 2.0
    assert settling_round(np.array([0.9, 0.9]), r[:2], 0.9, True, 2) == 0.0
    assert settling_round(np.array([0.9]), r[:1], 0.9, False, 1) == MAX_ROUNDS


def test_a_program_that_spends_the_budget_is_stopped():
    class Chatty(NodeProgram):
        def program(self):
            q = np.full((self.n, 1), 0.5)
            for _ in range(MAX_ROUNDS + 1):
                q = yield mix(q)
            return q

    with pytest.raises(InvalidSolution, match="rounds of this instance are spent"):
        run_inline(TASK, TASK.load(RING), Chatty)


@pytest.mark.long  # the runner's worker start-up takes seconds
def test_a_tiny_run_through_the_runner(cli, store):
    code, out, err = cli("run", "--task", "conformal-decentralized", "--tier", "smoke", "--method", "h-dcp", "cp-local",
                         "--instances", RING, "--store", store, "--jobs", "1", "--no-progress")
    assert code == 0, err
    code, out, err = cli("show", "--task", "conformal-decentralized", "--store", store)
    assert code == 0 and "h-dcp" in out and "cp-local" in out
