"""uniform: k distinct rows drawn uniformly at random (the paper's random-pruning baseline).

Reference: ``numpy.random.Generator.choice`` without replacement; the official
code's ``random`` (``sampling/algos.py``) is ``torch.randperm(N)[:k]``.
"""

from __future__ import annotations

import numpy as np

from bench import method


@method(
    name="uniform",
    kind="baseline",
    tasks=["robust-subset-selection"],
    reference="none: uniform sampling without replacement (numpy.random.Generator.choice)",
    version="1",
    deterministic=True,
)
def solve(instance, *, seed: int, budget: float) -> np.ndarray:
    """``k`` indices drawn without replacement from ``numpy.random.default_rng(seed)``."""
    n, k = len(instance.data["X"]), int(instance.data["k"])
    return np.random.default_rng(seed).choice(n, k, replace=False).astype(np.int64)
