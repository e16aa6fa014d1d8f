"""Learners that ignore cross-learning: EXP3 per context, EXP3 ignoring the context, uniform play.

All use only the loss of the played action *in the round's own context* (``loss_rows[j, c_j]``),
i.e. ordinary bandit feedback, and the loss-based EXP3 estimator ``l / p(a)``.

- ``exp3-per-context``: an independent EXP3 in each context (the standard contextual-bandit
  answer, regret ``O(sqrt(C K T log K))``). ``nu`` is unknown, so a context's horizon is unknown:
  each context's copy uses the anytime rate ``eta_n = sqrt(log K / (K n))`` after ``n`` visits
  (a doubling-free anytime EXP3), which is how one tunes it without knowing ``nu``.
- ``exp3-no-context``: one EXP3 over the ``K`` actions for all contexts, ``eta = sqrt(log K / (K H))``.
  Its comparator is the best single action, so its regret against the best *policy* is linear
  wherever the best action depends on the context.
- ``uniform-bandit``: a uniformly random action every round (the normalisation's zero).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from bench import method
from common.cross_bandit.streams import StreamLearner, exp_weights, sample_rows

__all__ = ["Exp3PerContext", "Exp3NoContext", "UniformBandit"]


@method(
    name="exp3-per-context",
    kind="baseline",
    tasks=["cross-learning-bandit"],
    reference="Auer, Cesa-Bianchi, Freund & Schapire (2002), EXP3, one copy per context",
    version="1",
    params={"eta_scale": 1.0},
    deterministic=True,
    description="independent EXP3 in every context with anytime rate sqrt(log K/(K n_c)); no cross-learning",
)
class Exp3PerContext(StreamLearner):
    """One EXP3 per (stream, context)."""

    def __init__(self, instance: Any, *, seed: int, budget: float, eta_scale: float) -> None:
        super().__init__(instance, seed=seed, budget=budget)
        self.scale = eta_scale * math.sqrt(math.log(self.K) / self.K)
        self.Lhat = np.zeros((self.S, self.C, self.K))
        self.visits = np.zeros((self.S, self.C))
        self.p_played = np.ones(self.S)

    def act(self, t: int, ctx: np.ndarray) -> np.ndarray:
        n = len(ctx)
        rows = np.arange(n)
        self.visits[rows, ctx] += 1.0
        eta = self.scale / np.sqrt(self.visits[rows, ctx])
        p = exp_weights(self.Lhat[rows, ctx], eta[:, None])
        a = sample_rows(p, self.rng)
        self.p_played[:n] = p[rows, a]
        return a

    def update(self, t: int, ctx: np.ndarray, acts: np.ndarray, loss_rows: np.ndarray) -> None:
        rows = np.arange(len(acts))
        self.Lhat[rows, ctx, acts] += loss_rows[rows, ctx] / self.p_played[: len(acts)]


@method(
    name="exp3-no-context",
    kind="baseline",
    tasks=["cross-learning-bandit"],
    reference="Auer, Cesa-Bianchi, Freund & Schapire (2002), EXP3 over actions, context ignored",
    version="1",
    params={"eta_scale": 1.0},
    deterministic=True,
    description="a single EXP3 over the K actions that ignores the context (and cross-learning)",
)
class Exp3NoContext(StreamLearner):
    """One EXP3 per stream, blind to the context."""

    def __init__(self, instance: Any, *, seed: int, budget: float, eta_scale: float) -> None:
        super().__init__(instance, seed=seed, budget=budget)
        self.eta = eta_scale * np.sqrt(math.log(self.K) / (self.K * self.H.astype(np.float64)))
        self.Lhat = np.zeros((self.S, self.K))
        self.p_played = np.ones(self.S)

    def act(self, t: int, ctx: np.ndarray) -> np.ndarray:
        n = len(ctx)
        p = exp_weights(self.Lhat[:n], self.eta[:n, None])
        a = sample_rows(p, self.rng)
        self.p_played[:n] = p[np.arange(n), a]
        return a

    def update(self, t: int, ctx: np.ndarray, acts: np.ndarray, loss_rows: np.ndarray) -> None:
        rows = np.arange(len(acts))
        self.Lhat[rows, acts] += loss_rows[rows, ctx] / self.p_played[: len(acts)]


@method(
    name="uniform-bandit",
    kind="baseline",
    tasks=["cross-learning-bandit"],
    reference="uniform play (trivial reference)",
    version="1",
    deterministic=True,
    description="a uniformly random action every round",
)
class UniformBandit(StreamLearner):
    """Uniform play; learns nothing."""

    def act(self, t: int, ctx: np.ndarray) -> np.ndarray:
        return self.rng.integers(0, self.K, size=len(ctx))

    def update(self, t: int, ctx: np.ndarray, acts: np.ndarray, loss_rows: np.ndarray) -> None:
        return None
