"""mle-exact: maximum likelihood with the exact normaliser (enumeration of 256 states, or tensor Gauss-Legendre quadrature to ~1e-15 on the box); convex, L-BFGS-B from zero.

Reference: maximum likelihood; log Z by enumeration (spins) or 64-node-per-axis Gauss-Legendre quadrature (box), scipy L-BFGS-B.
"""

from __future__ import annotations

import numpy as np

from bench import method
from common.nce import estimators
from tasks.nce import features


@method(
    name="mle-exact",
    kind="baseline",
    tasks=["unnormalized-estimation"],
    reference="maximum likelihood; log Z by enumeration (spins) or 64-node-per-axis Gauss-Legendre quadrature (box), scipy L-BFGS-B",
    version="1",
    deterministic=True,
)
def solve(instance, *, seed: int, budget: float) -> np.ndarray:
    """theta_hat of the baseline (see the module docstring)."""
    model, X = instance.data["model"], np.asarray(instance.data["X"], dtype=float)
    return estimators.mle_exact(model, features(model, X))
