"""Reading a knapsack instance and filling a knapsack, shared by the baselines.

Only the public part of an instance is used: ``data["profits"]``,
``data["weights"]`` and ``data["capacity"]``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["read", "fill", "by_efficiency", "repair"]


def read(instance: Any) -> tuple[np.ndarray, np.ndarray, int]:
    """``(profits, weights, capacity)``: two ``int64`` arrays of shape ``(n,)`` and an int."""
    profits = np.asarray(instance.data["profits"], dtype=np.int64)
    weights = np.asarray(instance.data["weights"], dtype=np.int64)
    return profits, weights, int(instance.data["capacity"])


def by_efficiency(profits: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Item indices by decreasing profit/weight ratio; ties keep the item order."""
    # Equal ratios of small integers round to the same float, so ties are exact.
    return np.argsort(-(profits / weights), kind="stable")


def fill(x: np.ndarray, order: np.ndarray, weights: np.ndarray, capacity: int) -> np.ndarray:
    """Add to ``x`` (0/1, changed in place) each item of ``order`` that still fits, in order."""
    load = int(weights @ x)
    w = weights.tolist()
    for j in order.tolist():
        if not x[j] and load + w[j] <= capacity:
            x[j] = 1
            load += w[j]
    return x


def repair(x: np.ndarray, profits: np.ndarray, weights: np.ndarray, capacity: int) -> np.ndarray:
    """Make ``x`` feasible, then fill it: drop the least efficient items first, add the most."""
    x = (np.asarray(x) > 0).astype(np.int8)
    order = by_efficiency(profits, weights)
    load = int(weights @ x)
    for j in order[::-1].tolist():
        if load <= capacity:
            break
        if x[j]:
            x[j] = 0
            load -= int(weights[j])
    return fill(x, order, weights, capacity)
