"""Privacy accounting helpers: zero-concentrated DP (zCDP) and its conversion to (epsilon, delta).

Bun and Steinke (2016): the Gaussian mechanism with l2 sensitivity ``Delta`` and
noise ``sigma`` is ``Delta^2 / (2 sigma^2)``-zCDP; zCDP composes by adding
``rho``; ``rho``-zCDP implies ``(rho + 2 sqrt(rho log(1/delta)), delta)``-DP; an
``epsilon``-DP mechanism (the exponential mechanism) is ``epsilon^2 / 2``-zCDP,
and ``epsilon^2 / 8``-zCDP for the exponential mechanism (Cesar and Rogers 2021,
bounded range).
"""

from __future__ import annotations

import math

__all__ = ["rho_for", "epsilon_of", "gaussian_sigma"]


def rho_for(epsilon: float, delta: float) -> float:
    """The largest ``rho`` whose zCDP guarantee converts to ``(epsilon, delta)``-DP."""
    if not (epsilon > 0 and 0 < delta < 1):
        raise ValueError(f"need epsilon > 0 and 0 < delta < 1, got ({epsilon}, {delta})")
    L = math.log(1.0 / delta)
    root = -math.sqrt(L) + math.sqrt(L + epsilon)
    return root * root


def epsilon_of(rho: float, delta: float) -> float:
    """``epsilon`` of ``rho``-zCDP at ``delta``: ``rho + 2 sqrt(rho log(1/delta))``."""
    return rho + 2.0 * math.sqrt(rho * math.log(1.0 / delta))


def gaussian_sigma(sensitivity: float, rho: float) -> float:
    """Noise standard deviation of a Gaussian mechanism that is ``rho``-zCDP at l2 ``sensitivity``."""
    return sensitivity / math.sqrt(2.0 * rho)
