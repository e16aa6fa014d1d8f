"""bench.stats: bootstrap intervals used by claims, `bench show` and the leaderboard."""

from __future__ import annotations

import math

import numpy as np
import pytest

from bench.stats import (
    bootstrap_ci,
    cluster_bootstrap_ci,
    mean_of_means,
    stratified_bootstrap_ci,
    t_prediction_bounds,
)

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


# ----------------------------------------------------------------------------- IQM and its stratified bootstrap

from bench.stats import (  # noqa: E402
    cd_cliques,
    friedman,
    holm,
    iqm,
    pairwise_wilcoxon_holm,
    pareto_front,
    performance_profile,
    quality_costs,
    rank_blocks,
    rank_methods,
    stratified_bootstrap_aggregate,
    t_bounds,
)


def test_t_bounds_hand_computed():
    # mean 2, s = 1, n = 3, t(0.95, 2) = 2.919986: half-width 2.919986 / sqrt(3) = 1.685854
    lo, hi = t_bounds([1.0, 2.0, 3.0])
    assert lo == pytest.approx(2.0 - 1.685854, abs=1e-6) and hi == pytest.approx(2.0 + 1.685854, abs=1e-6)
    lo90, hi90 = t_bounds([1.0, 2.0, 3.0], alpha=0.1)  # t(0.9, 2) = 1.885618
    assert hi90 == pytest.approx(2.0 + 1.885618 / 3**0.5, abs=1e-6) and lo < lo90
    assert t_bounds([5.0, 5.0, nan]) == (5.0, 5.0)  # no spread, NaN dropped
    assert all(v != v for v in t_bounds([4.0]))  # one value: no bound


@pytest.mark.parametrize(
    ("x", "want"),
    [
        (np.arange(1.0, 9.0), 4.5),  # cut 2 from each end: mean(3, 4, 5, 6)
        ([1.0, 2.0, 3.0, 4.0], 2.5),  # cut 1 each: mean(2, 3)
        ([1.0, 2.0, 3.0], 2.0),  # floor(0.75) = 0: plain mean
        ([100.0, 1.0, 2.0, 3.0, 4.0, -50.0, nan], 2.5),  # outliers cut, NaN dropped: sorted -50,1,2,3,4,100 -> mean(2,3)
    ],
)
def test_iqm_hand_computed(x, want):
    assert iqm(x) == pytest.approx(want)


def test_iqm_along_an_axis_and_empty():
    assert np.allclose(iqm(np.array([[4.0, 1.0, 3.0, 2.0], [10.0, 40.0, 20.0, 30.0]]), axis=1), [2.5, 25.0])
    assert math.isnan(iqm([]))


def test_stratified_aggregate_exact_small_case():
    # One stratum [0, 1]: the resampled mean is 0, 0.5 or 1 with probabilities 1/4, 1/2, 1/4,
    # so the 2.5% and 97.5% quantiles are 0 and 1.
    est, lo, hi = stratified_bootstrap_aggregate([[0.0, 1.0]], np.mean, seed=0, n_boot=4000)
    assert (est, lo, hi) == (0.5, 0.0, 1.0)


def test_stratified_aggregate_pools_and_resamples_within_strata():
    # Two tasks, each constant: resampling within tasks cannot move the pooled IQM.
    # pooled 0.2, 0.2, 0.8, 0.8: cut one from each end -> mean(0.2, 0.8) = 0.5
    assert stratified_bootstrap_aggregate([[0.2, 0.2], [0.8, 0.8]], seed=1) == (0.5, 0.5, 0.5)
    # pooled 0.2 x3, 0.8 x2: cut one each -> mean(0.2, 0.2, 0.8) = 0.4
    assert stratified_bootstrap_aggregate([[0.2, 0.2, 0.2], [0.8, 0.8]], seed=1)[0] == pytest.approx(0.4)
    a = stratified_bootstrap_aggregate([[0.1, 0.4, 0.5, 0.9], [0.3, 0.6]], seed=7)
    assert a == stratified_bootstrap_aggregate([[0.1, 0.4, 0.5, 0.9], [0.3, 0.6]], seed=7)
    assert a[1] <= a[0] <= a[2]
    assert a[0] == pytest.approx(iqm([0.1, 0.4, 0.5, 0.9, 0.3, 0.6]))


