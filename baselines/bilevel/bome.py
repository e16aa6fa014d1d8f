"""``bome``: Bilevel Optimization Made Easy (Liu, Ye, Wright, Stone and Liu, NeurIPS 2022).

Value-function constraint ``q(x, y) = g(x, y) - g(x, y_T) <= 0`` with ``y_T``
from ``T`` gradient steps on ``g(x, .)`` started at ``y``; the dynamic
barrier step::

    d = grad f + lam grad q,  lam = max(eta ||grad q||^2 - <grad f, grad q>, 0) / ||grad q||^2
    (x, y) <- (x, y) - step * d

with ``grad q = (grad_x g(x, y) - grad_x g(x, y_T), grad_y g(x, y))``.
Calls per iteration: ``T + 3``.

Parameters
----------
eta
    The barrier's control (the paper's default 0.5).
inner_steps
    ``T`` (the paper uses a handful; UNVERIFIED which for hyper-cleaning).
lr_x, lr_y
    Block step sizes in the family's units, tuned as for ``v-pbgd``.

Deviations
----------
- The step and the inner products are taken in the block-diagonal metric
  ``diag(lr_x n I, lr_y / L I)`` (preconditioned BOME): with one step for
  both blocks the ``x`` block (gradients ``O(1/n)``) would not move.
- Deterministic full-batch oracles.
"""

from __future__ import annotations

import numpy as np

from bench import method
from common.bilevel.program import OracleProgram, Program

__all__ = ["BOME"]


@method(
    name="bome",
    kind="baseline",
    tasks=["bilevel-hypercleaning"],
    reference="B. Liu, M. Ye, S. Wright, P. Stone and Q. Liu, BOME! Bilevel Optimization Made Easy, NeurIPS 2022 (arXiv 2209.08709)",
    version="1",
    params={"eta": 0.5, "inner_steps": 5, "lr_x": 100.0, "lr_y": 1.0},
    deterministic=True,
    deviations="block-preconditioned step and barrier inner products (x gradients carry 1/n); full-batch oracles",
)
class BOME(OracleProgram):
    """BOME's dynamic-barrier gradient step on the value-function constraint."""

    def program(self) -> Program:
        eta = float(self.params["eta"])
        T = int(self.params["inner_steps"])
        while self.budget_left >= T + 3:
            L = self.smoothness
            sx, sy = float(self.params["lr_x"]) * self.n, float(self.params["lr_y"]) / L
            w = self.y.copy()
            for _ in range(T):
                (r,) = yield [self.g(self.x, w)]
                w = w - sy * r["gy"]
            rf, rg, rw = yield [self.f(self.x, self.y), self.g(self.x, self.y), self.g(self.x, w)]
            qx, qy = rg["gx"] - rw["gx"], rg["gy"]
            fx, fy = rf["gx"], rf["gy"]
            qq = sx * float(qx @ qx) + sy * float(np.sum(qy * qy))
            fq = sx * float(fx @ qx) + sy * float(np.sum(fy * qy))
            lam = max(eta * qq - fq, 0.0) / qq if qq > 0 else 0.0
            self.x = self.x - sx * (fx + lam * qx)
            self.y = self.y - sy * (fy + lam * qy)
        return self.x, self.y
