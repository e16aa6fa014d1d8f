"""hedge-plain: Hedge (exponential weights) with the fixed step tuned to the horizon.

Against fixed identical opponents this is the paper's algorithm: its regret
``<= sqrt(T ln A / 2)`` against the opponents' own strategy, which pays C/n,
secures ``C/n - sqrt(ln A / (2T))`` on average. Against opponents that adapt
(even slowly: a few switches), the best *fixed* action in hindsight can pay
far less than C/n, and no-(static-)regret says nothing; the paper's answer is
SAOL (``saol-hedge``). Step ``eta = sqrt(8 ln A / T)`` (Cesa-Bianchi and
Lugosi 2006, Thm 2.2), full-information expected payoff vectors.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from bench import method
from common.symmetric_games.online import Hedge


@method(
    name="hedge-plain",
    kind="baseline",
    tasks=["symmetric-games"],
    reference="Hedge / exponential weights (Freund and Schapire 1997), step sqrt(8 ln A / T) (Cesa-Bianchi and Lugosi 2006, Thm 2.2)",
    version="1",
    params={},
    deterministic=True,
)
class HedgePlain:
    """Hedge with ``eta = sqrt(8 ln A / T)`` per scenario."""

    def __init__(self, instance: Any, *, seed: int, budget: float) -> None:
        self.A = int(instance.data["n_actions"])
        self.T = int(instance.data["horizon"])
        self.learner: Hedge | None = None

    def select(self, state: dict[str, Any]) -> np.ndarray:
        if self.learner is None:
            self.learner = Hedge(
                int(state["n_scenarios"]), self.A, math.sqrt(8.0 * math.log(self.A) / self.T)
            )
        if "payoff" in state:
            self.learner.update(np.asarray(state["payoff"], dtype=float))
        return self.learner.play()
