"""logistic-nce: classical NCE: logistic regression of the data against as many uniform noise draws (nu = 1), the log normaliser a free parameter; the noise is drawn by the method from its seed (public distribution, not oracle cost).

Reference: Gutmann and Hyvarinen (JMLR 2012), noise-contrastive estimation with the normaliser as a free parameter; uniform noise, nu = 1.
"""

from __future__ import annotations

import numpy as np

from bench import method
from common.nce import estimators
from tasks.nce import features


@method(
    name="logistic-nce",
    kind="baseline",
    tasks=["unnormalized-estimation"],
    reference="Gutmann and Hyvarinen (JMLR 2012), noise-contrastive estimation with the normaliser as a free parameter; uniform noise, nu = 1",
    version="1",
    deterministic=False,
)
def solve(instance, *, seed: int, budget: float) -> np.ndarray:
    """theta_hat of the baseline (see the module docstring)."""
    model, X = instance.data["model"], np.asarray(instance.data["X"], dtype=float)
    noise = estimators.uniform_noise(model, X.shape[1], len(X), np.random.default_rng(seed))
    return estimators.logistic_nce(features(model, X), features(model, noise))
