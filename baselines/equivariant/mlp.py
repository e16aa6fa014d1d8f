"""mlp: the official EKAN code's MLP baseline (Linear + Swish blocks), no symmetry.

Three hidden layers of :data:`HIDDEN` units (the official scripts use three equal widths of
111-383 on the three-body task); trained with the task's recipe (Adam, as every model here).
"""

from __future__ import annotations

from bench import method
from common.equivariant.layers import MLP
from common.equivariant.protocol import FitPredict

HIDDEN = 128

__all__ = ["MLPBaseline"]


@method(
    name="mlp",
    kind="baseline",
    tasks=["equivariant-regression"],
    reference="MLP baseline of the official EKAN code (github.com/hulx2002/EKAN MLP.py), re-implemented in torch",
    version="1",
    params={"width": HIDDEN, "depth": 3},
    deterministic=True,
    deviations="Adam instead of Adan; width 128 x 3 (official: 111-383 x 3 on three-body); shared input/output scaling.",
)
class MLPBaseline(FitPredict):
    """MLP behind the two-round protocol."""

    def build(self, rep_in, rep_out, n_in, n_out):
        return MLP(n_in, n_out, [int(self.params["width"])] * int(self.params["depth"]))
