"""``pignn``: PI-GNN (Schuetz et al. 2022), as ROS runs it in ``pignn/``: a 2-layer GNN trained on the QUBO loss."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import torch
from torch import nn

from baselines.maxcut._graph import Deadline, Reporter, cut_value, read, supports_k
from bench.registry import method

__all__ = ["solve_pignn", "PIGNN", "GraphConv", "GraphNorm", "qubo_loss"]

# torch imports ~800 modules (about 1 s) the first time an optimizer is built;
# do it once here, in the worker's zygote, rather than in every job.
torch.optim.Adam([nn.Parameter(torch.zeros(1))])


class _SymmetricSpMM(torch.autograd.Function):
    """``A @ h`` for a constant symmetric sparse CSR ``A``; the gradient is ``A @ grad`` (A^T = A).

    torch's own backward of a sparse product is 10x slower here (it
    transposes A on every call).
    """

    @staticmethod
    def forward(ctx: Any, adj: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
        ctx.adj = adj
        return adj @ h

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[None, torch.Tensor]:
        return None, ctx.adj @ grad


class GraphConv(nn.Module):
    """Morris et al.'s GraphConv with sum aggregation: ``lin_rel(sum_j w_ij h_j) + lin_root(h_i)``.

    The same layer as ``torch_geometric.nn.GraphConv`` (``aggr="add"``,
    ``lin_rel`` with bias, ``lin_root`` without), written with one sparse
    product so that torch_geometric is not needed.
    """

    def __init__(self, in_channels: int, out_channels: int) -> None:
        super().__init__()
        self.lin_rel = nn.Linear(in_channels, out_channels, bias=True)
        self.lin_root = nn.Linear(in_channels, out_channels, bias=False)

    def forward(self, h: torch.Tensor, adj: torch.Tensor, agg: torch.Tensor | None = None) -> torch.Tensor:
        """``adj``: symmetric sparse CSR (n, n); ``agg``: ``adj @ h`` if already known."""
        if agg is None:
            agg = _SymmetricSpMM.apply(adj, h) if h.requires_grad else adj @ h
        return self.lin_rel(agg) + self.lin_root(h)


class GraphNorm(nn.Module):
    """GraphNorm (Cai et al. 2021) for one graph, as ``torch_geometric.nn.norm.GraphNorm``.

    ``weight * (h - mean_scale * mean(h)) / sqrt(var + eps) + bias``, per
    channel over the nodes, where ``var`` is the mean square of the shifted h.
    """

    def __init__(self, channels: int, eps: float = 1e-5) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(channels))
        self.bias = nn.Parameter(torch.zeros(channels))
        self.mean_scale = nn.Parameter(torch.ones(channels))
        self.eps = eps

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        out = h - h.mean(dim=0, keepdim=True) * self.mean_scale
        var = (out * out).mean(dim=0, keepdim=True)
        return self.weight * out / torch.sqrt(var + self.eps) + self.bias


class PIGNN(nn.Module):
    """ROS's ``GCN_dev``: GraphConv -> GraphNorm -> ReLU -> GraphConv -> GraphNorm -> sigmoid."""

    def __init__(self, in_feats: int, hidden: int, classes: int = 1) -> None:
        super().__init__()
        self.conv1 = GraphConv(in_feats, hidden)
        self.bn1 = GraphNorm(hidden)
        self.conv2 = GraphConv(hidden, classes)
        self.bn2 = GraphNorm(classes)

    def forward(self, x: torch.Tensor, adj: torch.Tensor) -> torch.Tensor:
        h = torch.relu(self.bn1(self.conv1(x, adj)))
        return torch.sigmoid(self.bn2(self.conv2(h, adj)))


def qubo_loss(p: torch.Tensor, u: torch.Tensor, v: torch.Tensor, w: torch.Tensor, deg: torch.Tensor) -> torch.Tensor:
    """ROS's ``x^T Q x`` with ``Q_uv = 2 w_uv`` (each edge once) and ``Q_uu = -sum_v w_uv``.

    For 0/1 ``x`` it equals minus the cut of ``x``; ``p`` is (n,).
    """
    return 2.0 * torch.sum(w * p[u] * p[v]) - torch.sum(deg * p * p)


def _dims(n: int) -> tuple[int, int]:
    """ROS's ``pignn.py``: round(cbrt(n)) (round(sqrt(n)) above 1e5 nodes), hidden = round(dim / 2).

    Python's ``round`` (half to even), as there: n = 100 gives (5, 2).
    """
    dim = round(float(np.sqrt(n))) if n > 1e5 else round(float(np.cbrt(n)))
    return max(dim, 1), max(round(dim / 2), 1)


