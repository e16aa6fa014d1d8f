"""EXP3 with cross-learning importance weighting, shared by the paper's method and the oracle row.

Every stream keeps cumulative loss estimates ``Lhat[c, a]`` for every context and action and
plays ``pi_t(. | c) ∝ exp(-eta Lhat[c, .])``. After playing ``a_t`` it sees ``l_t(a_t, c)`` in
every context ``c`` and adds, in every context,

    Lhat[c, a_t] += l_t(a_t, c) / (gamma + f_t(a_t)),

where ``f_t(a) = E_{c ~ nu} pi_t(a | c)`` is the probability of playing ``a`` at round ``t`` (the
cross-learning estimator: unbiased for ``l_t(a, c)`` when ``gamma = 0`` and ``f_t`` is exact).
Subclasses say how ``f_t`` is obtained (:meth:`CrossExp3.marginal`): exactly from a known ``nu``
(Balseiro et al. 2019) or from the contexts of the previous epoch (Schneider and Zimmert 2023).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from common.cross_bandit.streams import StreamLearner, exp_weights, sample_rows

__all__ = ["CrossExp3"]


class CrossExp3(StreamLearner):
    """Cross-learning EXP3 over all streams; subclasses implement :meth:`marginal`.

    ``eta_scale`` and ``gamma_scale`` multiply the per-stream rates
    ``eta = sqrt(log K / (K H))`` and ``gamma = gamma_scale * eta``.
    """

    def __init__(
        self,
        instance: Any,
        *,
        seed: int,
        budget: float,
        eta_scale: float = 1.0,
        gamma_scale: float = 0.0,
        **params: Any,
    ) -> None:
        super().__init__(instance, seed=seed, budget=budget, **params)
        self.eta = eta_scale * np.sqrt(math.log(self.K) / (self.K * self.H.astype(np.float64)))
        self.gamma = gamma_scale * self.eta
        self.Lhat = np.zeros((self.S, self.C, self.K))
        self.denom = np.ones(self.S)
        self.learns = np.ones(self.S, dtype=bool)  # streams whose update of this round is applied

    def marginal(self, t: int, pi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(f, learns)``: ``f`` ``(n, K)`` the (estimated) probability of each action for streams ``0..n``
        under their policies ``pi`` ``(n, C, K)``; ``learns`` ``bool (n,)``: whether the stream updates."""
        raise NotImplementedError

    def observe(self, t: int, ctx: np.ndarray) -> None:
        """Hook: called once the round's context is known, after the policy was fixed."""

    def act(self, t: int, ctx: np.ndarray) -> np.ndarray:
        n = len(ctx)
        pi = exp_weights(self.Lhat[:n], self.eta[:n, None, None])  # (n, C, K)
        f, learns = self.marginal(t, pi)
        p = pi[np.arange(n), ctx]  # (n, K)
        a = sample_rows(p, self.rng)
        self.denom[:n] = self.gamma[:n] + f[np.arange(n), a]
        self.learns[:n] = learns
        self.observe(t, ctx)
        return a

    def update(self, t: int, ctx: np.ndarray, acts: np.ndarray, loss_rows: np.ndarray) -> None:
        n = len(acts)
        w = np.where(self.learns[:n], 1.0 / np.maximum(self.denom[:n], 1e-300), 0.0)
        self.Lhat[np.arange(n), :, acts] += loss_rows * w[:, None]
