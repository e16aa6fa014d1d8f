"""Statistics used by ``bench show``, the claims and the leaderboard.

Pure functions. Array shapes are stated in each docstring; every random
resampling takes an explicit ``seed`` (never global state), so the terminal and
the web show the same intervals.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import stats as _st

__all__ = [
    "bootstrap_ci",
    "stratified_bootstrap_ci",
    "cluster_bootstrap_ci",
    "instance_bootstrap_ci",
    "score_ci",
    "mean_of_means",
    "iqm",
    "stratified_bootstrap_aggregate",
    "rank_blocks",
    "friedman",
    "holm",
    "pairwise_wilcoxon_holm",
    "cd_cliques",
    "RankingResult",
    "rank_methods",
    "performance_profile",
    "quality_costs",
    "pareto_front",
    "labels_to_reach",
    "label_saving",
    "stratified_saving_ci",
    "t_bounds",
    "t_prediction_bounds",
]


def bootstrap_ci(
    x: Sequence[float] | np.ndarray,
    *,
    seed: int = 0,
    n_boot: int = 2000,
    alpha: float = 0.05,
) -> tuple[float, float]:
    """Percentile bootstrap confidence interval of the mean.

    Parameters
    ----------
    x
        Shape ``(n_runs,)``: one value per seed. NaNs are dropped.
    seed
        Seed of the resampling.
    n_boot
        Number of bootstrap resamples.
    alpha
        ``1 - alpha`` is the coverage (0.05 gives a 95% interval).

    Returns
    -------
    (low, high)
        ``(nan, nan)`` with fewer than 2 values: one run carries no information
        about spread, and we do not pretend otherwise.
    """
    a = np.asarray(x, dtype=float)
    a = a[~np.isnan(a)]
    if a.size < 2:
        return (float("nan"), float("nan"))
    if np.all(a == a[0]):
        return (float(a[0]), float(a[0]))
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, a.size, size=(n_boot, a.size))
    means = a[idx].mean(axis=1)
    lo, hi = np.quantile(means, [alpha / 2, 1 - alpha / 2])
    return (float(lo), float(hi))


def mean_of_means(strata: Sequence[np.ndarray]) -> float:
    """Mean over strata (instances) of the mean within each stratum (seeds)."""
    return float(np.mean([np.mean(s) for s in strata]))


def stratified_bootstrap_ci(
    strata: Sequence[Sequence[float] | np.ndarray],
    *,
    seed: int = 0,
    n_boot: int = 5000,
    alpha: float = 0.05,
) -> tuple[float, float, float]:
    """Point estimate and CI of the mean-of-means, resampling runs within each stratum.

    This is the rliable-style stratified bootstrap: the set of instances is
    fixed (a claim is about those instances), and the uncertainty comes from the
    runs (seeds) on each.

    Parameters
    ----------
    strata
        ``n_instances`` arrays; array ``i`` has shape ``(n_runs_i,)``.

    Returns
    -------
    (estimate, low, high)
        ``low``/``high`` are NaN if any stratum has fewer than 2 runs.
    """
    arrs = [np.asarray(s, dtype=float) for s in strata]
    arrs = [a[~np.isnan(a)] for a in arrs]
    if not arrs or any(a.size == 0 for a in arrs):
        return (float("nan"), float("nan"), float("nan"))
    est = mean_of_means(arrs)
    if any(a.size < 2 for a in arrs):
        return (est, float("nan"), float("nan"))
    if all(np.all(a == a[0]) for a in arrs):
        return (est, est, est)  # no spread at all: exact, not a rounding artefact
    rng = np.random.default_rng(seed)
    boots = np.zeros(n_boot)
    for a in arrs:
        idx = rng.integers(0, a.size, size=(n_boot, a.size))
        boots += a[idx].mean(axis=1)
    boots /= len(arrs)
    lo, hi = np.quantile(boots, [alpha / 2, 1 - alpha / 2])
    return (est, float(lo), float(hi))


def cluster_bootstrap_ci(
    values: Sequence[float] | np.ndarray,
    instances: Sequence[Any],
    clusters: Sequence[Any],
    *,
    seed: int = 0,
    n_boot: int = 5000,
    alpha: float = 0.05,
) -> tuple[float, float, float]:
    """Point estimate and CI of the mean-of-means, resampling whole clusters of runs.

    Use it when runs on different instances share a random draw, such as
    one repetition whose jobs all start from the same pre-trained network.
    Such runs are correlated across instances. Resampling them within each
    instance (:func:`stratified_bootstrap_ci`) treats them as independent,
    so its interval can be too narrow. Here each bootstrap replicate draws
    whole clusters (repetitions) with replacement and keeps all of a
    cluster's runs together.

    Parameters
    ----------
    values
        Shape ``(n_runs,)``: one value per run. NaNs are dropped.
    instances
        Shape ``(n_runs,)``: the instance (stratum) of each run.
    clusters
        Shape ``(n_runs,)``: the cluster of each run (any hashable, e.g.
        ``(master_seed, rep)``).

    Returns
    -------
    (estimate, low, high)
        The estimate is the mean over instances of each instance's mean, the
        same as :func:`mean_of_means` when each cluster has one run per
        instance. ``low``/``high`` are NaN with fewer than 2 clusters, or
        when some instance has runs in fewer than 2 clusters. A replicate
        that draws none of an instance's clusters averages over the other
        instances.
    """
    v = np.asarray(values, dtype=float)
    if not (len(v) == len(instances) == len(clusters)):
        raise ValueError("values, instances and clusters must have the same length")
    keep = ~np.isnan(v)
    v = v[keep]
    inst = [x for x, k in zip(instances, keep, strict=True) if k]
    clus = [x for x, k in zip(clusters, keep, strict=True) if k]
    if v.size == 0:
        return (float("nan"), float("nan"), float("nan"))
    i_names = sorted(set(inst), key=repr)
    c_names = sorted(set(clus), key=repr)
    i_idx = np.array([i_names.index(x) for x in inst])
    c_idx = np.array([c_names.index(x) for x in clus])
    sums = np.zeros((len(c_names), len(i_names)))
    counts = np.zeros_like(sums)
    np.add.at(sums, (c_idx, i_idx), v)
    np.add.at(counts, (c_idx, i_idx), 1.0)
    est = float(np.mean(sums.sum(axis=0) / counts.sum(axis=0)))
    if len(c_names) < 2 or np.any((counts > 0).sum(axis=0) < 2):
        return (est, float("nan"), float("nan"))
    if np.all(v == v[0]):
        return (est, est, est)  # no spread at all: exact, not a rounding artefact
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, len(c_names), size=(n_boot, len(c_names)))
    weights = np.zeros((n_boot, len(c_names)))
    np.add.at(weights, (np.arange(n_boot)[:, None], draws), 1.0)
    boot_counts = weights @ counts
    with np.errstate(invalid="ignore", divide="ignore"):
        per_instance = (weights @ sums) / boot_counts
    boots = np.nanmean(per_instance, axis=1)
    lo, hi = np.quantile(boots, [alpha / 2, 1 - alpha / 2])
    return (est, float(lo), float(hi))


def instance_bootstrap_ci(
    strata: Sequence[Sequence[float] | np.ndarray],
    *,
    seed: int = 0,
    n_boot: int = 5000,
    alpha: float = 0.05,
) -> tuple[float, float, float]:
    """Point estimate and CI of the mean-of-means, resampling whole instances.

    Use it when the instances are themselves random draws (generated data
    with a seed) and the runs on one instance barely vary or not at all, as
    with deterministic methods on a deterministic task: resampling runs
    within each instance (:func:`stratified_bootstrap_ci`) then gives a
    zero-width interval, exact for those instances but silent about another
    draw of them. Here each replicate draws instances with replacement and
    averages their means, so the interval says how much the estimate moves
    from one draw of the instance set to another.

    Parameters
    ----------
    strata
        ``n_instances`` arrays of runs (NaNs are dropped).

    Returns
    -------
    (estimate, low, high)
        The estimate is :func:`mean_of_means`. ``low``/``high`` are NaN with
        fewer than 2 instances; an instance with no value makes all three NaN.
    """
    arrs = [np.asarray(s, dtype=float) for s in strata]
    arrs = [a[~np.isnan(a)] for a in arrs]
    if not arrs or any(a.size == 0 for a in arrs):
        return (float("nan"), float("nan"), float("nan"))
    means = np.array([a.mean() for a in arrs])
    est = float(means.mean())
    if means.size < 2:
        return (est, float("nan"), float("nan"))
    if np.all(means == means[0]):
        return (est, est, est)
    rng = np.random.default_rng(seed)
    boots = means[rng.integers(0, means.size, size=(n_boot, means.size))].mean(axis=1)
    lo, hi = np.quantile(boots, [alpha / 2, 1 - alpha / 2])
    return (est, float(lo), float(hi))


def score_ci(
    strata: Sequence[Sequence[float] | np.ndarray],
    *,
    seed: int = 0,
    n_boot: int = 2000,
    alpha: float = 0.05,
) -> tuple[float, float, float]:
    """The interval the leaderboard and ``bench show`` print beside a mean-of-means score.

    The rule depends on the design, never on the values:

    - **several instances: resample instances** (:func:`instance_bootstrap_ci`),
      each instance entering with its mean over its runs (seeds, repetitions).
      A task score is a mean over the task's instances, which stand for the
      problems the task is about; they vary far more than one method's
      seeds on one instance, and resampling the top level of a two-level
      sample alone is the sound cluster bootstrap (Davison and Hinkley 1997,
      section 3.8; Field and Welsh 2007): each instance's mean already
      carries its seed noise, so a noisy method is not credited twice. A
      deterministic method (the same result on every seed) gets the
      interval its spread over instances gives, not a zero-width one; and a
      stochastic and a deterministic method on the same instances get
      intervals of the same kind, so they can be compared. (Claims keep
      their own tests, :mod:`bench.claims`: a claim is about the instances
      it names.)
    - **one instance: resample its runs** (:func:`bootstrap_ci`): the seeds
      are all the data can say anything about.
    - **no interval** (``low``/``high`` NaN) when the resampled units are
      fewer than two or all equal (one instance whose runs agree, as a
      deterministic method's do; one run; instances that all score the
      same): a percentile bootstrap of identical values is a zero-width
      bracket that claims a certainty the data cannot give. Shown as "no CI".

    Parameters
    ----------
    strata
        ``n_instances`` arrays; array ``i`` has shape ``(n_runs_i,)``, the
        runs on instance ``i``. NaNs are dropped.

    Returns
    -------
    (estimate, low, high)
        The estimate is :func:`mean_of_means`; all three are NaN when there
        is no instance or some instance has no value.
    """
    arrs = [np.asarray(s, dtype=float) for s in strata]
    arrs = [a[~np.isnan(a)] for a in arrs]
    nan = float("nan")
    if not arrs or any(a.size == 0 for a in arrs):
        return (nan, nan, nan)
    units = np.array([a.mean() for a in arrs]) if len(arrs) >= 2 else arrs[0]
    est = mean_of_means(arrs)
    if units.size < 2 or np.all(units == units[0]):
        return (est, nan, nan)
    if len(arrs) >= 2:
        return instance_bootstrap_ci(arrs, seed=seed, n_boot=n_boot, alpha=alpha)
    lo, hi = bootstrap_ci(units, seed=seed, n_boot=n_boot, alpha=alpha)
    return (est, lo, hi)


# ----------------------------------------------------------------------------- aggregates across tasks


def iqm(x: Sequence[float] | np.ndarray, axis: int | None = None) -> float | np.ndarray:
    """Interquartile mean: the mean of the middle 50% of the values.

    Same as ``scipy.stats.trim_mean(x, 0.25)`` (as in rliable, Agarwal et al.
    2021): it cuts ``floor(0.25 n)`` values from each end. With ``axis=None``
    the array is flattened, NaNs are dropped and a float is returned (NaN for
    no values); with an axis (no NaNs allowed), an array along the others.
    """
    a = np.asarray(x, dtype=float)
    if axis is None:
        a = a.ravel()
        a = a[~np.isnan(a)]
        if a.size == 0:
            return float("nan")
        return float(_st.trim_mean(a, 0.25))
    a = np.sort(np.moveaxis(a, axis, -1), axis=-1)
    k = int(0.25 * a.shape[-1])
    return a[..., k : a.shape[-1] - k].mean(axis=-1)


def stratified_bootstrap_aggregate(
    strata: Sequence[Sequence[float] | np.ndarray],
    statistic: Callable[..., Any] = iqm,
    *,
    seed: int = 0,
    n_boot: int = 2000,
    alpha: float = 0.05,
) -> tuple[float, float, float]:
    """An aggregate of pooled scores with a stratified percentile-bootstrap CI.

    rliable's interval estimate: the runs of each stratum (task) are resampled
    with replacement, independently per stratum; the statistic is computed on
    the pooled resample. Tasks are fixed, runs are random.

    Parameters
    ----------
    strata
        ``n_tasks`` arrays; array ``t`` has shape ``(n_runs_t,)`` (one score
        per run of task ``t``). An empty list, or any empty or all-NaN
        stratum, gives NaNs: an aggregate over fewer tasks than asked for is
        never reported.
    statistic
        ``statistic(x, axis=...)`` like :func:`iqm` (default), ``np.mean`` or
        ``np.median``: called on the pooled 1-d array with ``axis=None`` and
        on the ``(n_boot, n_pooled)`` resamples with ``axis=1``.

    Returns
    -------
    (estimate, low, high)
        ``low``/``high`` are NaN when every stratum has fewer than 2 runs.
    """
    arrs = [np.asarray(s, dtype=float).ravel() for s in strata]
    arrs = [a[~np.isnan(a)] for a in arrs]
    nan = float("nan")
    if not arrs or any(a.size == 0 for a in arrs):
        return (nan, nan, nan)
    est = float(statistic(np.concatenate(arrs), axis=None))
    if all(a.size < 2 for a in arrs):
        return (est, nan, nan)
    rng = np.random.default_rng(seed)
    boot = np.concatenate([a[rng.integers(0, a.size, size=(n_boot, a.size))] for a in arrs], axis=1)
    lo, hi = np.quantile(np.asarray(statistic(boot, axis=1), dtype=float), [alpha / 2, 1 - alpha / 2])
    return (est, float(lo), float(hi))


# ----------------------------------------------------------------------------- ranking within a task


def rank_blocks(values: np.ndarray, *, higher_is_better: bool = True) -> np.ndarray:
    """Ranks of methods within each block (instance); 1 is best, ties share the mean rank.

    Parameters
    ----------
    values
        Shape ``(n_blocks, n_methods)``, no NaN.

    Returns
    -------
    ranks
        Shape ``(n_blocks, n_methods)``.
    """
    v = np.asarray(values, dtype=float)
    if np.isnan(v).any():
        raise ValueError("rank_blocks needs complete blocks (no NaN)")
    return _st.rankdata(-v if higher_is_better else v, axis=1)


def friedman(values: np.ndarray) -> tuple[float, float]:
    """Friedman's chi-square test that all methods rank alike across blocks.

    ``values`` has shape ``(n_blocks, n_methods)``. Returns ``(statistic,
    p-value)``; NaNs with fewer than 3 methods or 2 blocks, or when every block
    is one big tie (nothing to test).
    """
    v = np.asarray(values, dtype=float)
    if v.ndim != 2 or v.shape[1] < 3 or v.shape[0] < 2:
        return (float("nan"), float("nan"))
    if np.all(v == v[:, :1]):
        return (float("nan"), float("nan"))
    res = _st.friedmanchisquare(*v.T)
    return (float(res.statistic), float(res.pvalue))


def holm(pvalues: Sequence[float] | np.ndarray) -> np.ndarray:
    """Holm's step-down adjustment of ``m`` p-values (shape ``(m,)``), capped at 1.

    The ``i``-th smallest p-value is multiplied by ``m - i`` (``i`` from 0),
    and adjusted values are made non-decreasing in that order. NaNs stay NaN
    and do not count in ``m``.
    """
    p = np.asarray(pvalues, dtype=float)
    out = np.full(p.shape, np.nan)
    ok = np.flatnonzero(~np.isnan(p))
    m = ok.size
    if m == 0:
        return out
    order = ok[np.argsort(p[ok], kind="stable")]
    adj = np.maximum.accumulate(p[order] * (m - np.arange(m)))
    out[order] = np.minimum(adj, 1.0)
    return out


def pairwise_wilcoxon_holm(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Two-sided Wilcoxon signed-rank tests on every pair of methods, Holm-adjusted.

    Benavoli, Corani & Mangili (JMLR 2016) recommend this over the Nemenyi
    post-hoc test, whose outcome for a pair depends on the other methods.

    Parameters
    ----------
    values
        Shape ``(n_blocks, n_methods)``, paired by block (instance).

    Returns
    -------
    (p_raw, p_holm)
        Both shape ``(n_methods, n_methods)``, symmetric, NaN on the diagonal.
        A pair whose differences are all zero gets p = 1 (no evidence of a
        difference). Holm's correction runs over the ``n(n-1)/2`` pairs.
    """
    v = np.asarray(values, dtype=float)
    n = v.shape[1]
    raw = np.full((n, n), np.nan)
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
    ps = []
    for i, j in pairs:
        d = v[:, i] - v[:, j]
        if v.shape[0] < 1 or np.all(d == 0):
            p = 1.0
        else:
            p = float(_st.wilcoxon(v[:, i], v[:, j], zero_method="wilcox", alternative="two-sided").pvalue)
        ps.append(p)
    adj = holm(ps)
    out = np.full((n, n), np.nan)
    for (i, j), p, a in zip(pairs, ps, adj, strict=True):
        raw[i, j] = raw[j, i] = p
        out[i, j] = out[j, i] = a
    return raw, out


