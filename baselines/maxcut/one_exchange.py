"""``one-exchange``: networkx's ``approximation.one_exchange`` (steepest-ascent 1-flip local search, k = 2)."""

from __future__ import annotations

from typing import Any

import networkx as nx
import numpy as np
from networkx.algorithms.approximation import one_exchange

from baselines.maxcut._graph import read
from bench.registry import method

__all__ = ["solve_one_exchange", "supports_one_exchange", "MAX_NODES", "MAX_EDGES", "to_networkx"]

#: Largest graph run. networkx recomputes the cut in Python (O(m)) for every
#: node at every step, and needs at least one step per node it moves (about
#: n/2 from the empty cut): O(n^2 m) in all. Measured here (one core): a
#: 200-node 3-regular graph 1.3 s, 200 nodes with 2,027 edges 2.0 s, with
#: 5,814 edges 5.7 s; on G1 (800 nodes, 19,176 edges) one step takes 0.02 s
#: with 0 nodes moved, 1.6 s with 200, 2.7 s with 400. Measured whole run on G1
#: (2026-12-02, one core, nothing else of weight running, seed 0): 1,160 s wall
#: (19 minutes), cut 11415 (ratio 0.982 to the best known 11624). The issue's run
#: did not finish within an hour on a loaded machine.
MAX_NODES = 200
#: ... and edges: keeps a run under ~4 s here, inside the smoke tier's budget.
MAX_EDGES = 4000


def supports_one_exchange(instance: Any) -> bool | str:
    """``True`` for k = 2 graphs with at most ``MAX_NODES`` nodes and ``MAX_EDGES`` edges, else why not."""
    k, n = int(instance.data["k"]), int(instance.data["n"])
    m = len(instance.data["weights"])
    if k != 2:
        return f"one-exchange is networkx's Max-Cut (k=2) local search; the instance has k={k}"
    if n > MAX_NODES or m > MAX_EDGES:
        return (
            f"one-exchange is limited to n <= {MAX_NODES} and m <= {MAX_EDGES} (the instance has "
            f"n={n}, m={m}): networkx recomputes the whole cut in Python for every node at every "
            "step, O(n^2 m) in all, and cannot be stopped at the budget (G1, 800 nodes: 19 minutes "
            "measured)"
        )
    return True


def to_networkx(instance: Any) -> nx.Graph:
    """The instance as a ``networkx.Graph`` with nodes ``0..n-1`` and a ``weight`` on every edge."""
    g = read(instance)
    G = nx.Graph()
    G.add_nodes_from(range(g.n))
    G.add_weighted_edges_from(zip(g.edges[:, 0].tolist(), g.edges[:, 1].tolist(), g.weights.tolist(), strict=True))
    return G


@method(
    name="one-exchange",
    kind="baseline",
    tasks=["maxcut"],
    reference=(
        "networkx.algorithms.approximation.maxcut.one_exchange (NetworkX, Hagberg, Schult and "
        "Swart, SciPy 2008); a 1-flip local search, a 1/2-approximation for non-negative weights"
    ),
    version="1",
    params={},
    deterministic=True,
    supports=supports_one_exchange,
    deviations="none (networkx as is); limited to n <= 200 and m <= 4000 by supports",
)
def solve_one_exchange(instance: Any, *, seed: int, budget: float) -> np.ndarray:
    """networkx's one-exchange from the empty cut; nodes in the returned set get label 1.

    Each step flips the single node whose flip gives the largest cut (ties
    broken by a shuffle seeded with ``seed``) while that improves the cut;
    edge weights are used (``weight="weight"``, any sign). The result is a
    1-opt local optimum. ``seed`` is passed to networkx, so one seed gives
    one answer. Parallel edges of the input, if any, are merged by networkx
    (the last weight wins). ``budget`` cannot be enforced inside networkx:
    ``supports`` limits the size instead (see ``MAX_NODES``).
    """
    G = to_networkx(instance)
    _, (cut, _rest) = one_exchange(G, seed=seed, weight="weight")
    labels = np.zeros(G.number_of_nodes(), dtype=np.int64)
    labels[sorted(cut)] = 1
    return labels
