"""greedy: add, k times, the candidate with the largest lambda_min after adding it.

The standard greedy for max-min eigenvalue augmentation (E-optimal design's
"greedy exchange" without exchanges). Each of the ``k`` steps evaluates
``lambda_min(Z + A_i)`` for every remaining candidate with
``numpy.linalg.eigvalsh``. Ties are the rule, not the exception, while the
chosen matrices cannot yet span the space (in design instances with ``k r > n``
the first ``n / r`` steps leave ``lambda_min(Z) = lambda_0`` whatever is
added), so a tie is broken by the first-order gain ``trace(P A_i)`` with ``P``
the projector on ``Z``'s eigenspace at ``lambda_min`` (the same score as
:mod:`baselines.eigen_augment.eigvec_greedy`); without it the greedy would
pick arbitrarily among tied candidates.

Reference: the greedy of the E-optimal design literature (e.g. Pukelsheim,
Optimal Design of Experiments, 2006); no library implements it for general
PSD candidates.
"""

from __future__ import annotations

import numpy as np

from bench import method

__all__ = ["bottom_eigenspace", "first_order_gain", "solve"]

#: Eigenvalues within this relative distance of lambda_min count as tied.
TIE = 1e-9


def bottom_eigenspace(Z: np.ndarray, tie: float = TIE) -> tuple[float, np.ndarray]:
    """``(lambda_min, V)``: the smallest eigenvalue and an orthonormal basis of its (near-)eigenspace."""
    w, V = np.linalg.eigh(Z)
    keep = w <= w[0] + tie * max(1.0, abs(w[0]))
    return float(w[0]), V[:, keep]


def first_order_gain(F: np.ndarray, V: np.ndarray) -> np.ndarray:
    """``trace(V^T A_i V) = ||F_i^T V||_F^2`` for every candidate."""
    return (np.einsum("mir,ij->mrj", F, V) ** 2).sum(axis=(1, 2))


@method(
    name="lambda-greedy",
    kind="baseline",
    tasks=["eigenvalue-augmentation"],
    reference="greedy lambda_min gain (E-optimal design greedy), ties broken by the first-order gain",
    version="1",
    deterministic=True,
)
def solve(instance, *, seed: int, budget: float) -> np.ndarray:
    """``k`` greedy steps, each the candidate with the largest ``lambda_min`` after it is added."""
    M, F, k = (
        np.asarray(instance.data["M"]),
        np.asarray(instance.data["F"]),
        int(instance.data["k"]),
    )
    Z = M.copy()
    free = np.ones(len(F), dtype=bool)
    chosen: list[int] = []
    for _ in range(k):
        cand = np.flatnonzero(free)
        vals = np.array([np.linalg.eigvalsh(Z + F[i] @ F[i].T)[0] for i in cand])
        top = vals.max()
        tied = cand[vals >= top - TIE * max(1.0, abs(top))]
        if len(tied) > 1:
            _, V = bottom_eigenspace(Z)
            best = int(tied[np.argmax(first_order_gain(F[tied], V))])
        else:
            best = int(tied[0])
        chosen.append(best)
        free[best] = False
        Z = Z + F[best] @ F[best].T
    return np.asarray(chosen, dtype=np.int64)
