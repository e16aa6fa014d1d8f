"""plain-walk: the same iterated partial colouring without the paper's speed-ups (Larsen's cost).

The walk of :func:`common.discrepancy.walk.iterated_colouring` with
``rows="exact"`` (ProjectToSmallRows from the exact residual row norms
``||A_S (I - Q^T Q)||``, ``O(m n^2)``), ``basis="svd"`` (the exact top
eigenvectors of ``B^T B`` for the heavy rows ``B``, Larsen's step, where the
method uses the leverage-score sample) and ``engine="qr"`` (the projection
recomputed by a pivoted QR of the constraint rows restricted to the free
coordinates every time a coordinate freezes, ``O(n^4)`` over a round). Every
other parameter is the method's (``fast-walk``): the same rounds, row count
``d = floor(n'/4)``, batches, step rule and Gaussian streams, so the two
differ only in the sketch (which rows are chosen), the leverage-score sample
(which directions are added) and in time. With the same
row choice the two engines take the same path (tests/test_discrepancy.py).
"""

from __future__ import annotations

import numpy as np

from bench import method
from common.discrepancy.walk import iterated_colouring
from tasks.discrepancy import matrix

__all__ = ["solve"]


@method(
    name="plain-walk",
    kind="baseline",
    tasks=["discrepancy"],
    reference="Larsen (SODA 2023) / Lovett-Meka partial colouring as fast-walk runs it, without sketch or lazy projection",
    version="2",
    deterministic=True,
)
def solve(instance, *, seed: int, budget: float) -> np.ndarray:
    """Signs from the exact-row-norm, QR-per-step iterated partial colouring."""
    x, _ = iterated_colouring(matrix(instance.data), seed, rows="exact", engine="qr", basis="svd")
    return x
