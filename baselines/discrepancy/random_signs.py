"""random-signs: a uniform random colouring (the floor every method must clear)."""

from __future__ import annotations

import numpy as np

from bench import method
from tasks.discrepancy import matrix

__all__ = ["solve"]


@method(
    name="random-signs",
    kind="baseline",
    tasks=["discrepancy"],
    reference="none: uniform signs (numpy.random.Generator.choice)",
    version="1",
    deterministic=True,
)
def solve(instance, *, seed: int, budget: float) -> np.ndarray:
    """``n`` uniform signs from ``numpy.random.default_rng(seed)``."""
    n = matrix(instance.data).shape[1]
    return np.random.default_rng(seed).choice(np.array([-1, 1], dtype=np.int64), n)
