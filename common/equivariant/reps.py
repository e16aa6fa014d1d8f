"""Equivariant linear maps between tensor representations, solved from the group's generators.

A representation is ``(c0, c1, c2)`` (scalars, vectors, rank-2 tensors ``V (x) V``) of a group
given by its Lie algebra generators ``A_k`` and discrete generators ``h_l`` (``d x d``
matrices, as the task sends them). As in EMLP (Finzi, Welling and Wilson, ICML 2021) and the
official EKAN code, the equivariant maps ``W: V^(x)ri -> V^(x)ro`` are the null space of the
stacked constraints

    drho_o(A) W - W drho_i(A) = 0,      rho_o(h) W rho_i(h)^-1 - W = 0,

solved by an SVD (singular values below ``1e-6`` times the largest count as zero), and a free
weight is projected onto it with ``P = Q Q^T`` (``Q`` an orthonormal basis of the null space).
Only ranks 0-2 are built here (EMLP's ``uniform_rep`` also allocates rank-3 and higher
channels; see the family README).

A *layout* is the list of segments ``(rank, multiplicity)`` of a flat feature vector, in order;
a gated layout (EMLP's ``gated(rep)``) is the rep's segments followed by one gate scalar per
non-scalar channel.
"""

from __future__ import annotations

import functools

import numpy as np
import torch

__all__ = ["Group", "Layout", "layout", "gated", "project_dense", "split_by_rank", "merge_by_rank"]

Layout = tuple[tuple[int, int], ...]


def layout(rep: tuple[int, int, int] | list[int]) -> Layout:
    """Segments of ``(c0, c1, c2)``, zero multiplicities left out."""
    return tuple((r, int(m)) for r, m in enumerate(rep) if int(m) > 0)


def gated(rep: tuple[int, int, int] | list[int]) -> Layout:
    """``rep``'s segments then its gates: one scalar per vector or tensor channel."""
    g = int(rep[1]) + int(rep[2])
    return layout(rep) + (((0, g),) if g else ())


def size(lay: Layout, d: int) -> int:
    return sum(m * d**r for r, m in lay)


def _kron_power_drho(a: np.ndarray, r: int) -> np.ndarray:
    d = a.shape[0]
    if r == 0:
        return np.zeros((1, 1))
    out = np.zeros((d**r, d**r))
    for k in range(r):
        out += np.kron(np.kron(np.eye(d**k), a), np.eye(d ** (r - 1 - k)))
    return out


def _kron_power(h: np.ndarray, r: int) -> np.ndarray:
    out = np.eye(1)
    for _ in range(r):
        out = np.kron(out, h)
    return out


class Group:
    """A matrix group from its generators; caches the projectors of each rank pair."""

    def __init__(self, lie_algebra: np.ndarray, discrete_generators: np.ndarray) -> None:
        self.lie = [np.asarray(a, dtype=np.float64) for a in lie_algebra]
        self.disc = [np.asarray(h, dtype=np.float64) for h in discrete_generators]
        self.d = int((self.lie or self.disc)[0].shape[0])

    @functools.cache  # noqa: B019  (a handful of groups per process)
    def basis(self, ro: int, ri: int) -> np.ndarray:
        """Orthonormal basis ``(d^ro * d^ri, k)`` of the equivariant maps rank ``ri`` -> ``ro`` (row-major vec)."""
        n_o, n_i = self.d**ro, self.d**ri
        rows = []
        for a in self.lie:
            do, di = _kron_power_drho(a, ro), _kron_power_drho(a, ri)
            rows.append(np.kron(do, np.eye(n_i)) - np.kron(np.eye(n_o), di.T))
        for h in self.disc:
            ho, hi = _kron_power(h, ro), _kron_power(h, ri)
            rows.append(np.kron(ho, np.linalg.inv(hi).T) - np.eye(n_o * n_i))
        c = np.concatenate(rows) if rows else np.zeros((1, n_o * n_i))
        _, s, vt = np.linalg.svd(c, full_matrices=True)
        rank = int((s > 1e-6 * max(s.max(), 1.0)).sum())
        return vt[rank:].T.copy()

    @functools.cache  # noqa: B019
    def projector(self, ro: int, ri: int) -> torch.Tensor:
        """``P = Q Q^T`` (float32) of :meth:`basis`."""
        q = self.basis(ro, ri)
        return torch.tensor(q @ q.T, dtype=torch.float32)

    @functools.cached_property
    def metric(self) -> torch.Tensor:
        """The invariant bilinear form ``M`` (``h^T M h = M``, ``A^T M + M A = 0``), scaled to ``max |M| = 1``.

        It is the map rank 0 -> rank 2 of the *dual* representation; for O(d) it is the identity,
        for O(1, 3) the Minkowski metric (up to sign). Used by the bilinear layer to contract two
        vectors (or tensors) into a scalar.
        """
        d = self.d
        rows = [np.kron(a.T, np.eye(d)) + np.kron(np.eye(d), a.T) for a in self.lie]
        rows += [np.kron(h.T, h.T) - np.eye(d * d) for h in self.disc]
        _, s, vt = np.linalg.svd(np.concatenate(rows))
        rank = int((s > 1e-6 * s.max()).sum())
        m = vt[rank].reshape(d, d)
        m = (m + m.T) / 2
        return torch.tensor(m / np.abs(m).max(), dtype=torch.float32)


