"""The ``influence-attribution`` task, its objectives, its LOO reference and its scores (seconds).

The conformance suite (tests/test_conformance.py) runs every method in the
sandbox on the smoke tier; these tests check the task's mathematics against
scikit-survival and finite differences, the torch objectives against the
task's numpy ones, VIF against the analytic formula, and the verifier.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from bench.registry import UnknownNameError, get_task
from bench.task import InvalidSolution
from common.influence import scores
from common.influence.autodiff import Problem
from tasks.influence import RIDGE, TimedSession, correlations, generate, objective
from tasks.influence.models import Breslow, _newton, fit, loo
from tasks.influence.models import test_quantities as quantities

TASK = get_task("influence-attribution")
SMOKE = [spec.id for spec in TASK.instances("smoke")]


def _whas_model() -> tuple[Breslow, dict]:
    data = dict(generate("whas500", 400, 14, 0), loss="cox", ridge=RIDGE)
    model, _, _ = objective(data)
    return model, data


def test_tiers_list_distinct_ids_and_bad_ids_are_refused():
    for tier in ("smoke", "standard", "full"):
        ids = [spec.id for spec in TASK.instances(tier)]
        assert ids and len(set(ids)) == len(ids)
    with pytest.raises(UnknownNameError, match="expected"):
        TASK.load("cox_n100")
    with pytest.raises(UnknownNameError, match="did you mean"):
        TASK.load("cox-n100-d5-s9")


def test_cox_fit_is_scikit_survival_breslow_ridge():
    """Our optimum is CoxPHSurvivalAnalysis(alpha=ridge, ties='breslow') on WHAS500, ties included."""
    from sksurv.linear_model import CoxPHSurvivalAnalysis
    from sksurv.util import Surv

    model, data = _whas_model()
    assert len(np.unique(data["time"])) < len(data["time"])  # tied times exercise Breslow
    y = Surv.from_arrays(event=data["event"].astype(bool), time=data["time"])
    ref = CoxPHSurvivalAnalysis(alpha=RIDGE, ties="breslow", tol=1e-12).fit(data["X"], y)
    np.testing.assert_allclose(fit(model), ref.coef_, atol=1e-8)


@pytest.mark.parametrize("kind", ["cox", "listmle"])
def test_gradient_and_hessian_match_finite_differences(kind):
    rng = np.random.default_rng(1)
    n, d = 40, 3
    X = rng.standard_normal((n, d))
    if kind == "cox":  # rounded times: ties
        model = Breslow(
            X,
            np.round(rng.exponential(size=n), 1),
            (rng.random(n) < 0.7).astype(float),
            np.zeros(n, int),
            0.5,
        )
    else:  # lists of unequal length
        model = Breslow(X, rng.permutation(n).astype(float), np.ones(n), rng.integers(0, 6, n), 0.5)
    theta, w = rng.standard_normal(d) * 0.5, np.ones(n)
    w[[2, 5]] = 0.0
    _, g, H = model.evaluate(theta, w)
    eps = 1e-6
    for k in range(d):
        e = np.eye(d)[k] * eps
        lp, gp, _ = model.evaluate(theta + e, w)
        lm, gm, _ = model.evaluate(theta - e, w)
        assert (lp - lm) / (2 * eps) == pytest.approx(g[k], abs=1e-6)
        np.testing.assert_allclose((gp - gm) / (2 * eps), H[k], atol=1e-6)


def test_listmle_is_the_plackett_luce_likelihood():
    rng = np.random.default_rng(2)
    X = rng.standard_normal((12, 3))
    theta = rng.standard_normal(3)
    query, position = np.repeat([0, 1, 2], 4), np.tile(np.arange(4), 3)
    model = Breslow(X, position.astype(float), np.ones(12), query, 0.0)
    s = X @ theta
    direct = 0.0
    for q in range(3):
        sq = s[query == q][np.argsort(position[query == q])]
        direct -= sum(sq[k] - math.log(np.exp(sq[k:]).sum()) for k in range(4))
    assert model.evaluate(theta, hessian=False)[0] == pytest.approx(direct, rel=1e-12)


def test_loo_refits_agree_with_cold_refits_and_with_scikit_survival():
    from sksurv.linear_model import CoxPHSurvivalAnalysis
    from sksurv.util import Surv

    data = dict(generate("cox", 60, 3, 0), loss="cox", ridge=RIDGE)
    model, quantity, test = objective(data)
    theta = fit(model)
    res = loo(model, theta, quantity, test, cold_sample=5, adam_sample=1)
    assert float(res["cold_max_diff"]) < 1e-8
    # the paper-protocol retraining (Adam, 200 epochs from zero) heads for the same optimum
    assert 0 < float(res["adam_max_diff"]) < 0.5 * np.abs(res["thetas"]).max()
    keep = np.arange(60) != 7
    y = Surv.from_arrays(event=data["event"][keep].astype(bool), time=data["time"][keep])
    ref = CoxPHSurvivalAnalysis(alpha=RIDGE, ties="breslow", tol=1e-12).fit(data["X"][keep], y)
    np.testing.assert_allclose(res["thetas"][7], ref.coef_, atol=1e-8)
    expect = quantities(quantity, ref.coef_, test) - quantities(quantity, theta, test)
    np.testing.assert_allclose(res["delta"][7], expect, atol=1e-8)


@pytest.mark.parametrize("instance_id", SMOKE)
def test_torch_objective_equals_the_tasks(instance_id):
    inst = TASK.load(instance_id)
    model, quantity, test = objective(inst.data)
    p = Problem(inst.data)
    rng = np.random.default_rng(3)
    theta, w = rng.standard_normal(p.d) * 0.3, np.ones(p.n)
    w[[1, 4]] = 0.0
    loss, g, H = model.evaluate(theta, w)
    t, wt = torch.tensor(theta), torch.tensor(w)
    assert p.loss(t, wt).item() == pytest.approx(loss, rel=1e-12)
    np.testing.assert_allclose(torch.func.grad(p.loss)(t, wt).numpy(), g, atol=1e-10)
    np.testing.assert_allclose(torch.func.hessian(p.loss)(t, wt).numpy(), H, atol=1e-10)
    np.testing.assert_allclose(
        p.test_quantities(t).numpy(), quantities(quantity, theta, test), rtol=1e-12
    )
    # the task's theta is the optimum: the torch gradient vanishes there
    assert torch.func.grad(p.full_loss)(p.theta).abs().max().item() < 1e-8


@pytest.mark.parametrize("instance_id", SMOKE)
def test_vif_is_the_analytic_formula_and_tracks_loo(instance_id):
    """VIF = grad f^T H^{-1} (grad L - grad L_{-i}) with the task's analytic derivatives; Pearson with LOO > 0.95."""
    inst = TASK.load(instance_id)
    model, quantity, test = objective(inst.data)
    theta = np.asarray(inst.data["theta"])
    p = Problem(inst.data)
    vif = scores.vif(p).numpy()
    np.testing.assert_allclose(scores.vif(p, batch=16).numpy(), vif, atol=1e-10)
    _, g_full, H = model.evaluate(theta)
    eps = 1e-6
    G = np.stack(
        [
            (
                quantities(quantity, theta + eps * e, test)
                - quantities(quantity, theta - eps * e, test)
            )
            / (2 * eps)
            for e in np.eye(len(theta))
        ],
        axis=1,
    )
    V = np.linalg.solve(H, G.T)
    for i in (0, 3, p.n - 1):
        w = np.ones(p.n)
        w[i] = 0.0
        _, g_i, _ = model.evaluate(theta, w, hessian=False)
        np.testing.assert_allclose(vif[i], (g_full - g_i) @ V, rtol=1e-5, atol=1e-9)
    truth = inst.private["loo_delta"]
    ours = correlations(vif, truth)["pearson"]
    naive = correlations(scores.naive_if(p).numpy(), truth)["pearson"]
    assert ours > 0.95 and naive < ours - 0.2


