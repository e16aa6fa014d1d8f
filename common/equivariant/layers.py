"""Layers shared by EKAN and the baselines: B-splines, the EKAN and KAN layers, EMLP blocks, MLP.

Re-implemented from the official EKAN code (github.com/hulx2002/EKAN @ 3dea768: ``EKANLayer.py``,
``EKAN.py``, ``KANLayer.py``, ``EMLP.py``, ``MLP.py``, ``spline.py``), not copied. Shapes: a batch of
flat features is ``(B, size)`` in a :data:`~common.equivariant.reps.Layout`.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from common.equivariant.reps import (
    Group,
    Layout,
    gated,
    layout,
    merge_by_rank,
    project_bias,
    project_dense,
    size,
    split_by_rank,
)

__all__ = [
    "b_splines",
    "SplineGate",
    "EKANLayer",
    "Lift",
    "EKAN",
    "KANLayer",
    "KAN",
    "EMLP",
    "MLP",
    "Bilinear",
]


def b_splines(x: torch.Tensor, grid: torch.Tensor, k: int) -> torch.Tensor:
    """Cox-de Boor B-spline bases: ``x (n, B)``, ``grid (n, G + 1)`` -> ``(n, G + k, B)``.

    The grid is extended by ``k`` knots of the same spacing on each side (pykan's ``B_batch``
    with ``extend=True``), so each scalar has ``G + k`` basis functions of order ``k``.
    """
    h = (grid[:, -1:] - grid[:, :1]) / (grid.shape[1] - 1)
    steps = torch.arange(-k, grid.shape[1] + k, dtype=grid.dtype)
    g = (grid[:, :1] + steps[None, :] * h)[:, :, None]  # (n, G + 1 + 2k, 1)
    x = x[:, None, :]
    b = ((x >= g[:, :-1]) & (x < g[:, 1:])).to(x.dtype)
    for p in range(1, k + 1):
        left = (x - g[:, : -(p + 1)]) / (g[:, p:-1] - g[:, : -(p + 1)]) * b[:, :-1]
        right = (g[:, p + 1 :] - x) / (g[:, p + 1 :] - g[:, 1:-p]) * b[:, 1:]
        b = left + right
    return b


class SplineGate(nn.Module):
    """``G + k`` B-splines and SiLU of each of ``n`` scalars: ``(B, n)`` -> ``(B, G + k + 1, n)``.

    The grid starts uniform on ``[-1, 1]`` and is not trained; :meth:`update_grid` refits it to
    a batch (``grid_eps = 1``: uniform between the batch's extremes with a 0.01 margin, the
    official EKAN default).
    """

    def __init__(self, n: int, grid: int, k: int) -> None:
        super().__init__()
        self.k = k
        self.register_buffer("grid", torch.linspace(-1.0, 1.0, grid + 1).repeat(n, 1))

    def forward(self, s: torch.Tensor) -> torch.Tensor:
        sp = b_splines(s.T, self.grid, self.k).permute(2, 1, 0)
        return torch.cat([sp, nn.functional.silu(s)[:, None, :]], dim=1)

    @torch.no_grad()
    def update_grid(self, s: torch.Tensor, margin: float = 0.01) -> None:
        lo, hi = s.min(0).values - margin, s.max(0).values + margin
        steps = torch.linspace(0.0, 1.0, self.grid.shape[1])
        self.grid.copy_(lo[:, None] + (hi - lo)[:, None] * steps[None, :])


class Bilinear(nn.Module):
    """EMLP-style bilinear term ``0.1 W(x) x``, ``W(x)`` linear in ``x``, equivariant.

    EMLP fills each block of ``W`` of representation type ``R`` with ``n = min(mult_R, dim R)``
    channels of ``x`` of type ``R``. Restricted to ranks <= 2, the products kept are (output
    rank: term), with ``M`` the group's invariant form:

    - 0: ``<v_a, v_b>_M`` and ``<T_a, T_b>_M = tr(T_a M T_b^T M)``;
    - 1: ``s_a v_b`` and ``T_b M v_a``;
    - 2: ``s_a T_b`` and ``v_a (x) v_b``.

    ``a`` runs over all channels of its rank and ``b`` over the first ``n`` channels. The last term
    is one EMLP reaches only through rank-3 channels (``uniform_rep`` allocates them), which we
    do not build. Parameters ``N(0, 1)`` as in EMLP.
    """

    RULES = ((0, 1, 1), (0, 2, 2), (1, 0, 1), (1, 1, 2), (2, 0, 2), (2, 1, 1))

    def __init__(self, lay: Layout, group: Group) -> None:
        super().__init__()
        self.lay, self.group, d = lay, group, group.d
        mult: dict[int, int] = {}
        for r, m in lay:
            mult[r] = mult.get(r, 0) + m
        self.mult = mult
        self.rules = []
        for ro, ra, rb in self.RULES:
            if mult.get(ro) and mult.get(ra) and mult.get(rb):
                n = min(mult[rb], d**rb)
                self.rules.append((ro, ra, rb, n))
        self.weights = nn.ParameterList(
            [nn.Parameter(torch.randn(mult[ro], mult[ra], n)) for ro, ra, rb, n in self.rules]
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self.rules:
            return x
        d, m_ = self.group.d, self.group.metric
        p = split_by_rank(x, self.lay, d)
        add = {r: torch.zeros_like(t) for r, t in p.items()}
        for (ro, ra, rb, n), w in zip(self.rules, self.weights, strict=True):
            a, b = p[ra], p[rb][:, :n]
            if (ro, ra, rb) == (0, 1, 1):
                q = torch.einsum("bai,ij,bcj->bac", a, m_, b)
                add[0] += torch.einsum("bac,oac->bo", q, w)[:, :, None]
            elif (ro, ra, rb) == (0, 2, 2):
                ta, tb = a.reshape(-1, a.shape[1], d, d), b.reshape(-1, n, d, d)
                q = torch.einsum("baij,jk,bclk,li->bac", ta, m_, tb, m_)
                add[0] += torch.einsum("bac,oac->bo", q, w)[:, :, None]
            elif (ro, ra, rb) == (1, 0, 1):
                add[1] += torch.einsum("ba,bci,oac->boi", a[:, :, 0], b, w)
            elif (ro, ra, rb) == (1, 1, 2):
                tb = b.reshape(-1, n, d, d)
                add[1] += torch.einsum("bcij,jk,bak,oac->boi", tb, m_, a, w)
            elif (ro, ra, rb) == (2, 0, 2):
                add[2] += torch.einsum("ba,bci,oac->boi", a[:, :, 0], b, w)
            else:  # (2, 1, 1)
                add[2] += torch.einsum("bai,bcj,oac->boij", a, b, w).reshape(-1, w.shape[0], d * d)
        return x + 0.1 * merge_by_rank(add, self.lay, d)


class EquivariantLinear(nn.Module):
    """``W x + b`` with ``W`` and ``b`` projected onto the equivariant ones (EMLP's ``Linear``); orthogonal init."""

    def __init__(self, lay_in: Layout, lay_out: Layout, group: Group, nb: int = 1) -> None:
        super().__init__()
        self.lay_in, self.lay_out, self.group, self.nb = lay_in, lay_out, group, nb
        d = group.d
        self.linear = nn.Linear(nb * size(lay_in, d), size(lay_out, d))
        nn.init.orthogonal_(self.linear.weight)

    def weight(self) -> torch.Tensor:
        return project_dense(self.linear.weight, self.group, self.lay_out, self.lay_in, self.nb)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x @ self.weight().T + project_bias(self.linear.bias, self.group, self.lay_out)


class EKANLayer(nn.Module):
    """One EKAN layer: gated spline basis functions times the features, then an equivariant linear map.

    Input: a gated layout of ``rep_in`` (features, then one gate per non-scalar channel); a
    scalar feature is gated by itself. For basis function ``j`` (``G + k`` B-splines and SiLU of
    the gate) the activation is ``phi_j(gate(c)) * x_c`` for each feature entry ``c`` of the
    rep part; the ``(G + k + 1) * size(rep_in)`` activations go through one equivariant linear map
    to ``gated(rep_out)``, then the bilinear term (as the official ``EKANLayer.forward``).
    """

    def __init__(
        self,
        rep_in: tuple[int, int, int],
        rep_out: tuple[int, int, int],
        group: Group,
        grid: int = 3,
        k: int = 3,
    ) -> None:
        super().__init__()
        d = group.d
        self.d, self.rep_in = d, rep_in
        c0, c1, c2 = rep_in
        self.in_dim = size(layout(rep_in), d)
        self.nb = grid + k + 1
        # gate of every feature entry: scalars their own index, vector/tensor channels their gate's
        gate = list(range(c0)) + [c0 + c1 * d + c2 * d * d + i for i in range(c1) for _ in range(d)]
        gate += [c0 + c1 * d + c2 * d * d + c1 + i for i in range(c2) for _ in range(d * d)]
        uniq, inverse = np.unique(np.array(gate, dtype=np.int64), return_inverse=True)
        self.register_buffer("uniq", torch.tensor(uniq))
        self.register_buffer("inverse", torch.tensor(inverse.reshape(-1)))
        self.spline = SplineGate(len(uniq), grid, k)
        self.linear = EquivariantLinear(layout(rep_in), gated(rep_out), group, self.nb)
        self.bilinear = Bilinear(gated(rep_out), group)

    def activations(self, x: torch.Tensor) -> torch.Tensor:
        phi = self.spline(x[:, self.uniq])[:, :, self.inverse]  # (B, nb, in_dim)
        return (phi * x[:, None, : self.in_dim]).reshape(x.shape[0], -1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.bilinear(self.linear(self.activations(x)))

    @torch.no_grad()
    def update_grid(self, x: torch.Tensor) -> None:
        """Refit the grid to ``x`` and the weight so the layer's output stays as close as least squares allows."""
        w = self.linear.weight()
        y = self.activations(x) @ w.T
        self.spline.update_grid(x[:, self.uniq])
        a = self.activations(x)
        self.linear.linear.weight.copy_(y.T @ torch.linalg.pinv(a.T))
        # the projection of the refit weight is what the forward pass uses (official: lazy_Pinv of P = P)


class Lift(nn.Module):
    """EKAN's lift layer: equivariant linear map ``rep_in -> gated(rep_in)`` plus the bilinear term."""

    def __init__(self, rep_in: tuple[int, int, int], group: Group) -> None:
        super().__init__()
        self.linear = EquivariantLinear(layout(rep_in), gated(rep_in), group)
        self.bilinear = Bilinear(gated(rep_in), group)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.bilinear(self.linear(x))


class EKAN(nn.Module):
    """Lift, then EKAN layers through ``hidden`` reps to ``rep_out``; the output drops the gates."""

    def __init__(
        self,
        rep_in,
        rep_out,
        hidden: list[tuple[int, int, int]],
        group: Group,
        grid: int = 3,
        k: int = 3,
    ) -> None:
        super().__init__()
        self.out_dim = size(layout(rep_out), group.d)
        self.lift = Lift(tuple(rep_in), group)
        reps = [tuple(rep_in), *map(tuple, hidden), tuple(rep_out)]
        self.layers = nn.ModuleList(
            [EKANLayer(a, b, group, grid, k) for a, b in zip(reps, reps[1:], strict=False)]
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.lift(x)
        for layer in self.layers:
            x = layer(x)
        return x[:, : self.out_dim]

    @torch.no_grad()
    def update_grid(self, x: torch.Tensor) -> None:
        h = self.lift(x)
        for layer in self.layers:
            layer.update_grid(h)
            h = layer(h)


class KANLayer(nn.Module):
    """The official EKAN repository's KAN layer (pykan-derived): ``phi_j(x_c) * x_c`` then a dense linear map."""

    def __init__(self, n_in: int, n_out: int, grid: int = 3, k: int = 3) -> None:
        super().__init__()
        self.spline = SplineGate(n_in, grid, k)
        self.linear = nn.Linear(n_in * (grid + k + 1), n_out)
        nn.init.orthogonal_(self.linear.weight)

    def activations(self, x: torch.Tensor) -> torch.Tensor:
        return (self.spline(x) * x[:, None, :]).reshape(x.shape[0], -1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear(self.activations(x))

    @torch.no_grad()
    def update_grid(self, x: torch.Tensor) -> None:
        y = self.activations(x) @ self.linear.weight.T
        self.spline.update_grid(x)
        self.linear.weight.copy_(y.T @ torch.linalg.pinv(self.activations(x).T))


class KAN(nn.Module):
    """Stack of :class:`KANLayer` with widths ``[n_in, *hidden, n_out]``."""

    def __init__(self, n_in: int, n_out: int, hidden: list[int], grid: int = 3, k: int = 3) -> None:
        super().__init__()
        w = [n_in, *hidden, n_out]
        self.layers = nn.ModuleList(
            [KANLayer(a, b, grid, k) for a, b in zip(w, w[1:], strict=False)]
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = layer(x)
        return x

    @torch.no_grad()
    def update_grid(self, x: torch.Tensor) -> None:
        for layer in self.layers:
            layer.update_grid(x)
            x = layer(x)


class EMLPBlock(nn.Module):
    """EMLP block: equivariant linear to ``gated(rep_out)``, bilinear, gated nonlinearity (sigmoid gates)."""

    def __init__(self, lay_in: Layout, rep_out: tuple[int, int, int], group: Group) -> None:
        super().__init__()
        d = group.d
        self.linear = EquivariantLinear(lay_in, gated(rep_out), group)
        self.bilinear = Bilinear(gated(rep_out), group)
        c0, c1, c2 = rep_out
        n = size(layout(rep_out), d)
        gate = (
            list(range(c0))
            + [n + i for i in range(c1) for _ in range(d)]
            + [n + c1 + i for i in range(c2) for _ in range(d * d)]
        )
        self.n = n
        self.register_buffer("gate", torch.tensor(gate, dtype=torch.int64))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.bilinear(self.linear(x))
        return torch.sigmoid(h[:, self.gate]) * h[:, : self.n]


class EMLP(nn.Module):
    """EMLP (Finzi et al. 2021) as the official EKAN code builds it: blocks, then a final equivariant linear map."""

    def __init__(self, rep_in, rep_out, hidden: list[tuple[int, int, int]], group: Group) -> None:
        super().__init__()
        lays = [layout(tuple(rep_in)), *[layout(tuple(h)) for h in hidden]]
        self.blocks = nn.Sequential(
            *[EMLPBlock(a, tuple(h), group) for a, h in zip(lays[:-1], hidden, strict=True)]
        )
        self.out = EquivariantLinear(lays[-1], layout(tuple(rep_out)), group)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.out(self.blocks(x))


class MLP(nn.Module):
    """The official MLP baseline: Linear + Swish blocks, then a Linear output."""

    def __init__(self, n_in: int, n_out: int, hidden: list[int]) -> None:
        super().__init__()
        w = [n_in, *hidden]
        mods: list[nn.Module] = []
        for a, b in zip(w, w[1:], strict=False):
            mods += [nn.Linear(a, b), nn.SiLU()]
        self.net = nn.Sequential(*mods, nn.Linear(w[-1], n_out))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)
