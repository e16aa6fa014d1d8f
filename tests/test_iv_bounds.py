"""The ``iv-bounds`` task, its method and baselines, tested in-process.

The conformance suite (tests/test_conformance.py) runs every method in the
sandbox on the smoke tier; these tests check the SCM, the trusted oracle, the
verifier, the closed-form bounds against a linear program (HiGHS), the torch
marginalisation against a direct average, and the 2SLS baseline on a linear IV
model. The end-to-end run of the paper's method is a ``long`` test.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy.optimize import linprog

import tasks.iv_bounds as tb
from baselines.iv_bounds.tsls import two_stage_least_squares
from bench.registry import UnknownNameError, get_task
from bench.task import InvalidSolution
from common.iv_bounds.nuisance import bounds_torch, finalize, marginal_nuisances

TASK = get_task("iv-bounds")
SMOKE = [spec.id for spec in TASK.instances("smoke")]


def test_tiers_list_distinct_ids_and_bad_ids_are_refused():
    for tier in ("smoke", "standard", "full"):
        ids = [spec.id for spec in TASK.instances(tier)]
        assert ids and len(set(ids)) == len(ids)
    with pytest.raises(UnknownNameError, match="malformed"):
        TASK.load("mono_z20")
    with pytest.raises(UnknownNameError, match="unknown iv-bounds instance"):
        TASK.load("mono-z20-n600-s9")


def test_generation_is_deterministic_read_only_and_in_range():
    first = TASK.load(SMOKE[0])
    TASK.clear_cache()
    again = TASK.load(SMOKE[0])
    assert again.digest == first.digest
    np.testing.assert_array_equal(again.data["Z"], first.data["Z"])
    assert not first.data["Z"].flags.writeable
    d = first.data
    n, dz = first.params["n"], first.params["dz"]
    assert d["X"].shape == (n, tb.D_X) and d["Z"].shape == (n, dz) and d["A"].dtype == np.int64
    assert set(np.unique(d["A"])) == {0, 1}
    assert d["Y"].min() >= 0.0 and d["Y"].max() <= 1.0
    assert "tau_test" not in d and "w" not in d  # the truth and the SCM stay on the task's side
    np.testing.assert_allclose(first.private["tau_test"], tb.tau(d["X_test"]))


def test_sample_has_the_confounded_structure():
    d = tb.sample("mono", 20, 20000, 3)
    # Y is bounded by construction (the clip never binds).
    raw = d["Y"]
    assert 0.0 < raw.min() and raw.max() < 1.0
    s = d["Z"] @ d["w"]
    assert abs(np.corrcoef(s, d["A"])[0, 1]) > 0.3  # a relevant instrument
    assert abs(np.corrcoef(d["Z"][:, -1], d["A"])[0, 1]) < 0.05  # the last coordinates are noise
    # The naive contrast is biased upwards by U (it raises both A and Y).
    naive = d["Y"][d["A"] == 1].mean() - d["Y"][d["A"] == 0].mean()
    assert naive > tb.tau(d["X"]).mean() + 0.05


def test_oracle_bounds_contain_tau_and_tighten_with_partitions():
    x = np.random.default_rng(0).uniform(-1, 1, size=(200, tb.D_X))
    for shape in tb.SHAPES:
        widths = []
        for k in (1, 2, 4):
            lower, upper = tb.oracle_bounds(shape, x, k=k)
            assert np.all(lower <= tb.tau(x) + 1e-12) and np.all(tb.tau(x) <= upper + 1e-12)
            widths.append(np.mean(upper - lower))
        assert widths[0] == pytest.approx(1.0)  # one partition: Manski's width hi - lo
        assert widths[0] > widths[1] > widths[2]


def _lp_bounds(pimu, pi, lo, hi):
    """min and max of E[Y(1)] - E[Y(0)] over unobserved means v_ak in [lo, hi] with one E[Y(a)] for all k."""
    k = pi.shape[0]
    # variables: m0, m1, v0_1..v0_K, v1_1..v1_K; E[Y(a) | k] = pimu_ak + (1 - pi_ak) v_ak = m_a.
    a_eq, b_eq = [], []
    for arm in (0, 1):
        for j in range(k):
            row = np.zeros(2 + 2 * k)
            row[arm] = 1.0
            row[2 + arm * k + j] = -(1.0 - pi[j, arm])
            a_eq.append(row)
            b_eq.append(pimu[j, arm])
    bounds = [(None, None)] * 2 + [(lo, hi)] * (2 * k)
    c = np.zeros(2 + 2 * k)
    c[1], c[0] = 1.0, -1.0
    low = linprog(c, A_eq=np.array(a_eq), b_eq=np.array(b_eq), bounds=bounds, method="highs")
    high = linprog(-c, A_eq=np.array(a_eq), b_eq=np.array(b_eq), bounds=bounds, method="highs")
    return low, high


def test_closed_form_bounds_equal_the_linear_program():
    """Faithfulness of the bound formula: the intersection of per-partition Manski intervals is the LP optimum."""
    rng = np.random.default_rng(1)
    lo, hi = 0.0, 1.0
    checked = crossed = 0
    for _ in range(60):
        k = int(rng.integers(1, 5))
        pi1 = rng.uniform(0.05, 0.95, size=k)
        pi = np.stack([1 - pi1, pi1], axis=1)
        mu = rng.uniform(lo, hi, size=(k, 2))
        pimu = pi * mu
        lower, upper = tb.closed_form_bounds(pimu[None], pi[None], lo, hi)
        low, high = _lp_bounds(pimu, pi, lo, hi)
        if low.status == 2:  # infeasible: the per-partition intervals of an arm do not meet
            arm_low = (pimu + (1 - pi) * lo).max(0)
            arm_up = (pimu + (1 - pi) * hi).min(0)
            assert np.any(arm_low > arm_up + 1e-12)
            crossed += 1
            continue
        assert low.status == 0 and high.status == 0
        assert lower[0] == pytest.approx(low.fun, abs=1e-8)
        assert upper[0] == pytest.approx(-high.fun, abs=1e-8)
        checked += 1
    assert checked >= 20 and crossed >= 1


def test_torch_marginalisation_and_bounds_match_a_direct_computation():
    rng = np.random.default_rng(2)
    m, n, k = 5, 40, 3
    p1 = rng.uniform(0.1, 0.9, size=(m, n))
    mu0, mu1 = rng.uniform(size=(m, n)), rng.uniform(size=(m, n))
    labels = np.arange(n) % k
    phi = np.eye(k)[labels]
    t = {
        name: torch.tensor(v) for name, v in {"p1": p1, "mu0": mu0, "mu1": mu1, "phi": phi}.items()
    }
    pimu, pi = marginal_nuisances(t["p1"], t["mu0"], t["mu1"], t["phi"], t["phi"].mean(0))
    for j in range(k):
        sel = labels == j
        np.testing.assert_allclose(pi[:, j, 1].numpy(), p1[:, sel].mean(1))
        np.testing.assert_allclose(pimu[:, j, 0].numpy(), (mu0 * (1 - p1))[:, sel].mean(1))
        np.testing.assert_allclose(pimu[:, j, 1].numpy(), (mu1 * p1)[:, sel].mean(1))
    lower_t, upper_t = bounds_torch(pimu, pi, 0.0, 1.0)
    lower, upper = tb.closed_form_bounds(pimu.numpy(), pi.numpy(), 0.0, 1.0)
    np.testing.assert_allclose(lower_t.numpy(), lower)
    np.testing.assert_allclose(upper_t.numpy(), upper)


def test_finalize_clips_and_resolves_crossed_bounds():
    out = finalize(np.array([-3.0, 0.4, 0.1]), np.array([0.2, 0.2, 2.0]), 0.0, 1.0)
    np.testing.assert_allclose(out["lower"], [-1.0, 0.3, 0.1])
    np.testing.assert_allclose(out["upper"], [0.2, 0.3, 1.0])


def test_verifier_recomputes_and_refuses():
    inst = TASK.load(SMOKE[0])
    m = len(inst.data["X_test"])
    tau = inst.private["tau_test"]
    manski = {"lower": np.full(m, -1.0), "upper": np.full(m, 1.0)}
    metrics = TASK.evaluate(inst, manski)
    assert metrics["coverage"] == 1.0 and metrics["mean_width"] == pytest.approx(2.0)
    exact = TASK.evaluate(inst, {"lower": tau.copy(), "upper": tau.copy()})
    assert (
        exact["coverage"] == 1.0 and exact["mean_width"] == 0.0 and exact["interval_score"] == 0.0
    )
    off = TASK.evaluate(inst, {"lower": tau + 0.1, "upper": tau + 0.2})
    assert off["coverage"] == 0.0 and off["mean_miss"] == pytest.approx(0.1)
    assert off["interval_score"] == pytest.approx(0.1 + 40 * 0.1)
    even = np.arange(m) % 2 == 0
    half = {
        "lower": np.where(even, tau - 0.05, tau + 0.05),
        "upper": np.where(even, tau + 0.05, tau + 0.1),
    }
    assert TASK.evaluate(inst, half)["coverage"] == pytest.approx(np.mean(even))
    ones = np.ones(m)
    for bad, message in [
        ({"lower": ones}, "keys 'lower' and 'upper'"),
        (np.zeros((m, 2)), "dict with keys"),
        ({"lower": ones.astype(np.float32), "upper": ones}, "lower: expected a float64"),
        ({"lower": ones, "upper": np.ones(m + 1)}, "upper: has shape"),
        ({"lower": np.full(m, np.nan), "upper": ones}, "lower: not finite at test point 0"),
        ({"lower": ones, "upper": np.full(m, 1.5)}, "upper: 1.5 at test point 0 is outside"),
        ({"lower": ones, "upper": np.zeros(m)}, "lower > upper at test point 0"),
    ]:
        with pytest.raises(InvalidSolution, match=message):
            TASK.evaluate(inst, bad)


def test_references_and_normalization():
    inst = TASK.load(SMOKE[0])
    refs = inst.references
    assert refs["manski"].value == 1.0 and 0.1 < refs["oracle"].value < 0.5
    norm = TASK.meta.normalization
    assert norm.apply(1.0, refs) == pytest.approx(0.0)
    assert norm.apply(refs["oracle"].value, refs) == pytest.approx(1.0)


def test_the_method_template_writes_a_valid_solution():
    namespace: dict = {"np": np}
    exec("def solve(instance, *, seed, budget):\n" + TASK.template, namespace)
    inst = TASK.load(SMOKE[0])
    assert TASK.evaluate(inst, namespace["solve"](inst, seed=0, budget=1.0))["coverage"] == 1.0


def test_two_stage_least_squares_recovers_a_linear_cate():
    rng = np.random.default_rng(4)
    n = 20000
    X = rng.uniform(-1, 1, size=(n, 2))
    Z = rng.standard_normal((n, 5))
    U = rng.standard_normal(n)
    A = (Z[:, 0] + U + rng.standard_normal(n) > 0).astype(float)
    Y = 0.3 * X[:, 0] + A * (0.5 + 0.2 * X[:, 1]) + U + 0.1 * rng.standard_normal(n)
    c0, c = two_stage_least_squares(X, Z, A, Y)
    assert c0 == pytest.approx(0.5, abs=0.1) and c[1] == pytest.approx(0.2, abs=0.15)
    ols = np.linalg.lstsq(np.column_stack([np.ones(n), X, A, A[:, None] * X]), Y, rcond=None)[0]
    assert ols[3] > c0 + 0.5  # the confounded regression is far off; 2SLS is not


@pytest.mark.long
def test_the_learned_partition_beats_kmeans_on_smoke():
    torch.set_num_threads(1)
    from baselines.iv_bounds.discretized import solve_kmeans
    from methods.iv_bounds.iv_repr import solve

    inst = TASK.load(SMOKE[0])
    ours = TASK.evaluate(
        inst,
        solve(
            inst,
            seed=0,
            budget=1e9,
            k=4,
            gamma=1.0,
            alpha=1.0,
            lr=0.03,
            epochs=60,
            patience=60,
            batch=128,
            nuisance_epochs=50,
        ),
    )
    km = TASK.evaluate(inst, solve_kmeans(inst, seed=0, budget=1e9, k=4, nuisance_epochs=50))
    assert ours["coverage"] >= 0.95 and km["coverage"] >= 0.95
    assert ours["mean_width"] < km["mean_width"] - 0.1
