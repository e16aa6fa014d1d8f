"""amoo-best-single: gradient descent on each objective alone (m chains, budget split, step 1 / beta_j), then the chain whose final point has the smallest max_i (f_i - f_i*) (m^2 value calls). Only the final point is meaningful: the iterate reported during the run is chain 0's."""

from __future__ import annotations

from bench import method
from common.amoo.algorithms import ProgramMethod, best_single


@method(
    name="amoo-best-single",
    kind="baseline",
    tasks=["aligned-multiobjective"],
    reference="gradient descent on each objective alone, the best final point chosen by max_i (f_i - f_i*)",
    version="1",
    params={},
    deterministic=True,
)
class Baseline(ProgramMethod):
    """See the module docstring."""

    program = staticmethod(best_single)