def cd_cliques(mean_ranks: Sequence[float] | np.ndarray, significant: np.ndarray) -> list[list[int]]:
    """Groups of methods joined by a bar in a critical-difference diagram.

    Methods are sorted by mean rank; a clique is a maximal run of consecutive
    methods in that order whose every pair is *not* significantly different.
    Single methods are not cliques.

    Parameters
    ----------
    mean_ranks
        Shape ``(n_methods,)``.
    significant
        Shape ``(n_methods, n_methods)``, boolean (the diagonal is ignored).

    Returns
    -------
    cliques
        Lists of method indices (in rank order), sorted by their first member.
    """
    r = np.asarray(mean_ranks, dtype=float)
    sig = np.asarray(significant, dtype=bool)
    order = list(np.argsort(r, kind="stable"))
    n = len(order)
    spans = []
    for a in range(n):
        b = a
        while b + 1 < n and not any(sig[order[k], order[b + 1]] for k in range(a, b + 1)):
            b += 1
        if b > a:
            spans.append((a, b))
    maximal = [s for s in spans if not any(o != s and o[0] <= s[0] and s[1] <= o[1] for o in spans)]
    return [[int(order[k]) for k in range(a, b + 1)] for a, b in maximal]


@dataclass
class RankingResult:
    """Ranking of methods within one task, instances as blocks.

    ``methods`` and ``mean_ranks`` are sorted best first; ``p_holm`` and
    ``significant`` follow that order.
    """

    methods: list[str]
    mean_ranks: np.ndarray
    n_blocks: int
    friedman_stat: float
    friedman_p: float
    p_raw: np.ndarray
    p_holm: np.ndarray
    significant: np.ndarray
    cliques: list[list[int]]
    alpha: float = 0.05
    excluded: dict[str, str] = field(default_factory=dict)


