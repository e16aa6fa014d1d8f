"""Trivial reference: every X is a "possible cause" of Y, with no CI test at all."""

from __future__ import annotations

import numpy as np

from bench import method


@method(
    name="all-possible",
    kind="baseline",
    tasks=["local-causal-relations"],
    reference="trivial reference (no test)",
    version="1",
    params={},
    deterministic=True,
)
class AllPossible:
    """Labels every observed X possible (1), Y -1, in one round."""

    def __init__(self, instance, *, seed: int, budget: float):
        self.q, self.y = int(instance.data["n_vars"]), int(instance.data["target"])

    def select(self, state):
        labels = np.ones(self.q, dtype=np.int64)
        labels[self.y] = -1
        return {"labels": labels}
