"""emlp: an EMLP-style torch re-implementation (Finzi, Welling and Wilson, ICML 2021), not the ``emlp`` package.

The ``emlp`` package needs JAX and objax; we build its layers in torch from the same constraint
solve (:mod:`common.equivariant.reps`): equivariant linear maps (weights projected with
``P = Q Q^T``), the bilinear term and gated nonlinearities (sigmoid of a gate scalar times each
vector or tensor channel, Swish on scalars), three hidden layers and a final equivariant linear
map, as the official EKAN code's ``EMLP.py``.

Deviations: hidden reps restricted to ranks <= 2 (:data:`HIDDEN`, scaled to the CPU; EMLP's
``uniform_rep`` also allocates rank >= 3 channels); the bilinear term as in
:class:`common.equivariant.layers.Bilinear`; Adam instead of Adan (the EKAN code's optimiser;
EMLP itself used Adam); shared input/output scaling.
"""

from __future__ import annotations

from bench import method
from common.equivariant.layers import EMLP
from common.equivariant.protocol import FitPredict

#: Hidden representation (scalars, vectors, rank-2 tensors) of each of the three hidden layers.
HIDDEN = {
    "o5": [16, 16, 0],
    "inertia": [16, 16, 4],
    "lorentz": [16, 16, 0],
    "threebody": [16, 16, 0],
}

__all__ = ["EMLPBaseline"]


@method(
    name="emlp",
    kind="baseline",
    tasks=["equivariant-regression"],
    reference="EMLP (Finzi, Welling and Wilson, ICML 2021) as in the official EKAN code's EMLP.py; EMLP-style torch re-implementation, not the emlp package",
    version="1",
    params={"hidden": HIDDEN, "depth": 3},
    deterministic=True,
    deviations=(
        "EMLP-style torch re-implementation, not the emlp package (JAX/objax); hidden reps of ranks <= 2 scaled "
        "to the CPU; bilinear term restricted to ranks <= 2; Adam; shared input/output scaling."
    ),
)
class EMLPBaseline(FitPredict):
    """EMLP behind the two-round protocol."""

    def build(self, rep_in, rep_out, n_in, n_out):
        h = tuple(self.params["hidden"][self.data["problem"]])
        return EMLP(rep_in, rep_out, [h] * int(self.params["depth"]), self.group)
