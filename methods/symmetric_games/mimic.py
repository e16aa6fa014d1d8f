"""mimic-opponents: behaviour cloning of the identical opponents (the paper's learner for faster adaptation).

Reference: Ge, Wang, Li and Jin, "Securing Equal Share" (ICML 2025,
arXiv:2406.04201). By symmetry, playing the opponents' own common strategy
pays exactly C/n; a learner that estimates that strategy from the opponents'
observed actions and plays the estimate loses only the estimation error and
the opponents' movement since the data were seen. Secondary sources say the
paper uses behaviour cloning for opponents of intermediate adaptivity.

Here: the estimate is the empirical distribution of the opponents' actions
(``state["counts"]``, one draw per opponent and round) over the last
``window`` rounds; uniform before any data.

Why ``window = 1`` (the last round only): the payoff ``u(x; y)`` is linear in
the learner's ``x``, and the empirical distribution is unbiased for the
opponents' strategy, so against a fixed ``y`` any window pays ``C/n`` in
expectation (the sampling noise costs nothing). Against moving opponents a
longer window only adds lag: ``E u(x_t; y_t) = u(y_{t-1}; y_t)``, which is
``C/n`` minus the one-round movement. A pilot with ``window = 50`` on
Majority Vote (``T = 1500``) lost about 0.017 per round against switching
opponents. The default comes from that argument, not from the published
instances.

Deviations from the reference
-----------------------------
- The paper's estimator (window, or a weighting of old rounds) is UNVERIFIED.
"""

from __future__ import annotations

from collections import deque
from typing import Any

import numpy as np

from bench import method


@method(
    name="mimic-opponents",
    kind="method",
    tasks=["symmetric-games"],
    reference="Ge, Wang, Li and Jin, Securing Equal Share, ICML 2025, arXiv:2406.04201 (behaviour cloning)",
    version="1",
    params={"window": 1},
    deterministic=True,
    deviations="estimator = the opponents' empirical actions over the last `window` (default 1) rounds, our choice; the paper's estimator UNVERIFIED",
)
class MimicOpponents:
    """Play the empirical distribution of the opponents' last ``window`` rounds of actions."""

    def __init__(self, instance: Any, *, seed: int, budget: float, window: int) -> None:
        self.A = int(instance.data["n_actions"])
        self.window = int(window)
        self.recent: deque[np.ndarray] = deque()
        self.total: np.ndarray | None = None

    def select(self, state: dict[str, Any]) -> np.ndarray:
        K = int(state["n_scenarios"])
        if self.total is None:
            self.total = np.zeros((K, self.A))
        if "counts" in state:
            c = np.asarray(state["counts"], dtype=float)
            self.recent.append(c)
            self.total += c
            if len(self.recent) > self.window:
                self.total -= self.recent.popleft()
        s = self.total.sum(axis=1, keepdims=True)
        return np.where(s > 0, self.total / np.maximum(s, 1e-12), 1.0 / self.A)