@pytest.mark.parametrize("strata", [[], [[0.5, 0.6], []], [[0.5], [nan, nan]]])
def test_stratified_aggregate_is_empty_when_a_stratum_is(strata):
    assert all(math.isnan(v) for v in stratified_bootstrap_aggregate(strata))


def test_stratified_aggregate_single_runs_have_no_interval():
    est, lo, hi = stratified_bootstrap_aggregate([[0.5], [0.7]], np.mean)
    assert est == pytest.approx(0.6) and math.isnan(lo) and math.isnan(hi)


# ----------------------------------------------------------------------------- ranks and tests


def test_rank_blocks_ties_share_the_mean_rank():
    v = np.array([[3.0, 1.0, 2.0], [1.0, 1.0, 0.0]])
    assert rank_blocks(v).tolist() == [[1.0, 3.0, 2.0], [1.5, 1.5, 3.0]]
    assert rank_blocks(v, higher_is_better=False).tolist() == [[3.0, 1.0, 2.0], [2.5, 2.5, 1.0]]
    with pytest.raises(ValueError, match="complete blocks"):
        rank_blocks(np.array([[1.0, nan]]))


def test_friedman_hand_computed():
    # 4 blocks, 3 methods, identical ranks 1, 2, 3 in every block: rank sums 4, 8, 12;
    # chi2 = 12 / (n k (k+1)) * sum R^2 - 3 n (k+1) = 12/48 * 224 - 48 = 8; p = exp(-8/2).
    v = np.array([[3.0, 2.0, 1.0]] * 4)
    stat, p = friedman(v)
    assert stat == pytest.approx(8.0)
    assert p == pytest.approx(math.exp(-4.0))
    assert all(math.isnan(x) for x in friedman(v[:, :2]))  # fewer than 3 methods
    assert all(math.isnan(x) for x in friedman(np.ones((4, 3))))  # all ties: nothing to test


def test_holm_hand_computed():
    # sorted 0.01, 0.03, 0.04 -> x3, x2, x1 = 0.03, 0.06, 0.04 -> running max 0.03, 0.06, 0.06
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert holm([0.5, 0.01]) == pytest.approx([0.5, 0.02])
    assert holm([0.9, 0.6]) == pytest.approx([1.0, 1.0])  # capped at 1
    out = holm([0.02, nan, 0.01])
    assert math.isnan(out[1]) and out[[0, 2]] == pytest.approx([0.02, 0.02])


def test_wilcoxon_holm_hand_computed():
    # Method 0 beats method 1 on all 5 blocks (differences 1..5, no ties):
    # exact two-sided signed-rank p = 2 / 2^5 = 0.0625. Method 2 equals method 1: p = 1.
    base = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    v = np.column_stack([base * 2, base, base])
    raw, adj = pairwise_wilcoxon_holm(v)
    assert raw[0, 1] == pytest.approx(0.0625) and raw[1, 0] == raw[0, 1]
    assert raw[0, 2] == pytest.approx(0.0625)
    assert raw[1, 2] == 1.0
    assert adj[0, 1] == pytest.approx(min(1.0, 0.0625 * 3))
    assert np.isnan(np.diag(raw)).all()


def test_cd_cliques():
    ranks = [1.0, 2.0, 3.0, 4.0]
    none = np.zeros((4, 4), bool)
    assert cd_cliques(ranks, none) == [[0, 1, 2, 3]]
    assert cd_cliques(ranks, ~np.eye(4, dtype=bool)) == []
    sig = np.zeros((4, 4), bool)
    for i, j in [(0, 2), (0, 3), (1, 3)]:
        sig[i, j] = sig[j, i] = True
    assert cd_cliques(ranks, sig) == [[0, 1], [1, 2], [2, 3]]
    # indices refer to the input order, cliques follow rank order
    assert cd_cliques([3.0, 1.0, 2.0], np.zeros((3, 3), bool)) == [[1, 2, 0]]


