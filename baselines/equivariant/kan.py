"""kan: the official EKAN code's KAN baseline (its pykan-derived ``KANLayer``), no symmetry.

Each input ``x_c`` is multiplied by ``G + k`` B-spline bases and the SiLU of itself, and a dense
linear map mixes the ``(G + k + 1) * n_in`` products; one hidden layer of :data:`HIDDEN` units,
grid 3, order 3; no grid refits by default, as EKAN here (``update_grid``). Our own re-implementation, not ``pykan``: the official baseline is this layer
(not pykan's ``MultKAN``), and it needs nothing beyond torch.
"""

from __future__ import annotations

from bench import method
from common.equivariant.layers import KAN
from common.equivariant.protocol import FitPredict

HIDDEN = 32

__all__ = ["KANBaseline"]


@method(
    name="kan",
    kind="baseline",
    tasks=["equivariant-regression"],
    reference="KAN baseline of the official EKAN code (KANLayer.py, from pykan's KANLayer), re-implemented in torch",
    version="1",
    params={"width": HIDDEN, "grid": 3, "k": 3, "update_grid": False},
    deterministic=True,
    deviations="Adam instead of Adan; one hidden layer of 32 (official: 76-3840); no grid refits; shared input/output scaling.",
)
class KANBaseline(FitPredict):
    """KAN behind the two-round protocol."""

    spline = True

    def build(self, rep_in, rep_out, n_in, n_out):
        return KAN(
            n_in,
            n_out,
            [int(self.params["width"])],
            grid=int(self.params["grid"]),
            k=int(self.params["k"]),
        )