def test_one_newton_step_from_the_optimum_is_vifs_parameter_change():
    """The quantity VIF linearises: for a small removal, theta_{-i} - theta_hat ~ H^{-1}(g - g_{-i})."""
    data = dict(generate("cox", 200, 4, 1), loss="cox", ridge=RIDGE)
    model, _, _ = objective(data)
    theta = fit(model)
    _, g, H = model.evaluate(theta)
    w = np.ones(200)
    w[11] = 0.0
    _, g_i, _ = model.evaluate(theta, w, hessian=False)
    exact, _ = _newton(model, theta.copy(), w, tol=1e-12, max_iter=50)
    step = np.linalg.solve(H, g - g_i)
    assert np.linalg.norm(step - (exact - theta)) < 0.1 * np.linalg.norm(exact - theta)


def test_verifier_recomputes_and_refuses():
    inst = TASK.load(SMOKE[0])
    truth = np.array(inst.private["loo_delta"])
    m = TASK.evaluate(inst, {"scores": truth, "method_s": 0.01})
    assert m["pearson"] == pytest.approx(1.0) and m["spearman"] == pytest.approx(1.0)
    assert m["time_ratio"] == pytest.approx(0.01 / inst.references["loo_s"].value)
    assert m["log10_speedup"] == pytest.approx(-math.log10(m["time_ratio"]))
    assert TASK.evaluate(inst, {"scores": -truth, "method_s": 0.01})["pearson"] == pytest.approx(
        -1.0
    )
    assert math.isnan(TASK.evaluate(inst, truth)["method_s"])
    for bad, message in [
        (truth[:, :-1], "shape"),
        (truth.astype(np.float32), "dtype float32"),
        (np.full_like(truth, np.nan), "not finite"),
        (truth.tolist(), "got list"),
        ({"method_s": 1.0}, "scores"),
    ]:
        with pytest.raises(InvalidSolution, match=message):
            TASK.evaluate(inst, bad)


def test_session_times_one_round_and_the_template_is_valid():
    session = TimedSession()
    assert session.state() == {}
    session.apply(np.zeros((2, 2)))
    assert session.state() is None
    sol = session.solution()
    assert sol["method_s"] >= 0 and sol["scores"].shape == (2, 2)
    namespace: dict = {"np": np}
    exec("def solve(instance, *, seed, budget):\n" + TASK.template, namespace)
    inst = TASK.load(SMOKE[0])
    assert "pearson" in TASK.evaluate(inst, namespace["solve"](inst, seed=0, budget=1.0))


def test_whas500_is_bundled_and_split_by_seed():
    a = generate("whas500", 400, 14, 0)
    b = generate("whas500", 400, 14, 1)
    assert a["X"].shape == (400, 14) and a["X_test"].shape == (100, 14)
    assert not np.array_equal(a["time"], b["time"])
