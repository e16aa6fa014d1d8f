"""MMB-by-MMB (Xie et al., ICML 2024) around each X, relations read off the local PAG it learns.

The same local learner as LocICR's first phase (:class:`common.local_causal.locicr.LocalLearner`,
Markov blankets by total conditioning, skeleton inside MB+, v-structures, R1-R4, stop rules
1 and 3), without LocICR's characterisation: X's relation to Y is read off the partial PAG
learned around X with the PAG read-off (:func:`tasks.local_causal.graphs.ancestral_labels`).
Edges outside the explored region are missing from that partial PAG, so "no possibly directed
path" there is only a guess: this is the naive local read-off the paper's characterisation
replaces. How the paper itself turned MMB-by-MMB into causal relations is UNVERIFIED.
"""

from __future__ import annotations

import numpy as np

from bench import method
from common.local_causal.bridge import OracleMethod
from common.local_causal.locicr import LocalLearner
from tasks.local_causal.graphs import ancestral_labels


@method(
    name="mmb-readoff",
    kind="baseline",
    tasks=["local-causal-relations"],
    reference="Xie, Li, Wu, Zeng, Liu and Geng, Local Causal Structure Learning in the Presence of Latent Variables (ICML 2024), as in the LocICR code",
    version="1",
    params={"alpha": 0.01, "max_k": 10},
    deterministic=True,
)
class MMBReadoff(OracleMethod):
    """One MMB-by-MMB run per X; the label is read off its partial PAG."""

    def run(self, ci):
        labels = np.full(self.q, -1, dtype=np.int64)
        for x in range(self.q):
            if x == self.target:
                continue
            learner = LocalLearner(
                ci, self.q, x, alpha=float(self.params["alpha"]), max_k=int(self.params["max_k"])
            )
            pag = learner.learn_local()
            labels[x] = ancestral_labels(pag, self.target)[x]
        return labels
