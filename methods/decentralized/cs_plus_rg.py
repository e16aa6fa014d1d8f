"""``cs-plus-rg``: CS+-RG, robust gossip with the CS+ clipped sum (Gaucher, Dieuleveut and Hendrikx, ICML 2025).

Each round, node ``i`` clips the differences ``x_j - x_i`` it receives at a
threshold ``tau_i`` chosen so that the largest differences of total weight at
least ``2 b`` (``b``: the public bound on the weight of any honest node's
Byzantine neighbours) are the ones clipped, then moves by
``eta * sum_j w_ij clip(x_j - x_i, tau_i)`` (``eta = 1 / mu_max``). The rule is
:func:`common.decentralized.robust.cs_plus`; it follows ``cs_plus`` in
``aggregators/robust_gossip.py`` of the paper's code
(github.com/renaudgaucher/Byzantine-Robust-Gossip).

Deviations
----------
- The weights are the task's Metropolis weights of the whole graph
  (``1 / (1 + max(d_i, d_j))``); the paper's code gives every honest node
  ``f`` Byzantine neighbours and uses ``1 / (1 + max(d_i, d_j) + f)``.
- ``eta = 1 / mu_max(I - W)`` of the whole weighted graph (public); the
  paper's code uses ``1 / mu_max`` of the honest graph's unweighted Laplacian.
- When a zero-weight entry sits between two neighbours in the sorted list,
  the paper's code can take that entry's norm as the threshold (it sorts
  every node of the graph, non-neighbours with weight 0 included); here the
  threshold is always a neighbour's norm. The set clipped is the same.
- D-SGD: a constant step ``lr / L`` before each robust gossip step (the paper's
  MNIST runs use a decaying learning rate and momentum; not reproduced).
"""

from __future__ import annotations

from bench import method
from common.decentralized.robust import RobustGossip, cs_plus

__all__ = ["CSPlusRG"]


@method(
    name="cs-plus-rg",
    kind="method",
    tasks=["robust-gossip"],
    reference="R. Gaucher, A. Dieuleveut and H. Hendrikx, Unified Breakdown Analysis for Byzantine Robust Gossip, ICML 2025",
    version="1",
    params={"eta": 1.0, "lr": 1.0, "decay": 0.05, "bound": "local"},
    deterministic=True,
    deviations=(
        "Metropolis weights of the whole graph (Byzantine nodes are vertices of it), not the paper code's weights with f extra "
        "Byzantine edges per honest node; eta = 1/mu_max(I - W) of the whole weighted graph; the threshold is always a neighbour's "
        "norm (the code can pick a non-neighbour's, same set clipped); D-SGD with a constant-then-1/t step, no momentum."
    ),
)
class CSPlusRG(RobustGossip):
    """CS+-RG: clip the largest weight-``2b`` differences (see the module docstring)."""

    rule = staticmethod(cs_plus)
