"""Cluster-Margin (Citovsky et al., NeurIPS 2021), as the GALAXY repository runs it.

Reference: ``jifanz/GALAXY`` ``src/cluster_margin/preprocess.py`` and
``cluster_margin.py`` (read, not copied):

- once: average-linkage agglomerative clustering of 1,000 pool points drawn
  at random (seed 12345), merged until there are half as many clusters as
  points; every pool point joins the nearest cluster mean;
- each round: the ``1.25 B`` unlabelled points with the smallest top-2
  margin are grouped by cluster; clusters are visited from the smallest to
  the largest, round robin, taking each cluster's lowest-margin point, until
  ``B`` points are chosen.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from baselines.active_learning.classic import uncertainty_scores
from bench import method
from common.active_learning.driver import unlabeled_mask

__all__ = ["ClusterMargin", "cluster_pool", "cluster_margin_select"]

SUBSAMPLE = 1000
SUBSAMPLE_SEED = 12345
CANDIDATE_FACTOR = 1.25


def cluster_pool(X: np.ndarray, seed: int = SUBSAMPLE_SEED) -> np.ndarray:
    """Cluster id of every pool point (``(n,)`` int64), GALAXY's preprocessing on the task's features."""
    from scipy.cluster.hierarchy import fcluster, linkage

    n = X.shape[0]
    sl = np.random.default_rng(seed).permutation(n)[: min(SUBSAMPLE, n)]
    Z = linkage(X[sl], method="average", metric="euclidean")
    labels = fcluster(Z, t=max(sl.size // 2, 1), criterion="maxclust") - 1
    centers = np.stack([X[sl[labels == c]].mean(axis=0) for c in np.unique(labels)])
    d = (X**2).sum(1)[:, None] - 2 * X @ centers.T + (centers**2).sum(1)[None, :]
    return np.argmin(d, axis=1).astype(np.int64)


def cluster_margin_select(proba: np.ndarray, clusters: np.ndarray, labeled: np.ndarray, count: int) -> np.ndarray:
    """Round-robin over clusters (smallest first) of the ``1.25 count`` lowest-margin unlabelled points."""
    n = proba.shape[0]
    margin = -uncertainty_scores(proba, "margin")
    cand = np.flatnonzero(unlabeled_mask(n, labeled))
    cand = cand[np.argsort(margin[cand], kind="stable")][: int(CANDIDATE_FACTOR * count)]
    groups: dict[int, list[int]] = {}
    for i in cand.tolist():
        groups.setdefault(int(clusters[i]), []).append(i)
    n_clusters = int(clusters.max()) + 1
    sizes = np.array([len(groups.get(c, ())) for c in range(n_clusters)])
    order = [c for c in np.argsort(sizes, kind="stable").tolist() if sizes[c] > 0]
    out: list[int] = []
    heads = dict.fromkeys(order, 0)
    while len(out) < count and order:
        for c in list(order):
            if len(out) == count:
                break
            g = groups[c]
            out.append(g[heads[c]])
            heads[c] += 1
            if heads[c] == len(g):
                order.remove(c)
    return np.asarray(out, dtype=np.int64)


@method(
    name="cluster-margin",
    kind="baseline",
    tasks=["active-learning"],
    reference="Citovsky et al., Batch Active Learning at Scale (Cluster-Margin), NeurIPS 2021; GALAXY repo src/cluster_margin",
    version="1",
    deterministic=True,
    deviations=(
        "Clusters are built on the task's features (standardised PCA) instead of ResNet-18 features, with scipy's "
        "average linkage (the GALAXY repo runs its own O(n^3) loop with the same size-weighted update; ties may be "
        "merged in another order). The 1,000-point subsample uses numpy's Generator(12345), not RandomState(12345). "
        "Pools smaller than 1,000 points are clustered whole. If the 1.25 B candidates cannot fill the batch (they "
        "always can here), the rest are not topped up."
    ),
)
class ClusterMargin:
    """Margin candidates, diversified by round robin over clusters."""

    def __init__(self, instance: Any, *, seed: int, budget: float) -> None:
        self.clusters: np.ndarray | None = None

    def select(self, state: dict[str, Any]) -> np.ndarray:
        if self.clusters is None:
            self.clusters = cluster_pool(np.asarray(state["features"], dtype=np.float64))
        return cluster_margin_select(np.asarray(state["proba"]), self.clusters, np.asarray(state["labeled"]), int(state["remaining"]))
