"""nested-expectation: truths, kernel means, the counting oracle, and that NKQ beats nested MC where it should."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate
from scipy.stats import norm

from baselines.nested.mlmc import MLMCNested
from baselines.nested.nested_mc import NestedMC
from bench.task import InvalidSolution
from common.nested.kq import embedding, kq_estimate
from methods.nested.nkq import NestedKQ
from tasks.nested import PROBLEMS, NestedSession, NestedTask, evppi_inner, option_inner, truth


def _run(cls, params, problem, ns, seed):
    s = NestedSession(PROBLEMS[problem], ns, seed)
    m = cls(None, seed=seed, budget=1.0, **params)
    while (st := s.state()) is not None:
        s.apply(m.select(st))
    return s.solution()


@pytest.mark.parametrize("problem", sorted(PROBLEMS))
def test_truth_against_inner_closed_form_mc(problem):
    """The truth agrees with a large MC over the outer variable using each problem's exact inner mean."""
    p = PROBLEMS[problem]
    rng = np.random.default_rng(0)
    u = (
        rng.standard_normal((400_000, p.outer_dim))
        if p.outer_base == "normal"
        else rng.random((400_000, p.outer_dim))
    )
    th = p.theta(u)
    inner = {
        "gauss-poly": lambda t: 2 * t**2 + 1,
        "gauss-exp": lambda t: np.exp(t + 0.125),
        "unif-poly1": lambda t: p.inner_dim / 3.5 + np.sum(t**2.5, axis=1),
        "unif-poly2": lambda t: p.inner_dim / 3.5 + np.sum(t**2.5, axis=1),
        "option": option_inner,
        "evppi": evppi_inner,
    }[problem](th)
    vals = np.maximum(inner, 0) if p.f == "relu" else inner**2
    tv, err, _ = truth(problem)
    assert abs(vals.mean() - tv) < 5 * vals.std() / math.sqrt(vals.size) + err


def test_option_inner_is_the_conditional_mean():
    rng = np.random.default_rng(1)
    st = np.array([60.0, 100.0, 140.0])
    e = rng.standard_normal((200_000, 1))
    for s in st:
        g = PROBLEMS["option"].g(np.full(e.shape[0], s), e)
        assert abs(g.mean() - option_inner(np.array([s]))[0]) < 5 * g.std() / math.sqrt(g.size)


@pytest.mark.parametrize("base", ["uniform", "normal"])
def test_kernel_mean_embedding_by_quadrature(base):
    from common.nested.kq import gram

    x = np.array([[0.1], [0.5], [0.93]]) if base == "uniform" else np.array([[-1.3], [0.0], [2.1]])
    z = embedding(x, base, 0.7)
    for i in range(3):
        if base == "uniform":
            v = integrate.quad(
                lambda y, i=i: gram(x[i : i + 1], np.array([[y]]), base, 0.7)[0, 0],
                0,
                1,
                points=[x[i, 0]],
            )[0]
        else:
            v = integrate.quad(
                lambda y, i=i: gram(x[i : i + 1], np.array([[y]]), base, 0.7)[0, 0] * norm.pdf(y),
                -12,
                12,
            )[0]
        assert abs(v - z[i]) < 1e-8


def test_kq_integrates_a_smooth_function_better_than_mc():
    rng = np.random.default_rng(2)
    errs_kq, errs_mc = [], []
    for _ in range(10):
        x = rng.random((64, 1))
        h = np.sin(3 * x[:, 0]) + x[:, 0] ** 2
        exact = (1 - math.cos(3)) / 3 + 1 / 3
        errs_kq.append(abs(kq_estimate(x, h, "uniform", 1.0, 1e-6) - exact))
        errs_mc.append(abs(h.mean() - exact))
    assert np.mean(errs_kq) < 0.1 * np.mean(errs_mc)


