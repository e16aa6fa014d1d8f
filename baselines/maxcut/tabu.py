"""``tabu``: one-flip tabu search with restarts for Max-k-Cut, in the style of BLS and MOH."""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from baselines.maxcut import _kernels as K
from baselines.maxcut._graph import Deadline, Graph, Reporter, cut_value, read, supports_k
from baselines.maxcut.greedy import greedy_one_opt
from bench.registry import method

__all__ = ["solve_tabu", "TabuState"]

#: Target duration of one numba chunk between time checks (seconds).
CHUNK_S = 0.05


class TabuState:
    """The arrays :func:`baselines.maxcut._kernels.tabu_chunk` works on, for one graph.

    ``labels``/``S`` are the current solution and its part weights,
    ``best_labels`` the best solution, ``tabu[v, p]`` the first iteration at
    which ``v`` may enter part ``p`` again.
    """

    def __init__(self, g: Graph, labels: np.ndarray, strength: int) -> None:
        self.g = g
        self.labels = np.ascontiguousarray(labels, dtype=np.int64).copy()
        self.S = np.empty((g.n, g.k), dtype=np.float64)
        K.part_weights(g.indptr, g.indices, g.adj_w, self.labels, self.S)
        self.tabu = np.zeros((g.n, g.k), dtype=np.int64)
        self.best_labels = self.labels.copy()
        cut = K.cut_from_parts(g.indptr, g.indices, g.adj_w, self.labels, self.S)
        self.fstate = np.array([cut, cut], dtype=np.float64)
        self.istate = np.zeros(5, dtype=np.int64)
        self.istate[K.I_STRENGTH] = strength

    def run(self, iters: int, tt_min: int, tt_span: int, stall: int, l_min: int, l_max: int) -> bool:
        g = self.g
        return bool(
            K.tabu_chunk(
                g.indptr, g.indices, g.adj_w, self.labels, self.S, self.tabu, self.best_labels,
                self.fstate, self.istate, iters, tt_min, tt_span, stall, l_min, l_max, g.eps,
            )
        )

    @property
    def best(self) -> float:
        return float(self.fstate[K.F_BEST])

    @property
    def iterations(self) -> int:
        return int(self.istate[K.I_IT])


