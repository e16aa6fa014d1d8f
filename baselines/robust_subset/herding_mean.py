"""herding-mean: herding toward the empirical mean (moment matching, the paper's non-robust baseline).

Reference: Welling (2009) herding / Chen, Welling and Smola (2010) kernel
herding; the official GM Matching code's ``herding`` with
``target_moment='mean'``. Same greedy step as our ``gm-matching``
(``argmax <theta, x> - |x|^2 / 2``, theta_0 = target) so that the two differ
only in the target.
"""

from __future__ import annotations

import numpy as np

from bench import method


@method(
    name="herding-mean",
    kind="baseline",
    tasks=["robust-subset-selection"],
    reference="Welling 2009 herding toward the empirical mean; GM Matching's 'herding' baseline",
    version="1",
    deterministic=True,
)
def solve(instance, *, seed: int, budget: float) -> np.ndarray:
    """Greedy moment matching of ``mean(X)``; ``k`` indices in selection order."""
    X = np.asarray(instance.data["X"], dtype=np.float64)
    k = int(instance.data["k"])
    target = X.mean(axis=0)
    theta = target.copy()
    half_sq = 0.5 * np.einsum("ij,ij->i", X, X)
    taken = np.zeros(len(X), dtype=bool)
    out = np.empty(k, dtype=np.int64)
    for t in range(k):
        s = X @ theta - half_sq
        s[taken] = -np.inf
        i = int(np.argmax(s))
        out[t] = i
        taken[i] = True
        theta += target - X[i]
    return out
