"""amoo-equal-weights: equal weights 1/m on every objective, gradient step 1 / mean(beta_i): the naive weighting the paper improves on (its EW)."""

from __future__ import annotations

from bench import method
from common.amoo.algorithms import ProgramMethod, equal_weights


@method(
    name="amoo-equal-weights",
    kind="baseline",
    tasks=["aligned-multiobjective"],
    reference="naive equal weighting (the paper's EW baseline), weighted-GD step 1/mean(beta)",
    version="1",
    params={},
    deterministic=True,
)
class Baseline(ProgramMethod):
    """See the module docstring."""

    program = staticmethod(equal_weights)
