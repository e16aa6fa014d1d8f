"""Self-play meta-algorithms: compute a symmetric equilibrium by self-play, then play it (or a best response to it).

The prior meta-algorithms the paper tests against (self-play as in
multiplayer poker and Mahjong systems): the policy is fixed before meeting
the opponents and never adapts.

- ``selfplay-replicator``: replicator dynamics (Euler, ``dt = 0.5``, 5 000
  steps) from a Dirichlet(1) start drawn from the job's seed;
- ``selfplay-fp``: symmetric fictitious play (5 000 rounds) from the same
  kind of start; plays the empirical average;
- ``br-selfplay``: the pure best response to the replicator's equilibrium
  (the "best response to the self-play population").

The random start stands for a self-play run's arbitrary initialisation: which
equilibrium self-play lands on is not up to the learner. The computed
equilibrium is checked (``exploitability``) in tests.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bench import method
from common.symmetric_games.selfplay import best_response, fictitious_play, replicator

__all__ = ["SelfPlayReplicator", "SelfPlayFP", "BestResponseSelfPlay", "UniformPlay"]


class _Fixed:
    """Plays one fixed mixed strategy in every scenario and round."""

    strategy: np.ndarray

    def select(self, state: dict[str, Any]) -> np.ndarray:
        return np.tile(self.strategy, (int(state["n_scenarios"]), 1))


def _start(instance: Any, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    d = instance.data
    A = int(d["n_actions"])
    y0 = np.random.default_rng([seed, 11]).dirichlet(np.ones(A))
    return np.asarray(d["table"]), np.asarray(d["compositions"]), y0


@method(
    name="selfplay-replicator",
    kind="baseline",
    tasks=["symmetric-games"],
    reference="replicator dynamics self-play (Taylor and Jonker 1978), a symmetric equilibrium played as a fixed policy",
    version="1",
    params={},
    deterministic=True,
)
class SelfPlayReplicator(_Fixed):
    def __init__(self, instance: Any, *, seed: int, budget: float) -> None:
        table, comps, y0 = _start(instance, seed)
        self.strategy = replicator(table, comps, y0)


@method(
    name="selfplay-fp",
    kind="baseline",
    tasks=["symmetric-games"],
    reference="symmetric fictitious play self-play (Brown 1951), the empirical average played as a fixed policy",
    version="1",
    params={},
    deterministic=True,
)
class SelfPlayFP(_Fixed):
    def __init__(self, instance: Any, *, seed: int, budget: float) -> None:
        table, comps, y0 = _start(instance, seed)
        self.strategy = fictitious_play(table, comps, y0)


@method(
    name="br-selfplay",
    kind="baseline",
    tasks=["symmetric-games"],
    reference="best response to the replicator self-play equilibrium, played as a fixed policy",
    version="1",
    params={},
    deterministic=True,
)
class BestResponseSelfPlay(_Fixed):
    def __init__(self, instance: Any, *, seed: int, budget: float) -> None:
        table, comps, y0 = _start(instance, seed)
        self.strategy = best_response(table, comps, replicator(table, comps, y0))


@method(
    name="uniform-play",
    kind="baseline",
    tasks=["symmetric-games"],
    reference="the uniform mixed strategy in every round (trivial reference)",
    version="1",
    params={},
    deterministic=True,
)
class UniformPlay(_Fixed):
    def __init__(self, instance: Any, *, seed: int, budget: float) -> None:
        A = int(instance.data["n_actions"])
        self.strategy = np.full(A, 1.0 / A)
