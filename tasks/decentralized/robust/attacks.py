"""The attacks of ``robust-gossip``: what Byzantine neighbours send, computed on the trusted side.

An attack is called by the simulator at every round with all nodes' current
rows ``x`` (``(n, d)``; the honest rows are true, the Byzantine rows are what
the method computed there and are never used) and returns ``(n, K, d)``: the
row every receiver gets from each of its slots (only slots whose sender is
Byzantine are used). Every attack here sends one row per receiver, the same
from all its Byzantine neighbours, as the paper's code does
(``attacks/identical_sparse.py``: ``f`` identical Byzantine vectors per
attacked node).

``signflip``
    ``-mean_H x`` (the negated honest mean; ``attacks/signflipping.py``).
``large``
    a constant vector with every entry ``LARGE`` (``1e4``): no clipping rule
    lets it through at full size, plain gossip follows it.
``alie``
    "A little is enough" (Baruch et al., 2019), the paper's sparse form:
    ``x_i + c_i * sigma_H`` with ``sigma_H`` the coordinate-wise standard
    deviation of the honest rows.
``dissensus``
    the dissensus attack of ClippedGossip (He et al., 2022), the paper's
    form: ``x_i + c_i * sum_{j in N_H(i)} w_ij (x_i - x_j)``, pushing the
    receiver away from its honest neighbours.
``spectral``
    the paper's new attack (its code calls it "Spectral Heterogeneity"):
    ``x_i + c_i * v_i * (v^T X_H)`` with ``v`` the Fiedler vector (unit
    norm) of the honest subgraph's weighted Laplacian: every receiver is
    pushed along its own side of the honest graph's weakest cut, which feeds
    the slowest mode of gossip and drives the two sides apart.

The scale ``c_i``. In the paper's code, the attacker picks the factor by a
line search that runs the *defense* (the aggregation rule of the method under
attack) for each candidate and keeps the one that moves the receiver farthest
from its honest-only update. Here the attack lives on the task's side and
never sees the method's rule, so ``c_i`` is set per receiver so that the
Byzantine difference ``||y - x_i||`` equals ``STEALTH`` times the largest honest
difference ``max_{j in N_H(i)} ||x_j - x_i||`` the receiver sees: the message
is as far as an honest neighbour could be, and never an outlier a
distance-based rule can single out. Each of these three attacks also comes at
a quarter and at four times that distance (``spectralsmall``, ``spectralbig``):
the worst of the three stands in for the paper's line search (see the
README, "Deviations"). No Byzantine difference is ever longer than ``LARGE``,
so that a method the attack drives away stays finite and is scored, not refused.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import scipy.sparse as sp

__all__ = ["ATTACKS", "LARGE", "STEALTH", "SCALES", "make_attack", "honest_laplacian", "fiedler", "parse_attack"]

#: The scaled attacks, and the multiples of ``STEALTH`` they come in (by suffix; none: 1).
SCALED = ("alie", "dissensus", "spectral")
SCALES = {"": 1.0, "small": 0.25, "big": 4.0}
ATTACKS = ("none", "signflip", "large", *(f"{a}{k}" for a in SCALED for k in SCALES))
#: The entry of the large-value attack, and the largest norm of any Byzantine difference.
LARGE = 1e4
#: Byzantine difference / the receiver's largest honest difference, for alie, dissensus, spectral.
STEALTH = 1.0


def parse_attack(name: str) -> tuple[str, float]:
    """``("spectral", 4.0)`` for ``"spectralbig"``; the scale is 1 for unscaled attacks."""
    for a in SCALED:
        if name.startswith(a) and name[len(a):] in SCALES:
            return a, SCALES[name[len(a):]]
    if name in ATTACKS:
        return name, 1.0
    raise ValueError(f"no attack {name!r}; attacks are {', '.join(ATTACKS[1:])}")


def honest_laplacian(W: sp.csr_matrix, honest: np.ndarray) -> np.ndarray:
    """Weighted Laplacian of the honest subgraph, ``(h, h)`` dense, honest nodes in increasing order.

    ``L_H = diag(sum_{j in H} w_ij) - W_HH`` off the diagonal: the edges
    between honest nodes only, with their Metropolis weights.
    """
    idx = np.flatnonzero(honest)
    A = W.toarray()[np.ix_(idx, idx)]
    np.fill_diagonal(A, 0.0)
    return np.diag(A.sum(axis=1)) - A


#: Eigenvalues closer than this (relative to the largest) are one eigenspace, and vector
#: entries smaller than this are zero, when :func:`fiedler` picks its vector.
SPECTRAL_TOL = 1e-9


def fiedler(L: np.ndarray) -> tuple[float, np.ndarray, float]:
    """``(mu_min, v, mu_max)``: the second-smallest eigenvalue of ``L``, a unit eigenvector of
    it and the largest eigenvalue.

    The vector is the same on every CPU. Where ``mu_min`` is a multiple eigenvalue (the
    complete graph, rings, tori) LAPACK returns some basis of its eigenspace, and which one
    depends on the kernels OpenBLAS picks for the CPU; ``v`` is then the projection onto the
    eigenspace of the ramp ``0, 1, ..., n - 1`` (centred), which does not depend on the
    basis. Its sign is fixed so that its first entry above :data:`SPECTRAL_TOL` is positive;
    an entry within :data:`SPECTRAL_TOL` of zero is rounding, and callers that split the nodes
    by sign put it on the positive side.
    (Task version 1 took LAPACK's second column as it came: another machine's complete-graph
    instances then split their nodes into other sides.)
    """
    lam, vec = np.linalg.eigh(L)
    if lam.size < 2:
        return 0.0, np.ones(1), float(lam[-1])
    tol = SPECTRAL_TOL * max(1.0, abs(float(lam[-1])))
    same = np.flatnonzero(np.abs(lam[1:] - lam[1]) <= tol) + 1
    if same.size == 1:
        v = vec[:, 1].copy()
    else:
        V = vec[:, same]
        n = L.shape[0]
        v = np.zeros(n)
        for power in (1, 2, 3):  # a ramp, then its square and cube, in case one is orthogonal to the eigenspace
            t = (np.arange(n) - (n - 1) / 2.0) ** power
            v = V @ (V.T @ t)
            if np.linalg.norm(v) > SPECTRAL_TOL * np.linalg.norm(t):
                break
        v = v / np.linalg.norm(v)
    nz = np.flatnonzero(np.abs(v) > SPECTRAL_TOL)
    if nz.size and v[nz[0]] < 0:
        v = -v
    return float(lam[1]), v, float(lam[-1])


def make_attack(
    name: str,
    W: sp.csr_matrix,
    neighbours: np.ndarray,
    honest: np.ndarray,
) -> Callable[[np.ndarray, int], np.ndarray]:
    """The attack ``name`` on a graph with mixing matrix ``W`` and honest mask ``honest``.

    ``neighbours`` is the ``(n, K)`` neighbour table (``-1`` padded).
    """
    if name == "none":
        raise ValueError("attack 'none' sends nothing; an instance with Byzantine nodes needs an attack")
    name, factor = parse_attack(name)
    n, K = neighbours.shape
    mask = neighbours >= 0
    safe = np.where(mask, neighbours, 0)
    dense = W.toarray()
    w = np.where(mask, dense[np.arange(n)[:, None], safe], 0.0)
    honest_slot = mask & honest[safe]
    h_idx = np.flatnonzero(honest)
    _, v, _ = fiedler(honest_laplacian(W, honest))
    v_full = np.zeros(n)
    # an entry within rounding of zero pushes nowhere (version 1 pushed along its rounding error,
    # whose sign depends on the CPU)
    v_full[h_idx] = np.where(np.abs(v) > SPECTRAL_TOL, v, 0.0)

    def scaled(x: np.ndarray, direction: np.ndarray) -> np.ndarray:
        """``x_i + c_i direction_i`` with ``||c_i direction_i|| = factor * STEALTH * max honest
        difference at i`` (at most ``LARGE``)."""
        diffs = np.linalg.norm(x[safe] - x[:, None, :], axis=2)
        reach = np.minimum(factor * STEALTH * np.where(honest_slot, diffs, 0.0).max(axis=1), LARGE)
        norm = np.linalg.norm(direction, axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            c = np.where(norm > 0, reach / norm, 0.0)
        return x + c[:, None] * direction

    def attack(x: np.ndarray, rnd: int) -> np.ndarray:
        xh = x[h_idx]
        if name == "signflip":
            rows = np.broadcast_to(-xh.mean(axis=0), x.shape)
        elif name == "large":
            rows = np.full(x.shape, LARGE)
        elif name == "alie":
            rows = scaled(x, np.broadcast_to(xh.std(axis=0), x.shape))
        elif name == "dissensus":
            hw = np.where(honest_slot, w, 0.0)
            rows = scaled(x, np.einsum("ik,ikd->id", hw, x[:, None, :] - x[safe]))
        else:  # spectral
            rows = scaled(x, v_full[:, None] * (v @ xh)[None, :])
        return np.broadcast_to(rows[:, None, :], (n, K, x.shape[1])).copy()

    return attack