def rank_methods(
    values: np.ndarray,
    methods: Sequence[str],
    *,
    higher_is_better: bool = True,
    alpha: float = 0.05,
) -> RankingResult:
    """Average ranks, Friedman test, then pairwise Wilcoxon-Holm (for a CD diagram).

    Parameters
    ----------
    values
        Shape ``(n_blocks, n_methods)``: one value per instance and method
        (the mean over seeds), complete (no NaN); the caller decides which
        instances and methods enter.
    methods
        ``n_methods`` names.

    Notes
    -----
    The pairwise tests are read as significant only when the Friedman test
    rejects at ``alpha`` (the usual two-step procedure); with two methods,
    the single Wilcoxon test is used directly.
    """
    v = np.asarray(values, dtype=float)
    if v.ndim != 2 or v.shape[1] != len(methods):
        raise ValueError(f"values has shape {v.shape}, expected (n_blocks, {len(methods)})")
    if v.shape[0] == 0:
        n = len(methods)
        empty = np.full((n, n), np.nan)
        return RankingResult(list(methods), np.full(n, np.nan), 0, np.nan, np.nan, empty, empty, np.zeros((n, n), bool), [], alpha)
    ranks = rank_blocks(v, higher_is_better=higher_is_better).mean(axis=0)
    order = np.argsort(ranks, kind="stable")
    v, ranks = v[:, order], ranks[order]
    names = [methods[i] for i in order]
    stat, p = friedman(v)
    raw, adj = pairwise_wilcoxon_holm(v)
    gate = (p < alpha) if v.shape[1] >= 3 else True
    sig = np.nan_to_num(adj, nan=1.0) < alpha if gate else np.zeros_like(adj, dtype=bool)
    np.fill_diagonal(sig, False)
    return RankingResult(names, ranks, int(v.shape[0]), stat, p, raw, adj, sig, cd_cliques(ranks, sig), alpha)


