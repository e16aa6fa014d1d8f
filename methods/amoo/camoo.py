"""camoo: Curvature-aligned MOO (Efroni et al., ICML 2025, Algorithm 2), as we read it.

Each iteration queries every objective's gradient and Hessian at ``x_t`` (``m``
gradient and ``m`` Hessian calls), picks simplex weights
``w_t in argmax_w lambda_min(sum_i w_i Hess f_i(x_t))`` and takes the
weighted-GD step ``x_{t+1} = x_t - eta sum_i w_i grad f_i(x_t)``.

Read: arXiv 2502.14096 (abstract, introduction) and the ICML text's first
page; the paper's experiments section as quoted by the reproducibility page
(acmrep2026.k117.org: "Algorithm 1 Weighted-GD, Algorithm 2 CAMOO, Algorithm 3
PAMOO", official notebook at github.com/facebookresearch, not found in the
index); card 2.17 of other_seeds.md. The algorithm box was not readable.

Deviations
----------
- UNVERIFIED: the step size. We use ``eta = 1 / sum_i w_i beta_i`` (the
  weighted objective's smoothness from the public per-objective ``beta_i``),
  the same rule as the equal-weights and MGDA baselines.
- The max-min-eigenvalue weights are computed approximately, by 40 steps of
  entropic mirror ascent on the concave ``lambda_min(sum w_i H_i)``,
  warm-started from the previous weights (solver ours; checked against a cvxpy
  SDP in tests/test_amoo.py).
- Hessian calls are counted apart from gradient calls (``hess_calls``); the
  gradient budget is the same for every method.
"""

from __future__ import annotations

from bench import method
from common.amoo.algorithms import ProgramMethod, camoo


@method(
    name="camoo",
    kind="method",
    tasks=["aligned-multiobjective"],
    reference="Efroni, Kretzu, Jiang, Bhandari, Zhu and Ullrich, Aligned Multi Objective Optimization (ICML 2025, arXiv 2502.14096), CAMOO",
    version="1",
    params={"mirror_iters": 40},
    deterministic=True,
    deviations="step 1/sum_i w_i beta_i (UNVERIFIED); max-min-eigenvalue weights by 40 warm-started mirror-ascent steps",
)
class CAMOO(ProgramMethod):
    """Curvature-maximising weights from the Hessians, then a weighted gradient step."""

    program = staticmethod(camoo)
