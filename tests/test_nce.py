"""The ``unnormalized-estimation`` task and its estimators, in-process (fast: seconds)."""

from __future__ import annotations

import numpy as np
import pytest

import tasks.nce as T
from bench.registry import UnknownNameError, get_task
from bench.task import InvalidSolution
from common.nce import estimators as E

TASK = get_task("unnormalized-estimation")
SMOKE = [spec.id for spec in TASK.instances("smoke")]


def test_tiers_list_distinct_ids_with_twenty_seeds_per_setting():
    for tier in ("smoke", "standard", "full"):
        ids = [spec.id for spec in TASK.instances(tier)]
        assert ids and len(set(ids)) == len(ids)
    std = TASK.instances("standard")
    settings = {(s.params["model"], s.params["n"]) for s in std}
    assert len({n for _, n in settings}) >= 4
    for setting in settings:
        assert sum((s.params["model"], s.params["n"]) == setting for s in std) >= 20
    with pytest.raises(UnknownNameError):
        TASK.load("ising_n100")


def test_theta_star_is_private_and_data_read_only():
    inst = TASK.load("ising-n400-s0")
    assert "theta" in inst.private and "theta" not in inst.data
    assert inst.data["X"].shape == (400, 8) and not inst.data["X"].flags.writeable
    TASK.clear_cache()
    again = TASK.load("ising-n400-s0")
    assert again.digest == inst.digest


@pytest.mark.parametrize("model", T.MODELS)
def test_samplers_match_the_exact_moments(model):
    theta = T.true_theta(model)
    X = T.sample(model, theta, 20_000, np.random.default_rng(5))
    pts, w = T.support_grid(model)
    F = T.features(model, pts)
    s = F @ theta + np.log(w)
    p = np.exp(s - s.max())
    p /= p.sum()
    Fx = T.features(model, X)
    se = Fx.std(0) / np.sqrt(len(X))
    z = np.abs(Fx.mean(0) - p @ F) / se
    assert z.max() < 4.5, z


def test_quadrature_normaliser_is_exact_for_a_gaussian_box_integral():
    # theta = (0, 0, -1/2, 0, -1/2): Z = (sqrt(2 pi) (Phi(1) - Phi(-1)))^2
    from scipy.stats import norm

    z = np.sqrt(2 * np.pi) * (norm.cdf(1) - norm.cdf(-1))
    assert T.log_partition("tgauss", np.array([0, 0, -0.5, 0, -0.5])) == pytest.approx(
        2 * np.log(z), abs=1e-12
    )
    assert T.log_partition("ising", np.zeros(36)) == pytest.approx(8 * np.log(2))


def test_verifier_recomputes_and_refuses():
    inst = TASK.load("tgauss-n400-s0")
    theta = inst.private["theta"]
    m = TASK.evaluate(inst, np.zeros(5))
    assert m["err"] == pytest.approx(np.linalg.norm(theta)) and m["rel_err"] == pytest.approx(1.0)
    assert TASK.evaluate(inst, theta.copy())["err"] == 0.0
    for bad, message in [
        (np.zeros(6), "shape"),
        (np.full(5, np.nan), "not finite"),
        ([0.0] * 5, "got list"),
    ]:
        with pytest.raises(InvalidSolution, match=message):
            TASK.evaluate(inst, bad)


def test_estimators_are_consistent_and_mle_is_best_on_ising():
    model = "ising"
    theta = T.true_theta(model)
    X = T.sample(model, theta, 6000, np.random.default_rng(1))
    rng = np.random.default_rng(2)
    Fd = T.features(model, X)
    Fn = T.features(model, E.uniform_noise(model, 8, len(X), rng))
    Fy = T.features(model, E.conditional_noise(model, X, 0.3, rng))
    errs = {
        "mle": E.mle_exact(model, Fd),
        "pl": E.pseudo_likelihood(model, X),
        "iso": E.interaction_screening(model, X),
        "alpha": E.alpha_centered_nce(Fd, Fn, 0.5),
        "fcond": E.f_conditional_nce(Fd, Fy, "log"),
        "lnce": E.logistic_nce(Fd, Fn),
    }
    errs = {k: float(np.linalg.norm(v - theta)) for k, v in errs.items()}
    assert max(errs.values()) < 0.4, errs  # ||theta*|| = 1.34
    assert errs["mle"] <= min(errs["alpha"], errs["fcond"], errs["lnce"]), errs


def test_alpha_ends_are_mc_mle_and_globalgiso():
    model = "tgauss"
    theta = T.true_theta(model)
    X = T.sample(model, theta, 3000, np.random.default_rng(3))
    Fd = T.features(model, X)
    # alpha = 1 with the quadrature grid as weighted "noise" is the MLE; check the MC version's stationarity instead
    Fn = T.features(model, E.uniform_noise(model, 2, 3000, np.random.default_rng(4)))
    t1 = E.alpha_centered_nce(Fd, Fn, 1.0)
    w = np.exp(Fn @ t1 - (Fn @ t1).max())
    np.testing.assert_allclose((w / w.sum()) @ Fn, Fd.mean(0), atol=1e-6)  # MC-MLE moment match
    t0 = E.alpha_centered_nce(Fd, Fn, 0.0)
    e = np.exp(-(Fd @ t0))
    np.testing.assert_allclose((e / e.sum()) @ Fd, Fn.mean(0), atol=1e-6)  # GlobalGISO stationarity
    # alpha in (0, 1) interpolates continuously
    assert np.linalg.norm(E.alpha_centered_nce(Fd, Fn, 0.999) - t1) < 0.05


def test_f_cond_nce_with_spin_flips_is_close_to_pseudo_likelihood():
    model = "ising"
    theta = T.true_theta(model)
    X = T.sample(model, theta, 4000, np.random.default_rng(6))
    Y = E.conditional_noise(model, X, 0.3, np.random.default_rng(7))
    assert np.all(np.abs(X - Y).sum(1) == 2)  # exactly one spin flipped
    fc = E.f_conditional_nce(T.features(model, X), T.features(model, Y), "log")
    pl = E.pseudo_likelihood(model, X)
    assert np.linalg.norm(fc - pl) < 0.5
    box = E.conditional_noise(
        "tgauss",
        T.sample("tgauss", T.true_theta("tgauss"), 500, np.random.default_rng(8)),
        0.9,
        np.random.default_rng(9),
    )
    assert np.all(np.abs(box) <= 1.0)


def test_the_method_template_writes_a_valid_solution():
    namespace: dict = {"np": np}
    exec("def solve(instance, *, seed, budget):\n" + TASK.template, namespace)
    inst = TASK.load(SMOKE[0])
    assert "err" in TASK.evaluate(inst, namespace["solve"](inst, seed=0, budget=1.0))