def project_dense(
    w: torch.Tensor, group: Group, lay_out: Layout, lay_in: Layout, nb: int = 1
) -> torch.Tensor:
    """Project a dense weight ``(size_out, nb * size_in)`` onto the equivariant maps, block by block.

    Column ``j * size_in + c`` is input feature ``c`` of copy ``j`` (EKAN's ``rep_in * (G + k + 1)``:
    each basis function's copy of the input gets its own equivariant map, as ``weight_proj`` of
    the official ``EKANLayer`` does).
    """
    d = group.d
    size_in = size(lay_in, d)
    w = w.reshape(w.shape[0], nb, size_in)
    rows = []
    o0 = 0
    for ro, mo in lay_out:
        no = mo * d**ro
        cols = []
        i0 = 0
        for ri, mi in lay_in:
            ni = mi * d**ri
            blk = w[o0 : o0 + no, :, i0 : i0 + ni].reshape(mo, d**ro, nb, mi, d**ri)
            blk = blk.permute(2, 0, 3, 1, 4).reshape(nb, mo, mi, d**ro * d**ri) @ group.projector(
                ro, ri
            )
            cols.append(
                blk.reshape(nb, mo, mi, d**ro, d**ri).permute(1, 3, 0, 2, 4).reshape(no, nb, ni)
            )
            i0 += ni
        rows.append(torch.cat(cols, dim=2))
        o0 += no
    return torch.cat(rows, dim=0).reshape(w.shape[0], nb * size_in)


def project_bias(b: torch.Tensor, group: Group, lay: Layout) -> torch.Tensor:
    """Project a bias onto the invariant vectors of each segment (zero on vectors, ``M^-1``-like on tensors)."""
    d = group.d
    out, o0 = [], 0
    for r, m in lay:
        n = m * d**r
        out.append((b[o0 : o0 + n].reshape(m, d**r) @ group.projector(r, 0)).reshape(n))
        o0 += n
    return torch.cat(out)


def split_by_rank(x: torch.Tensor, lay: Layout, d: int) -> dict[int, torch.Tensor]:
    """``{rank: (B, channels, d^rank)}``, the segments of one rank concatenated in order."""
    parts: dict[int, list[torch.Tensor]] = {}
    o = 0
    for r, m in lay:
        n = m * d**r
        parts.setdefault(r, []).append(x[:, o : o + n].reshape(-1, m, d**r))
        o += n
    return {r: torch.cat(v, dim=1) for r, v in parts.items()}


def merge_by_rank(parts: dict[int, torch.Tensor], lay: Layout, d: int) -> torch.Tensor:
    """Inverse of :func:`split_by_rank`."""
    taken = dict.fromkeys(parts, 0)
    out = []
    for r, m in lay:
        out.append(parts[r][:, taken[r] : taken[r] + m].reshape(-1, m * d**r))
        taken[r] += m
    return torch.cat(out, dim=1)
