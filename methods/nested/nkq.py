"""Nested kernel quadrature (NKQ), Chen, Naslidnyk and Briol (ICML 2025).

Algorithm (paper Section 3, official ``toy.py`` / ``finance.py`` of
github.com/hudsonchen/nest_kq, read here, not copied), with ``N = M = n``
(the official ``N_T_ratio = 1``, so the cost ``N * M`` is the instance budget):

1. draw ``N`` outer points ``u_1..N``; at each, ``M`` inner points
   ``e_i1..iM`` and the values ``g_ij``;
2. stage I: each inner conditional expectation by regularised KQ,
   ``J_i = z_i^T (K_i + lam_M I)^{-1} g_i`` (kernel and embedding of the inner
   base law, :mod:`common.nested.kq`);
3. stage II: ``I_NKQ = z^T (K + lam_N I)^{-1} f(J)`` over the outer points.

Kernels: Matérn-3/2 for a U[0, 1]^d base (official toy: ``matern``), Gaussian
(RBF) for an N(0, I) base (official finance: ``KQ_RBF_Gaussian``), lengthscale
1 (the official ``scale`` default and finance's ``lengthscale = 1.0``).
Regularisation ``lam = lam0 * n^(-2/d)`` with ``lam0 = 0.1`` (the official toy
defaults ``--lmbda 1e-1`` and ``lmbda * N ** (-2 / d)``), at both stages,
``n`` and ``d`` those of the stage.

Deviations
----------
- One kernel/regulariser rule for all problems: the official finance script
  uses ``lam = 1e-3 / N`` and a Matérn-1/2 kernel on the outer uniform
  variable ``Phi(u)``; we use the toy rule (``lam0 = 0.1``, RBF on the normal
  base) everywhere. A quick check with ``lam0 = 1e-3`` gave far larger
  errors on the option problem (standardised values, n <= 64).
- Values are standardised before each KQ (mean added back exactly), as the
  official finance script does; the official toy does not standardise.
- Plain i.i.d. points (no QMC; the paper also reports QMC variants).
- The lengthscale is not tuned (official default 1.0); the paper's text on
  lengthscale selection was not read in full: UNVERIFIED.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bench import method
from common.nested.driver import OracleStrategy, Plan, estimate, inner, outer, split_inner
from common.nested.estimators import inner_kq, lam_rule
from common.nested.kq import kq_estimate
from tasks.nested import apply_f

REFERENCE = (
    "Chen, Naslidnyk and Briol, Nested Expectations with Kernel Quadrature, ICML 2025 (arXiv 2502.18284); "
    "official code github.com/hudsonchen/nest_kq (toy.py, finance.py, utils/kernel_means.py)"
)


@method(
    name="nkq",
    kind="method",
    tasks=["nested-expectation"],
    reference=REFERENCE,
    version="1",
    params={"lam0": 0.1, "lengthscale": 1.0},
    deterministic=True,
    deviations=__doc__.split("Deviations\n----------\n", 1)[1],
)
class NestedKQ(OracleStrategy):
    """Nested kernel quadrature: KQ for every inner expectation, then KQ over the outer points."""

    def plan(self, state: dict[str, Any]) -> Plan:
        n, p = int(state["n"]), state["problem"]
        ls, lam0 = float(self.params["lengthscale"]), float(self.params["lam0"])
        u = np.asarray((yield outer(n))["u"], float)
        idx = np.arange(n)
        parts = split_inner((yield inner(idx, n)), idx)
        J = inner_kq(parts, p["inner_base"], ls, lam0)
        F = apply_f(p["f"], J)
        yield estimate(
            kq_estimate(u, F, p["outer_base"], ls, lam_rule(lam0, n, int(p["outer_dim"])))
        )
