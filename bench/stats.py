"""Statistics used by ``bench show``, the claims and the leaderboard.

Pure functions. Array shapes are stated in each docstring; every random
resampling takes an explicit ``seed`` (never global state), so the terminal and
the web show the same intervals.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["bootstrap_ci", "stratified_bootstrap_ci", "mean_of_means"]


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
