"""Herding: pick ``k`` rows greedily so that their running mean tracks a target (method-side code).

``gm-matching`` herds toward the geometric median, ``herding-mean`` toward the
empirical mean; both use this one step, so that they differ only in the target.
"""

from __future__ import annotations

import numpy as np

__all__ = ["herd"]


def herd(X: np.ndarray, target: np.ndarray, k: int, *, score: str) -> np.ndarray:
    """``k`` distinct rows of ``X`` chosen greedily so that their mean tracks ``target``."""
    theta = target.astype(np.float64).copy()
    half_sq = 0.5 * np.einsum("ij,ij->i", X, X) if score == "greedy" else np.zeros(len(X))
    taken = np.zeros(len(X), dtype=bool)
    out = np.empty(k, dtype=np.int64)
    for t in range(k):
        s = X @ theta - half_sq
        s[taken] = -np.inf
        i = int(np.argmax(s))
        out[t] = i
        taken[i] = True
        theta += target - X[i]
    return out
