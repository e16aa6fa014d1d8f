"""The ``generalized-metrics`` task, METRO and its baselines, tested in-process (fast: seconds).

The conformance suite (tests/test_conformance.py) runs every method in the
sandbox on the smoke tier; these tests check the task itself (ids, the
generator, the metrics against scikit-learn's, the verifier) and METRO's
lambda search against an enumerated optimum.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from sklearn.metrics import (
    accuracy_score,
    balanced_accuracy_score,
    f1_score,
    fbeta_score,
    jaccard_score,
)

import tasks.generalized_metrics as gm
from bench.registry import UnknownNameError, discover_methods, get_task
from bench.task import InvalidSolution
from methods.generalized_metrics import metro

TASK = get_task("generalized-metrics")
SMOKE = [spec.id for spec in TASK.instances("smoke")]


def _sklearn_metric(metric: str, y: np.ndarray, yhat: np.ndarray) -> float:
    if metric == "f1":
        return f1_score(y, yhat, zero_division=0.0)
    if metric in ("f05", "f2"):
        return fbeta_score(y, yhat, beta=0.5 if metric == "f05" else 2.0, zero_division=0.0)
    if metric == "jaccard":
        return jaccard_score(y, yhat, zero_division=0.0)
    if metric == "am":
        return balanced_accuracy_score(y, yhat)
    return accuracy_score(y, yhat, sample_weight=np.where(y == 1, gm.WACC_POSITIVE_WEIGHT, 1.0))


def test_tiers_list_distinct_ids_that_load():
    for tier in ("smoke", "standard", "full"):
        ids = [spec.id for spec in TASK.instances(tier)]
        assert ids and len(set(ids)) == len(ids)
    inst = TASK.load(SMOKE[0])
    assert inst.params == TASK.instances("smoke")[0].params
    assert inst.data["metric"] == "f1" and inst.data["track"] == "linear"
    assert "y_test" not in inst.data and len(inst.private["y_test"]) == len(inst.data["X_test"])


def test_bad_ids_are_refused_in_one_line():
    with pytest.raises(UnknownNameError, match="malformed .* expected"):
        TASK.load("synth_p10_f1")
    with pytest.raises(UnknownNameError, match="target metric 'f3'"):
        TASK.load("synth-p10-f3-linear-s0")


@pytest.mark.parametrize("data", gm.DATASETS)
def test_instances_are_imbalanced_deterministic_and_read_only(data):
    first = TASK.load(f"{data}-p5-f1-linear-s0")
    rate = float(np.mean(first.data["y_train"]))
    assert 0.03 < rate < 0.08, rate
    assert first.private["y_test"].sum() >= 2
    TASK.clear_cache()
    again = TASK.load(f"{data}-p5-f1-linear-s0")
    assert again.digest == first.digest
    assert not first.data["X_train"].flags.writeable


@pytest.mark.parametrize("metric", gm.METRICS)
def test_metrics_agree_with_sklearn_on_random_labels(metric):
    rng = np.random.default_rng(7)
    for _ in range(30):
        n = int(rng.integers(5, 200))
        y = (rng.random(n) < rng.uniform(0.05, 0.5)).astype(np.int64)
        y[0] = 1
        yhat = (rng.random(n) < rng.uniform(0.0, 1.0)).astype(np.int64)
        assert gm.metric_value(metric, y, yhat) == pytest.approx(_sklearn_metric(metric, y, yhat), abs=1e-12)


def test_verifier_recomputes_every_metric_and_refuses_bad_labels():
    inst = TASK.load(SMOKE[0])
    y, n = inst.private["y_test"], len(inst.private["y_test"])
    yhat = np.random.default_rng(0).integers(0, 2, n)
    metrics = TASK.evaluate(inst, yhat)
    assert metrics["target"] == metrics["f1"] == pytest.approx(f1_score(y, yhat))
    assert metrics["am"] == pytest.approx(balanced_accuracy_score(y, yhat))
    assert TASK.evaluate(inst, yhat.astype(bool))["f1"] == metrics["f1"]
    trivial = inst.references["trivial"].value
    assert TASK.meta.normalization.apply(TASK.evaluate(inst, np.ones(n, np.int64))["target"], inst.references) <= 1e-12
    assert trivial == pytest.approx(f1_score(y, np.ones(n)))
    for bad, message in [
        (np.zeros(n + 1, np.int64), f"expected {n} labels \\(one per test point\\)"),
        (np.full(n, 2), "test point 0 has label 2, outside \\[0, 2\\)"),
        (np.full(n, 0.5), "float dtype"),
        (np.zeros((n, 1), np.int64), "1-D array"),
        ("labels", "test labels"),
    ]:
        with pytest.raises(InvalidSolution, match=message):
            TASK.evaluate(inst, bad)


def test_the_method_template_writes_a_valid_solution():
    namespace: dict = {"np": np}
    exec("def solve(instance, *, seed, budget):\n" + TASK.template, namespace)
    inst = TASK.load(SMOKE[0])
    assert TASK.evaluate(inst, namespace["solve"](inst, seed=0, budget=1.0))["positive_rate"] == 1.0


@pytest.mark.parametrize("metric", gm.METRICS)
def test_cost_sensitive_problem_is_the_linearised_metric(metric):
    """The weighted 0-1 objective of ``cost_sensitive_problem`` ranks predictions as ``(a - lam b) . c`` does."""
    rng = np.random.default_rng(1)
    y = (rng.random(40) < 0.2).astype(np.int64)
    y[0] = 1
    a, b = gm.coefficients(metric, y.mean())
    lam = 0.4
    t, w = metro.cost_sensitive_problem(a, b, lam, y)
    preds = [(rng.random(40) < 0.3).astype(np.int64) for _ in range(20)]
    lin = [(a - lam * b) @ gm.confusion(y, p) for p in preds]
    cost = [w @ (p != t) / len(y) for p in preds]
    np.testing.assert_allclose(np.add(lin, cost), lin[0] + cost[0], atol=1e-12)


@pytest.mark.parametrize("metric", gm.METRICS)
def test_dinkelbach_finds_the_enumerated_optimum(metric):
    """On 1-D points with the class of thresholds (either orientation), an exact cost-sensitive
    step makes METRO's lambda search reach the metric's maximum over the class, found by
    enumerating every threshold."""
    rng = np.random.default_rng(3)
    x = np.concatenate([rng.normal(0, 1, 90), rng.normal(1.2, 1, 10)])
    y = np.r_[np.zeros(90, np.int64), np.ones(10, np.int64)]
    a, b = gm.coefficients(metric, y.mean())
    cuts = np.r_[-np.inf, np.sort(x), np.inf]
    candidates = [((x > c) if up else (x <= c)).astype(np.int64) for c, up in itertools.product(cuts, (True, False))]
    best = max(gm.metric_value(metric, y, p) for p in candidates)

    def exact_step(lam):
        t, w = metro.cost_sensitive_problem(a, b, lam, y)
        return min(candidates, key=lambda p: w @ (p != t))

    lam, value, pred, trace = metro.dinkelbach(exact_step, lambda p: gm.metric_value(metric, y, p), iters=50)
    assert value == pytest.approx(best, abs=1e-12)
    assert gm.metric_value(metric, y, pred) == pytest.approx(best, abs=1e-12)
    assert all(later >= earlier - 1e-12 for earlier, later in itertools.pairwise(trace))  # Dinkelbach is monotone


def test_metro_beats_lr_at_half_on_an_imbalanced_f1_instance():
    methods = discover_methods(families=["generalized_metrics"])
    inst = TASK.load("synth-p5-f1-linear-s0")
    scores = {}
    for name in ("metro", "threshold-half"):
        spec = methods.get(name)
        scores[name] = TASK.evaluate(inst, spec.target(inst, seed=0, budget=60.0, **spec.params))["f1"]
    assert scores["metro"] >= scores["threshold-half"], scores
