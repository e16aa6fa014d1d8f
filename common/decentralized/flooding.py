"""Flooding over the simulator's ``exchange`` rounds: every node learns every node's row.

A node program helper (it runs in the method's process): each node starts
with its own row of ``d`` scalars and, for ``diameter`` rounds, sends the whole
table it knows (``K d`` values and ``K`` flags saying which rows it holds) to
its neighbours. After ``diameter`` rounds every node holds every row, exact
(a row is copied, never averaged). The simulator counts ``diameter`` rounds
of ``K (d + 1)`` scalars per node, the real price of "every node knows
everything" on this graph. Q-DCP uses it for its correction terms (the
official code computes them on pooled values) and the centralised baseline
for all the scores.

It is method-side code, so it lives in ``common/decentralized/``, beside the
generator helper :mod:`common.decentralized.program`.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import shortest_path

from common.decentralized.program import exchange

__all__ = ["diameter", "flood", "graph_edges"]


def graph_edges(data: dict[str, Any]) -> np.ndarray:
    """``int64 (m, 2)`` edges ``i < j`` of the public neighbour table, sorted."""
    nb = np.asarray(data["neighbours"])
    rows = np.repeat(np.arange(nb.shape[0]), nb.shape[1])
    cols = nb.ravel()
    keep = (cols >= 0) & (rows < cols)
    e = np.c_[rows[keep], cols[keep]]
    return e[np.lexsort((e[:, 1], e[:, 0]))]


def diameter(data: dict[str, Any]) -> int:
    """Diameter of the public graph (every node can compute it from the neighbour table)."""
    e = graph_edges(data)
    n = int(data["n_nodes"])
    a = csr_matrix((np.ones(len(e)), (e[:, 0], e[:, 1])), shape=(n, n))
    return int(shortest_path(a, directed=False, unweighted=True).max())


def flood(data: dict[str, Any], rows: np.ndarray) -> Generator[dict[str, Any], Any, np.ndarray]:
    """Flood ``rows`` (``(K, d)``, node ``k`` owns row ``k``); return ``(K, K, d)``: what each node knows.

    Use as ``table = yield from flood(self.data, x)``; ``table[k]`` is node
    ``k``'s copy of all rows, equal to ``rows`` after ``diameter`` rounds.
    """
    rows = np.asarray(rows, dtype=np.float64)
    n, d = rows.shape
    known = np.zeros((n, n), dtype=bool)
    known[np.arange(n), np.arange(n)] = True
    table = np.zeros((n, n, d))
    table[np.arange(n), np.arange(n)] = rows
    mask = np.asarray(data["neighbour_mask"], dtype=bool)
    for _ in range(diameter(data)):
        got = yield exchange(np.hstack([table.reshape(n, n * d), known.astype(np.float64)]))
        got = np.asarray(got)
        nb_known = (got[:, :, n * d :] > 0.5) & mask[:, :, None]  # (n, D, n)
        nb_rows = got[:, :, : n * d].reshape(n, -1, n, d)
        first = np.argmax(nb_known, axis=1)  # (n, n): the first neighbour slot that holds row j
        new = nb_known.any(axis=1) & ~known
        pick = np.take_along_axis(nb_rows, first[:, None, :, None], axis=1)[:, 0]  # (n, n, d)
        table[new] = pick[new]
        known |= new
    return table
