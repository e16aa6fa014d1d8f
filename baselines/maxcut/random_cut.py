"""``random-cut``: uniformly random labels, the floor every other method must beat."""

from __future__ import annotations

from typing import Any

import numpy as np

from baselines.maxcut._graph import supports_k
from bench.registry import method

__all__ = ["solve_random_cut"]


@method(
    name="random-cut",
    kind="baseline",
    tasks=["maxcut"],
    reference=(
        "none: uniform random labels (numpy.random.Generator.integers); expected cut "
        "(k-1)/k of the total weight, the 1/2-approximation of Sahni and Gonzalez for k=2"
    ),
    version="1",
    params={},
    deterministic=True,
    supports=lambda inst: supports_k(inst, None, "random-cut"),
    deviations="none",
)
def solve_random_cut(instance: Any, *, seed: int, budget: float) -> np.ndarray:
    """Each node gets a label drawn uniformly from ``[0, k)``.

    Labels come from ``numpy.random.default_rng(seed).integers(0, k, n)``,
    so one seed gives one labelling. Its expected cut is ``(k-1)/k`` of the
    total edge weight (the task's ``random`` reference, if it uses
    ``random_cut_expectation``). ``budget`` is unused (O(n)).
    """
    n, k = int(instance.data["n"]), int(instance.data["k"])
    return np.random.default_rng(seed).integers(0, k, size=n, dtype=np.int64)
