"""``aid-cg``: approximate implicit differentiation with conjugate gradient (AID-CG).

The hypergradient of ``F(x) = f(x, y*(x))`` by the implicit function theorem,
``grad F = grad_x f - grad^2_xy g [grad^2_yy g]^{-1} grad_y f``, with ``y*``
and the linear solve both approximate (Pedregosa 2016; Grazzi et al. 2020;
Ji, Yang and Liang 2021)::

    y <- T warm-started gradient steps of size lr_y / L on g(x, .)
    v ~ [grad^2_yy g(x, y)]^{-1} grad_y f(x, y)    (K conjugate-gradient steps from v = 0, one Hessian-vector product each)
    x <- x - lr_x n (grad_x f - grad^2_xy g(x, y) v)  (one more product for the cross term)

Calls per outer iteration: ``T`` lower, 1 upper, ``K + 1`` Hessian-vector products.

Parameters
----------
inner_steps, cg_steps
    ``T`` and ``K``.
lr_x, lr_y
    Step sizes in the family's units, tuned as for ``v-pbgd``.

Deviations
----------
- Deterministic full-batch oracles; CG restarted from 0 at every outer step.
"""

from __future__ import annotations

import numpy as np

from bench import method
from common.bilevel.program import OracleProgram, Program

__all__ = ["AIDCG"]


@method(
    name="aid-cg",
    kind="baseline",
    tasks=["bilevel-hypercleaning"],
    reference="Implicit differentiation with CG: F. Pedregosa, ICML 2016; R. Grazzi et al., ICML 2020; K. Ji, J. Yang and Y. Liang, ICML 2021",
    version="1",
    params={"inner_steps": 5, "cg_steps": 5, "lr_x": 10.0, "lr_y": 1.0},
    deterministic=True,
    deviations="full-batch oracles; CG from v = 0 at every outer step",
)
class AIDCG(OracleProgram):
    """Warm-started inner gradient descent, then a CG solve of the implicit linear system."""

    def program(self) -> Program:
        T = int(self.params["inner_steps"])
        K = int(self.params["cg_steps"])
        ax = float(self.params["lr_x"]) * self.n
        while self.budget_left >= T + K + 2:
            ay = float(self.params["lr_y"]) / self.smoothness
            for _ in range(T):
                (r,) = yield [self.g(self.x, self.y)]
                self.y = self.y - ay * r["gy"]
            (rf,) = yield [self.f(self.x, self.y)]
            b = rf["gy"]
            v = np.zeros_like(b)
            res = b.copy()
            d = res.copy()
            rr = float(np.sum(res * res))
            for _ in range(K):
                if rr <= 1e-30:
                    break
                (h,) = yield [self.hvp(self.x, self.y, d)]
                Hd = h["yy"]
                alpha = rr / float(np.sum(d * Hd))
                v = v + alpha * d
                res = res - alpha * Hd
                rr_new = float(np.sum(res * res))
                d = res + (rr_new / rr) * d
                rr = rr_new
            (h,) = yield [self.hvp(self.x, self.y, v)]
            self.x = self.x - ax * (rf["gx"] - h["xy"])
        return self.x, self.y
