"""The estimators' arithmetic, shared by the method and the baselines (no oracle access here)."""

from __future__ import annotations

import numpy as np

from common.nested.kq import kq_estimate

__all__ = ["lam_rule", "inner_kq", "inner_mc"]


def lam_rule(lam0: float, n: int, d: int) -> float:
    """``lam = lam0 * n^(-2/d)``: the official toy.py scaling (``args.lmbda * N ** (-2 / d)``)."""
    return float(lam0) * float(n) ** (-2.0 / d)


def inner_kq(
    parts: list[tuple[np.ndarray, np.ndarray]], base: str, ls: float, lam0: float
) -> np.ndarray:
    """KQ estimate of each inner conditional expectation from its ``(e, g)`` samples."""
    out = np.empty(len(parts))
    for i, (e, g) in enumerate(parts):
        out[i] = kq_estimate(e, g, base, ls, lam_rule(lam0, len(g), e.shape[1]))
    return out


def inner_mc(parts: list[tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
    """Sample mean of each inner batch."""
    return np.array([float(np.mean(g)) for _, g in parts])
