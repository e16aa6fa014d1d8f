"""kmeans-medoids: the data point nearest each centre of a k-means clustering with k clusters.

Reference: ``sklearn.cluster.KMeans`` (k-means++ initialisation, Lloyd,
``n_init=1``, ``random_state`` = the job seed, scikit-learn's defaults
otherwise). Two centres can share a nearest point; each later one then takes
its nearest point not yet taken, so the k indices are distinct.
"""

from __future__ import annotations

import numpy as np

# At module level, so the runner's zygote imports scikit-learn once, not every job.
from sklearn.cluster import KMeans

from bench import method


def nearest_distinct(X: np.ndarray, centres: np.ndarray) -> np.ndarray:
    """For each centre in turn, the index of its nearest row of ``X`` not taken by an earlier centre."""
    taken = np.zeros(len(X), dtype=bool)
    out = np.empty(len(centres), dtype=np.int64)
    for j, c in enumerate(centres):
        dist = np.linalg.norm(X - c, axis=1)
        dist[taken] = np.inf
        i = int(np.argmin(dist))
        out[j] = i
        taken[i] = True
    return out


@method(
    name="kmeans-medoids",
    kind="baseline",
    tasks=["robust-subset-selection"],
    reference="scikit-learn KMeans (k-means++, n_init=1), nearest point to each centre",
    version="1",
    params={"n_init": 1, "max_iter": 300},
    deterministic=True,
)
def solve(instance, *, seed: int, budget: float, n_init: int, max_iter: int) -> np.ndarray:
    """k-means with ``k`` clusters, then the nearest distinct point to each centre."""
    X = np.asarray(instance.data["X"], dtype=np.float64)
    k = int(instance.data["k"])
    km = KMeans(
        n_clusters=k, n_init=int(n_init), max_iter=int(max_iter), random_state=seed % (2**32)
    ).fit(X)
    return nearest_distinct(X, km.cluster_centers_)
