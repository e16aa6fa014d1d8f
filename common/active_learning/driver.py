"""Method-side helpers for the ``active-learning`` task's ``select(state)`` protocol.

A strategy that needs labels while it selects (DIRECT, GALAXY) is written as
a *round plan*: a generator that yields arrays of pool indices to query and
receives, for each, the oracle's labels (``labels = yield idx``).
:class:`RoundStrategy` turns such a plan into ``select`` answers: on the
first call of a round (``state["fresh"]``) it starts the plan with the
round's features and probabilities; on later calls it sends the labels of
the previous answer back into the plan.

If a plan stops before the round's batch is spent (every point it may
query is labelled), the rest of the batch is filled with uniformly random
unlabelled points, and the number of such fills is counted in ``filled``.
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["RoundContext", "RoundStrategy", "Plan", "unlabeled_mask"]

#: A round plan: yields index arrays, receives their labels.
Plan = Generator[np.ndarray, np.ndarray, None]


@dataclass
class RoundContext:
    """What a strategy knows at the start of a round.

    Attributes
    ----------
    features
        ``(n_pool, d)`` learner inputs (standardised, PCA).
    proba
        ``(n_pool, K)`` the learner's predicted probabilities.
    labeled, labels
        Queried indices (query order) and the oracle's answers, int64.
    budget
        Labels to spend this round.
    n_classes
        ``K``.
    round
        Round number (1 is the first after the random initial batch).
    """

    features: np.ndarray
    proba: np.ndarray
    labeled: np.ndarray
    labels: np.ndarray
    budget: int
    n_classes: int
    round: int

    @property
    def n_pool(self) -> int:
        return int(self.proba.shape[0])


def unlabeled_mask(n: int, labeled: np.ndarray) -> np.ndarray:
    """Boolean ``(n,)`` mask of points not yet queried."""
    m = np.ones(n, dtype=bool)
    m[labeled] = False
    return m


class RoundStrategy:
    """Base class of interactive strategies: subclasses implement :meth:`plan`.

    Parameters are those of every interactive method:
    ``(instance, *, seed, budget, **params)``.
    """

    def __init__(self, instance: Any, *, seed: int, budget: float, **params: Any) -> None:
        self.rng = np.random.default_rng(seed)
        self.params = params
        self._plan: Plan | None = None
        self._pending: np.ndarray | None = None
        self._unlabeled: np.ndarray | None = None
        self.filled = 0

    def plan(self, ctx: RoundContext) -> Plan:  # pragma: no cover - interface
        """Yield index arrays summing to at most ``ctx.budget``; each ``yield`` returns their labels."""
        raise NotImplementedError

    def _fill(self, remaining: int) -> np.ndarray:
        assert self._unlabeled is not None
        cand = np.flatnonzero(self._unlabeled)
        self.filled += remaining
        return np.sort(self.rng.choice(cand, size=remaining, replace=False)).astype(np.int64)

    def select(self, state: dict[str, Any]) -> np.ndarray:
        remaining = int(state["remaining"])
        labeled = np.asarray(state["labeled"], dtype=np.int64)
        labels = np.asarray(state["labels"], dtype=np.int64)
        if state["fresh"]:
            ctx = RoundContext(
                features=np.asarray(state["features"]),
                proba=np.asarray(state["proba"]),
                labeled=labeled,
                labels=labels,
                budget=remaining,
                n_classes=int(state["n_classes"]),
                round=int(state["round"]),
            )
            self._unlabeled = unlabeled_mask(ctx.n_pool, labeled)
            self._plan = self.plan(ctx)
            step = lambda: next(self._plan)  # noqa: E731
        else:
            pend = self._pending
            assert pend is not None and np.array_equal(labeled[-pend.size :], pend), "state out of step with the plan"
            answer = labels[-pend.size :]
            step = lambda: self._plan.send(answer)  # noqa: E731
        try:
            action = np.asarray(step(), dtype=np.int64)
        except StopIteration:
            action = self._fill(remaining)
        if action.size == 0:
            action = self._fill(remaining)
        self._pending = action
        self._unlabeled[action] = False
        return action
