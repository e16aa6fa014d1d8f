"""mgda: MGDA, the min-norm convex combination of the gradients (Desideri 2012; Sener and Koltun 2018), QP by scipy SLSQP, step 1 / sum_i w_i beta_i."""

from __future__ import annotations

from bench import method
from common.amoo.algorithms import ProgramMethod, mgda


@method(
    name="mgda",
    kind="baseline",
    tasks=["aligned-multiobjective"],
    reference="MGDA: Desideri (2012); Sener and Koltun (2018), min-norm point of the gradients' convex hull (SLSQP)",
    version="1",
    params={},
    deterministic=True,
)
class Baseline(ProgramMethod):
    """See the module docstring."""

    program = staticmethod(mgda)
