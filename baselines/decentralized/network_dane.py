"""``network-dane``: Network-DANE (Li, Cen, Chen and Chi, 2020), exact local prox with gradient tracking.

Per iteration, one round carries ``[x, s]`` (``2 d`` scalars per node)::

    y_i = sum_j W_ij x_j
    s_i = sum_j W_ij s_j + grad f_i(y_i) - grad f_i(y_i_prev)
    x_i = argmin_x f_i(x) - <grad f_i(y_i) - s_i, x> + (mu / 2) ||x - y_i||^2

The local problem is solved exactly by the task's ``prox`` oracle (counted
as a prox call, not as gradients): this is the exact-prox, DANE-type
method that the similarity literature compares against. ``mu = c L``;
``c = 0.3`` is the smallest of ``{0.1, 0.3, 1, 3}`` that diverged on none of
the standard instances of seed 0 (``scripts/decentralized/tune_steps.py``;
theory asks for ``mu ~ delta``, which the nodes do not know).
"""

from __future__ import annotations

import numpy as np

from bench import method
from common.decentralized.program import NodeProgram, Program, mix, oracle

__all__ = ["NetworkDANE"]


@method(
    name="network-dane",
    kind="baseline",
    tasks=["decentralized-optimization"],
    reference=(
        "B. Li, S. Cen, Y. Chen and Y. Chi, Communication-efficient distributed optimization in networks "
        "with gradient tracking and variance reduction, JMLR 21, 2020"
    ),
    version="1",
    params={"mu": 0.3},
    deterministic=True,
)
class NetworkDANE(NodeProgram):
    """Network-DANE with ``mu = mu_param * L``."""

    def program(self) -> Program:
        d = int(self.data["dim"])
        mu = float(self.params.get("mu", 0.3)) * float(self.data["smoothness"])
        x = np.zeros((self.n, d))
        g_prev = yield oracle("grad", x)
        s = g_prev
        while self.rounds_left > 0:
            m = yield mix(np.hstack([x, s]), report=x)
            y = m[:, :d]
            g = yield oracle("grad", y)
            s = m[:, d:] + g - g_prev
            x = yield oracle("prox", y, shift=g - s, eta=1.0 / mu)
            g_prev = g
        return x
