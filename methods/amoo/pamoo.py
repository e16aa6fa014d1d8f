"""pamoo: Polyak-step AMOO (Efroni et al., ICML 2025, Algorithm 3), as we read it.

Each iteration queries every objective's value and gradient at ``x_t`` (``m``
gradient calls; no Hessian), picks the simplex weights whose Polyak step
shrinks ``||x - x*||^2`` the most,
``w_t in argmax_w (sum_i w_i (f_i(x_t) - f_i*))^2 / ||sum_i w_i grad f_i(x_t)||^2``,
and takes that Polyak step, ``eta_t = sum_i w_i (f_i - f_i*) / ||g_w||^2``.
The optimal values ``f_i*`` are public (the Polyak assumption; all 0 here).

Deviations
----------
- UNVERIFIED: the exact weight rule of the paper's Algorithm 3 (not readable
  here): the card says "weights from Polyak-type step sizes using only
  gradients"; the rule above is our derivation of the weights that maximise
  the Polyak step's guaranteed decrease of ``||x - x*||^2`` under convexity.
- The fractional programme is solved exactly as the QP
  ``min ||G^T w||^2`` s.t. ``gap^T w = 1, w >= 0`` (scipy SLSQP), then
  normalised to the simplex.
"""

from __future__ import annotations

from bench import method
from common.amoo.algorithms import ProgramMethod, pamoo


@method(
    name="pamoo",
    kind="method",
    tasks=["aligned-multiobjective"],
    reference="Efroni, Kretzu, Jiang, Bhandari, Zhu and Ullrich, Aligned Multi Objective Optimization (ICML 2025, arXiv 2502.14096), PAMOO",
    version="1",
    params={},
    deterministic=True,
    deviations="weight rule derived by us from the Polyak-step decrease (the paper's Algorithm 3 UNVERIFIED)",
)
class PAMOO(ProgramMethod):
    """Polyak-step weights from values and gradients, then the Polyak step."""

    program = staticmethod(pamoo)
