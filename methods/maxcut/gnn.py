"""ROS's graph neural network in plain torch, with sparse message passing.

The official code ([C] ``ros/models.py``) uses PyTorch Geometric::

    GraphConv(100 -> 100, aggr) -> GraphNorm -> softmax(dim=1)
    GraphConv(100 -> k,   aggr) -> GraphNorm -> softmax(dim=1)

with ``aggr='mean'`` for ROS and the default ``aggr='add'`` for ROS-vanilla
([C] ``ros_vanilla/models.py``). This module re-implements both layers
without PyG, from PyG's definitions:

- ``GraphConv`` (Morris et al. 2019; PyG ``nn/conv/graph_conv.py``):
  ``h'_i = lin_rel(AGG_{j in N(i)} w_ji h_j) + lin_root(h_i)``, where
  ``lin_rel`` has a bias and ``lin_root`` has none. The message is
  ``w_ji * h_j``; ``'add'`` sums the messages, ``'mean'`` divides the sum by
  the **number** of incoming edges (PyG's scatter-mean counts messages; it
  does not divide by the sum of the weights). A node without neighbours
  aggregates to 0.
- ``GraphNorm`` (Cai et al. 2021; PyG ``nn/norm/graph_norm.py``) over all
  nodes of the one graph: ``o = h - alpha * mean(h)``,
  ``gamma * o / sqrt(mean(o^2) + 1e-5) + beta``, per feature, with
  learnable ``alpha`` (init 1), ``gamma`` (1) and ``beta`` (0).

Aggregation is a constant sparse matrix ``A`` (CSR, ``A_ij = w_ij`` or
``w_ij / deg_i``), applied with a hand-written autograd function whose
backward multiplies by the precomputed ``A^T``: memory O(edges), never an
``n x n`` dense matrix.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp
import torch
from torch import nn

from methods.maxcut.relaxation import Graph, to_torch_csr

__all__ = ["Aggregation", "GraphConv", "GraphNorm", "ROSNet", "xavier_uniform"]


class _SpMM(torch.autograd.Function):
    """``A @ x`` for a constant sparse ``A``; the gradient is ``A^T @ grad``."""

    @staticmethod
    def forward(ctx, x: torch.Tensor, a: torch.Tensor, a_t: torch.Tensor) -> torch.Tensor:  # type: ignore[override]
        ctx.a_t = a_t
        return a @ x

    @staticmethod
    def backward(ctx, grad: torch.Tensor):  # type: ignore[override]
        return ctx.a_t @ grad.contiguous(), None, None


class Aggregation:
    """Neighbourhood aggregation ``AGG_{j in N(i)} w_ji h_j`` as a sparse matrix.

    ``aggr="add"``: ``A_ij = w_ij``; ``aggr="mean"``: ``A_ij = w_ij / deg_i``,
    ``deg_i`` = number of edges at ``i`` (PyG semantics, see the module
    docstring). Edges are undirected: each is a message in both directions
    with the same weight, as the official code builds ``edge_index``.
    """

    def __init__(self, graph: Graph, aggr: str, dtype: torch.dtype = torch.float32) -> None:
        if aggr not in ("add", "mean"):
            raise ValueError(f"aggr must be 'add' or 'mean', got {aggr!r}")
        n = graph.n
        u, v = graph.u.numpy(), graph.v.numpy()
        w = graph.w64.numpy()
        rows = np.concatenate([u, v])  # target i
        cols = np.concatenate([v, u])  # source j
        vals = np.concatenate([w, w])
        if aggr == "mean":
            deg = np.bincount(rows, minlength=n).astype(np.float64)
            vals = vals / np.maximum(deg, 1.0)[rows]
        a = sp.csr_matrix((vals, (rows, cols)), shape=(n, n))
        self.aggr = aggr
        self.n = n
        self.a = to_torch_csr(a, dtype)
        self.a_t = to_torch_csr(a.T, dtype)

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        """``(n, d) -> (n, d)``: row ``i`` is the aggregate of ``i``'s neighbours."""
        return _SpMM.apply(x.contiguous(), self.a, self.a_t)


def _uniform_(t: torch.Tensor, bound: float, generator: torch.Generator | None) -> torch.Tensor:
    with torch.no_grad():
        return t.uniform_(-bound, bound, generator=generator)


def xavier_uniform(
    shape: tuple[int, int], generator: torch.Generator | None, dtype=torch.float32
) -> torch.Tensor:
    """Glorot-uniform ``(rows, cols)`` tensor as ``torch.nn.init.xavier_uniform_`` draws it
    (fan_in = cols, fan_out = rows), from ``generator``."""
    bound = math.sqrt(6.0 / (shape[0] + shape[1]))
    return _uniform_(torch.empty(shape, dtype=dtype), bound, generator)


