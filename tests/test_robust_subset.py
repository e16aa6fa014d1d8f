"""The ``robust-subset-selection`` task, GM Matching and its baselines, tested in-process (seconds).

The conformance suite (tests/test_conformance.py) runs every method in the
sandbox on the smoke tier; these tests check the task (ids, generator,
verifier, metrics on a hand case), the geometric median against an
independent solve, and that each method does what it says.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.optimize

import tasks.robust_subset as task_module
from baselines.robust_subset import herding_mean, kcenter, kmeans_medoids, uniform
from bench.registry import UnknownNameError, get_task
from bench.task import Instance, InvalidSolution
from methods.robust_subset import gm_matching

TASK = get_task("robust-subset-selection")
SMOKE = [spec.id for spec in TASK.instances("smoke")]
OUTLIERS = "outliers-a20-n500-d8-k10-s0"


def _call(module, inst, seed=0):
    fn = getattr(module.solve, "__wrapped__", module.solve)
    params = {
        gm_matching: {"eps": 1e-5, "max_iter": 5000, "score": "greedy"},
        kmeans_medoids: {"n_init": 1, "max_iter": 300},
    }.get(module, {})
    return fn(inst, seed=seed, budget=60.0, **params)


def test_tiers_list_distinct_ids_that_load():
    for tier in ("smoke", "standard", "full"):
        ids = [spec.id for spec in TASK.instances(tier)]
        assert ids and len(set(ids)) == len(ids)
    inst = TASK.load(SMOKE[0])
    assert inst.params == TASK.instances("smoke")[0].params
    assert inst.data["k"] == 50 and inst.data["X"].shape == (500, 8)


def test_bad_ids_are_refused_in_one_line():
    with pytest.raises(UnknownNameError, match="malformed"):
        TASK.load("outliers_a20")
    with pytest.raises(ValueError, match="clean"):
        task_module._check({"kind": "clean", "alpha": 20, "n": 100, "d": 2, "k": 5, "seed": 0})


def test_generation_is_deterministic_private_and_read_only():
    first = TASK.load(OUTLIERS)
    TASK.clear_cache()
    again = TASK.load(OUTLIERS)
    assert again is not first and again.digest == first.digest
    np.testing.assert_array_equal(again.data["X"], first.data["X"])
    assert not first.data["X"].flags.writeable
    assert set(first.data) == {"X", "y", "k", "classes"}
    assert first.private["corrupted"].sum() == 100  # 20% of 500
    # the same clean population for every corruption of a setting
    g1 = task_module.generate("outliers", 20, 500, 8, 0)
    g2 = task_module.generate("label", 40, 2000, 8, 0)
    np.testing.assert_array_equal(g1["mu_clean"], g2["mu_clean"])
    # label noise moves no point: every row stays within the clean mixture's reach
    lab = task_module.generate("label", 20, 500, 8, 3)
    assert lab["corrupted"].sum() == 100
    assert np.linalg.norm(lab["X"] - lab["mu_clean"], axis=1).max() < 12


def test_verifier_refuses_bad_index_sets_naming_the_field():
    inst = TASK.load(SMOKE[0])
    k, n = inst.data["k"], len(inst.data["X"])
    good = np.arange(k)
    assert set(TASK.evaluate(inst, good)) == {
        "mean_error",
        "gm_gap",
        "mean_gap",
        "mmd",
        "corrupted_frac",
        "accuracy",
    }
    dup = good.copy()
    dup[5] = 3
    for bad, message in [
        (dup, "distinct: index 3 appears 2 times"),
        (np.arange(k - 1), f"expected {k} indexs"),
        (np.arange(k + 1), f"expected {k} indexs"),
        (np.r_[np.arange(k - 1), n], f"position {k - 1} has index {n}, outside"),
        (np.r_[np.arange(k - 1), -1], "outside"),
        (good.astype(float), "float dtype"),
        (np.zeros(k, dtype=bool), "dtype bool"),
        (["a"] * k, "integer"),
    ]:
        with pytest.raises(InvalidSolution, match=message):
            TASK.evaluate(inst, bad)


def test_metrics_recomputed_on_a_hand_case():
    X = np.array([[0.0, 0.0], [2.0, 0.0], [0.0, 2.0], [10.0, 10.0], [1.0, 1.0], [-1.0, 0.0]])
    y = np.array([0, 1, 0, 1, 0, 1])
    fresh = np.array([[0.0, 0.0], [1.0, 0.0]])
    inst = Instance(
        id="hand",
        params={},
        data={"X": X, "y": y, "k": 3, "classes": 2},
        private={
            "corrupted": np.array([False, False, False, True, False, False]),
            "mu_clean": np.array([0.5, 0.5]),
            "gm": np.array([1.0, 0.0]),
            "X_fresh": fresh,
            "bandwidth": 1.0,
            "X_test": np.array([[0.0, 0.0], [2.0, 0.0]]),
            "y_test": np.array([0, 1]),
        },
    )
    m = TASK.evaluate(inst, [1, 3, 0])
    # mean of rows 1, 3, 0 = (4, 10/3)
    assert m["mean_error"] == pytest.approx(math.hypot(3.5, 10 / 3 - 0.5))
    assert m["gm_gap"] == pytest.approx(math.hypot(3.0, 10 / 3))
    assert m["mean_gap"] == pytest.approx(math.hypot(4.0 - 2.0, 10 / 3 - 13 / 6))
    assert m["corrupted_frac"] == pytest.approx(1 / 3)
    # MMD^2 by its definition, kernel exp(-|x - y|^2 / 2)
    S = X[[1, 3, 0]]

    def kmean(A, B):
        return np.mean([[math.exp(-0.5 * float(np.sum((a - b) ** 2))) for b in B] for a in A])

    assert m["mmd"] == pytest.approx(
        math.sqrt(kmean(S, S) + kmean(fresh, fresh) - 2 * kmean(S, fresh))
    )
    assert m["accuracy"] in (0.0, 0.5, 1.0)
    # one class only: the constant prediction
    assert TASK.evaluate(inst, [0, 2, 4])["accuracy"] == pytest.approx(0.5)


def _sum_dist_min(X):
    f = lambda z: np.linalg.norm(X - z, axis=1).sum()  # noqa: E731
    g = lambda z: -((X - z) / np.linalg.norm(X - z, axis=1)[:, None]).sum(0)  # noqa: E731
    return scipy.optimize.minimize(
        f, X.mean(0) + 0.01, jac=g, method="BFGS", options={"gtol": 1e-10}
    ).x


def test_geometric_median_agrees_with_an_independent_solve():
    inst = TASK.load(OUTLIERS)
    X = np.asarray(inst.data["X"])
    ref = _sum_dist_min(X)
    ours = gm_matching.weiszfeld(X, eps=1e-5, max_iter=5000)
    task_gm = np.asarray(inst.private["gm"])
    f = lambda z: np.linalg.norm(X - z, axis=1).sum()  # noqa: E731
    assert np.linalg.norm(task_gm - ref) < 1e-4
    assert np.linalg.norm(ours - ref) < 1e-3
    assert f(task_gm) <= f(ref) + 1e-8
    # the mean is pulled by the outliers, the median is not
    mu = np.asarray(inst.private["mu_clean"])
    assert np.linalg.norm(task_gm - mu) < 0.5 * np.linalg.norm(X.mean(0) - mu)


def test_gm_matching_beats_uniform_on_a_corrupted_instance():
    inst = TASK.load(OUTLIERS)
    gm = TASK.evaluate(inst, _call(gm_matching, inst))
    uni = [TASK.evaluate(inst, _call(uniform, inst, seed=s)) for s in range(5)]
    assert gm["mean_error"] < 0.5 * np.mean([u["mean_error"] for u in uni])
    assert gm["corrupted_frac"] == 0.0 < min(u["corrupted_frac"] for u in uni)
    assert gm["gm_gap"] < 0.05
    # deterministic, and uniform differs by seed but not for the same seed
    np.testing.assert_array_equal(_call(gm_matching, inst), _call(gm_matching, inst))
    assert not np.array_equal(_call(uniform, inst, 0), _call(uniform, inst, 1))
    np.testing.assert_array_equal(_call(uniform, inst, 4), _call(uniform, inst, 4))


def test_herding_matches_its_target_at_rate_about_one_over_k():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((3000, 8))
    target = np.median(X, axis=0)
    gaps = [
        np.linalg.norm(X[gm_matching.herd(X, target, k, score="greedy")].mean(0) - target)
        for k in (10, 40, 160)
    ]
    slope = np.polyfit(np.log([10, 40, 160]), np.log(gaps), 1)[0]
    assert slope < -0.8, gaps
    inst = TASK.load(OUTLIERS)
    S = _call(herding_mean, inst)
    Xi = np.asarray(inst.data["X"])
    assert np.linalg.norm(Xi[S].mean(0) - Xi.mean(0)) < 0.1


def test_on_unit_norm_features_the_greedy_step_is_the_herding_step():
    # the official code normalises features to the sphere and scores <theta, x>; ours subtracts
    # |x|^2 / 2, a constant there, so both pick the same points
    rng = np.random.default_rng(1)
    X = rng.standard_normal((500, 8))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    target = np.median(X, axis=0)
    np.testing.assert_array_equal(
        gm_matching.herd(X, target, 50, score="greedy"),
        gm_matching.herd(X, target, 50, score="inner"),
    )


def test_kcenter_is_farthest_first():
    X = np.array([[0.0], [1.0], [10.0], [4.0], [6.0], [2.0]])
    # from {0, 10}, 4 and 6 tie at distance 4: ties go to the lowest index
    np.testing.assert_array_equal(kcenter.kcenter_greedy(X, 4, 0), [0, 2, 3, 4])
    inst = TASK.load(SMOKE[0])
    S = _call(kcenter, inst)
    Xi = np.asarray(inst.data["X"])
    for t in range(1, 6):
        dmin = np.min(np.linalg.norm(Xi[:, None, :] - Xi[S[:t]][None], axis=2), axis=1)
        assert dmin[S[t]] == pytest.approx(dmin.max())


def test_kmeans_medoids_are_the_nearest_points_to_the_centres():
    from sklearn.cluster import KMeans

    inst = TASK.load(SMOKE[1])
    Xi = np.asarray(inst.data["X"])
    S = _call(kmeans_medoids, inst, seed=3)
    assert len(set(S.tolist())) == len(S) == inst.data["k"]
    centres = KMeans(n_clusters=inst.data["k"], n_init=1, random_state=3).fit(Xi).cluster_centers_
    nearest = np.argmin(np.linalg.norm(Xi[:, None, :] - centres[None], axis=2), axis=0)
    assert np.mean(nearest == S) > 0.9  # equal except where two centres share a nearest point
    np.testing.assert_array_equal(
        kmeans_medoids.nearest_distinct(np.array([[0.0], [1.0]]), np.array([[0.1], [0.2]])), [0, 1]
    )


def test_the_method_template_writes_a_valid_solution():
    namespace: dict = {"np": np}
    exec("def solve(instance, *, seed, budget):\n" + TASK.template, namespace)
    inst = TASK.load(SMOKE[0])
    assert "mean_error" in TASK.evaluate(inst, namespace["solve"](inst, seed=0, budget=1.0))
