"""mean-histogram: the mean of the input histograms (the trivial reference, the task's normalisation zero).

The Euclidean average ``(1/N) sum_k a_k``: no transport at all. It is also the
task's ``mean`` reference, so its normalised score is 0 by construction.
"""

from __future__ import annotations

import numpy as np

from bench import method

__all__ = ["solve"]


@method(
    name="mean-histogram",
    kind="baseline",
    tasks=["wasserstein-ball-center"],
    reference="the arithmetic mean of the inputs (trivial reference)",
    version="1",
    deterministic=True,
)
def solve(instance, *, seed: int, budget: float) -> np.ndarray:
    """The mean of the rows of ``A``."""
    w = np.asarray(instance.data["A"], dtype=np.float64).mean(axis=0)
    return w / w.sum()
