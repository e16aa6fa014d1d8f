"""Statistics used by ``bench show``, the claims and the leaderboard.

Pure functions. Array shapes are stated in each docstring; every random
resampling takes an explicit ``seed`` (never global state), so the terminal and
the web show the same intervals.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = [
    "bootstrap_ci",
    "stratified_bootstrap_ci",
    "mean_of_means",
    "labels_to_reach",
    "label_saving",
    "stratified_saving_ci",
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


# ----------------------------------------------------------------------------- learning curves


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
