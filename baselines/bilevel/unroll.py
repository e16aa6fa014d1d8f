"""``truncated-unroll``: reverse-mode differentiation through ``K`` unrolled lower-level steps.

Iterative differentiation (Maclaurin et al. 2015; Franceschi et al. 2017),
truncated as in Shaban et al. (AISTATS 2019): the lower level is warm-started
from the previous outer iteration, unrolled for ``K`` gradient steps, and the
hypergradient is back-propagated through those ``K`` steps only::

    y_{k+1} = y_k - eta grad_y g(x, y_k),  k < K,   eta = lr_y / L
    p = grad_y f(x, y_K);  h = grad_x f
    for k = K-1 .. 0:  h -= eta grad^2_xy g(x, y_k) p;  p -= eta grad^2_yy g(x, y_k) p
    x <- x - lr_x n h

Each backward step is one Hessian-vector product (both blocks at once, what
one reverse-mode pass through a step gives). Calls per outer iteration:
``K`` lower, 1 upper, ``K`` products, in ``2K + 1`` rounds.

Deviations
----------
- Deterministic full-batch oracles; the products are requested from the
  task's oracle (counted) instead of an autodiff tape, which computes the same
  vector-Jacobian products.
"""

from __future__ import annotations

from bench import method
from common.bilevel.program import OracleProgram, Program

__all__ = ["TruncatedUnroll"]


@method(
    name="truncated-unroll",
    kind="baseline",
    tasks=["bilevel-hypercleaning"],
    reference="A. Shaban, C.-A. Cheng, N. Hatch and B. Boots, Truncated Back-propagation for Bilevel Optimization, AISTATS 2019",
    version="1",
    params={"unroll": 5, "lr_x": 30.0, "lr_y": 1.0},
    deterministic=True,
    deviations="full-batch oracles; warm-started lower level, back-propagation through the last K steps",
)
class TruncatedUnroll(OracleProgram):
    """Reverse-mode hypergradient through ``K`` warm-started gradient steps."""

    def program(self) -> Program:
        K = int(self.params["unroll"])
        ax = float(self.params["lr_x"]) * self.n
        while self.budget_left >= 2 * K + 1:
            eta = float(self.params["lr_y"]) / self.smoothness
            traj = []
            y = self.y
            for _ in range(K):
                traj.append(y)
                (r,) = yield [self.g(self.x, y)]
                y = y - eta * r["gy"]
            self.y = y
            (rf,) = yield [self.f(self.x, y)]
            p = rf["gy"]
            h = rf["gx"].copy()
            for yk in reversed(traj):
                (hv,) = yield [self.hvp(self.x, yk, p)]
                h = h - eta * hv["xy"]
                p = p - eta * hv["yy"]
            self.x = self.x - ax * h
        return self.x, self.y
