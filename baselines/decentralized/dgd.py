"""``dgd``: decentralized gradient descent (Nedić and Ozdaglar, 2009), adapt-then-combine form.

Each iteration is one local gradient call and one gossip round::

    x_i <- sum_j W_ij (x_j - alpha grad f_j(x_j))

With a constant step DGD converges only to an ``O(alpha)`` neighbourhood of
the optimum; that is the reason exact methods (DIGing, EXTRA) exist, and why
it is here: the floor of the simplest method.
"""

from __future__ import annotations

import numpy as np

from bench import method
from common.decentralized.program import NodeProgram, Program, mix, oracle

__all__ = ["DGD"]


@method(
    name="dgd",
    kind="baseline",
    tasks=["decentralized-optimization"],
    reference="A. Nedić and A. Ozdaglar, Distributed subgradient methods for multi-agent optimization, IEEE TAC 54(1), 2009",
    version="1",
    params={"step": 1.0},
    deterministic=True,
)
class DGD(NodeProgram):
    """Step ``alpha = step / L`` with ``L`` the public smoothness bound (``step=1``)."""

    def program(self) -> Program:
        x = np.zeros((self.n, int(self.data["dim"])))
        alpha = float(self.params.get("step", 1.0)) / float(self.data["smoothness"])
        while self.rounds_left > 0:
            g = yield oracle("grad", x)
            x = yield mix(x - alpha * g, report=x)
        return x