# ----------------------------------------------------------------------------- profiles and fronts


def performance_profile(costs: np.ndarray, taus: Sequence[float] | np.ndarray) -> np.ndarray:
    """Dolan-Moré performance profiles.

    For problem ``p`` and solver ``s`` the ratio is ``r[p, s] = c[p, s] /
    min_s c[p, s]``; ``rho_s(tau)`` is the fraction of problems with ``r[p, s]
    <= tau``. A failure (NaN or inf cost) never counts. When the best cost on a
    problem is 0, solvers with cost 0 get ratio 1 and the others infinity.

    Parameters
    ----------
    costs
        Shape ``(n_problems, n_solvers)``, non-negative, lower is better.
    taus
        Shape ``(n_taus,)``, values ``>= 1``.

    Returns
    -------
    rho
        Shape ``(n_taus, n_solvers)``, in [0, 1].
    """
    c = np.asarray(costs, dtype=float)
    c = np.where(np.isfinite(c), c, np.inf)
    if (c < 0).any():
        raise ValueError("performance_profile needs non-negative costs (lower is better)")
    best = c.min(axis=1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.where(best > 0, c / best, np.where(c == 0, 1.0, np.inf))
    r = np.where(np.isfinite(best), r, np.inf)
    t = np.asarray(taus, dtype=float)
    if c.shape[0] == 0:
        return np.zeros((t.size, c.shape[1]))
    return (r[None, :, :] <= t[:, None, None]).mean(axis=1)


def quality_costs(values: np.ndarray, direction: str) -> np.ndarray:
    """Turn a quality metric into a cost for :func:`performance_profile`.

    ``min`` metrics (errors, gaps) are costs already. For a ``max`` metric
    the cost is ``1 / value``, so the profile ratio is ``best / value``.
    Non-positive values of a ``max`` metric, and NaNs, become infinite costs
    (failures). Shapes are preserved.
    """
    v = np.asarray(values, dtype=float)
    if direction == "min":
        return np.where(np.isnan(v) | (v < 0), np.inf, v)
    with np.errstate(divide="ignore"):
        return np.where(np.isnan(v) | (v <= 0), np.inf, 1.0 / np.where(v > 0, v, 1.0))


def pareto_front(cost: Sequence[float] | np.ndarray, quality: Sequence[float] | np.ndarray) -> np.ndarray:
    """Which points are Pareto-optimal for (lower cost, higher quality).

    Both arrays have shape ``(n_points,)``. A point is dominated when another
    is no worse on both and strictly better on one. Points with a NaN are never
    optimal. Returns a boolean mask of shape ``(n_points,)``.
    """
    x = np.asarray(cost, dtype=float)
    y = np.asarray(quality, dtype=float)
    ok = ~(np.isnan(x) | np.isnan(y))
    mask = np.zeros(x.shape, dtype=bool)
    for i in np.flatnonzero(ok):
        dom = ok & (x <= x[i]) & (y >= y[i]) & ((x < x[i]) | (y > y[i]))
        mask[i] = not dom.any()
    return mask



def labels_to_reach(n_labels: Sequence[float] | np.ndarray, curve: Sequence[float] | np.ndarray, target: float) -> float:
    """Labels at which ``curve`` first reaches ``target``, interpolating linearly between rounds.

    Parameters
    ----------
    n_labels
        Shape ``(n_rounds,)``, increasing label counts.
    curve
        Shape ``(n_rounds,)``, the score at each count (e.g. balanced accuracy).

    Returns
    -------
    float
        ``n_labels[0]`` if the first point already reaches ``target``; NaN if
        the curve never does.
    """
    x = np.asarray(n_labels, dtype=float)
    y = np.asarray(curve, dtype=float)
    hit = np.flatnonzero(y >= target)
    if hit.size == 0:
        return float("nan")
    i = int(hit[0])
    if i == 0:
        return float(x[0])
    y0, y1 = y[i - 1], y[i]
    return float(x[i - 1] + (target - y0) / (y1 - y0) * (x[i] - x[i - 1]))


def label_saving(
    n_labels: Sequence[float] | np.ndarray,
    curve_a: Sequence[float] | np.ndarray,
    curve_b: Sequence[float] | np.ndarray,
) -> float:
    """Label saving of A against B: ``1 - n*/n_final``.

    ``n*`` is the number of labels at which A's curve reaches B's final value;
    both curves are first made monotone with a cumulative maximum (as
    LabelBench's ``--smoothing max``). This is the editorial definition of the
    research note (§2.3), not a formula from the DIRECT paper.

    When A never reaches B's final value, the saving is negative:
    ``-(label_saving of B against A)``, so that the measure is antisymmetric
    and defined for every pair (0 when neither reaches the other's final value).

    Parameters
    ----------
    n_labels
        Shape ``(n_rounds,)``.
    curve_a, curve_b
        Shape ``(n_rounds,)``: mean curves (over seeds) of A and B.
    """
    x = np.asarray(n_labels, dtype=float)
    a = np.maximum.accumulate(np.asarray(curve_a, dtype=float))
    b = np.maximum.accumulate(np.asarray(curve_b, dtype=float))
    n_star = labels_to_reach(x, a, b[-1])
    if not np.isnan(n_star):
        return float(1.0 - n_star / x[-1])
    n_rev = labels_to_reach(x, b, a[-1])
    return 0.0 if np.isnan(n_rev) else float(-(1.0 - n_rev / x[-1]))


def stratified_saving_ci(
    strata: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray]],
    *,
    seed: int = 0,
    n_boot: int = 2000,
    alpha: float = 0.05,
) -> tuple[float, float, float]:
    """Mean label saving over instances, with a paired bootstrap over seeds.

    Parameters
    ----------
    strata
        One ``(n_labels, A, B)`` per instance: ``n_labels`` has shape
        ``(n_rounds,)``; ``A`` and ``B`` have shape ``(n_seeds, n_rounds)``,
        row ``s`` of both from the same seed (paired). Each resample draws
        seeds with replacement, the same rows for A and B, and recomputes
        :func:`label_saving` on the resampled mean curves.

    Returns
    -------
    (estimate, low, high)
        ``low``/``high`` are NaN when an instance has fewer than 2 seeds.
    """
    if not strata:
        return (float("nan"), float("nan"), float("nan"))
    est = float(np.mean([label_saving(x, A.mean(axis=0), B.mean(axis=0)) for x, A, B in strata]))
    if any(A.shape[0] < 2 for _, A, _ in strata):
        return (est, float("nan"), float("nan"))
    rng = np.random.default_rng(seed)
    boots = np.zeros(n_boot)
    for x, A, B in strata:
        m = A.shape[0]
        idx = rng.integers(0, m, size=(n_boot, m))
        for t in range(n_boot):
            boots[t] += label_saving(x, A[idx[t]].mean(axis=0), B[idx[t]].mean(axis=0))
    boots /= len(strata)
    lo, hi = np.quantile(boots, [alpha / 2, 1 - alpha / 2])
    return (est, float(lo), float(hi))