def test_rank_methods_orders_and_gates_on_friedman():
    v = np.array([[1.0, 2.0, 3.0]] * 6)  # method 2 best everywhere
    res = rank_methods(v, ["a", "b", "c"])
    assert res.methods == ["c", "b", "a"] and res.mean_ranks.tolist() == [1.0, 2.0, 3.0]
    assert res.friedman_p < 0.05 and res.n_blocks == 6
    # 6 blocks, one-sided sweep: each Wilcoxon p = 2/64 = 0.03125, Holm x3 -> 0.094: not significant
    assert not res.significant.any() and res.cliques == [[0, 1, 2]]
    flat = rank_methods(np.ones((5, 3)), ["a", "b", "c"])
    assert math.isnan(flat.friedman_p) and not flat.significant.any()
    with pytest.raises(ValueError, match="expected"):
        rank_methods(v, ["a", "b"])


# ----------------------------------------------------------------------------- profiles and fronts


def test_performance_profile_hand_computed():
    inf = float("inf")
    costs = np.array([[1.0, 2.0], [2.0, 2.0], [inf, 3.0]])
    # ratios: [1, 2], [1, 1], [inf, 1]
    rho = performance_profile(costs, [1.0, 1.5, 2.0, 100.0])
    assert np.allclose(rho, [[2 / 3, 2 / 3], [2 / 3, 2 / 3], [2 / 3, 1.0], [2 / 3, 1.0]])
    # best cost 0: zero-cost solvers get ratio 1, the others never count
    assert performance_profile(np.array([[0.0, 0.0], [0.0, 1.0]]), [10.0]).tolist() == [[1.0, 0.5]]
    # a problem nobody solves counts against everyone
    assert performance_profile(np.array([[nan, inf], [1.0, 1.0]]), [5.0]).tolist() == [[0.5, 0.5]]
    with pytest.raises(ValueError, match="non-negative"):
        performance_profile(np.array([[-1.0, 1.0]]), [1.0])


def test_quality_costs():
    assert quality_costs(np.array([2.0, 4.0, 0.0, nan]), "max").tolist() == [0.5, 0.25, float("inf"), float("inf")]
    assert quality_costs(np.array([0.0, 0.3, nan]), "min").tolist() == [0.0, 0.3, float("inf")]
    # best / value: a cut of 90 against a best of 100 has ratio 100/90
    rho = performance_profile(quality_costs(np.array([[100.0, 90.0]]), "max"), [1.1, 1.12])
    assert rho.tolist() == [[1.0, 0.0], [1.0, 1.0]]


def test_pareto_front_hand_computed():
    cost = [1.0, 2.0, 3.0, 1.0, nan]
    quality = [1.0, 3.0, 2.0, 0.5, 9.0]
    # (3, 2) is dominated by (2, 3); (1, 0.5) by (1, 1); NaN never optimal
    assert pareto_front(cost, quality).tolist() == [True, True, False, False, False]
    assert pareto_front([1.0, 1.0], [2.0, 2.0]).tolist() == [True, True]  # equal points do not dominate each other


# ----------------------------------------------------------------------------- cluster_bootstrap_ci


def _shared_shift_runs(n_reps=6, n_inst=10, seed=0):
    """Runs whose repetition adds one shift to every instance (a shared pre-training, say)."""
    rng = np.random.default_rng(seed)
    shift = rng.normal(0.0, 0.02, n_reps)
    vals, inst, clus = [], [], []
    for r in range(n_reps):
        for i in range(n_inst):
            vals.append(0.9 + 0.01 * i + shift[r] + rng.normal(0.0, 0.001))
            inst.append(f"G{i}")
            clus.append((0, r))
    return np.array(vals), inst, clus


def test_cluster_estimate_is_the_mean_of_means_and_the_interval_wider_when_runs_share_a_draw():
    vals, inst, clus = _shared_shift_runs()
    strata = [vals[[j for j, x in enumerate(inst) if x == name]] for name in sorted(set(inst))]
    est, lo, hi = cluster_bootstrap_ci(vals, inst, clus, seed=1)
    s_est, s_lo, s_hi = stratified_bootstrap_ci(strata, seed=1)
    assert est == pytest.approx(s_est) == pytest.approx(mean_of_means(strata))
    assert lo < est < hi
    # ten instances move together, so there are 6 independent draws, not 60
    assert (hi - lo) > 2.0 * (s_hi - s_lo)


