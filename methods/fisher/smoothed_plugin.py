"""smoothed-plugin: ``J(p_n)`` for the exactly Gaussian-smoothed empirical measure.

Reference: "Fisher information of Gaussian-smoothed densities" (ICML 2025,
seed 004 paragraph 20). The paper was not located; what is implemented is
the estimator its abstract names ("simple, plug-in type estimators are
optimal for t > 0"), as the project's card reads it:

    p_n(y) = (1/n) sum_i phi_t(y - X_i),   J_hat = J(p_n) = integral p_n'^2 / p_n,

with ``phi_t`` the ``N(0, t)`` density (``t`` a variance, as in the
abstract), no extra bandwidth and no debiasing. ``p_n`` and ``p_n'`` are
exact sums over the samples; the integral is the trapezoid rule on a grid
of spacing ``sqrt(t) / 10`` over ``[min X - 12 sqrt(t), max X + 12 sqrt(t)]``
(``common.fisher.mixture_fisher``).

Deviations from the reference
-----------------------------
- UNVERIFIED: that this is exactly the paper's estimator (the paper, its
  theorems and any official code were not found). The abstract says "some
  simple, plug-in type estimators"; the paper may truncate the integral,
  clip the density, or split the sample. We implement the plainest plug-in.
- The integral is computed by quadrature on a grid (not in closed form: there
  is none); the quadrature error is orders below the statistical error
  (tests/test_fisher.py).
"""

from __future__ import annotations

import numpy as np

from bench import method
from common.fisher import mixture_fisher


@method(
    name="smoothed-plugin",
    kind="method",
    tasks=["fisher-information"],
    reference="Fisher information of Gaussian-smoothed densities (ICML 2025; paper not located): plug-in J(P_n * phi_t)",
    version="1",
    deterministic=True,
    deviations="paper not located: the plainest plug-in J(P_n * phi_t), no truncation or sample splitting (UNVERIFIED)",
)
def solve(instance, *, seed: int, budget: float) -> np.ndarray:
    """``J(p_n)`` per replicate, ``p_n`` the empirical measure convolved with ``N(0, t)``."""
    t = float(instance.data["t"])
    return np.array([mixture_fisher(x, t) for x in instance.data["x"]])
