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

from typing import Any

import numpy as np
import scipy.sparse as sp

__all__ = ["adjacency", "cut_value", "total_weight", "random_cut_expectation"]


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
