"""Self-play solvers for a symmetric equilibrium of a count-form symmetric game (the prior meta-algorithms).

- :func:`replicator`: Euler steps of the replicator dynamics,
  ``y <- y + dt * y * (u(.; y) - u(y; y))`` (``dt = 0.5``, 5 000 steps),
  from a given start; every player is a copy of ``y`` (self-play).
- :func:`fictitious_play`: symmetric fictitious play: every round all copies
  best respond to the empirical average of past play (ties to the lowest
  action), 5 000 rounds; returns the average (the part of play that converges).
- :func:`exploitability`: ``max_a u(a; y) - u(y; y)``, to check that a
  solution is an approximate symmetric equilibrium.
"""

from __future__ import annotations

import numpy as np

from tasks.symmetric_games.games import expected_payoffs

__all__ = ["replicator", "fictitious_play", "exploitability", "best_response"]


def replicator(
    table: np.ndarray, comps: np.ndarray, y0: np.ndarray, steps: int = 5000, dt: float = 0.5
) -> np.ndarray:
    y = np.asarray(y0, dtype=float).copy()
    for _ in range(steps):
        v = expected_payoffs(table, comps, y[None])[0]
        y = y + dt * y * (v - y @ v)
        y = np.maximum(y, 0.0)
        y /= y.sum()
    return y


def best_response(table: np.ndarray, comps: np.ndarray, y: np.ndarray) -> np.ndarray:
    v = expected_payoffs(table, comps, np.asarray(y)[None])[0]
    b = np.zeros(table.shape[0])
    b[int(np.argmax(v))] = 1.0
    return b


def fictitious_play(
    table: np.ndarray, comps: np.ndarray, y0: np.ndarray, steps: int = 5000
) -> np.ndarray:
    avg = np.asarray(y0, dtype=float).copy()
    for t in range(1, steps + 1):
        avg += (best_response(table, comps, avg) - avg) / (t + 1)
    return avg


def exploitability(table: np.ndarray, comps: np.ndarray, y: np.ndarray) -> float:
    v = expected_payoffs(table, comps, np.asarray(y)[None])[0]
    return float(v.max() - y @ v)
