"""k-center: the greedy 2-approximation of the k-center problem (Gonzalez 1985; Sener and Savarese 2018's core-set).

Start from the point nearest the empirical mean, then repeatedly add the point
farthest from the chosen set (Euclidean). Deterministic: ties go to the
lowest index.
"""

from __future__ import annotations

import numpy as np

from bench import method


def kcenter_greedy(X: np.ndarray, k: int, first: int) -> np.ndarray:
    """Indices of Gonzalez's farthest-first traversal of the rows of ``X`` from row ``first``."""
    out = np.empty(k, dtype=np.int64)
    out[0] = first
    sq = np.einsum("ij,ij->i", X, X)
    # squared distances by |x|^2 + |c|^2 - 2 x.c: one matrix-vector product per step
    dmin = np.maximum(sq + sq[first] - 2.0 * (X @ X[first]), 0.0)
    for t in range(1, k):
        i = int(np.argmax(dmin))
        out[t] = i
        dmin = np.minimum(dmin, np.maximum(sq + sq[i] - 2.0 * (X @ X[i]), 0.0))
    return out


@method(
    name="k-center",
    kind="baseline",
    tasks=["robust-subset-selection"],
    reference="Gonzalez 1985 farthest-first traversal; Sener and Savarese, ICLR 2018 (k-center greedy core-set)",
    version="1",
    deterministic=True,
)
def solve(instance, *, seed: int, budget: float) -> np.ndarray:
    """Farthest-first traversal from the point nearest ``mean(X)``."""
    X = np.asarray(instance.data["X"], dtype=np.float64)
    first = int(np.argmin(np.linalg.norm(X - X.mean(axis=0), axis=1)))
    return kcenter_greedy(X, int(instance.data["k"]), first)
