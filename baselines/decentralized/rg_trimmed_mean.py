"""``rg-trimmed-mean``: coordinate-wise trimmed mean of the neighbourhood (BRIDGE; Yang and Bajwa, 2019).

Each round, node ``i`` replaces its row by the coordinate-wise mean of its own
value and its neighbours' after dropping the ``c`` largest and ``c`` smallest
values per coordinate, ``c`` the public bound ``byzantine_neighbours`` on the
number of Byzantine neighbours (fewer when the neighbourhood is too small:
the median is kept). This is how the paper's code runs ``trmean`` on the
gossip graph (unweighted, own value included); it is not an F-RG rule.
D-SGD: a gradient step, then the trimmed mean.
"""

from __future__ import annotations

import numpy as np

from bench import method
from common.decentralized.robust import RobustGossip, trimmed_mean_update

__all__ = ["TrimmedMean"]


@method(
    name="rg-trimmed-mean",
    kind="baseline",
    tasks=["robust-gossip"],
    reference="Z. Yang and W. U. Bajwa, ByRDiE / BRIDGE: Byzantine-resilient decentralized learning, IEEE TSIPN 5(4), 2019",
    version="1",
    params={"lr": 1.0, "decay": 0.05},
    deterministic=True,
)
class TrimmedMean(RobustGossip):
    """BRIDGE-style coordinate-wise trimmed mean."""

    def step(self, x: np.ndarray, got: np.ndarray) -> np.ndarray:
        mask = np.asarray(self.data["neighbour_mask"], dtype=bool)
        return trimmed_mean_update(x, got, mask, int(self.data["byzantine_neighbours"]))
