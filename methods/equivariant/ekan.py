"""ekan: Equivariant Kolmogorov-Arnold Networks (Hu, Wang and Lin, ICML 2025).

A lift layer (equivariant linear map from the data representation to its gated version, plus
EMLP's bilinear term), then EKAN layers: each feature entry is multiplied by ``G + k`` B-spline
bases and the SiLU of its gate scalar (a scalar is its own gate), and the
``(G + k + 1) * size(rep)`` products go through one linear map whose weight is projected onto the
equivariant maps (null space of the group generators' constraints, ``P = Q Q^T``), plus the
bilinear term; the last layer's output drops its gates. Grid 3, order 3.
(:mod:`common.equivariant.layers`, re-implemented from github.com/hulx2002/EKAN @ 3dea768.)

Deviations from the paper and the official code
-----------------------------------------------
- Adam instead of Adan (the official optimiser, from sail-sg/Adan, is not on PyPI); the task's
  recipe is the same for every model (lr 3e-3 as official; batch 500; fewer steps: 1,000 in the
  standard tier, 5,000 in full, against the official 5,000-15,000).
- Hidden widths scaled to a 2-core CPU and given as explicit (scalars, vectors, rank-2 tensors)
  channel counts instead of EMLP's ``uniform_rep(width)`` (which also allocates rank-3 and higher
  tensors): one hidden layer, as the official EKAN scripts, of :data:`HIDDEN`.
- The bilinear term is an EMLP-style re-implementation restricted to ranks <= 2, with the
  products listed in :class:`common.equivariant.layers.Bilinear` (it adds ``v (x) v`` directly,
  which EMLP reaches through rank-3 channels); it uses the first ``n`` channels where EMLP draws
  them at random.
- No grid refits by default (``update_grid=False``; the official scripts refit every 5 of the
  first 50 steps on three-body and top tagging, not on particle scattering): the least-squares
  refit made the test error blow up at n = 100 (see :data:`common.equivariant.protocol.GRID_UPDATES`).
- Inputs and outputs scaled by the shared, equivariance-safe statistics of
  :mod:`common.equivariant.protocol` (EKAN's code feeds raw data).
"""

from __future__ import annotations

from bench import method
from common.equivariant.layers import EKAN
from common.equivariant.protocol import FitPredict

#: Hidden representation (scalars, vectors, rank-2 tensors) of EKAN's one hidden layer, per problem.
HIDDEN = {"o5": [8, 8, 0], "inertia": [8, 8, 2], "lorentz": [8, 8, 0], "threebody": [8, 8, 0]}

__all__ = ["EKANMethod", "HIDDEN"]


@method(
    name="ekan",
    kind="method",
    tasks=["equivariant-regression"],
    reference="Hu, Wang and Lin, Incorporating Arbitrary Matrix Group Equivariance into KANs, ICML 2025 (arXiv 2410.00435; github.com/hulx2002/EKAN)",
    version="1",
    params={"hidden": HIDDEN, "grid": 3, "k": 3, "update_grid": False},
    deterministic=True,
    deviations=(
        "Adam instead of Adan (not on PyPI); fewer steps than the official 5,000-15,000 (task recipe); "
        "one hidden layer of explicit (scalar, vector, rank-2) channels, scaled to the CPU, instead of "
        "uniform_rep (which also has rank >= 3 channels); EMLP-style bilinear term restricted to ranks <= 2 "
        "(adds v (x) v directly; first n channels instead of random ones); no grid refits (update_grid=False); "
        "equivariance-safe input/output scaling."
    ),
)
class EKANMethod(FitPredict):
    """EKAN behind the task's two-round protocol (train, predict)."""

    spline = True

    def build(self, rep_in, rep_out, n_in, n_out):
        hidden = [tuple(self.params["hidden"][self.data["problem"]])]
        return EKAN(
            rep_in,
            rep_out,
            hidden,
            self.group,
            grid=int(self.params["grid"]),
            k=int(self.params["k"]),
        )