def _student_t_bounds(x: Sequence[float] | np.ndarray, alpha: float, *, new_run: bool) -> tuple[float, float]:
    """``mean -/+ t(1-alpha, n-1) s c``, ``c = sqrt(1/n)`` (the mean) or ``sqrt(1 + 1/n)`` (one new run)."""
    v = np.asarray(x, dtype=float)
    v = v[~np.isnan(v)]
    if v.size < 2:
        return (math.nan, math.nan)
    scale = math.sqrt(1.0 + 1.0 / v.size) if new_run else 1.0 / math.sqrt(v.size)
    half = float(_st.t.ppf(1.0 - alpha, v.size - 1)) * float(v.std(ddof=1)) * scale
    m = float(v.mean())
    return (m - half, m + half)


def t_bounds(x: Sequence[float] | np.ndarray, alpha: float = 0.05) -> tuple[float, float]:
    """One-sided Student-t bounds on the mean of ``x``, each at level ``1 - alpha``.

    ``lo = mean - t(1-alpha, n-1) s / sqrt(n)`` and ``hi = mean + ...``, with
    ``s`` the sample standard deviation. Each bound alone is one-sided: the
    tool for asking whether the mean lies above or below a fixed number. To
    ask whether someone else's single run could be one of these runs, use
    :func:`t_prediction_bounds`. NaN values are dropped; fewer than two
    values give ``(nan, nan)``.

    Parameters
    ----------
    x : array_like, shape (n,)
        Repeated measurements (seeds).
    alpha : float
        One-sided error rate of each bound.

    Returns
    -------
    (float, float)
        The lower and the upper bound.
    """
    return _student_t_bounds(x, alpha, new_run=False)


def t_prediction_bounds(x: Sequence[float] | np.ndarray, alpha: float = 0.05) -> tuple[float, float]:
    """One-sided Student-t bounds for *one new run*, each at level ``1 - alpha``.

    ``lo = mean - t(1-alpha, n-1) s sqrt(1 + 1/n)`` and ``hi = mean + ...``:
    the range a single further run of the same method falls in (normal
    model), not the range of its mean (:func:`t_bounds`). Use it to ask
    whether someone else's single run, such as a paper's figure, could be
    one of these runs. NaN values are dropped; fewer than two values give
    ``(nan, nan)``.

    Parameters
    ----------
    x : array_like, shape (n,)
        Repeated measurements (seeds).
    alpha : float
        One-sided error rate of each bound.

    Returns
    -------
    (float, float)
        The lower and the upper bound.
    """
    return _student_t_bounds(x, alpha, new_run=True)
