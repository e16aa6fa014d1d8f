"""bench.stats: bootstrap intervals used by claims, `bench show` and the leaderboard."""

from __future__ import annotations

import math

import numpy as np
import pytest

from bench.stats import bootstrap_ci, mean_of_means, stratified_bootstrap_ci

nan = float("nan")


def is_nan_pair(ci) -> bool:
    return len(ci) == 2 and all(math.isnan(v) for v in ci)


# ----------------------------------------------------------------------------- bootstrap_ci


@pytest.mark.parametrize("x", [[], [1.0], [nan], [3.0, nan], [nan, nan, nan], np.array([])])
def test_fewer_than_two_values_gives_nans(x):
    assert is_nan_pair(bootstrap_ci(x))


@pytest.mark.parametrize("x", [[2.5, 2.5], [2.5] * 7, [-1.0, -1.0, nan], np.full(50, 1e9)])
def test_constant_sample_gives_exact_zero_width_interval(x):
    v = next(float(a) for a in x if not math.isnan(a))
    lo, hi = bootstrap_ci(x)
    assert lo == v and hi == v
    assert type(lo) is float and type(hi) is float


def test_known_sample():
    x = np.arange(1.0, 11.0)  # mean 5.5, population sd 2.872 -> bootstrap SE 0.908
    lo, hi = bootstrap_ci(x, seed=0)
    assert lo < 5.5 < hi
    # normal approximation: 5.5 -/+ 1.96 * 0.908 = [3.72, 7.28]
    assert 3.4 < lo < 4.0
    assert 7.0 < hi < 7.6
    # bootstrap means can never leave the range of the data
    assert lo >= 1.0 and hi <= 10.0


def test_reproducible_for_a_seed_and_changes_with_the_seed():
    x = [0.3, 1.2, 2.2, 2.9, 4.1, 5.0, 7.7]
    assert bootstrap_ci(x, seed=11) == bootstrap_ci(x, seed=11)
    assert bootstrap_ci(x, seed=11) != bootstrap_ci(x, seed=12)


def test_does_not_touch_global_random_state():
    # The legacy global generator is exactly what must stay untouched.
    before = np.random.get_state()[1].copy()  # noqa: NPY002
    bootstrap_ci([1.0, 2.0, 4.0], seed=5)
    stratified_bootstrap_ci([[1.0, 2.0], [3.0, 5.0]], seed=5)
    assert (np.random.get_state()[1] == before).all()  # noqa: NPY002


def test_nans_are_dropped():
    x = list(np.arange(1.0, 11.0))
    with_nans = [nan, *x[:4], nan, *x[4:], nan]
    assert bootstrap_ci(with_nans, seed=3) == bootstrap_ci(x, seed=3)


def test_smaller_alpha_gives_a_wider_interval():
    x = np.random.default_rng(0).normal(size=40)
    lo95, hi95 = bootstrap_ci(x, seed=1, alpha=0.05)
    lo50, hi50 = bootstrap_ci(x, seed=1, alpha=0.5)
    assert lo95 < lo50 < x.mean() < hi50 < hi95


def test_interval_shrinks_with_more_data():
    rng = np.random.default_rng(1)
    small = rng.normal(size=10)
    large = rng.normal(size=1000)
    w_small = np.subtract(*bootstrap_ci(small, seed=0)[::-1])
    w_large = np.subtract(*bootstrap_ci(large, seed=0)[::-1])
    assert w_large < w_small / 4


def test_coverage_of_the_true_mean_is_about_95_percent():
    rng = np.random.default_rng(2025)
    reps, hits = 300, 0
    for i in range(reps):
        x = rng.normal(loc=3.0, scale=2.0, size=30)
        lo, hi = bootstrap_ci(x, seed=i, n_boot=1000)
        hits += lo <= 3.0 <= hi
    assert 0.88 * reps <= hits <= 0.99 * reps


