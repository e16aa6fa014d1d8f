"""``cp-centralized``: centralised split CP, paid for by flooding every score over the graph.

Every device floods its ``n_k`` scores (``diameter`` rounds of ``N + K``
scalars per node, counted by the simulator), then computes split CP on the
pooled scores: the ``ceil((N + 1)(1 - alpha))``-th smallest of all ``N``. Every
device ends with the task's centralised reference threshold exactly: the
oracle row, at the real price of gathering the data on this graph (the
papers' schemes exist to avoid that price, and the sharing of raw scores).
"""

from __future__ import annotations

import numpy as np

from bench import method
from common.decentralized.flooding import flood
from common.decentralized.program import NodeProgram, Program
from tasks.decentralized.conformal.scores import split_cp_rank

__all__ = ["CentralizedCP"]


@method(
    name="cp-centralized",
    kind="baseline",
    tasks=["conformal-decentralized"],
    reference="split conformal prediction on the pooled scores (V. Vovk et al., 2005; A. Angelopoulos and S. Bates, 2023), gathered by flooding",
    version="1",
    params={},
    deterministic=True,
)
class CentralizedCP(NodeProgram):
    """No parameters: flood, then pooled split CP at every device."""

    def program(self) -> Program:
        scores = np.asarray(self.data["scores"], dtype=np.float64)  # node k: row k
        table = yield from flood(self.data, scores)  # (K, K, n): every device's copy of every row
        alpha = float(self.data["alpha"])
        q = np.empty(self.n)
        for k in range(self.n):
            v = np.sort(table[k].ravel())
            r = split_cp_rank(v.size, alpha)
            q[k] = v[r - 1] if r <= v.size else 1.0
        return q[:, None]
