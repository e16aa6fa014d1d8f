"""``greedy``: Dantzig's greedy by profit/weight ratio, with the best-single-item fix."""

from __future__ import annotations

from typing import Any

import numpy as np

from baselines.knapsack._items import by_efficiency, fill, read
from bench.registry import method

__all__ = ["solve_greedy"]


@method(
    name="greedy",
    kind="baseline",
    tasks=["knapsack"],
    reference=(
        "G. B. Dantzig, Discrete-variable extremum problems, Operations Research 5(2), 1957; "
        "the 1/2-approximation as in Kellerer, Pferschy and Pisinger, Knapsack Problems, "
        "Springer 2004, sec. 2.5"
    ),
    version="1",
    params={},
    deterministic=True,
)
def solve_greedy(instance: Any, *, seed: int, budget: float) -> np.ndarray:
    """Take items by decreasing profit/weight while they fit, or the best single item if better.

    Items that do not fit are skipped and the scan goes on, so the packing is
    at least as good as Dantzig's prefix up to the break item. Comparing it
    with the most profitable item that fits alone makes it a
    1/2-approximation: value >= optimum / 2 on every instance. ``seed`` is
    unused; ties in the ratio keep the item order.
    """
    profits, weights, capacity = read(instance)
    n = len(weights)
    x = fill(np.zeros(n, dtype=np.int8), by_efficiency(profits, weights), weights, capacity)
    fits = np.flatnonzero(weights <= capacity)
    if fits.size:
        best = int(fits[np.argmax(profits[fits])])
        if int(profits[best]) > int(profits @ x):
            x = np.zeros(n, dtype=np.int8)
            x[best] = 1
    return x
