"""``uniform-weights``: no cleaning, the trivial reference: train on the noisy labels.

Every example gets weight 1 (``x = 40``, ``sigmoid(40) = 1`` in float64) and
the whole budget goes to Nesterov's accelerated gradient on the lower level
(step ``1/L``, momentum ``(sqrt(L) - sqrt(mu)) / (sqrt(L) + sqrt(mu))``),
which converges to the noisy-label model well within the standard budget.
"""

from __future__ import annotations

import math

import numpy as np

from bench import method
from common.bilevel.program import OracleProgram, Program

__all__ = ["UniformWeights"]


@method(
    name="uniform-weights",
    kind="baseline",
    tasks=["bilevel-hypercleaning"],
    reference="trivial reference: weighted logistic regression with all weights 1 (train on the noisy labels)",
    version="1",
    params={},
    deterministic=True,
)
class UniformWeights(OracleProgram):
    """Accelerated gradient on the lower level with all weights 1."""

    def program(self) -> Program:
        self.x = np.full(self.n, 40.0)
        y_prev = self.y.copy()
        while self.budget_left >= 1:
            L = self.smoothness
            beta = (math.sqrt(L) - math.sqrt(self.mu)) / (math.sqrt(L) + math.sqrt(self.mu))
            z = self.y + beta * (self.y - y_prev)
            (r,) = yield [self.g(self.x, z)]
            y_prev, self.y = self.y, z - r["gy"] / L
        return self.x, self.y
