"""Schneider and Zimmert (2023)'s cross-learning EXP3 with an unknown context distribution, the algorithm
Huang and Huang (ICML 2025) analyse.

Per stream (one independent replication) with horizon ``H``, ``K`` actions and ``C`` contexts:

- time is cut into epochs of ``L = ceil(sqrt(K H))`` rounds;
- the learner plays exponential weights ``pi_t(. | c) ∝ exp(-eta Lhat[c, .])`` in the round's context;
- after playing ``a_t`` and seeing ``l_t(a_t, c)`` in every context, it adds, in every context,
  ``l_t(a_t, c) / (gamma + f_hat_t(a_t))`` to ``Lhat[c, a_t]``, where
  ``f_hat_t(a) = (1/L) sum_{s in previous epoch} pi_t(a | c_s)``: the probability of playing ``a``
  under the *current* policy, averaged over the contexts *of the previous epoch*, which stand in for
  the unknown ``nu`` (the decoupling the paper's analysis is about: the current epoch's own contexts
  never enter its denominators);
- ``eta = sqrt(log K / (K H))``, ``gamma = eta / 2`` (implicit exploration).

Deviations and UNVERIFIED details
---------------------------------
Neither paper's full text could be read here (only abstracts and summaries: the PMLR page, OpenReview
and the sciencestack summary of arXiv 2410.04080); the official code, if any, was not found. What is
above is our reading of the algorithm from the abstracts and general knowledge of the literature:

- UNVERIFIED: the exact form of ``f_hat`` (current policy on previous-epoch contexts) and whether S&Z
  add further decoupling (e.g. interleaved copies of the learner); the constants ``eta``, ``gamma``
  and ``L`` are ours, chosen so that every term scales as ``sqrt(K H)`` (``L >~ log / gamma`` is what a
  Bernstein bound on ``f_hat - f`` needs).
- UNVERIFIED: the first epoch. With no previous epoch there is no ``f_hat``; we play the initial
  (uniform) policy and make no update during epoch 0, collecting its contexts. This costs
  ``O(L) = O(sqrt(K H))`` regret, the same order as the bound.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bench import method
from common.cross_bandit.cross_exp3 import CrossExp3

__all__ = ["SchneiderZimmert"]

REFERENCE = (
    "Schneider & Zimmert, Optimal cross-learning for contextual bandits with unknown context distributions "
    "(NeurIPS 2023, arXiv 2401.01857), as analysed by Huang & Huang, ICML 2025 (arXiv 2410.04080)"
)
DEVIATIONS = (
    "Papers' full text not readable here: the estimator f_hat(a) = mean over the previous epoch's contexts of the "
    "current policy's probability of a is our reading (UNVERIFIED); constants eta = sqrt(log K/(K H)), gamma = eta/2, "
    "epoch length L = ceil(sqrt(K H)) are ours (UNVERIFIED); epoch 0 plays uniformly without updates (UNVERIFIED)."
)


@method(
    name="sz-cross-exp3",
    kind="method",
    tasks=["cross-learning-bandit"],
    reference=REFERENCE,
    version="1",
    params={"eta_scale": 1.0, "gamma_scale": 0.5, "epoch_scale": 1.0},
    deterministic=True,
    description="EXP3 with cross-learning estimates whose denominators use the previous epoch's contexts in place of the unknown nu",
    deviations=DEVIATIONS,
)
class SchneiderZimmert(CrossExp3):
    """The paper's algorithm on every stream at once (see the module docstring)."""

    def __init__(
        self,
        instance: Any,
        *,
        seed: int,
        budget: float,
        eta_scale: float,
        gamma_scale: float,
        epoch_scale: float,
    ) -> None:
        super().__init__(
            instance, seed=seed, budget=budget, eta_scale=eta_scale, gamma_scale=gamma_scale
        )
        self.L = np.maximum(
            1, np.ceil(epoch_scale * np.sqrt(self.K * self.H.astype(np.float64)))
        ).astype(np.int64)
        self.counts = np.zeros((self.S, self.C))  # contexts seen in the current epoch
        self.prev = np.zeros(
            (self.S, self.C)
        )  # empirical context frequencies of the previous epoch
        self.have_prev = np.zeros(self.S, dtype=bool)

    def marginal(self, t: int, pi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        n = pi.shape[0]
        turn = (t % self.L[:n] == 0) & (t > 0)
        if turn.any():
            idx = np.flatnonzero(turn)
            self.prev[idx] = self.counts[idx] / np.maximum(
                self.counts[idx].sum(axis=1, keepdims=True), 1.0
            )
            self.counts[idx] = 0.0
            self.have_prev[idx] = True
        f = np.einsum("nc,nck->nk", self.prev[:n], pi)
        return f, self.have_prev[:n].copy()

    def observe(self, t: int, ctx: np.ndarray) -> None:
        self.counts[np.arange(len(ctx)), ctx] += 1.0