def test_oracle_counts_and_refuses_beyond_budget():
    s = NestedSession(PROBLEMS["gauss-poly"], [4, 8], 0)
    st = s.state()
    assert st["budget"] == 16 and st["used"] == 0 and "g" not in st["problem"]
    s.apply({"op": "outer", "count": 4})
    s.apply({"op": "inner", "index": np.arange(4), "count": np.full(4, 3)})
    assert s.state()["used"] == 12
    with pytest.raises(InvalidSolution, match="exceeds the budget"):
        s.apply({"op": "inner", "index": np.arange(4), "count": np.full(4, 2)})
    with pytest.raises(InvalidSolution, match="outside"):
        s.apply({"op": "inner", "index": np.array([7]), "count": np.array([1])})
    with pytest.raises(InvalidSolution, match="cap"):
        s.apply({"op": "outer", "count": 13})
    s.apply({"op": "estimate", "value": 1.0})
    assert s.state()["stage"] == 1 and s.state()["budget"] == 64 and s.state()["used"] == 0
    with pytest.raises(InvalidSolution, match="not finite"):
        s.apply({"op": "estimate", "value": float("nan")})


def test_evaluate_scores_and_rejects():
    task = NestedTask()
    inst = task.load("gauss-poly-n16")
    sol = _run(NestedMC, {}, "gauss-poly", list(inst.data["ns"]), 0)
    assert sol["cost"].tolist() == [4, 16, 64, 256]
    m = task.evaluate(inst, sol)
    assert m["abs_err"] == pytest.approx(abs(sol["estimate"][-1] - 17.0))
    assert m["cost03"] == 256.0
    bad = dict(sol, cost=np.array([4, 16, 64, 999]))
    with pytest.raises(InvalidSolution, match="outside the budget"):
        task.evaluate(inst, bad)
    with pytest.raises(InvalidSolution):
        task.evaluate(inst, {"estimate": 1.0})


def test_mlmc_stays_within_budget():
    sol = _run(MLMCNested, {"m0": 2, "pilot_fraction": 0.1}, "unif-poly2", [8, 16, 32, 64], 3)
    assert np.all(sol["cost"] <= np.array([64, 256, 1024, 4096]))
    assert np.all(sol["cost"] >= 0.9 * np.array([64, 256, 1024, 4096]))


def test_nkq_beats_nested_mc_on_the_papers_toy():
    """unif-poly1 (the paper's d = 1 synthetic example) at N = M = 32, over 6 seeds."""
    tv = truth("unif-poly1")[0]
    e_kq = [
        abs(
            _run(NestedKQ, {"lam0": 0.1, "lengthscale": 1.0}, "unif-poly1", [32], s)["estimate"][0]
            - tv
        )
        for s in range(6)
    ]
    e_mc = [abs(_run(NestedMC, {}, "unif-poly1", [32], s)["estimate"][0] - tv) for s in range(6)]
    assert np.mean(e_kq) < 0.2 * np.mean(e_mc)


def test_stage_rate_is_the_least_squares_slope_and_its_mean_is_the_pooled_fit():
    from tasks.nested import stage_rate

    cost = np.array([256.0, 1024.0, 4096.0, 16384.0])
    rng = np.random.default_rng(0)
    errs = [10.0 * cost**-0.5 * np.exp(0.3 * rng.standard_normal(4)) for _ in range(5)]
    rates = [stage_rate(e, cost) for e in errs]
    for e, r in zip(errs, rates, strict=True):
        assert r == pytest.approx(np.polyfit(np.log10(cost), np.log10(e), 1)[0], abs=1e-12)
    pooled = np.polyfit(np.tile(np.log10(cost), 5), np.log10(np.concatenate(errs)), 1)[0]
    assert np.mean(rates) == pytest.approx(pooled, abs=1e-12)
    assert np.isnan(stage_rate(np.ones(4), np.array([0.0, 0.0, 0.0, 5.0])))  # one stage with a cost
