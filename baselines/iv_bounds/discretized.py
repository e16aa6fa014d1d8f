"""Fixed discretisations of the instrument with the same closed-form bounds as the paper's method.

- ``iv-kmeans``: k-means clusters of the (standardised) instrument, ``K = 4`` as
  ``iv-repr``. The paper's naive baseline (official ``run_main.py``: scikit-learn
  ``KMeans`` on ``Z``, nuisance networks on ``x`` and the cluster label).
- ``iv-median-split``: a binary instrument, the median split of a linear
  first-stage score (scikit-learn ``LogisticRegression`` of ``A`` on ``Z``): the
  textbook way to turn many instruments into one binary one, and a strong one
  when the instrument acts monotonically through a linear index.
- ``iv-manski``: no instrument (one partition): Manski's no-assumption bounds
  with the nuisances ``P(A = a | x)`` and ``E[Y | x, a]`` estimated by the same
  networks; their width is ``hi - lo`` wherever the estimated propensities lie in
  ``(0, 1)``.

All three fit the partition-level nuisances directly on ``(x, onehot(k))``
(``common.iv_bounds.nuisance.fit_partition_nuisances``: the official naive
baseline's recipe) and take ``tasks.iv_bounds.closed_form_bounds``.
"""

from __future__ import annotations

import numpy as np

from bench import method
from common.iv_bounds.nuisance import finalize, fit_partition_nuisances, standardize
from tasks.iv_bounds import closed_form_bounds

NUISANCE = "nuisances: two-tower networks on (x, onehot(partition)), as the official naive baseline"


def _bounds(instance, labels: np.ndarray, k: int, seed: int, epochs: int) -> dict[str, np.ndarray]:
    d = instance.data
    lo, hi = (float(v) for v in d["y_range"])
    X, X_test = standardize(np.asarray(d["X"]), np.asarray(d["X_test"]))
    pimu, pi = fit_partition_nuisances(
        X,
        labels,
        k,
        np.asarray(d["A"]),
        np.asarray(d["Y"]),
        X_test,
        lo,
        hi,
        seed=seed,
        epochs=epochs,
    )
    return finalize(*closed_form_bounds(pimu, pi, lo, hi), lo, hi)


@method(
    name="iv-kmeans",
    kind="baseline",
    tasks=["iv-bounds"],
    reference="sklearn.cluster.KMeans (n_init=10) on the standardised instrument; the paper's naive baseline",
    version="1",
    params={"k": 4, "nuisance_epochs": 100},
    tier_params={"smoke": {"nuisance_epochs": 50}},
    deterministic=True,
    description="k-means discretisation of Z, closed-form bounds per partition",
    deviations=NUISANCE + "; one-hot label input (official: the label scaled to [-0.5, 0.5])",
)
def solve_kmeans(
    instance, *, seed: int, budget: float, k: int, nuisance_epochs: int
) -> dict[str, np.ndarray]:
    """k-means on the standardised instrument, then partition-level nuisances and closed-form bounds."""
    from sklearn.cluster import KMeans

    (Z,) = standardize(np.asarray(instance.data["Z"]))
    labels = KMeans(n_clusters=k, n_init=10, random_state=seed).fit_predict(Z)
    return _bounds(instance, labels, k, seed, nuisance_epochs)


@method(
    name="iv-median-split",
    kind="baseline",
    tasks=["iv-bounds"],
    reference="median split of a sklearn LogisticRegression first stage (A on Z): a binary instrument",
    version="1",
    params={"nuisance_epochs": 100},
    tier_params={"smoke": {"nuisance_epochs": 50}},
    deterministic=True,
    description="binary instrument: median split of the linear first-stage score, closed-form bounds",
)
def solve_median(
    instance, *, seed: int, budget: float, nuisance_epochs: int
) -> dict[str, np.ndarray]:
    """Median split of the logistic first-stage score of ``A`` on ``Z``, then closed-form bounds."""
    from sklearn.linear_model import LogisticRegression

    (Z,) = standardize(np.asarray(instance.data["Z"]))
    score = (
        LogisticRegression(max_iter=2000)
        .fit(Z, np.asarray(instance.data["A"]))
        .decision_function(Z)
    )
    labels = (score > np.median(score)).astype(np.int64)
    return _bounds(instance, labels, 2, seed, nuisance_epochs)


@method(
    name="iv-manski",
    kind="baseline",
    tasks=["iv-bounds"],
    reference="Manski (1990) no-assumption bounds, nuisances by the same networks",
    version="1",
    params={"nuisance_epochs": 100},
    tier_params={"smoke": {"nuisance_epochs": 50}},
    deterministic=True,
    description="no instrument: Manski's no-assumption bounds on the CATE",
)
def solve_manski(
    instance, *, seed: int, budget: float, nuisance_epochs: int
) -> dict[str, np.ndarray]:
    """One partition (the instrument ignored): Manski's bounds from estimated ``P(A | x)``, ``E[Y | x, a]``."""
    labels = np.zeros(len(instance.data["X"]), dtype=np.int64)
    return _bounds(instance, labels, 1, seed, nuisance_epochs)
