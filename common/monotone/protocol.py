"""The method side of the ``monotone-regression`` protocol (see ``tasks/monotone/__init__.py``).

A subclass implements :meth:`Predictor.fit` (train on ``self.data``, return a function from
an ``(m, d)`` float64 array to ``m`` float64 predictions); the base class answers the two
rounds: ``{"phase": "fit"}`` with ``{"monotone": <the registered monotone parameter>}``,
then ``{"phase": "predict", "X": ...}`` with the predictions.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["Predictor"]


class Predictor:
    """Two-round predictor: fit on the training rows, then predict the task's query rows."""

    def __init__(
        self, instance: Any, *, seed: int, budget: float, monotone: bool, **params: Any
    ) -> None:
        self.data = instance.data
        self.seed, self.monotone, self.params = int(seed), bool(monotone), params
        self._predict: Callable[[np.ndarray], np.ndarray] | None = None

    def fit(self) -> Callable[[np.ndarray], np.ndarray]:  # pragma: no cover - interface
        raise NotImplementedError

    def select(self, state: dict[str, Any]) -> Any:
        if state["phase"] == "fit":
            self._predict = self.fit()
            return {"monotone": self.monotone}
        if state["phase"] == "predict":
            if self._predict is None:
                raise RuntimeError("the task asked for predictions before the fit round")
            return np.asarray(
                self._predict(np.asarray(state["X"], dtype=np.float64)), dtype=np.float64
            )
        raise ValueError(f"unknown phase {state.get('phase')!r}; expected 'fit' or 'predict'")
