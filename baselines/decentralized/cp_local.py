"""``cp-local``: split conformal prediction on each device's own scores, no communication.

Device ``k`` returns the ``ceil((n_k + 1)(1 - alpha))``-th smallest of its own
``n_k`` scores (1, the largest LAC score, when that rank exceeds ``n_k``). Its
coverage is valid for the device's own distribution, not the pooled one: on a
non-IID split a device that saw only easy classes under-covers the test set,
and with few points per device the sets are large (or the whole label set).
The floor a distributed scheme must beat.
"""

from __future__ import annotations

import numpy as np

from bench import method
from common.decentralized.program import NodeProgram, Program
from tasks.decentralized.conformal.scores import split_cp_rank

__all__ = ["LocalCP", "local_thresholds"]


def local_thresholds(scores: np.ndarray, alpha: float) -> np.ndarray:
    """``(K,)``: split CP's threshold of each row of ``scores`` alone (1.0 when the rank exceeds ``n``)."""
    v = np.sort(np.asarray(scores, dtype=np.float64), axis=1)
    r = split_cp_rank(v.shape[1], alpha)
    return v[:, r - 1] if r <= v.shape[1] else np.ones(v.shape[0])


@method(
    name="cp-local",
    kind="baseline",
    tasks=["conformal-decentralized"],
    reference="V. Vovk, A. Gammerman and G. Shafer, Algorithmic Learning in a Random World, 2005 (split CP, per device)",
    version="1",
    params={},
    deterministic=True,
)
class LocalCP(NodeProgram):
    """No rounds: each device's split CP threshold on its own scores."""

    def program(self) -> Program:
        q = local_thresholds(self.data["scores"], float(self.data["alpha"]))
        return q[:, None]
        yield  # a generator with no rounds