# ----------------------------------------------------------------------------- stratified


def test_mean_of_means_weights_strata_equally():
    # pooled mean is (1+2+3+10+20)/5 = 7.2; mean of means is (2 + 15)/2 = 8.5
    assert mean_of_means([np.array([1.0, 2.0, 3.0]), np.array([10.0, 20.0])]) == 8.5


def test_stratified_estimate_is_mean_of_stratum_means():
    est, lo, hi = stratified_bootstrap_ci([[1.0, 2.0, 3.0], [10.0, 20.0]], seed=0)
    assert est == 8.5
    assert lo < est < hi
    # each resampled stratum mean stays within its stratum's range: [1, 3] and [10, 20]
    assert lo >= (1 + 10) / 2 and hi <= (3 + 20) / 2


def test_stratified_stratum_with_one_run_gives_estimate_but_nan_interval():
    est, lo, hi = stratified_bootstrap_ci([[1.0, 2.0, 3.0], [7.0]])
    assert est == 4.5
    assert math.isnan(lo) and math.isnan(hi)


def test_stratified_nan_runs_are_dropped_before_counting():
    est, lo, hi = stratified_bootstrap_ci([[1.0, nan, 3.0], [5.0, nan]])
    assert est == (2.0 + 5.0) / 2
    assert math.isnan(lo) and math.isnan(hi)  # the second stratum has one real run


@pytest.mark.parametrize("strata", [[], [[1.0, 2.0], []], [[1.0, 2.0], [nan, nan]]])
def test_stratified_empty_stratum_gives_all_nans(strata):
    assert all(math.isnan(v) for v in stratified_bootstrap_ci(strata))


def test_stratified_all_constant_strata_give_exact_interval():
    est, lo, hi = stratified_bootstrap_ci([[2.0, 2.0], [4.0, 4.0, 4.0]])
    assert (est, lo, hi) == (3.0, 3.0, 3.0)


def test_stratified_one_constant_stratum_still_has_spread_from_the_other():
    est, lo, hi = stratified_bootstrap_ci([[2.0, 2.0], [0.0, 10.0, 5.0]], seed=0)
    assert est == (2.0 + 5.0) / 2
    assert lo < est < hi
    assert lo >= (2.0 + 0.0) / 2 and hi <= (2.0 + 10.0) / 2


def test_stratified_reproducible_with_seed_and_changes_with_seed():
    strata = [[0.1, 0.5, 0.9, 0.3], [1.0, 1.4, 2.0], [5.0, 4.0]]
    assert stratified_bootstrap_ci(strata, seed=4) == stratified_bootstrap_ci(strata, seed=4)
    assert stratified_bootstrap_ci(strata, seed=4)[1:] != stratified_bootstrap_ci(strata, seed=5)[1:]
    assert stratified_bootstrap_ci(strata, seed=4)[0] == stratified_bootstrap_ci(strata, seed=5)[0]


def test_stratified_with_one_stratum_agrees_with_plain_bootstrap():
    x = [0.3, 1.2, 2.2, 2.9, 4.1, 5.0, 7.7]
    est, lo, hi = stratified_bootstrap_ci([x], seed=0, n_boot=4000)
    plo, phi = bootstrap_ci(x, seed=1, n_boot=4000)
    assert est == pytest.approx(np.mean(x))
    assert lo == pytest.approx(plo, abs=0.2) and hi == pytest.approx(phi, abs=0.2)


def test_stratified_interval_ignores_between_instance_spread():
    # Instances on wildly different scales but tight seeds: the CI is narrow, because
    # the instances are fixed and only the seeds are resampled.
    strata = [[100.0, 100.2, 99.8], [0.0, 0.2, -0.2], [-50.0, -50.2, -49.8]]
    est, lo, hi = stratified_bootstrap_ci(strata, seed=0)
    assert est == pytest.approx(50.0 / 3)
    assert hi - lo < 0.4
