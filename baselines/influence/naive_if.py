"""naive-if: the classical influence function, reading the non-decomposable loss as a sum of per-point terms.

Koh and Liang's (2017) influence function ``grad f^T H^{-1} grad l_i`` needs a
loss ``sum_i l_i``. The Cox partial likelihood and ListMLE are sums of
terms, one per event or list place, so the reading a practitioner would try
gives point ``i`` its own term only: its event's partial-likelihood term
(zero for a censored point) or its place's ListMLE term. Removing ``i`` then
drops that term and leaves ``i`` in every other risk set or list, which is
what VIF corrects. Derivatives by ``torch.func`` on the same objective, the
same Hessian solve as ``vif``.
"""

from __future__ import annotations

import numpy as np
import torch

from bench import method
from common.influence.autodiff import Problem
from common.influence.scores import naive_if


@method(
    name="naive-if",
    kind="baseline",
    tasks=["influence-attribution"],
    reference="Koh and Liang, Understanding Black-box Predictions via Influence Functions (ICML 2017), per-term reading",
    version="1",
    deterministic=False,  # the scores are; the session's solution also holds the task's clock
)
def solve(instance, *, seed: int, budget: float) -> np.ndarray:
    """``grad f^T H^{-1} grad term_i`` for every point (``(n, n_test)``)."""
    torch.set_num_threads(1)
    return naive_if(Problem(instance.data)).numpy().astype(np.float64)
