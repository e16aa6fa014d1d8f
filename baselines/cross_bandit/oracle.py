"""Balseiro et al. (2019) cross-learning EXP3 with the context distribution known: the oracle row.

The same learner as the paper's method (:mod:`common.cross_bandit.cross_exp3`) but with the exact
marginal ``f_t(a) = sum_c nu(c) pi_t(a | c)`` in the denominators, read from the instance's public
``nu_oracle`` (which no other learner reads), no implicit exploration (``gamma = 0``) and no epochs:
it updates from the first round. ``eta = sqrt(log K / (K H))``.

UNVERIFIED: the constants of Balseiro et al.'s algorithm (their full text was not readable here);
``eta`` is the standard EXP3 rate for ``K`` actions and horizon ``H``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bench import method
from common.cross_bandit.cross_exp3 import CrossExp3

__all__ = ["BalseiroKnownNu"]


@method(
    name="balseiro-known-nu",
    kind="baseline",
    tasks=["cross-learning-bandit"],
    reference="Balseiro, Golrezaei, Mahdian, Mirrokni & Schneider, Contextual bandits with cross-learning (NeurIPS 2019)",
    version="1",
    params={"eta_scale": 1.0},
    deterministic=True,
    description="oracle row: cross-learning EXP3 with the true context distribution in the importance weights",
    deviations="eta = sqrt(log K/(K H)) is the standard EXP3 rate, not checked against the paper (UNVERIFIED)",
)
class BalseiroKnownNu(CrossExp3):
    """Cross-learning EXP3 with exact marginals from the known ``nu``."""

    def __init__(self, instance: Any, *, seed: int, budget: float, eta_scale: float) -> None:
        super().__init__(instance, seed=seed, budget=budget, eta_scale=eta_scale, gamma_scale=0.0)
        self.nu = np.asarray(instance.data["nu_oracle"], dtype=np.float64)

    def marginal(self, t: int, pi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return np.einsum("c,nck->nk", self.nu, pi), np.ones(pi.shape[0], dtype=bool)
