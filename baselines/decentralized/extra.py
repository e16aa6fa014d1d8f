"""``extra``: EXTRA (Shi, Ling, Wu and Yin, 2015) with ``W~ = (I + W) / 2``, one round per iteration::

    x^1   = W x^0 - alpha grad f(x^0)
    x^k+2 = (I + W) x^k+1 - W~ x^k - alpha (grad f(x^k+1) - grad f(x^k))

Since ``W~ x^k = (x^k + W x^k) / 2`` and ``W x^k`` was received in the
previous round, every iteration needs one round only. The step is
``alpha = step / L``; ``step = 0.5`` is the largest of ``{1, 0.5, 0.25}`` that diverged on
none of the standard instances of seed 0 (``scripts/decentralized/tune_steps.py``).
"""

from __future__ import annotations

import numpy as np

from bench import method
from common.decentralized.program import NodeProgram, Program, mix, oracle

__all__ = ["EXTRA"]


@method(
    name="extra",
    kind="baseline",
    tasks=["decentralized-optimization"],
    reference=(
        "W. Shi, Q. Ling, G. Wu and W. Yin, EXTRA: An exact first-order algorithm for decentralized "
        "consensus optimization, SIAM J. Optim. 25(2), 2015"
    ),
    version="1",
    params={"step": 0.5},
    deterministic=True,
)
class EXTRA(NodeProgram):
    """EXTRA with ``alpha = step / L``."""

    def program(self) -> Program:
        d = int(self.data["dim"])
        alpha = float(self.params.get("step", 0.5)) / float(self.data["smoothness"])
        x_prev = np.zeros((self.n, d))
        g_prev = yield oracle("grad", x_prev)
        wx_prev = yield mix(x_prev, report=x_prev)
        x = wx_prev - alpha * g_prev
        while self.rounds_left > 0:
            g = yield oracle("grad", x)
            wx = yield mix(x, report=x)
            x, x_prev = x + wx - 0.5 * (x_prev + wx_prev) - alpha * (g - g_prev), x
            wx_prev, g_prev = wx, g
        return x