@method(
    name="pignn",
    kind="baseline",
    tasks=["maxcut"],
    reference=(
        "M. J. A. Schuetz, J. K. Brubaker and H. G. Katzgraber, Combinatorial optimization with "
        "physics-inspired graph neural networks, Nat. Mach. Intell. 4:367-377, 2022; settings and "
        "architecture of ROS's re-implementation NetSysOpt/ROS pignn/ @ eaf225e"
    ),
    version="1",
    params={"lr": 1e-2, "epochs": 100_000, "tol": 1e-4, "patience": 100, "threshold": 0.5,
            "dropout": 0.0, "train_embedding": False},
    # Stops on patience unless the budget comes first (G1: patience at 33 s; G6: budget).
    deterministic=False,
    # 60 s on every standard-tier graph (the task gives 120 s from 5,000 nodes): with 120 s its
    # 177 k=2 jobs x 3 seeds took about 97 min on 2 cores, over the tier's 90 (54 s per 800-node
    # graph, 108 s per large one, both at the budget stop). Full tier: the task's 1800 s.
    # smoke: patience rarely stops it there, so it runs until 90% of its budget; 8 s keeps the tier short
    budgets={"smoke": 8.0, "standard": 60.0},
    supports=lambda inst: supports_k(inst, (2,), "pignn (a one-output QUBO network)"),
    deviations=(
        "torch_geometric GraphConv/GraphNorm re-implemented in torch (not compared numerically, "
        "UNVERIFIED); sparse loss instead of a dense Q; stops at 90% of the budget. Follows ROS's "
        "PI-GNN (lr 1e-2, GraphNorm, fixed features), not the amazon-science example (lr 1e-4, no "
        "GraphNorm, trained features)"
    ),
)
def solve_pignn(
    instance: Any,
    *,
    seed: int,
    budget: float,
    lr: float = 1e-2,
    epochs: int = 100_000,
    tol: float = 1e-4,
    patience: int = 100,
    threshold: float = 0.5,
    dropout: float = 0.0,
    train_embedding: bool = False,
) -> np.ndarray:
    """Train a 2-layer GNN on one graph with the relaxed QUBO loss; threshold its output at 0.5.

    Network (ROS's ``pignn/models.py``): random node features
    ``nn.Embedding(n, d)`` (N(0, 1)), GraphConv(d -> d/2) -> GraphNorm -> ReLU
    -> GraphConv(d/2 -> 1) -> GraphNorm -> sigmoid, with
    ``d = round(cbrt(n))`` and edge weights in both convolutions. Loss
    ``p^T Q p`` with the Max-Cut QUBO (minus the cut at 0/1 points). Adam at
    ``lr`` on the network's parameters (and the features if
    ``train_embedding``). Each epoch the bits ``p >= threshold`` are kept if
    the loss is the lowest so far; training stops after ``patience``
    consecutive epochs whose loss rose or changed by at most ``tol``, after
    ``epochs`` epochs, or at 90% of ``budget``. Returns the kept bits as labels.
    k = 2 only. Float32, sparse products; torch's thread count is the bench's.

    Parameters (defaults) are ROS's for PI-GNN on Gset
    (``runner_unweighted_gset_full.sh``: ``--patience 100 --tol 1e-4
    --epochs 100000``; ``lr`` is ``add_parser.py``'s default 1e-2, since the
    runner does not set it; dropout 0.0 from ``pignn.py``). The original
    PI-GNN example (amazon-science/co-with-gnns-example) differs: DGL's GCN
    layers without GraphNorm, ``lr`` 1e-4, and the embedding trained
    (``train_embedding=True`` here).

    Deviations from ROS's code: torch_geometric's GraphConv and GraphNorm
    are re-implemented (same formulas; not checked against torch_geometric
    output, which is not installed: UNVERIFIED numerically); the loss uses
    the edge list instead of a dense n x n Q; the run stops at 90% of the
    budget. ``dropout`` (after the ReLU, as in the amazon example) is 0.0,
    as ROS sets it; ROS's model has no dropout layer at all.
    """
    deadline = Deadline(budget)
    g = read(instance)
    n = g.n
    torch.manual_seed(seed)
    dim, hidden = _dims(n)
    idx = torch.from_numpy(np.stack([g.edges[:, 0], g.edges[:, 1]]))
    both = torch.cat([idx, idx.flip(0)], dim=1)
    wt = torch.from_numpy(g.weights.astype(np.float32))
    with torch.sparse.check_sparse_tensor_invariants(False), warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Sparse CSR tensor support is in beta")
        adj = torch.sparse_coo_tensor(both, torch.cat([wt, wt]), (n, n)).coalesce().to_sparse_csr()
    u, v = idx[0], idx[1]
    deg = torch.zeros(n).index_add_(0, u, wt).index_add_(0, v, wt)

    embed = nn.Embedding(n, dim)
    net = PIGNN(dim, hidden)
    params = list(net.parameters()) + (list(embed.parameters()) if train_embedding else [])
    if not train_embedding:
        embed.weight.requires_grad_(False)
    opt = torch.optim.Adam(params, lr=lr, foreach=True)
    drop = nn.Dropout(dropout) if dropout > 0 else None

    reporter = Reporter()
    best_loss = np.inf
    best_bits = np.zeros(n, dtype=np.int64)
    prev_loss, count = 1.0, 0
    x = embed.weight
    agg1 = None if train_embedding else adj @ x  # fixed features: the first aggregation is constant
    for _ in range(int(epochs)):
        if deadline.expired():
            break
        h = torch.relu(net.bn1(net.conv1(x, adj, agg1)))
        if drop is not None:
            h = drop(h)
        p = torch.sigmoid(net.bn2(net.conv2(h, adj)))[:, 0]
        loss = qubo_loss(p, u, v, wt, deg)
        loss_ = float(loss.detach())
        if loss_ < best_loss:
            best_loss = loss_
            best_bits = (p.detach() >= threshold).numpy().astype(np.int64)
            reporter.offer(best_bits, cut_value(g, best_bits))
        if abs(loss_ - prev_loss) <= tol or loss_ - prev_loss > 0:
            count += 1
        else:
            count = 0
        if count >= patience:
            break
        prev_loss = loss_
        opt.zero_grad()
        loss.backward()
        opt.step()
    return best_bits
