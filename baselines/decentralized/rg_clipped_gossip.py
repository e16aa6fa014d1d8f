"""``rg-clipped-gossip``: ClippedGossip (He, Karimireddy and Jaggi, 2022) with its adaptive threshold.

Node ``i`` clips every difference at
``tau_i = sqrt((1/b) sum_j w_ij ||x_j - x_i||^2)`` over its neighbours below
the weight level ``total - b`` (the largest weight-``b`` part is left out of
the estimate), then takes the weighted sum: F-RG with the rule that the
paper's code calls ``CShe_RG`` (:func:`common.decentralized.robust.clipped_sum_he`).
"""

from __future__ import annotations

from bench import method
from common.decentralized.robust import RobustGossip, clipped_sum_he

__all__ = ["ClippedGossip"]


@method(
    name="rg-clipped-gossip",
    kind="baseline",
    tasks=["robust-gossip"],
    reference="L. He, S. P. Karimireddy and M. Jaggi, Byzantine-robust decentralized learning via ClippedGossip, arXiv:2202.01545, 2022",
    version="1",
    params={"eta": 1.0, "lr": 1.0, "decay": 0.05, "bound": "local"},
    deterministic=True,
)
class ClippedGossip(RobustGossip):
    """ClippedGossip's adaptive clipping inside F-RG."""

    rule = staticmethod(clipped_sum_he)
