"""The simplex relaxation of Max-k-Cut and its rounding by sampling, shared by ``ros``, ``ros-vanilla`` and ``md``.

Conventions (shapes are node-major, the transpose of the paper's X in R^{k x N}):

- ``x``: an ``(n, k)`` tensor whose rows lie on the probability simplex.
- The relaxed objective is the official code's ``Tr(X W' X^T)`` where ``W'``
  holds **half** the edge weights (``ros/utils.py::get_matrix`` stores
  ``w / 2`` at ``(u, v)`` and ``(v, u)``). Summed over edges this is
  ``f(x) = sum_{uv} w_uv <x_u, x_v>``: the expected weight left *uncut* when
  every node draws its label from its row. With the full symmetric weight
  matrix W the trace would be ``2 f``; the scale matters because ROS's early
  stopping compares loss changes with an absolute tolerance (1e-2).
- Expected cut = total weight - f(x) (Thm 3.3 of the paper, for one sample).

Nothing here builds an ``n x n`` dense matrix: every operation is
O(edges * k) or O(samples * edges).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp
import torch

__all__ = [
    "Graph",
    "read_graph",
    "to_torch_csr",
    "relaxed_objective",
    "Objective",
    "sample_labels",
    "cut_values",
    "best_of_samples",
]

# Keep a (samples x edges) chunk of the cut evaluation below this many entries.
_CUT_CHUNK_ENTRIES = 4_000_000


@dataclass(frozen=True)
class Graph:
    """A maxcut instance as tensors.

    ``u``, ``v``: int64 ``(m,)`` endpoints (each undirected edge once);
    ``w``: float32 ``(m,)`` weights for training; ``w64``: float64 ``(m,)``
    weights for evaluating cuts exactly as the task does.
    """

    n: int
    k: int
    u: torch.Tensor
    v: torch.Tensor
    w: torch.Tensor
    w64: torch.Tensor

    @property
    def m(self) -> int:
        return int(self.u.numel())

    @property
    def total_weight(self) -> float:
        return float(self.w64.sum())


def read_graph(data: dict[str, Any]) -> Graph:
    """The ``instance.data`` of a maxcut instance (see ``tasks/maxcut/graph.py``) as a :class:`Graph`."""
    n, k = int(data["n"]), int(data["k"])
    edges = np.asarray(data["edges"], dtype=np.int64).reshape(-1, 2)
    weights = np.asarray(data["weights"], dtype=np.float64).reshape(-1)
    if edges.shape[0] != weights.shape[0]:
        raise ValueError(
            f"maxcut data: {edges.shape[0]} edges but {weights.shape[0]} weights; give one weight per edge"
        )
    if edges.size and (edges.min() < 0 or edges.max() >= n):
        raise ValueError(
            f"maxcut data: edge endpoints must lie in [0, {n}), got [{edges.min()}, {edges.max()}]"
        )
    if k < 2:
        raise ValueError(f"maxcut data: k must be at least 2, got {k}")
    u = torch.from_numpy(np.ascontiguousarray(edges[:, 0]))
    v = torch.from_numpy(np.ascontiguousarray(edges[:, 1]))
    w64 = torch.from_numpy(weights.copy())
    return Graph(n=n, k=k, u=u, v=v, w=w64.to(torch.float32), w64=w64)


def to_torch_csr(matrix: sp.spmatrix, dtype: torch.dtype) -> torch.Tensor:
    """A scipy sparse matrix as a torch CSR tensor of ``dtype`` (indices sorted)."""
    matrix = sp.csr_matrix(matrix)
    matrix.sort_indices()
    with warnings.catch_warnings():  # "sparse CSR support is in beta"
        warnings.simplefilter("ignore", UserWarning)
        return torch.sparse_csr_tensor(
            torch.from_numpy(matrix.indptr.astype(np.int64)),
            torch.from_numpy(matrix.indices.astype(np.int64)),
            torch.from_numpy(matrix.data).to(dtype),
            size=matrix.shape,
        )


def relaxed_objective(x: torch.Tensor, graph: Graph) -> torch.Tensor:
    """``f(x) = sum_{uv} w_uv <x_u, x_v>`` (the official ``Tr(X W' X^T)``), a scalar; differentiable.

    ``x`` is ``(n, k)``; the weights are cast to ``x.dtype``.
    """
    w = graph.w64 if x.dtype == torch.float64 else graph.w.to(x.dtype)
    return ((x[graph.u] * x[graph.v]).sum(dim=1) * w).sum()


class _QuadraticForm(torch.autograd.Function):
    """``1/2 sum(x * (W x))`` for a constant symmetric sparse ``W``; gradient ``W x``."""

    @staticmethod
    def forward(ctx, x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:  # type: ignore[override]
        wx = w @ x
        ctx.save_for_backward(wx)
        return 0.5 * (x * wx).sum()

    @staticmethod
    def backward(ctx, grad: torch.Tensor):  # type: ignore[override]
        (wx,) = ctx.saved_tensors
        return grad * wx, None


class Objective:
    """:func:`relaxed_objective` for one graph, as one sparse product with ``k`` columns.

    Builds the symmetric weight matrix W (CSR, ``2 m`` entries) once; then
    ``f(x) = 1/2 sum(x * (W x))``, whose gradient ``W x`` is kept from the
    forward pass. Same value as the edge sum, about ten times cheaper than
    gathering both endpoints of every edge.
    """

    def __init__(self, graph: Graph, dtype: torch.dtype = torch.float32) -> None:
        u, v, w = graph.u.numpy(), graph.v.numpy(), graph.w64.numpy()
        full = sp.csr_matrix(
            (np.concatenate([w, w]), (np.concatenate([u, v]), np.concatenate([v, u]))),
            shape=(graph.n, graph.n),
        )
        self.w = to_torch_csr(full, dtype)

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        return _QuadraticForm.apply(x.contiguous(), self.w)


def sample_labels(probs: torch.Tensor, samples: int, generator: torch.Generator) -> torch.Tensor:
    """Draw ``samples`` independent labellings, node ``i`` from ``Categorical(probs[i])``.

    ``probs`` is ``(n, k)`` with non-negative rows (renormalised here, so
    rounding error in a softmax does not matter). Returns int64 ``(samples, n)``.
    This is Algorithm 1 of the paper, ``samples`` times at once.
    """
    p = torch.nan_to_num(probs.detach().to(torch.float64), nan=0.0).clamp_min(0.0)
    row = p.sum(dim=1, keepdim=True)
    p = torch.where(row > 0, p / row.clamp_min(1e-300), torch.full_like(p, 1.0 / p.shape[1]))
    cdf = p.cumsum(dim=1).contiguous()
    uniform = torch.rand((p.shape[0], samples), generator=generator, dtype=torch.float64)
    # label = number of cdf entries <= u; the clamp guards against cdf[-1] < 1 by rounding.
    labels = torch.searchsorted(cdf, uniform, right=True).clamp_max(p.shape[1] - 1)
    return labels.T.contiguous()


def cut_values(labels: torch.Tensor, graph: Graph) -> torch.Tensor:
    """Cut weight of each labelling: ``labels`` int ``(T, n)`` -> float64 ``(T,)``."""
    labels = labels.reshape(-1, graph.n)
    if graph.m == 0:
        return torch.zeros(labels.shape[0], dtype=torch.float64)
    step = max(1, _CUT_CHUNK_ENTRIES // graph.m)
    out = []
    for s in range(0, labels.shape[0], step):
        part = labels[s : s + step]
        cut = part[:, graph.u] != part[:, graph.v]
        out.append(cut.to(torch.float64) @ graph.w64)
    return torch.cat(out)


def best_of_samples(
    probs: torch.Tensor, graph: Graph, samples: int, generator: torch.Generator
) -> tuple[np.ndarray, float]:
    """Best of ``samples`` categorical roundings of ``probs``: (int64 labels ``(n,)``, its cut).

    Ties keep the first sample drawn, as the official loop does (strict ``<``).
    """
    labels = sample_labels(probs, max(1, int(samples)), generator)
    cuts = cut_values(labels, graph)
    best = int(torch.argmax(cuts))
    return labels[best].numpy().astype(np.int64), float(cuts[best])
