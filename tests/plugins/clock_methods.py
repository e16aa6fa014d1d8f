"""Test-only methods for the ``truncated`` status (loaded with --plugin in tests)."""

from __future__ import annotations

import numpy as np

from bench import method, truncated


@method(name="clock-cut", kind="baseline", tasks=["knapsack"], deterministic=True)
def clock_cut(instance, *, seed, budget):
    """truncated: says the clock stopped it, and returns a feasible (empty) knapsack."""
    truncated("stopped by the clock after 3 of 10 passes")
    truncated("and skipped the polish")
    return np.zeros(len(instance.data["weights"]), dtype=np.int64)


@method(name="clock-cut-invalid", kind="baseline", tasks=["knapsack"], deterministic=True)
def clock_cut_invalid(instance, *, seed, budget):
    """invalid: a truncated run whose solution breaks the rules is invalid, not truncated."""
    truncated("stopped by the clock")
    return np.full(len(instance.data["weights"]), 2, dtype=np.int64)
