"""The task's private query batch and the scores computed from a method's predictions.

After the method has fitted (round 1 of the protocol), the task draws one query batch
with its own randomness, ``numpy.random.default_rng([seed, <the instance's query key>])``,
and sends its rows shuffled, so the method cannot tell a test row from a check row. The
query key is a private integer drawn from the instance's generation seed (secret on the
holdout tier); version 1 used the instance digest, whose last bits (and so the whole
batch) depended on the CPU that generated the floats:

- the test rows and the extrapolation rows of the instance (labels stay private);
- ``N_PAIRS`` monotonicity pairs per monotone column ``j``: an anchor ``x`` (a test or
  extrapolation row, uniformly) and ``x + delta e_j`` with
  ``delta ~ U[0.01, 0.5] * span_j``, ``span_j`` the training range of column ``j``;
- a grid per monotone column: ``N_GRID_ANCHORS`` test rows with column ``j`` replaced by
  ``N_GRID`` equally spaced values from ``min_j - 0.3 span_j`` to ``max_j + 0.3 span_j``
  (training minimum and maximum), the other columns fixed.

A *violation* is a pair, or a consecutive grid step, over which the prediction moves
against the declared direction ``s`` by more than the float tolerance:
``s (f(b) - f(a)) < -TOL_REL (1 + |f(a)| + |f(b)|)`` with ``TOL_REL = 1e-5``. The
tolerance only absorbs float32 rounding (a network that is monotone in exact arithmetic
can move by a few units in the last place when the library sums rows in another order).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = [
    "Queries",
    "make_queries",
    "violations",
    "TOL_REL",
    "N_PAIRS",
    "N_GRID",
    "N_GRID_ANCHORS",
]

N_PAIRS = 150
N_GRID = 40
N_GRID_ANCHORS = 10
TOL_REL = 1e-5
#: The grid runs this fraction of the training span past each end of the training range.
GRID_MARGIN = 0.3


@dataclass(frozen=True)
class Queries:
    """One query batch. ``X`` is what the method sees (rows in the shuffled order ``perm``).

    Row blocks of the unshuffled batch ``X0 = X[argsort(perm)]``: ``test``, ``extrap``,
    then per monotone column ``k`` its pair starts, its pair ends and its grid
    (``N_GRID_ANCHORS * N_GRID`` rows, anchor-major).
    """

    X: np.ndarray
    perm: np.ndarray
    n_test: int
    n_extrap: int
    mono: list[int]
    direction: list[int]

    def unshuffle(self, pred: np.ndarray) -> np.ndarray:
        """Predictions of the shuffled rows, put back in the order of the blocks."""
        out = np.empty_like(pred)
        out[self.perm] = pred
        return out


def query_key(kind: str, n: int, seed: int) -> int:
    """The private query key of an instance: an integer from its generation fields only.

    Integers, not floats, so that every CPU draws the same batch (the digest of
    generated float data is not the same on every CPU).
    """
    name = np.frombuffer(kind.encode(), dtype=np.uint8).astype(np.uint64)
    return int(np.random.SeedSequence([int(seed), int(n), *name.tolist(), 0x6D6F6E6F]).generate_state(1, np.uint64)[0])


def make_queries(
    X_train: np.ndarray,
    X_test: np.ndarray,
    X_extrap: np.ndarray,
    mono: list[int],
    direction: list[int],
    seed: int,
    key: int,
) -> Queries:
    """Draw the query batch of one job (deterministic in ``seed`` and the instance's query ``key``)."""
    rng = np.random.default_rng([seed, key])
    anchors = np.vstack([X_test, X_extrap])
    lo, hi = X_train.min(axis=0), X_train.max(axis=0)
    span = np.where(hi > lo, hi - lo, 1.0)
    blocks = [X_test, X_extrap]
    for j in mono:
        a = anchors[rng.integers(len(anchors), size=N_PAIRS)].copy()
        b = a.copy()
        b[:, j] += rng.uniform(0.01, 0.5, size=N_PAIRS) * span[j]
        g = np.repeat(
            X_test[rng.choice(len(X_test), size=N_GRID_ANCHORS, replace=False)], N_GRID, axis=0
        )
        g[:, j] = np.tile(
            np.linspace(lo[j] - GRID_MARGIN * span[j], hi[j] + GRID_MARGIN * span[j], N_GRID),
            N_GRID_ANCHORS,
        )
        blocks += [a, b, g]
    X0 = np.vstack(blocks)
    perm = rng.permutation(len(X0))  # shuffled row i is unshuffled row perm[i]
    return Queries(X0[perm], perm, len(X_test), len(X_extrap), list(mono), list(direction))


@dataclass(frozen=True)
class Violations:
    """Counts and the first offending pair or grid step (for the InvalidSolution message)."""

    pairs: int
    pair_checks: int
    steps: int
    step_checks: int
    worst: float  # largest move against the direction, in output units (0 if none)
    first: str  # description of the first violation, "" if none


def violations(q: Queries, f0: np.ndarray, feature_names: list[str]) -> Violations:
    """Count the pairs and grid steps where the unshuffled predictions ``f0`` break monotonicity."""
    at = q.n_test + q.n_extrap
    pairs = steps = 0
    worst = 0.0
    first = ""
    for j, s in zip(q.mono, q.direction, strict=True):
        fa, fb = f0[at : at + N_PAIRS], f0[at + N_PAIRS : at + 2 * N_PAIRS]
        at += 2 * N_PAIRS
        fg = f0[at : at + N_GRID_ANCHORS * N_GRID].reshape(N_GRID_ANCHORS, N_GRID)
        at += N_GRID_ANCHORS * N_GRID
        move = s * (fb - fa)
        bad = move < -TOL_REL * (1 + np.abs(fa) + np.abs(fb))
        pairs += int(bad.sum())
        if bad.any():
            worst = max(worst, float(-move[bad].min()))
            if not first:
                i = int(np.flatnonzero(bad)[0])
                first = (
                    f"feature {feature_names[j]!r} (column {j}, declared {'increasing' if s > 0 else 'decreasing'}): "
                    f"pair {i} moves the prediction from {fa[i]:.9g} to {fb[i]:.9g} when column {j} grows"
                )
        gmove = s * np.diff(fg, axis=1)
        gbad = gmove < -TOL_REL * (1 + np.abs(fg[:, 1:]) + np.abs(fg[:, :-1]))
        steps += int(gbad.sum())
        if gbad.any():
            worst = max(worst, float(-gmove[gbad].min()))
            if not first:
                r, c = (int(v) for v in np.argwhere(gbad)[0])
                first = (
                    f"feature {feature_names[j]!r} (column {j}, declared {'increasing' if s > 0 else 'decreasing'}): "
                    f"grid anchor {r}, step {c} -> {c + 1} moves the prediction from {fg[r, c]:.9g} to {fg[r, c + 1]:.9g}"
                )
    n = len(q.mono)
    return Violations(pairs, n * N_PAIRS, steps, n * N_GRID_ANCHORS * (N_GRID - 1), worst, first)
