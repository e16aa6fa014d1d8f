"""``cp-gossip-quantile``: gossip averaging of the devices' local split CP thresholds.

Each device computes its own split CP threshold (as ``cp-local``), then ``T``
rounds of ``q <- W q`` drive every device to the average of the local
thresholds. The average of quantiles is not the quantile of the pooled
scores: on a non-IID split it can under- or over-cover, and no correction
makes it valid. The cheapest message-passing answer (one scalar per round),
so the reference point for what the papers' schemes pay for validity.
``T = 150`` as H-DCP's default.
"""

from __future__ import annotations

import numpy as np

from bench import method
from common.decentralized.program import NodeProgram, Program, mix
from tasks.decentralized.conformal.scores import split_cp_rank

__all__ = ["GossipQuantile"]


@method(
    name="cp-gossip-quantile",
    kind="baseline",
    tasks=["conformal-decentralized"],
    reference="gossip averaging (S. Boyd et al., Randomized gossip algorithms, IEEE TIT 52(6), 2006) of local split CP thresholds",
    version="1",
    params={"rounds": 150},
    deterministic=True,
)
class GossipQuantile(NodeProgram):
    """``rounds`` = T gossip rounds of one scalar."""

    def program(self) -> Program:
        v = np.sort(np.asarray(self.data["scores"], dtype=np.float64), axis=1)  # node k: row k
        r = split_cp_rank(v.shape[1], float(self.data["alpha"]))
        q = (v[:, r - 1] if r <= v.shape[1] else np.ones(self.n))[:, None]
        for _ in range(min(int(self.params.get("rounds", 150)), self.rounds_left)):
            q = yield mix(q, report=q)
        return q