def test_cluster_interval_matches_a_plain_bootstrap_of_repetition_means():
    vals, inst, clus = _shared_shift_runs(n_reps=8, n_inst=3, seed=2)
    per_rep = vals.reshape(8, 3).mean(axis=1)  # one value per repetition
    _, lo, hi = cluster_bootstrap_ci(vals, inst, clus, seed=3, n_boot=4000)
    b_lo, b_hi = bootstrap_ci(per_rep, seed=3, n_boot=4000)
    assert lo == pytest.approx(b_lo, abs=0.003) and hi == pytest.approx(b_hi, abs=0.003)


def test_cluster_needs_two_clusters_on_every_instance():
    # one repetition only
    est, lo, hi = cluster_bootstrap_ci([1.0, 2.0], ["a", "b"], [(0, 0), (0, 0)])
    assert est == 1.5 and math.isnan(lo) and math.isnan(hi)
    # instance b was run in one repetition only
    est, lo, hi = cluster_bootstrap_ci([1.0, 2.0, 3.0], ["a", "a", "b"], [(0, 0), (0, 1), (0, 0)])
    assert est == (1.5 + 3.0) / 2 and math.isnan(lo)


def test_cluster_same_rep_under_two_master_seeds_is_two_clusters_and_nans_are_dropped():
    est, lo, hi = cluster_bootstrap_ci([1.0, 3.0, nan], ["a", "a", "a"], [(0, 0), (1, 0), (2, 0)], seed=0)
    assert est == 2.0 and 1.0 <= lo < hi <= 3.0


def test_cluster_constant_values_give_an_exact_interval_and_lengths_must_agree():
    assert cluster_bootstrap_ci([2.0, 2.0, 2.0, 2.0], list("abab"), [0, 0, 1, 1]) == (2.0, 2.0, 2.0)
    with pytest.raises(ValueError, match="same length"):
        cluster_bootstrap_ci([1.0, 2.0], ["a"], [0, 1])
    assert all(math.isnan(v) for v in cluster_bootstrap_ci([nan], ["a"], [0]))


# ----------------------------------------------------------------------------- t_prediction_bounds


def test_prediction_bounds_cover_one_new_run_and_do_not_shrink_to_the_mean():
    rng = np.random.default_rng(0)
    n, hits_lo, hits_hi, trials = 20, 0, 0, 4000
    for _ in range(trials):
        x = rng.normal(5.0, 2.0, n + 1)
        lo, hi = t_prediction_bounds(x[:n])
        hits_lo += x[n] >= lo
        hits_hi += x[n] <= hi
    # each one-sided bound holds for a new run about 95% of the time
    assert 0.935 < hits_lo / trials < 0.965 and 0.935 < hits_hi / trials < 0.965
    x = rng.normal(0.0, 1.0, 400)
    m_lo, m_hi = t_bounds(x)
    p_lo, p_hi = t_prediction_bounds(x)
    assert m_hi - m_lo < 0.3 and 3.0 < p_hi - p_lo < 3.6  # 2 * 1.645 * 1.0: the spread of one run, not of the mean
    assert all(math.isnan(v) for v in t_prediction_bounds([1.0, nan]))


def test_instance_bootstrap_resamples_instance_means():
    from bench.stats import instance_bootstrap_ci

    strata = [np.full(3, v) for v in (1.0, 2.0, 3.0, 4.0)]
    est, lo, hi = instance_bootstrap_ci(strata, seed=0, n_boot=4000)
    b_lo, b_hi = bootstrap_ci(np.array([1.0, 2.0, 3.0, 4.0]), seed=0, n_boot=4000)
    assert est == 2.5 and lo == pytest.approx(b_lo, abs=0.05) and hi == pytest.approx(b_hi, abs=0.05)
    # an instance's runs count through their mean: more runs on one instance do not weigh more
    assert instance_bootstrap_ci([[1.0, 1.0, 1.0, 1.0], [3.0]], seed=0)[0] == 2.0
    # one instance: no interval; equal instance means: exact; an empty instance: nothing
    assert math.isnan(instance_bootstrap_ci([[1.0, 2.0]])[1])
    assert instance_bootstrap_ci([[1.0, 3.0], [2.0]]) == (2.0, 2.0, 2.0)
    assert all(math.isnan(x) for x in instance_bootstrap_ci([[1.0], [nan]]))
