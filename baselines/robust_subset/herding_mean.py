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
from common.robust_subset.herding import herd


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
    return herd(X, X.mean(axis=0), k, score="greedy")
