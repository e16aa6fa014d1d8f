"""random-subset: k distinct candidates drawn uniformly (the floor every method must clear)."""

from __future__ import annotations

import numpy as np

from bench import method

__all__ = ["solve"]


@method(
    name="random-subset",
    kind="baseline",
    tasks=["eigenvalue-augmentation"],
    reference="none: a uniform k-subset (numpy.random.Generator.choice without replacement)",
    version="1",
    deterministic=True,
)
def solve(instance, *, seed: int, budget: float) -> np.ndarray:
    """``k`` indices without replacement from ``numpy.random.default_rng(seed)``."""
    m, k = len(instance.data["F"]), int(instance.data["k"])
    return np.sort(np.random.default_rng(seed).choice(m, k, replace=False)).astype(np.int64)
