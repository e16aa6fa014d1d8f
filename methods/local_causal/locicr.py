"""LocICR (Li, Liu, Xie, Zhang, Liu and Geng, ICML 2025): local identification of X's causal relation to Y.

For every observed X (Y excluded) the method runs the official algorithm's pipeline around
X: Markov blanket by total conditioning, MMB-by-MMB local structure learning with its stop
rules, then the paper's local characterisation (PA*, NE*, NE*_M and at most three CI tests
between X and Y). See :mod:`common.local_causal.locicr` for the steps and the deviations.
All CI tests go through the task's counting oracle; answers are cached across the X's
(the task counts distinct tests, so the cache only saves round trips).

Settings: ``alpha = 0.01`` and ``max_k = 10`` as in the official ``example.py``.

Deviations from the reference
-----------------------------
- No Lasso pre-selection in the Markov-blanket tests (the method never sees data).
- Skeleton candidate sets exclude both endpoints (operator-precedence slip in the official code).
- Explicit and implicit invariant ancestors are both "definite cause" (the task's 3 classes).
"""

from __future__ import annotations

import numpy as np

from bench import method
from common.local_causal.bridge import OracleMethod
from common.local_causal.locicr import LocalLearner

REFERENCE = "Li et al., Local Identifying Causal Relations in the Presence of Latent Variables (ICML 2025); github.com/zhengli0060/LocICR @6c704b2"


@method(
    name="locicr",
    kind="method",
    tasks=["local-causal-relations"],
    reference=REFERENCE,
    version="1",
    params={"alpha": 0.01, "max_k": 10},
    deterministic=True,
    deviations="no Lasso pre-selection in MB_TC (no data on the method side); candidate sets exclude both endpoints; one local run per X, CI answers cached across runs",
)
class LocICR(OracleMethod):
    """One LocICR run per observed X against the target Y."""

    def run(self, ci):
        labels = np.full(self.q, -1, dtype=np.int64)
        for x in range(self.q):
            if x == self.target:
                continue
            learner = LocalLearner(
                ci, self.q, x, alpha=float(self.params["alpha"]), max_k=int(self.params["max_k"])
            )
            labels[x] = learner.relation(self.target)
        return labels
