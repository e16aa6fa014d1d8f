"""Sparse graph helpers shared by the maxcut task, its methods and baselines.

The public data of every maxcut instance (``instance.data``) is::

    n        int                      number of nodes
    k        int                      number of parts (2, 3 or 4)
    edges    int64 array (m, 2)       0-indexed endpoints, each undirected edge once, u < v
    weights  float64 array (m,)       edge weights (any sign)

A solution is an integer array of length ``n`` with labels in ``[0, k)``. Its
cut value is the total weight of the edges whose endpoints get different
labels. Graphs stay sparse (edge list / CSR); nothing here builds an n x n
dense matrix.
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np
import scipy.sparse as sp

__all__ = [
    "adjacency",
    "cut_value",
    "total_weight",
    "random_cut_expectation",
    "positive_weight",
    "canonical_edges",
    "graph_digest",
]


def adjacency(data: dict[str, Any], dtype: type = np.float64) -> sp.csr_matrix:
    """Symmetric weighted adjacency matrix W (CSR, shape (n, n), zero diagonal)."""
    n = int(data["n"])
    e = np.asarray(data["edges"], dtype=np.int64)
    w = np.asarray(data["weights"], dtype=dtype)
    rows = np.concatenate([e[:, 0], e[:, 1]])
    cols = np.concatenate([e[:, 1], e[:, 0]])
    vals = np.concatenate([w, w])
    return sp.csr_matrix((vals, (rows, cols)), shape=(n, n))


def cut_value(edges: np.ndarray, weights: np.ndarray, labels: np.ndarray) -> float:
    """Total weight of the edges cut by ``labels`` (no validation: the task validates)."""
    cut = labels[edges[:, 0]] != labels[edges[:, 1]]
    return float(np.sum(weights[cut], dtype=np.float64))


def total_weight(data: dict[str, Any]) -> float:
    return float(np.sum(np.asarray(data["weights"], dtype=np.float64)))


def random_cut_expectation(data: dict[str, Any]) -> float:
    """Expected cut of a uniformly random k-labelling: (k-1)/k of the total weight."""
    k = int(data["k"])
    return total_weight(data) * (k - 1) / k


def positive_weight(data: dict[str, Any]) -> float:
    """Total weight of the positive edges: an upper bound on every cut (all of them cut)."""
    w = np.asarray(data["weights"], dtype=np.float64)
    return float(np.sum(w[w > 0]))


def canonical_edges(edges: np.ndarray) -> np.ndarray:
    """``edges`` as ``int64 (m, 2)`` with ``u < v`` in each row, rows in their given order."""
    e = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    return np.stack([e.min(axis=1), e.max(axis=1)], axis=1)


def graph_digest(n: int, edges: np.ndarray, weights: np.ndarray) -> str:
    """sha256 (hex) of a weighted graph, independent of edge order and orientation.

    The digested text is ``"n m\n"`` followed by one line ``"u v w\n"`` per
    edge, 0-indexed with ``u < v``, sorted by ``(u, v, w)``, and ``w`` written
    as Python's ``repr(float(w))`` (the shortest string that reads back to the
    same double). It can be recomputed without numpy, e.g. from a networkx
    graph: ``sorted((min(u, v), max(u, v), float(w)) for u, v, w in ...)``.
    """
    e = canonical_edges(edges)
    w = np.asarray(weights, dtype=np.float64).reshape(-1)
    if len(w) != len(e):
        raise ValueError(f"{len(e)} edges but {len(w)} weights")
    order = np.lexsort((w, e[:, 1], e[:, 0]))
    h = hashlib.sha256(f"{int(n)} {len(e)}\n".encode())
    rows = zip(e[order, 0].tolist(), e[order, 1].tolist(), w[order].tolist(), strict=True)
    h.update("".join(f"{u} {v} {x!r}\n" for u, v, x in rows).encode())
    return h.hexdigest()
