"""Reading a maxcut instance, cut values, budgets and checkpoints, shared by the baselines.

Only the public part of an instance is used (``instance.data``, see
``tasks/maxcut/graph.py`` for the contract)::

    n        int                 number of nodes
    k        int                 number of parts
    edges    int64 (m, 2)        0-indexed endpoints, each undirected edge once
    weights  float64 (m,)        edge weights, any sign

Nothing here builds an n x n dense matrix: the baselines work on the edge list
and on a symmetric CSR adjacency (every edge stored in both directions).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from bench.sandbox import checkpoint, time_left

__all__ = ["Graph", "read", "cut_value", "cut_values", "Deadline", "Reporter", "supports_k"]


@dataclass(frozen=True)
class Graph:
    """A maxcut instance as arrays.

    ``indptr`` (n+1,), ``indices`` (2m,) and ``adj_w`` (2m,) are the CSR rows of
    the symmetric adjacency: the neighbours of ``v`` are
    ``indices[indptr[v]:indptr[v+1]]`` with weights ``adj_w[...]``. Parallel
    edges, if any, stay separate entries (every sum over them is still right).
    """

    n: int
    k: int
    edges: np.ndarray  # int64 (m, 2)
    weights: np.ndarray  # float64 (m,)
    indptr: np.ndarray  # int64 (n + 1,)
    indices: np.ndarray  # int64 (2m,)
    adj_w: np.ndarray  # float64 (2m,)

    @property
    def m(self) -> int:
        return len(self.weights)

    @property
    def eps(self) -> float:
        """Smallest gain treated as an improvement: 1e-9 of the mean |weight| (0 < eps)."""
        if self.m == 0:
            return 1e-12
        return max(1e-9 * float(np.mean(np.abs(self.weights))), 1e-300)


def read(instance: Any) -> Graph:
    """The instance's public data as a :class:`Graph` (CSR built with numpy, O(m log m))."""
    data = instance.data
    n, k = int(data["n"]), int(data["k"])
    # Copies: the task's arrays are read-only, and numba's compiled signatures want writable ones.
    edges = np.array(data["edges"], dtype=np.int64, order="C", copy=True).reshape(-1, 2)
    weights = np.array(data["weights"], dtype=np.float64, order="C", copy=True).reshape(-1)
    src = np.concatenate([edges[:, 0], edges[:, 1]])
    dst = np.concatenate([edges[:, 1], edges[:, 0]])
    w2 = np.concatenate([weights, weights])
    order = np.argsort(src, kind="stable")
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(src, minlength=n), out=indptr[1:])
    return Graph(
        n=n,
        k=k,
        edges=edges,
        weights=weights,
        indptr=indptr,
        indices=np.ascontiguousarray(dst[order]),
        adj_w=np.ascontiguousarray(w2[order]),
    )


def cut_value(g: Graph, labels: np.ndarray) -> float:
    """Total weight of the edges whose endpoints get different labels."""
    cut = labels[g.edges[:, 0]] != labels[g.edges[:, 1]]
    return float(np.sum(g.weights[cut], dtype=np.float64))


def cut_values(g: Graph, population: np.ndarray, chunk_cells: int = 1 << 23) -> np.ndarray:
    """Cut value of each row of ``population`` (shape (p, n)); returns float64 (p,).

    Rows are processed in chunks of about ``chunk_cells`` edge comparisons, so
    the (rows x m) boolean matrix never exceeds a few MB.
    """
    population = np.asarray(population)
    p = population.shape[0]
    out = np.empty(p, dtype=np.float64)
    step = max(1, chunk_cells // max(g.m, 1))
    u, v = g.edges[:, 0], g.edges[:, 1]
    for s in range(0, p, step):
        block = population[s : s + step]
        out[s : s + step] = (block[:, u] != block[:, v]) @ g.weights
    return out


class Deadline:
    """Wall-clock budget of one ``solve`` call.

    ``fraction`` of the budget (less ``reserve`` seconds for returning the
    answer) is usable; :meth:`left` says how much of it remains. The clock
    starts when the object is made, at the top of ``solve``, or earlier in a
    bench job: there the job's clock (:func:`bench.time_left`, which also
    counts decoding the instance and ``supports``) is used when it is the
    tighter one.
    """

    def __init__(self, budget: float, fraction: float = 0.9, reserve: float = 0.05) -> None:
        self.start = time.monotonic()
        self.usable = max(float(budget) * fraction - reserve, 0.0)
        job_left = time_left()  # inf outside a bench job
        if job_left < float(budget):
            self.usable = max(min(self.usable, job_left - (1.0 - fraction) * float(budget) - reserve), 0.0)
        self.end = self.start + self.usable

    def elapsed(self) -> float:
        return time.monotonic() - self.start

    def left(self) -> float:
        return self.end - time.monotonic()

    def expired(self) -> bool:
        return time.monotonic() >= self.end

    def first(self, fraction: float) -> Deadline:
        """A deadline with the same start that ends after ``fraction`` of this one's usable time."""
        sub = Deadline(0.0)
        sub.start = self.start
        sub.usable = self.usable * fraction
        sub.end = self.start + sub.usable
        return sub


class Reporter:
    """Sends improving solutions to :func:`bench.checkpoint`, at most once per ``interval`` s.

    Call :meth:`offer` with every new best and :meth:`poll` now and then (once
    per chunk of work): a best that arrives less than ``interval`` after the
    previous report is held and sent by the first ``offer``/``poll`` after the
    interval. Outside a bench job :func:`bench.checkpoint` does nothing.
    """

    def __init__(self, interval: float = 0.2) -> None:
        self.interval = interval
        self.last = -np.inf
        self.sent = -np.inf
        self.pending: np.ndarray | None = None
        self.pending_value = -np.inf

    def offer(self, labels: np.ndarray, value: float) -> None:
        if value > max(self.sent, self.pending_value):
            self.pending = np.asarray(labels, dtype=np.int64).copy()
            self.pending_value = value
        self.poll()

    def poll(self) -> None:
        if self.pending is None:
            return
        now = time.monotonic()
        if now - self.last >= self.interval:
            checkpoint(self.pending)
            self.last, self.sent = now, self.pending_value
            self.pending, self.pending_value = None, -np.inf


def supports_k(instance: Any, ks: tuple[int, ...] | None = None, name: str = "this baseline") -> bool | str:
    """``True`` if ``instance.data["k"]`` is in ``ks`` (any k >= 2 when ``ks`` is None), else why not."""
    k = int(instance.data["k"])
    if k < 2:
        return f"{name} needs k >= 2 parts, the instance has k={k}"
    if ks is not None and k not in ks:
        allowed = ", ".join(str(x) for x in ks)
        return f"{name} solves k in {{{allowed}}} only, the instance has k={k}"
    return True
