"""``rg-nna``: nearest-neighbour averaging (Farhadkhani et al., 2023) as GTS-RG.

Node ``i`` drops the differences ``x_j - x_i`` of largest norm, of total weight
``b``, and sums the rest (the one that crosses the level in part): the
generalised trimmed sum that the paper shows gives NNA in the F-RG framework
(:func:`common.decentralized.robust.trimmed_sum`).

Deviation from the paper's code (``gts`` in ``aggregators/robust_gossip.py``):
there the entry that crosses the level ``total - b`` keeps the weight *above*
the level and none at all when the level is hit exactly, so one more
neighbour than ``b`` is dropped in the exact case; here exactly weight ``b`` is
dropped, as the definition says.
"""

from __future__ import annotations

from bench import method
from common.decentralized.robust import RobustGossip, trimmed_sum

__all__ = ["NNA"]


@method(
    name="rg-nna",
    kind="baseline",
    tasks=["robust-gossip"],
    reference="S. Farhadkhani, R. Guerraoui, N. Gupta, L.-N. Hoang, R. Pinot and J. Stephan, Robust collaborative learning with linear gradient overhead, ICML 2023",
    version="1",
    params={"eta": 1.0, "lr": 1.0, "decay": 0.05, "bound": "local"},
    deterministic=True,
)
class NNA(RobustGossip):
    """GTS-RG (NNA)."""

    rule = staticmethod(trimmed_sum)
