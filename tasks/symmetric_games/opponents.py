"""The opponent suite: who the ``n - 1`` other seats are, run on the task's side.

Every scenario keeps the paper's first condition: the ``n - 1`` opponents play
one common (possibly mixed) strategy ``y_t`` each round. Scenarios differ in
how ``y_t`` moves (the paper's second condition is about that speed):

- ``fixed-pure-<a>`` (one per action) and ``fixed-uniform``: ``n - 1`` copies
  of a fixed policy;
- ``population``: each seat draws its policy, independently every round, from
  a population of three policies (Dirichlet(1) draws) with Dirichlet(1)
  weights; in a normal-form game that is the same as every seat playing the
  population's mixture, which is what the task uses;
- ``switching``: the opponents alternate between two pure strategies in four
  equal phases (limited adaptivity: three switches in ``T`` rounds);
- ``drift``: ``y_t`` turns smoothly around the simplex (two laps in ``T``
  rounds), ``y_t(a) ~ exp(3 cos(2 pi (t / P + phi) - 2 pi a / A))``;
- ``hedge-learner``: the opponents share one Hedge learner (step 0.1) fed
  their own expected payoff vector, given the learner's and their own mixed
  strategies;
- ``fp-learner``: the opponents share fictitious play: each round they best
  respond to the empirical averages of the learner's and their own past
  strategies (ties to the lowest action).

The learning opponents update on *expected* payoffs, so the whole suite is a
deterministic function of the learner's mixed strategies and the job's seed:
:func:`replay` recomputes every payoff from the solution alone.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tasks.symmetric_games.games import compositions, expected_payoffs, others_probs

__all__ = ["CATEGORIES", "Suite", "scenario_names", "replay"]

#: Scenario categories, in the order of the metrics (``gap_<category>``).
CATEGORIES = (
    "fixed_pure",
    "fixed_uniform",
    "population",
    "switching",
    "drift",
    "hedge_learner",
    "fp_learner",
)

HEDGE_STEP = 0.1
DRIFT_KAPPA = 3.0
SWITCH_PHASES = 4


def scenario_names(n_actions: int) -> list[str]:
    """The suite's scenarios, in order."""
    return [f"fixed-pure-{a}" for a in range(n_actions)] + [
        "fixed-uniform",
        "population",
        "switching",
        "drift",
        "hedge-learner",
        "fp-learner",
    ]


def category(name: str) -> str:
    return "fixed_pure" if name.startswith("fixed-pure") else name.replace("-", "_")


@dataclass
class Suite:
    """All scenarios of one job, stepped together (one row of ``(K, A)`` per scenario)."""

    table: np.ndarray
    n_players: int
    horizon: int
    seed: int

    def __post_init__(self) -> None:
        A = self.table.shape[0]
        self.A = A
        self.comps = compositions(self.n_players - 1, A)
        self.names = scenario_names(A)
        self.K = len(self.names)
        rng = np.random.default_rng([self.seed, 1])
        fixed = np.vstack([np.eye(A), np.full((1, A), 1.0 / A)])
        pop = rng.dirichlet(np.ones(A), size=3)
        w = rng.dirichlet(np.ones(3))
        self.fixed = np.vstack([fixed, (w @ pop)[None]])  # (A + 2, A)
        a1 = int(rng.integers(A))
        a2 = int((a1 + 1 + rng.integers(A - 1)) % A)
        self.switch_pair = (a1, a2)
        self.drift_phase = float(rng.random())
        self.hedge_y = rng.dirichlet(np.ones(A))
        self.fp_y0 = rng.dirichlet(np.ones(A))
        self.fp_sum_x = np.zeros(A)
        self.fp_sum_y = np.zeros(A)
        self.t = 0

    # -- the opponents' strategies in round t (before the learner's move) -------
    def _switching(self, t: int) -> np.ndarray:
        phase = min(SWITCH_PHASES - 1, t * SWITCH_PHASES // self.horizon)
        y = np.zeros(self.A)
        y[self.switch_pair[phase % 2]] = 1.0
        return y

    def _drift(self, t: int) -> np.ndarray:
        period = self.horizon / 2.0
        ang = 2 * np.pi * (t / period + self.drift_phase) - 2 * np.pi * np.arange(self.A) / self.A
        z = DRIFT_KAPPA * np.cos(ang)
        e = np.exp(z - z.max())
        return e / e.sum()

    def _fp(self, t: int) -> np.ndarray:
        if t == 0:
            return self.fp_y0.copy()
        v = (
            others_probs((self.fp_sum_x / t)[None], (self.fp_sum_y / t)[None], self.n_players)
            @ self.table.T
        )
        y = np.zeros(self.A)
        y[int(np.argmax(v[0]))] = 1.0
        return y

    def strategies(self) -> np.ndarray:
        """``y_t`` of every scenario: ``(K, A)``."""
        t = self.t
        return np.vstack(
            [self.fixed, self._switching(t), self._drift(t), self.hedge_y, self._fp(t)]
        )

    def update(self, x: np.ndarray, y: np.ndarray) -> None:
        """Let the learning opponents see round t (the learner's ``x`` and their own ``y``, both ``(K, A)``)."""
        h, f = self.K - 2, self.K - 1
        v = others_probs(x[h : h + 1], y[h : h + 1], self.n_players) @ self.table.T
        z = np.log(np.maximum(self.hedge_y, 1e-300)) + HEDGE_STEP * v[0]
        z = np.exp(z - z.max())
        self.hedge_y = z / z.sum()
        self.fp_sum_x += x[f]
        self.fp_sum_y += y[f]
        self.t += 1


def replay(table: np.ndarray, n_players: int, seed: int, x: np.ndarray) -> np.ndarray:
    """Expected payoffs ``u(x_t; y_t)`` of the learner in every scenario and round: ``(K, T)``.

    ``x``: the learner's mixed strategies, ``(K, T, A)``.
    """
    K, T, _ = x.shape
    suite = Suite(table, n_players, T, seed)
    out = np.zeros((K, T))
    for t in range(T):
        y = suite.strategies()
        r = expected_payoffs(table, suite.comps, y)
        out[:, t] = np.einsum("ka,ka->k", r, x[:, t])
        suite.update(x[:, t], y)
    return out