class GraphConv(nn.Module):
    """``h'_i = lin_rel(AGG_j w_ji h_j) + lin_root(h_i)`` (PyG ``GraphConv``).

    Both linear maps start as ``torch.nn.Linear`` / PyG ``Linear`` do
    (weights and bias ~ U(-1/sqrt(in), 1/sqrt(in))), drawn from ``generator``.
    When the output is narrower than the input, the linear map is applied
    before aggregating (``A (h W^T)``, then the bias), which is the same
    function, cheaper; the last layer (100 -> k) benefits.
    """

    def __init__(self, in_dim: int, out_dim: int, generator: torch.Generator | None = None) -> None:
        super().__init__()
        self.in_dim, self.out_dim = in_dim, out_dim
        bound = 1.0 / math.sqrt(in_dim)
        self.rel_weight = nn.Parameter(_uniform_(torch.empty(out_dim, in_dim), bound, generator))
        self.rel_bias = nn.Parameter(_uniform_(torch.empty(out_dim), bound, generator))
        self.root_weight = nn.Parameter(_uniform_(torch.empty(out_dim, in_dim), bound, generator))

    def forward(self, h: torch.Tensor, agg: Aggregation) -> torch.Tensor:
        if self.out_dim < self.in_dim:
            both = h @ torch.cat([self.rel_weight, self.root_weight]).T
            rel, root = both[:, : self.out_dim], both[:, self.out_dim :]
            return torch.add(agg(rel), root).add_(self.rel_bias)
        return torch.addmm(
            torch.addmm(self.rel_bias, agg(h), self.rel_weight.T), h, self.root_weight.T
        )


class _GraphNormFn(torch.autograd.Function):
    """GraphNorm forward and a hand-derived backward: a few passes over ``(n, d)`` instead of ~25.

    With ``o = h - alpha * mu``, ``s = sqrt(mean(o^2) + eps)``, ``z = o / s``
    and ``y = gamma * z + beta`` (all per feature, means over the n nodes):
    ``dL/do = gamma / s * (g - z * sum(g z) / n)`` and
    ``dL/dh = dL/do - alpha / n * sum(dL/do)``.
    """

    @staticmethod
    def forward(ctx, h, alpha, gamma, beta, eps):  # type: ignore[override]
        n = h.shape[0]
        mu = h.mean(dim=0)
        o = h - alpha * mu
        inv = torch.rsqrt(o.square().sum(dim=0) / n + eps)
        z = o.mul_(inv)
        ctx.save_for_backward(z, mu, inv, alpha, gamma)
        return torch.addcmul(beta, z, gamma)

    @staticmethod
    def backward(ctx, g):  # type: ignore[override]
        z, mu, inv, alpha, gamma = ctx.saved_tensors
        n = z.shape[0]
        d_beta = g.sum(dim=0)
        d_gamma = (g * z).sum(dim=0)
        scale = gamma * inv
        d_o = torch.addcmul(g, z, -d_gamma / n).mul_(scale)
        # sum over nodes of d_o, from the per-feature sums: sum(z) = n (1 - alpha) mu inv.
        s_do = scale * (d_beta - d_gamma * (1 - alpha) * mu * inv)
        d_h = d_o.sub_(alpha * s_do / n)
        return d_h, -mu * s_do, d_gamma, d_beta, None


class GraphNorm(nn.Module):
    """GraphNorm over all nodes of one graph (Cai et al. 2021; PyG ``GraphNorm``), per feature.

    ``forward`` uses a fused autograd function; :meth:`reference` is the
    plain formula (autograd through elementary ops), kept for the tests.
    """

    def __init__(self, dim: int, eps: float = 1e-5) -> None:
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))
        self.bias = nn.Parameter(torch.zeros(dim))
        self.mean_scale = nn.Parameter(torch.ones(dim))

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        return _GraphNormFn.apply(h, self.mean_scale, self.weight, self.bias, self.eps)

    def reference(self, h: torch.Tensor) -> torch.Tensor:
        out = h - h.mean(dim=0, keepdim=True) * self.mean_scale
        var = out.pow(2).mean(dim=0, keepdim=True)
        return self.weight * out / (var + self.eps).sqrt() + self.bias


class ROSNet(nn.Module):
    """Two GraphConv layers, each followed by GraphNorm and a softmax over features.

    Input ``(n, in_dim)`` node features; output ``(n, k)`` rows on the
    simplex. The softmax after the *first* layer (over the 100 hidden
    features) is what the official code does; the paper only says the last
    layer has a softmax.
    """

    def __init__(
        self, in_dim: int, hidden: int, k: int, generator: torch.Generator | None = None
    ) -> None:
        super().__init__()
        self.conv1 = GraphConv(in_dim, hidden, generator)
        self.norm1 = GraphNorm(hidden)
        self.conv2 = GraphConv(hidden, k, generator)
        self.norm2 = GraphNorm(k)

    def forward(self, x: torch.Tensor, agg: Aggregation) -> torch.Tensor:
        h = torch.softmax(self.norm1(self.conv1(x, agg)), dim=1)
        return torch.softmax(self.norm2(self.conv2(h, agg)), dim=1)
