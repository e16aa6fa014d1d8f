"""topk-relaxation: solve the relaxation, keep the k largest x_i (deterministic rounding).

The natural deterministic rounding of the concave relaxation
``max lambda_min(M + sum x_i A_i)  s.t.  sum x <= k, 0 <= x <= 1`` (solved
with cvxpy and SCS by :func:`tasks.eigen_augment.solve_relaxation`): what the
paper's randomized rounding must improve on to matter. Ties in ``x`` go to the
smaller index.
"""

from __future__ import annotations

import numpy as np

from bench import method
from tasks.eigen_augment import solve_relaxation

__all__ = ["solve"]


@method(
    name="topk-relaxation",
    kind="baseline",
    tasks=["eigenvalue-augmentation"],
    reference="top-k deterministic rounding of the concave relaxation (cvxpy + SCS)",
    version="1",
    deterministic=True,
)
def solve(instance, *, seed: int, budget: float) -> np.ndarray:
    """The ``k`` indices with the largest relaxed ``x_i``."""
    M, F, k = (
        np.asarray(instance.data["M"]),
        np.asarray(instance.data["F"]),
        int(instance.data["k"]),
    )
    x = solve_relaxation(M, F, k)["x"]
    return np.sort(np.argsort(-x, kind="stable")[:k]).astype(np.int64)
