"""Numba kernels of the local-search baselines (``greedy-1opt``, ``tabu``).

Every kernel is compiled eagerly, when this module is imported, for the one
signature the baselines call it with, and cached on disk (``cache=True``,
in ``__pycache__`` beside this file). The worker's zygote imports the
baselines once, so no job pays compilation time; on a cold cache the import
compiles them (about 3 s here, see the README), after that it loads them
(well under a second).

Shared notation, all arrays C-contiguous:

``indptr`` int64 (n+1,), ``indices`` int64 (2m,), ``w`` float64 (2m,)
    The symmetric CSR adjacency (see :class:`baselines.maxcut._graph.Graph`).
``labels`` int64 (n,)
    The part of every node, in ``[0, k)``.
``S`` float64 (n, k)
    ``S[v, p]`` = total weight of the edges from ``v`` to nodes in part ``p``.
    Moving ``v`` from part ``a`` to part ``b`` raises the cut by
    ``S[v, a] - S[v, b]``; after the move, each neighbour ``u`` of ``v`` gets
    ``S[u, a] -= w_uv`` and ``S[u, b] += w_uv`` (O(deg v)).

Random numbers come from numba's own generator (seed it with :func:`seed_rng`).
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = [
    "seed_rng",
    "part_weights",
    "cut_from_parts",
    "greedy_construct",
    "one_opt_pass",
    "tabu_chunk",
    "F_CUR",
    "F_BEST",
    "I_IT",
    "I_IDLE",
    "I_STRENGTH",
    "I_IMPROVED",
    "I_PERTURBATIONS",
]

_CSR = "int64[::1], int64[::1], float64[::1]"

# Slots of the state vectors of tabu_chunk.
F_CUR, F_BEST = 0, 1
I_IT, I_IDLE, I_STRENGTH, I_IMPROVED, I_PERTURBATIONS = 0, 1, 2, 3, 4


@numba.njit("void(int64)", cache=True)
def seed_rng(seed):  # pragma: no cover - compiled
    np.random.seed(seed)  # noqa: NPY002 - numba has only the legacy generator


@numba.njit(f"void({_CSR}, int64[::1], float64[:, ::1])", cache=True)
def part_weights(indptr, indices, w, labels, S):  # pragma: no cover - compiled
    """Fill ``S`` from scratch for ``labels`` (O(m + nk))."""
    n = S.shape[0]
    S[:, :] = 0.0
    for v in range(n):
        for j in range(indptr[v], indptr[v + 1]):
            S[v, labels[indices[j]]] += w[j]


@numba.njit(f"float64({_CSR}, int64[::1], float64[:, ::1])", cache=True)
def cut_from_parts(indptr, indices, w, labels, S):  # pragma: no cover - compiled
    """Cut value of ``labels`` given its (correct) ``S``: half the weight leaving every node's part."""
    n = S.shape[0]
    total = 0.0
    for v in range(n):
        deg = 0.0
        for j in range(indptr[v], indptr[v + 1]):
            deg += w[j]
        total += deg - S[v, labels[v]]
    return 0.5 * total


@numba.njit(f"void({_CSR}, int64[::1], int64, int64[::1])", cache=True)
def greedy_construct(indptr, indices, w, order, k, labels):  # pragma: no cover - compiled
    """Place the nodes in ``order``, each in the part that maximises the cut so far.

    The cut gained by putting ``v`` in part ``p`` is the weight from ``v`` to
    the already placed nodes outside ``p``, so ``v`` goes to the part ``p``
    with the least weight to placed nodes (ties: the lowest ``p``). Unplaced
    nodes have label -1 while this runs.
    """
    labels[:] = -1
    acc = np.zeros(k)
    for t in range(order.shape[0]):
        v = order[t]
        acc[:] = 0.0
        for j in range(indptr[v], indptr[v + 1]):
            lu = labels[indices[j]]
            if lu >= 0:
                acc[lu] += w[j]
        best_p = 0
        for p in range(1, k):
            if acc[p] < acc[best_p]:
                best_p = p
        labels[v] = best_p


@numba.njit(f"int64({_CSR}, int64[::1], float64[:, ::1], float64)", cache=True)
def one_opt_pass(indptr, indices, w, labels, S, eps):  # pragma: no cover - compiled
    """One pass over the nodes in index order, moving each to its best part if that gains > ``eps``.

    Returns the number of moves; 0 means ``labels`` is a 1-opt local optimum
    (no single-node move gains more than ``eps``).
    """
    n, k = S.shape
    moves = 0
    for v in range(n):
        a = labels[v]
        b = -1
        for p in range(k):
            if p != a and (b < 0 or S[v, p] < S[v, b]):
                b = p
        if b >= 0 and S[v, a] - S[v, b] > eps:
            labels[v] = b
            for j in range(indptr[v], indptr[v + 1]):
                u = indices[j]
                S[u, a] -= w[j]
                S[u, b] += w[j]
            moves += 1
    return moves


