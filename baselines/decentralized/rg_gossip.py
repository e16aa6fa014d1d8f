"""``rg-gossip``: plain gossip, F-RG with the plain weighted sum (no robustness).

``x_i <- x_i + eta sum_j w_ij (x_j - x_i)`` with the public Metropolis weights
and ``eta = 1 / mu_max(I - W)``: what every robust rule reduces to without
Byzantine nodes, and the floor a single large value breaks.
"""

from __future__ import annotations

from bench import method
from common.decentralized.robust import RobustGossip, plain_sum

__all__ = ["PlainGossip"]


@method(
    name="rg-gossip",
    kind="baseline",
    tasks=["robust-gossip"],
    reference="S. Boyd, A. Ghosh, B. Prabhakar and D. Shah, Randomized gossip algorithms, IEEE TIT 52(6), 2006 (synchronous form)",
    version="1",
    params={"eta": 1.0, "lr": 1.0, "decay": 0.05, "bound": "local"},
    deterministic=True,
)
class PlainGossip(RobustGossip):
    """Gossip with the plain weighted sum of differences."""

    rule = staticmethod(plain_sum)
