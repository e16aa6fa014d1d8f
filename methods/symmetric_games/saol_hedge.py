"""saol-hedge: the paper's learner for identical opponents of limited adaptivity (SAOL over Hedge).

Reference: Ge, Wang, Li and Jin, "Securing Equal Share" (ICML 2025,
arXiv:2406.04201). Secondary sources (reviews of the paper's earlier
submission, and notes that checked the arXiv HTML) say: against fixed
identical opponents the paper uses Hedge; against slowly adapting ones a
strongly adaptive online learner with Hedge as its black box ("SAOL_H"), whose
dynamic regret keeps the average payoff near C/n; against faster (intermediate)
adaptation, behaviour cloning (``mimic-opponents``). SAOL itself is Daniely,
Gonen and Shalev-Shwartz (ICML 2015); see :mod:`common.symmetric_games.online`.

Feedback used: the full-information expected payoff vector of the last round
(``state["payoff"]``), as in the Hedge analysis. Deterministic: the feedback
is, and nothing is drawn.

Deviations from the reference
-----------------------------
- The paper's text past its introduction could not be read here (only the
  abstract, the introduction and secondary summaries): the SAOL instantiation
  (covering, step sizes, weight update) follows Daniely et al. 2015 as we read
  it, not the paper's pseudocode; the paper's constants are UNVERIFIED.
- Horizon-free (SAOL needs no ``T``); each interval's Hedge step is tuned to
  the interval's length, ``sqrt(8 ln A / |I|)``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bench import method
from common.symmetric_games.online import SAOL

REFERENCE = (
    "Ge, Wang, Li and Jin, Securing Equal Share: A Principled Approach for Learning Multiplayer Symmetric Games, "
    "ICML 2025, arXiv:2406.04201 (SAOL_H); Daniely, Gonen and Shalev-Shwartz, Strongly Adaptive Online Learning, ICML 2015"
)


@method(
    name="saol-hedge",
    kind="method",
    tasks=["symmetric-games"],
    reference=REFERENCE,
    version="1",
    params={},
    deterministic=True,
    deviations="SAOL as in Daniely et al. 2015 (geometric covering, Hedge per interval); the paper's own pseudocode and constants UNVERIFIED",
)
class SaolHedge:
    """SAOL over Hedge, one learner per scenario, fed the expected payoff vector each round."""

    def __init__(self, instance: Any, *, seed: int, budget: float) -> None:
        self.A = int(instance.data["n_actions"])
        self.learner: SAOL | None = None

    def select(self, state: dict[str, Any]) -> np.ndarray:
        if self.learner is None:
            self.learner = SAOL(int(state["n_scenarios"]), self.A)
        if "payoff" in state:
            self.learner.update(np.asarray(state["payoff"], dtype=float))
        return self.learner.play()


@method(
    name="saol-hedge-long",
    kind="method",
    tasks=["symmetric-games"],
    reference=REFERENCE + "; our variant",
    version="1",
    params={"min_level": 5},
    deterministic=True,
    deviations=(
        "our variant of saol-hedge, not the paper's: only covering intervals of length >= 2^min_level (32), and "
        "rewards divided by the game's largest payoff (so that they span [0, 1])"
    ),
)
class SaolHedgeLong:
    """SAOL over Hedge without the intervals shorter than ``2^min_level``, rewards rescaled to [0, 1].

    Why: with Daniely et al.'s full covering, the Hedge copies on intervals of
    length 1, 2, 4... restart every few rounds, play near-uniform strategies
    and keep large weights, which costs a constant fraction of the payoff for
    thousands of rounds (README, "saol-hedge at T = 1500 and 6000"). Dropping
    them costs at most ``2^min_level`` rounds of tracking after a switch.
    """

    def __init__(self, instance: Any, *, seed: int, budget: float, min_level: int) -> None:
        self.A = int(instance.data["n_actions"])
        self.scale = 1.0 / float(np.max(instance.data["table"]))
        self.min_level = int(min_level)
        self.learner: SAOL | None = None

    def select(self, state: dict[str, Any]) -> np.ndarray:
        if self.learner is None:
            self.learner = SAOL(int(state["n_scenarios"]), self.A, self.min_level)
        if "payoff" in state:
            self.learner.update(self.scale * np.asarray(state["payoff"], dtype=float))
        return self.learner.play()
