"""One-vs-rest margin scores of DIRECT's 1-D reduction, shared by DIRECT and GALAXY.

Both strategies sort the pool by these scores, one linear graph per class (LabelBench's
``strategy_impl/direct.py`` and ``galaxy.py``), so the score lives here rather than in
either's module.
"""

from __future__ import annotations

import numpy as np

__all__ = ["direct_margins"]


def direct_margins(proba: np.ndarray) -> np.ndarray:
    """Scores ``(n, K)``: ``p_k - max p`` plus the official tie-break."""
    mc = proba.max(axis=1, keepdims=True)
    tb = mc if proba.shape[1] > 2 else proba[:, 0:1]
    return proba - mc + 1e-8 * tb
