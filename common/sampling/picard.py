"""Euler-Picard sweeps for the overdamped Langevin diffusion ``dX = -grad V(X) dt + sqrt(2) dB``.

A window ``[0, h]`` is cut into ``M`` sub-steps of length ``delta = h / M``. With the
Brownian increments ``xi_m ~ N(0, delta I)`` fixed, the Euler trajectory is the fixed point
of the Picard map

    X[m] = X[0] - delta * sum_{i < m} grad V(X[i]) + sqrt(2) * sum_{i < m} xi_i,   m = 0..M,

and one sweep needs ``grad V`` at ``X[0..M-1]`` only, all of them at once: one adaptive round.
"""

from __future__ import annotations

import numpy as np

__all__ = ["picard_sweep", "brownian"]


def brownian(rng: np.random.Generator, M: int, n: int, d: int, delta: float) -> np.ndarray:
    """``sqrt(2) * cumsum(xi)`` with a leading zero: ``(M + 1, n, d)``."""
    xi = rng.standard_normal((M, n, d)) * np.sqrt(2.0 * delta)
    out = np.zeros((M + 1, n, d))
    np.cumsum(xi, axis=0, out=out[1:])
    return out


def picard_sweep(start: np.ndarray, G: np.ndarray, noise: np.ndarray, delta: float) -> np.ndarray:
    """The new trajectory ``(M + 1, n, d)`` from the start ``(n, d)``, the gradients ``G`` at the
    old trajectory's first ``M`` points ``(M, n, d)`` and the cumulated noise ``(M + 1, n, d)``."""
    out = np.empty_like(noise)
    out[0] = 0.0
    np.cumsum(G, axis=0, out=out[1:])
    out *= -delta
    out += noise
    out += start[None]
    return out
