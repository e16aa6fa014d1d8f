"""``random-fill``: the items in a random order, each taken if it still fits."""

from __future__ import annotations

from typing import Any

import numpy as np

from baselines.knapsack._items import fill, read
from bench.registry import method

__all__ = ["solve_random_fill"]


@method(
    name="random-fill",
    kind="baseline",
    tasks=["knapsack"],
    reference="none: a random maximal packing, the floor (numpy.random.Generator.permutation)",
    version="1",
    params={},
    deterministic=True,
)
def solve_random_fill(instance: Any, *, seed: int, budget: float) -> np.ndarray:
    """Visit the items in a random order and take each one that still fits.

    The floor every other method must beat: a feasible, maximal but otherwise
    arbitrary packing. The order comes from ``numpy.random.default_rng(seed)``,
    so one seed always gives one solution.
    """
    _, weights, capacity = read(instance)
    order = np.random.default_rng(seed).permutation(len(weights))
    return fill(np.zeros(len(weights), dtype=np.int8), order, weights, capacity)
