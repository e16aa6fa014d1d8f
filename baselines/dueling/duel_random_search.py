"""duel-random-search: pure random search in the ball of radius D around x0 (the trivial reference).

Candidates are drawn uniformly in the ball ``||x - x0|| <= radius``, each
duelled ``repeats = 16`` times against the incumbent; 64 candidates per round,
the one with the most wins replaces the incumbent when it won the majority.
"""

from __future__ import annotations

import numpy as np

from bench import method
from common.dueling.algorithms import random_search
from common.dueling.driver import ProgramDriver


@method(
    name="duel-random-search",
    kind="baseline",
    tasks=["dueling-optimization"],
    reference="pure random search with majority-of-repeats comparisons against the incumbent",
    version="1",
    params={"repeats": 16, "per_round": 64},
    deterministic=True,
)
class DuelRandomSearch:
    """Uniform candidates in the start ball, tournament against the incumbent."""

    def __init__(self, instance, *, seed: int, budget: float, repeats: int, per_round: int):
        data = instance.data
        self.driver = ProgramDriver(
            random_search(
                data, np.random.default_rng(seed), repeats=int(repeats), per_round=int(per_round)
            ),
            data["x0"],
        )

    def select(self, state):
        return self.driver.select(state)
