"""pseudo-likelihood: Besag's pseudo-likelihood, sum over coordinates of log p(x_j | x_-j), jointly over all parameters (symmetric couplings); on the 1-D quartic family it coincides with the MLE.

Reference: Besag (1975), pseudo-likelihood; conditionals normalised exactly (spins) or by Gauss-Legendre quadrature (box), scipy L-BFGS-B.
"""

from __future__ import annotations

import numpy as np

from bench import method
from common.nce import estimators


@method(
    name="pseudo-likelihood",
    kind="baseline",
    tasks=["unnormalized-estimation"],
    reference="Besag (1975), pseudo-likelihood; conditionals normalised exactly (spins) or by Gauss-Legendre quadrature (box), scipy L-BFGS-B",
    version="1",
    deterministic=True,
)
def solve(instance, *, seed: int, budget: float) -> np.ndarray:
    """theta_hat of the baseline (see the module docstring)."""
    model, X = instance.data["model"], np.asarray(instance.data["X"], dtype=float)
    return estimators.pseudo_likelihood(model, X)
