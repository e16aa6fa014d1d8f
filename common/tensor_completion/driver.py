"""The round loop shared by the ALS variants: one sweep of mode updates per round."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from tasks.tensor_completion.cp import row_selector

__all__ = ["SweepCompleter"]


class SweepCompleter:
    """Keeps the factors between rounds; ``update(factors, idx, y, n, S)`` replaces factor ``n``.

    ``S[n]`` is mode ``n``'s row selector (:func:`row_selector`), built in the first round.

    All preparation happens inside ``select`` (so the task's clock counts it).
    """

    def __init__(self, instance: Any, update: Callable[..., np.ndarray]) -> None:
        d = instance.data
        self.idx = np.asarray(d["idx"])
        self.y = np.asarray(d["y"], dtype=float)
        self.update = update
        self.factors: list[np.ndarray] | None = None

    def select(self, state: dict[str, Any]) -> list[np.ndarray]:
        if self.factors is None:
            self.factors = [np.array(A, dtype=float) for A in state["init"]]
            self.S = [row_selector(self.idx[:, n], A.shape[0]) for n, A in enumerate(self.factors)]
        for n in range(len(self.factors)):
            self.factors[n] = self.update(self.factors, self.idx, self.y, n, self.S[n])
        return self.factors
