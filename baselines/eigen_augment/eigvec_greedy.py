"""eigvec-greedy: Ghosh and Boyd's Fiedler-vector heuristic, for any PSD candidates.

Ghosh and Boyd, "Growing well-connected graphs" (IEEE CDC 2006), add edges
one at a time, each the non-edge ``(a, b)`` with the largest ``(v_a - v_b)^2``
for the current Fiedler vector ``v``: the first-order increase of lambda_2.
For a general candidate ``A_i = F_i F_i^T`` the same first-order increase of
a simple lambda_min with unit eigenvector ``v`` is ``v^T A_i v``; when the
smallest eigenvalue is repeated we use ``trace(P A_i)`` over its eigenspace
``P`` (our generalisation). One eigendecomposition per step, so it scales to
large graphs, as Ghosh and Boyd intended.

The rule ``(v_a - v_b)^2`` is quoted from secondary sources (the paper's
heuristic section could not be read here): UNVERIFIED as the paper's wording,
but it is the textbook first-order perturbation of lambda_2.
"""

from __future__ import annotations

import numpy as np

from baselines.eigen_augment.greedy import bottom_eigenspace, first_order_gain
from bench import method

__all__ = ["solve"]


@method(
    name="eigvec-greedy",
    kind="baseline",
    tasks=["eigenvalue-augmentation"],
    reference="Ghosh and Boyd, Growing well-connected graphs (IEEE CDC 2006): Fiedler-vector greedy, generalised to PSD candidates",
    version="1",
    deterministic=True,
)
def solve(instance, *, seed: int, budget: float) -> np.ndarray:
    """``k`` steps, each the candidate with the largest ``v^T A_i v`` at the current bottom eigenvector(s)."""
    M, F, k = (
        np.asarray(instance.data["M"]),
        np.asarray(instance.data["F"]),
        int(instance.data["k"]),
    )
    Z = M.copy()
    free = np.ones(len(F), dtype=bool)
    chosen: list[int] = []
    for _ in range(k):
        _, V = bottom_eigenspace(Z)
        cand = np.flatnonzero(free)
        best = int(cand[np.argmax(first_order_gain(F[cand], V))])
        chosen.append(best)
        free[best] = False
        Z = Z + F[best] @ F[best].T
    return np.asarray(chosen, dtype=np.int64)