def _settings(n: int, k: int, tt_min: int, tt_max_frac: float, stall_factor: float, strength_frac: float) -> tuple[int, int, int, int, int]:
    """Tenure range, stall length and restart strengths for an n-node graph with k parts."""
    # A tabu entry blocks one of the k - 1 destinations of a node, so the
    # tenure grows with k - 1 (k=3 and 4 did better with it on G1, G6, G11).
    tt_span = max(1, int(tt_max_frac * n * (k - 1)))
    stall = max(1000, int(stall_factor * n))
    l_min = max(2, int(round(strength_frac * n)))
    l_max = max(l_min, n // 4)
    return tt_min, tt_span, stall, l_min, l_max


@method(
    name="tabu",
    kind="baseline",
    tasks=["maxcut"],
    reference=(
        "one-flip tabu search in the style of Breakout Local Search (U. Benlic and J.-K. Hao, "
        "EAAI 26(3):1162-1173, 2013) and MOH (F. Ma and J.-K. Hao, A multiple search operator "
        "heuristic for the max-k-cut problem, Ann. Oper. Res. 248:365-403, 2017)"
    ),
    version="1",
    params={"tt_min": 3, "tt_max_frac": 0.1, "stall_factor": 1000.0, "strength_frac": 0.02},
    # Anytime: it runs until the budget, so where it stops depends on the machine.
    deterministic=False,
    supports=lambda inst: supports_k(inst, None, "tabu"),
    # smoke: its time is its protocol (it runs until 90% of the budget); 8 s keeps the smoke tier short
    budgets={"smoke": 8.0, "standard": 10.0, "full": 60.0},
    deviations=(
        "not BLS or MOH themselves: a single tabu one-flip operator with elite restarts, no swap "
        "moves; tenure range [3, 3 + n/10 (k-1)] (the n/10 as recalled from BLS/MOH, UNVERIFIED; "
        "the (k-1) factor, stall 1000 n and strength 0.02 n tuned here on G1-G11); starts from "
        "greedy-1opt"
    ),
)
def solve_tabu(
    instance: Any,
    *,
    seed: int,
    budget: float,
    tt_min: int = 3,
    tt_max_frac: float = 0.1,
    stall_factor: float = 1000.0,
    strength_frac: float = 0.02,
) -> np.ndarray:
    """Tabu search over one-node moves with incremental gains, restarted from the best when stuck.

    Start: ``greedy-1opt`` (same seed). Each iteration makes the best move of
    one node to another part (gain ``S[v,a] - S[v,b]`` from an n x k table of
    part weights, updated in O(deg) per move; ties uniformly at random;
    nodes without edges never move, since their zero-gain moves would stall
    the search, see ``baselines/maxcut/README.md``),
    skipping tabu moves unless they beat the best cut found (aspiration).
    After node ``v`` leaves part ``a`` it may not re-enter ``a`` for
    ``tt_min + U{0..tt_max_frac * n * (k-1)}`` iterations (a fresh random
    tenure per move, as BLS and MOH draw theirs). After ``stall_factor * n`` (at least
    1000) iterations without a new best, the search restarts from the best
    solution perturbed by ``strength`` random moves with an empty tabu list:
    ``strength`` starts at ``strength_frac * n`` (at least 2), grows by that
    much after each restart that found nothing (at most n/4), and is reset
    after one that found a new best. It runs until 90% of the budget and
    returns the best labelling; improvements are reported with
    :func:`bench.checkpoint` at most every 0.2 s. Any k >= 2, any edge signs.

    Parameters (defaults): ``tt_min`` 3 and ``tt_max_frac`` 0.1: for k = 2
    the tenure range ``[3, 3 + n/10]``, the range BLS and MOH use as far as
    we recall (UNVERIFIED against the papers). The ``(k-1)`` factor is ours:
    a tabu entry blocks one of ``k-1`` destinations, and k=3 did better with
    it on G1, G6 and G11. ``stall_factor`` 1000 and ``strength_frac`` 0.02
    were tuned here, with 4-5 s runs and 1-2 seeds on G1, G6-G11 (k=2) and
    G1, G6, G11 (k=3) only: restarting after 10 n to 100 n idle iterations
    did worse on G6-G10, and no restarts at all did about as well in those
    5 s runs.

    Deviations from BLS/MOH: this is not either algorithm. BLS alternates
    steepest descent with adaptive directed/random perturbations of a jump
    magnitude, MOH combines five operators (1-move and swap descent, tabu
    1-move and swap, random perturbation) for k in [2, 5]. Here there is one
    tabu 1-move search with elite restarts, and no swap moves.
    """
    deadline = Deadline(budget)
    g = read(instance)
    rng_seed = int(np.random.default_rng(seed).integers(2**62))
    K.seed_rng(rng_seed)
    labels, _, _ = greedy_one_opt(g, seed, deadline)
    tt_min, tt_span, stall, l_min, l_max = _settings(g.n, g.k, tt_min, tt_max_frac, stall_factor, strength_frac)
    state = TabuState(g, labels, l_min)
    reporter = Reporter()
    reporter.offer(state.best_labels, state.best)
    iters = 200
    while (left := deadline.left()) > 0:
        t0 = time.monotonic()
        if state.run(iters, tt_min, tt_span, stall, l_min, l_max):
            reporter.offer(state.best_labels, state.best)
        else:
            reporter.poll()
        dt = time.monotonic() - t0
        # Next chunk: about CHUNK_S seconds, never past the deadline.
        rate = iters / max(dt, 1e-6)
        iters = int(max(10, min(rate * min(CHUNK_S, max(left - dt, 0.0)), 4 * iters)))
    best = state.best_labels.copy()
    # The kernel's running cut drifts with float weights; rounding errors cannot change labels.
    assert abs(cut_value(g, best) - state.best) <= 1e-6 * (1 + abs(state.best))
    return best
