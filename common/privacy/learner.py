"""The method side of the ``private-classification`` protocol (see ``tasks/privacy/classification``).

A subclass implements :meth:`PrivateLearner.train` (``X``, ``y``, ``epsilon``,
``delta``, a generator) and returns ``(w, declared_epsilon, declared_delta)``;
the base class reads the round's data set (the instance's, or an audit trial's)
and gives every round fresh randomness from ``(seed, round)``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["PrivateLearner"]


class PrivateLearner:
    """One training run per round; each round draws its noise from ``default_rng([seed, round])``."""

    def __init__(self, instance: Any, *, seed: int, budget: float, **params: Any) -> None:
        self.data = instance.data
        self.seed = int(seed)
        self.params = params

    def train(
        self, X: np.ndarray, y: np.ndarray, epsilon: float, delta: float, rng: np.random.Generator
    ) -> tuple[np.ndarray, float, float]:  # pragma: no cover - interface
        raise NotImplementedError

    def select(self, state: dict[str, Any]) -> dict[str, Any]:
        if state.get("phase") != "train":
            raise ValueError(f"unknown phase {state.get('phase')!r}; expected 'train'")
        if state["dataset"] == "trial":
            X, y = (
                np.asarray(state["X"], dtype=np.float64),
                np.asarray(state["y"], dtype=np.float64),
            )
        else:
            X, y = (
                np.asarray(self.data["X"], dtype=np.float64),
                np.asarray(self.data["y"], dtype=np.float64),
            )
        rng = np.random.default_rng([self.seed, int(state["trial"])])
        w, eps, delta = self.train(X, y, float(state["epsilon"]), float(state["delta"]), rng)
        return {"w": np.asarray(w, dtype=np.float64), "epsilon": float(eps), "delta": float(delta)}
