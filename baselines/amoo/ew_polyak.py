"""amoo-ew-polyak: equal weights with the Polyak step of the averaged objective, a tuned step for the naive weighting (ours, so that EW is not handicapped by a loose smoothness bound)."""

from __future__ import annotations

from bench import method
from common.amoo.algorithms import ProgramMethod, equal_weights_polyak


@method(
    name="amoo-ew-polyak",
    kind="baseline",
    tasks=["aligned-multiobjective"],
    reference="equal weights with the Polyak step of the averaged objective (our tuned-step naive baseline)",
    version="1",
    params={},
    deterministic=True,
)
class Baseline(ProgramMethod):
    """See the module docstring."""

    program = staticmethod(equal_weights_polyak)
