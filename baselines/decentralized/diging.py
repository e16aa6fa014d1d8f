"""``diging``: gradient tracking (Nedić, Olshevsky and Shi, 2017), one round per iteration.

Each node keeps its iterate ``x_i`` and a tracker ``y_i`` of the average
gradient::

    x+ = W x - alpha y
    y+ = W y + grad f(x+) - grad f(x)

``x`` and ``y`` travel together in one round (``2 d`` scalars per node). The
step ``alpha = step / L``; ``step = 0.0625`` is the largest of the grid
``{1, 0.5, 0.25, 0.125, 0.0625, 0.03125}`` that diverged on none of the
standard instances of seed 0 (``scripts/decentralized/tune_steps.py``; the
larger steps diverge on the rings, whose spectral gap is about 0.05).
"""

from __future__ import annotations

import numpy as np

from bench import method
from common.decentralized.program import NodeProgram, Program, mix, oracle

__all__ = ["DIGing"]


@method(
    name="diging",
    kind="baseline",
    tasks=["decentralized-optimization"],
    reference=(
        "A. Nedić, A. Olshevsky and W. Shi, Achieving geometric convergence for distributed optimization "
        "over time-varying graphs, SIAM J. Optim. 27(4), 2017"
    ),
    version="1",
    params={"step": 0.0625},
    deterministic=True,
)
class DIGing(NodeProgram):
    """Gradient tracking with ``alpha = step / L``."""

    def program(self) -> Program:
        d = int(self.data["dim"])
        alpha = float(self.params.get("step", 0.0625)) / float(self.data["smoothness"])
        x = np.zeros((self.n, d))
        g = yield oracle("grad", x)
        y = g
        while self.rounds_left > 0:
            m = yield mix(np.hstack([x, y]), report=x)
            x = m[:, :d] - alpha * y
            g_new = yield oracle("grad", x)
            y = m[:, d:] + g_new - g
            g = g_new
        return x
