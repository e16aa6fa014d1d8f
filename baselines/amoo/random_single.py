"""amoo-random-single: one objective drawn uniformly at random per step (one gradient call), step 1 / beta_i: the same gradient budget buys m times more steps."""

from __future__ import annotations

from bench import method
from common.amoo.algorithms import ProgramMethod, random_single


@method(
    name="amoo-random-single",
    kind="baseline",
    tasks=["aligned-multiobjective"],
    reference="one objective drawn uniformly per step, step 1/beta_i",
    version="1",
    params={},
    deterministic=True,
)
class Baseline(ProgramMethod):
    """See the module docstring."""

    program = staticmethod(random_single)
