"""random-influence: independent standard normal scores, the zero of the correlation scale."""

from __future__ import annotations

import numpy as np

from bench import method


@method(
    name="random-influence",
    kind="baseline",
    tasks=["influence-attribution"],
    reference="independent N(0, 1) scores from the job's seed",
    version="1",
    deterministic=False,  # the scores are, per seed; the session's solution also holds the task's clock
)
def solve(instance, *, seed: int, budget: float) -> np.ndarray:
    """An ``(n, n_test)`` array of N(0, 1) draws."""
    n, n_test = len(instance.data["X"]), int(instance.data["n_test"])
    return np.random.default_rng([seed, n, n_test]).standard_normal((n, n_test))
