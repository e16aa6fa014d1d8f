"""The ``fisher-information`` task, its method and baselines, tested in-process (seconds).

The conformance suite (tests/test_conformance.py) runs every method in the
sandbox on the smoke tier; these tests check the task (ids, the sampler, the
quadrature truth against closed forms, the verifier) and the estimators'
numerics (the trapezoid rule on a Gaussian mixture, consistency in n).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, stats

import tasks.fisher as T
from baselines.fisher import clipped_plugin, dsm_fisher, kde_plugin
from bench.registry import UnknownNameError, get_task
from bench.task import InvalidSolution
from common.fisher import mixture_density, mixture_fisher

TASK = get_task("fisher-information")
SMOKE = [spec.id for spec in TASK.instances("smoke")]


def test_tiers_list_distinct_ids_and_bad_ids_are_refused():
    for tier in ("smoke", "standard", "full"):
        ids = [spec.id for spec in TASK.instances(tier)]
        assert ids and len(set(ids)) == len(ids)
    std = TASK.instances("standard")
    assert len({s.params["n"] for s in std}) >= 4  # a slope needs four budgets
    # the issue asks for 20 seeds per setting
    assert len({s.params["seed"] for s in std}) * T.REPLICATES >= 20
    assert {s.params["t"] for s in std} == set(T.T_VALUES)
    with pytest.raises(UnknownNameError, match="malformed"):
        TASK.load("beta25-n100")
    with pytest.raises(UnknownNameError, match="density"):
        TASK.load("beta52-t0.1-n200-s0")


def test_samples_are_deterministic_and_follow_the_density():
    inst = TASK.load(SMOKE[0])
    TASK.clear_cache()
    again = TASK.load(SMOKE[0])
    assert again.digest == inst.digest
    np.testing.assert_array_equal(again.data["x"], inst.data["x"])
    assert not inst.data["x"].flags.writeable
    assert "density" not in inst.data  # f stays on the task's side
    rng = np.random.default_rng(0)
    grid_x = np.linspace(0, 1, 20001)
    for name in T.DENSITIES:
        x = T.sample(name, 4000, rng)
        pdf = T.density(name, grid_x)
        cdf = np.concatenate([[0.0], np.cumsum(0.5 * (pdf[1:] + pdf[:-1]) * np.diff(grid_x))])
        assert cdf[-1] == pytest.approx(1.0, abs=1e-4), name
        assert stats.kstest(x, lambda v, c=cdf: np.interp(v, grid_x, c)).pvalue > 1e-3, name


def test_truth_matches_closed_forms():
    # one uniform: p = (Phi((y - a)/s) - Phi((y - b)/s)) / (b - a), p' = (phi_s(y - a) - phi_s(y - b)) / (b - a)
    t = 0.1
    s = math.sqrt(t)
    y = np.linspace(-1, 2, 7)
    p, dp = T.smoothed("unifmix", t, y)
    exact_p = 1.25 * (
        stats.norm.cdf(y / s)
        - stats.norm.cdf((y - 0.4) / s)
        + stats.norm.cdf((y - 0.6) / s)
        - stats.norm.cdf((y - 1) / s)
    )
    exact_dp = 1.25 * (
        stats.norm.pdf(y, 0, s)
        - stats.norm.pdf(y, 0.4, s)
        + stats.norm.pdf(y, 0.6, s)
        - stats.norm.pdf(y, 1, s)
    )
    np.testing.assert_allclose(p, exact_p, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(dp, exact_dp, rtol=1e-10, atol=1e-14)

    # J(unifmix * phi_t) independently, by scipy quad of the closed form
    def mass(v, a, b):  # P(a <= v - s Z <= b) without cancellation in either tail
        hi, lo = (v - a) / s, (v - b) / s
        return (
            stats.norm.cdf(hi) - stats.norm.cdf(lo)
            if v < 0.5 * (a + b)
            else stats.norm.sf(lo) - stats.norm.sf(hi)
        )

    def f(v):
        dp = 1.25 * (
            stats.norm.pdf(v, 0, s)
            - stats.norm.pdf(v, 0.4, s)
            + stats.norm.pdf(v, 0.6, s)
            - stats.norm.pdf(v, 1, s)
        )
        return float(dp * dp / (1.25 * (mass(v, 0, 0.4) + mass(v, 0.6, 1))))

    ref = integrate.quad(
        f, -10 * s, 1 + 10 * s, points=(0, 0.4, 0.6, 1), limit=400, epsabs=1e-13, epsrel=1e-12
    )[0]
    assert T.fisher_truth("unifmix", t) == pytest.approx(ref, rel=1e-8)
    # J decreases in t and 1 / (var(f) + t) <= J (Cramer-Rao for location)
    for name in T.DENSITIES:
        js = [T.fisher_truth(name, t) for t in T.T_VALUES]
        assert js[0] > js[1] > js[2]
        u = np.linspace(0, 1, 20001)
        w = T.density(name, u) / T.density(name, u).sum()
        var = float((u * u) @ w - (u @ w) ** 2)
        assert all(j >= 1 / (var + t) for j, t in zip(js, T.T_VALUES, strict=True))


def test_reference_floor_is_tiny_and_verifier_scores_and_refuses():
    inst = TASK.load(SMOKE[0])
    refs = inst.references
    assert inst.data["x"].shape == (T.REPLICATES, inst.params["n"])
    assert not np.array_equal(inst.data["x"][0], inst.data["x"][1])  # independent replicates
    assert refs["quad_floor"].value < 1e-10 * refs["truth"].value
    J = refs["truth"].value
    est = np.full(T.REPLICATES, 1.1 * J)
    est[0] = 0.7 * J
    m = TASK.evaluate(inst, est)
    assert m["rel_err_r0"] == pytest.approx(0.3) and m["rel_err_r1"] == pytest.approx(0.1)
    assert m["rel_err"] == pytest.approx((0.3 + 0.1 * (T.REPLICATES - 1)) / T.REPLICATES)
    assert m["signed_rel"] == pytest.approx((-0.3 + 0.1 * (T.REPLICATES - 1)) / T.REPLICATES)
    assert m["rel_err_med"] == pytest.approx(0.1) and m["samples"] == inst.params["n"]
    assert m["rel_rmse"] == pytest.approx(
        math.sqrt((0.09 + 0.01 * (T.REPLICATES - 1)) / T.REPLICATES)
    )
    for bad, message in [
        (np.full(T.REPLICATES, np.nan), "finite"),
        (-est, "> 0"),
        (1.0, "got float"),
        (est[:3], "shape"),
        (est.astype(np.float32), "dtype float32"),
        (list(est), "got list"),
    ]:
        with pytest.raises(InvalidSolution, match=message):
            TASK.evaluate(inst, bad)


def test_template_is_valid():
    namespace: dict = {"np": np}
    exec("def solve(instance, *, seed, budget):\n" + TASK.template, namespace)
    inst = TASK.load(SMOKE[0])
    assert TASK.evaluate(inst, namespace["solve"](inst, seed=0, budget=1.0))["rel_err"] < 1
    # and the registered estimators answer the same protocol
    from baselines.fisher.dsm_fisher import solve as dsm
    from methods.fisher.smoothed_plugin import solve as plugin

    for solve in (plugin, dsm, kde_plugin.solve, clipped_plugin.solve):
        assert TASK.evaluate(inst, solve(inst, seed=0, budget=10.0))["rel_err"] < 0.3


def test_mixture_quadrature_is_exact_enough():
    assert mixture_fisher(np.array([0.3]), 0.01) == pytest.approx(100.0, rel=1e-12)
    c = np.random.default_rng(1).uniform(0, 1, 50)
    for var in (0.01, 1.0):
        assert mixture_fisher(c, var) == pytest.approx(mixture_fisher(c, var, steps=40), rel=1e-10)
    q, dq = mixture_density(c, 0.1, np.array([0.5]))
    assert q[0] == pytest.approx(stats.norm.pdf(0.5, c, math.sqrt(0.1)).mean(), rel=1e-12)
    # the floor only lowers J
    assert mixture_fisher(c, 0.01, floor=clipped_plugin.floor_for(50, 0.01)) <= mixture_fisher(
        c, 0.01
    )


def test_estimators_converge_to_the_truth():
    rng = np.random.default_rng(3)
    J = T.fisher_truth("beta25", 0.1)
    x = T.sample("beta25", 20000, rng)
    assert abs(mixture_fisher(x, 0.1) - J) / J < 0.02
    assert abs(mixture_fisher(x, 0.1, floor=clipped_plugin.floor_for(len(x), 0.1)) - J) / J < 0.02
    assert abs(mixture_fisher(x, 0.1 + kde_plugin.silverman_var(x)) - J) / J < 0.05
    assert abs(dsm_fisher.dsm_fisher(x, 0.1, np.random.default_rng(0)) - J) / J < 0.05
    # the same seed gives the same DSM estimate
    a = dsm_fisher.dsm_fisher(x[:500], 0.1, np.random.default_rng(5))
    assert a == dsm_fisher.dsm_fisher(x[:500], 0.1, np.random.default_rng(5))


def test_plugin_equals_an_independent_quadrature_of_its_definition():
    # J(p_n) = integral p_n'^2 / p_n for p_n = (1/n) sum phi_t(y - X_i), by scipy quad (adaptive)
    x = np.random.default_rng(4).beta(2, 5, 7)
    t = 0.01
    s = math.sqrt(t)

    def integrand(y):
        k = stats.norm.pdf(y, x, s)
        return float(((k * (x - y) / t).mean()) ** 2 / k.mean())

    ref = integrate.quad(
        integrand, x.min() - 12 * s, x.max() + 12 * s, points=tuple(x), limit=500, epsrel=1e-12
    )[0]
    assert mixture_fisher(x, t) == pytest.approx(ref, rel=1e-9)
