"""pot-barycenter: POT's exact fixed-support Wasserstein barycenter, scored on max W.

``ot.lp.barycenter`` (POT 0.9) solves the barycenter LP
``min_w sum_k (1/N) W(w, a_k)`` on the same support with uniform weights and
its default solver (HiGHS's interior point, ``solver="highs-ipm"``). It is a
different objective (the sum, not the maximum): the task scores it on
``max_w`` to show what the barycenter costs the farthest input (the paper's
fairness argument). The result is clipped at 0 and renormalised.
"""

from __future__ import annotations

import numpy as np

from bench import method
from tasks.wbc import import_ot

__all__ = ["solve"]


@method(
    name="pot-barycenter",
    kind="baseline",
    tasks=["wasserstein-ball-center"],
    reference="POT (Flamary et al. 2021) ot.lp.barycenter, the exact fixed-support Wasserstein barycenter LP",
    version="1",
    deterministic=True,
)
def solve(instance, *, seed: int, budget: float) -> np.ndarray:
    """The exact barycenter of the inputs, uniform weights."""
    ot = import_ot()
    A = np.asarray(instance.data["A"], dtype=np.float64)
    C = np.asarray(instance.data["C"], dtype=np.float64)
    b = np.asarray(
        ot.lp.barycenter(A.T.copy(), C, weights=np.full(len(A), 1.0 / len(A))), dtype=np.float64
    )
    b = np.clip(b, 0.0, None)
    return b / b.sum()
