"""``h-dcp``: histogram-based distributed conformal prediction (Wen, Xing and Simeone, ICML 2025).

Each device quantises its calibration scores to ``M`` levels, forms the
normalised histogram ``p_k = (K / N) counts_k`` (``M + 1`` bins), and the
devices run ``T`` rounds of plain gossip ``p <- W p``; at consensus every
device holds the pooled histogram. Device ``k`` then reads the smallest level
``S_m`` whose cumulative mass reaches ``ceil((1 - alpha)(N + K)) / N + eps``,
where the consensus error bound

    eps = K sqrt(2 K M) (1 - rho)^T / N * sqrt(max_k (n_k^2 + mean(n^2)))

uses the spectral gap ``rho`` of ``W``. As in the official code
(``src/Decentralized_CP_NonIID.py``, ``get_decentralized_quantile`` and
``get_decentralized_coverage_size_over_alphas``): quantisation rounds a score
up to the next level (``S_{m-1} < s <= S_m -> S_m``, ``s <= S_1 -> S_1``),
``gamma = 1``, ``M = 1000``, ``T = 150`` (the notebook ``H-DCP.ipynb``), the
``(N + K)`` rank for both splits.

Every round the program reports the thresholds the devices would return if
stopped then (with that round's ``eps``), so the task can read off the rounds
until coverage is near the centralised one.

Deviations
----------
- Levels ``S = linspace(0, 1, M + 1)`` (the LAC score range; the official
  code's commented-out alternative) instead of ``linspace(min, max, M + 1)``
  of the pooled *softmax matrix*, which no device knows without a global
  step. On scores whose softmax range is [~0, ~1] the two grids differ by
  less than ``1e-3`` of a level (README, side-by-side).
- Prediction sets are formed by the task from unquantised test scores
  ``s <= q_k``; the official code quantises the test softmax probabilities
  (``Q(p) >= 1 - q``). With round-up quantisation of the scores and a
  threshold on the grid the two coincide; quantising ``p`` instead of ``s``
  differs only on test points within one level of the threshold.
- The official evaluation draws, for each test point, a random device whose
  threshold it uses; the task scores every device on the whole test set.
- Ties between a cumulative mass and ``level + eps`` are decided as in
  exact arithmetic once ``eps < 1e-12`` (see :func:`read_thresholds`); the
  official ``np.sum(p[:m]) >= target`` lets float rounding decide them
  (a complete graph, where one round is exact averaging and ``eps = 0``,
  or a torus after 150 rounds, ``eps ~ 1e-30``).
- ``N``, ``K`` and every ``n_k`` (for ``eps``) are read from the public
  ``calib_sizes``, as the official code reads them from the pooled data.
"""

from __future__ import annotations

import numpy as np

from bench import method
from common.decentralized.program import NodeProgram, Program, mix

__all__ = ["HDCP", "levels", "local_histograms", "consensus_bound", "read_thresholds"]


def levels(m: int) -> np.ndarray:
    """The ``M + 1`` quantisation levels ``S_0 = 0 < ... < S_M = 1``."""
    return np.linspace(0.0, 1.0, m + 1)


def local_histograms(scores: np.ndarray, grid: np.ndarray, n_total: int) -> np.ndarray:
    """``(K, M + 1)``: ``(K / N)`` times each device's count of scores quantised to each level (row ``k`` from row ``k``)."""
    k = scores.shape[0]
    idx = np.maximum(np.searchsorted(grid, scores, side="left"), 1)  # smallest m >= 1 with s <= S_m
    counts = np.stack([np.bincount(row, minlength=grid.size) for row in idx]).astype(np.float64)
    return k / n_total * counts


def consensus_bound(k: int, m: int, rounds: int, gap: float, sizes: np.ndarray) -> float:
    """The official ``eps`` after ``rounds`` gossip rounds (``sizes``: every ``n_k``)."""
    n = float(sizes.sum())
    spread = np.sqrt(np.max(sizes.astype(np.float64) ** 2 + np.mean(sizes.astype(np.float64) ** 2)))
    return float(k * np.sqrt(2 * k * m) * np.power(1.0 - gap, rounds) / n * spread)


#: Below this, a difference between a cumulative mass and the level is float noise: at
#: (near) consensus both are multiples of 1/N, and the sums' rounding would decide ties.
TIE_TOL = 1e-12


def read_thresholds(hist: np.ndarray, grid: np.ndarray, level: float, eps: float) -> np.ndarray:
    """Each row's smallest level ``S_m`` whose cumulative mass reaches ``level + eps`` (``S_M`` if none).

    Ties are decided as in exact arithmetic: with ``eps = 0`` a mass equal to
    ``level`` (within :data:`TIE_TOL`) reaches it; with ``0 < eps < TIE_TOL``
    it does not; above, the plain float test ``mass >= level + eps`` (the official one).
    """
    cs = np.cumsum(hist, axis=1)
    if eps == 0.0:
        reach = cs >= level - TIE_TOL
    elif eps < TIE_TOL:
        reach = cs >= level + TIE_TOL
    else:
        reach = cs >= level + eps
    j = np.where(reach.any(axis=1), np.argmax(reach, axis=1), grid.size - 1)
    return grid[j]


@method(
    name="h-dcp",
    kind="method",
    tasks=["conformal-decentralized"],
    reference="H. Wen, H. Xing and O. Simeone, Distributed Conformal Prediction via Message Passing, ICML 2025 (H-DCP)",
    version="1",
    params={"levels": 1000, "rounds": 150},
    deterministic=True,
    deviations=(
        "Levels linspace(0, 1, M+1) instead of linspace(min, max, M+1) of the pooled calibration softmax matrix "
        "(a global quantity); ties between a cumulative mass and the target decided as in exact arithmetic once "
        "eps < 1e-12 (the official float test lets rounding decide); sets formed by the task from unquantised "
        "test scores, every device scored on the whole test set (the official evaluation quantises test "
        "probabilities and gives each test point a random device); N and every n_k public."
    ),
)
class HDCP(NodeProgram):
    """``levels`` = M quantisation levels, ``rounds`` = T gossip rounds (the official defaults)."""

    def program(self) -> Program:
        m = int(self.params.get("levels", 1000))
        t_max = int(self.params.get("rounds", 150))
        k = self.n
        sizes = np.asarray(self.data["calib_sizes"])
        n_total = int(sizes.sum())
        alpha = float(self.data["alpha"])
        gap = float(self.data["spectral_gap"])
        level = np.ceil((1 - alpha) * (n_total + k)) / n_total  # 1 - alpha_tilde, as the official code writes it
        grid = levels(m)
        x = local_histograms(np.asarray(self.data["scores"], dtype=np.float64), grid, n_total)
        done = 0
        for t in range(min(t_max, self.rounds_left)):
            q = read_thresholds(x, grid, level, consensus_bound(k, m, t, gap, sizes))
            x = yield mix(x, report=q[:, None])
            done = t + 1
        q = read_thresholds(x, grid, level, consensus_bound(k, m, done, gap, sizes))
        return q[:, None]