@numba.njit(
    f"boolean({_CSR}, int64[::1], float64[:, ::1], int64[:, ::1], int64[::1], float64[::1], int64[::1],"
    " int64, int64, int64, int64, int64, int64, float64)",
    cache=True,
)
def tabu_chunk(
    indptr, indices, w, labels, S, tabu, best_labels, fstate, istate,
    n_iters, tt_min, tt_span, stall, l_min, l_max, eps,
):  # pragma: no cover - compiled
    """Run ``n_iters`` iterations of tabu search with restarts; True if the best cut improved.

    One iteration makes the best one-flip move (largest ``S[v,a] - S[v,b]``,
    ties broken uniformly at random; isolated nodes never move) among the moves that are not tabu, or
    that are tabu but would give a cut better than the best so far
    (aspiration). Moving ``v`` out of part ``a`` forbids moving it back into
    ``a`` for ``tt_min + U{0..tt_span}`` iterations. After ``stall``
    iterations without a new best, the search restarts from the best
    solution with ``strength`` random moves and an empty tabu list;
    ``strength`` starts at ``l_min``, grows by ``l_min`` (up to ``l_max``)
    after every restart that found no new best, and falls back to ``l_min``
    after one that did.

    State that survives between chunks: ``labels``/``S`` (current solution),
    ``tabu[v, p]`` (first iteration at which ``v`` may enter ``p`` again),
    ``best_labels``, ``fstate = [cut, best cut]`` and
    ``istate = [iteration, idle iterations, strength, improved since restart, restarts]``.
    On return ``best_labels`` holds the best solution.
    """
    n, k = S.shape
    cur = fstate[F_CUR]
    best = fstate[F_BEST]
    it = istate[I_IT]
    idle = istate[I_IDLE]
    strength = istate[I_STRENGTH]
    improved_since = istate[I_IMPROVED]
    restarts = istate[I_PERTURBATIONS]
    # at_best: labels is the best solution but best_labels is not updated yet
    # (copying it on every improvement would cost O(n) per step).
    at_best = False
    improved = False
    for _ in range(n_iters):
        if idle > stall:
            if at_best:
                best_labels[:] = labels
                at_best = False
            if improved_since:
                strength = l_min
            else:
                strength = min(strength + l_min, l_max)
            improved_since = 0
            labels[:] = best_labels
            for _t in range(strength):
                v = np.random.randint(0, n)  # noqa: NPY002
                b = np.random.randint(0, k - 1)  # noqa: NPY002
                if b >= labels[v]:
                    b += 1
                labels[v] = b
            part_weights(indptr, indices, w, labels, S)
            cur = cut_from_parts(indptr, indices, w, labels, S)
            tabu[:, :] = 0
            idle = 0
            restarts += 1

        bv = -1
        bb = -1
        bg = -np.inf
        ties = 0
        for v in range(n):
            if indptr[v] == indptr[v + 1]:
                # an isolated node's move changes nothing: as a zero-gain "best" move it
                # would stall the search on a local optimum where every real move loses
                continue
            a = labels[v]
            sa = S[v, a]
            for p in range(k):
                if p == a:
                    continue
                g = sa - S[v, p]
                if tabu[v, p] > it and not (cur + g > best + eps):
                    continue
                if g > bg + eps:
                    bg = g
                    bv = v
                    bb = p
                    ties = 1
                elif g >= bg - eps:
                    ties += 1
                    if np.random.randint(0, ties) == 0:  # noqa: NPY002
                        bv = v
                        bb = p
        if bv < 0:  # every move tabu (only possible with a tenure near n): restart
            idle = stall + 1
            continue
        a = labels[bv]
        g = S[bv, a] - S[bv, bb]
        if at_best and not (cur + g > best + eps):
            best_labels[:] = labels
            at_best = False
        labels[bv] = bb
        for j in range(indptr[bv], indptr[bv + 1]):
            u = indices[j]
            S[u, a] -= w[j]
            S[u, bb] += w[j]
        cur += g
        tabu[bv, a] = it + tt_min + np.random.randint(0, tt_span + 1)  # noqa: NPY002
        it += 1
        idle += 1
        if cur > best + eps:
            best = cur
            at_best = True
            improved = True
            improved_since = 1
            idle = 0
    if at_best:
        best_labels[:] = labels
    fstate[F_CUR] = cur
    fstate[F_BEST] = best
    istate[I_IT] = it
    istate[I_IDLE] = idle
    istate[I_STRENGTH] = strength
    istate[I_IMPROVED] = improved_since
    istate[I_PERTURBATIONS] = restarts
    return improved
