"""FCI from causal-learn (0.1.4.8), relations read off the learned PAG.

causal-learn's ``fci`` (FAS skeleton, possible-d-sep removal, R0-R10) runs with a CI test
that forwards every query to the task's counting oracle
(:func:`common.local_causal.bridge.causallearn_cit`); the relations of every X to Y are read
off its PAG with the task's own read-off (:func:`tasks.local_causal.graphs.ancestral_labels`:
directed path or two uncovered possibly directed paths -> definite cause; no possibly
directed path -> definite non-cause). ``alpha = 0.01`` (LocICR's example setting), depth and
discriminating-path length unlimited (causal-learn's defaults).

RFCI is not in causal-learn 0.1.4.8 (``causallearn.search.ConstraintBased`` has FCI, PC and
CD-NOD only), so it is not run here.

causal-learn hashes its nodes and edges by ``hash(str)``, which Python salts per process, so
FCI's visiting order (and its number of CI tests, by a few per cent) changed from one process
to the next; ``run`` gives ``GraphNode`` and ``Edge`` a CRC-32 hash of the same strings in
this process so that a run is reproducible. Equality, and so the algorithm, is unchanged.
"""

from __future__ import annotations

import zlib

import numpy as np

from bench import method
from common.local_causal.bridge import OracleMethod, causallearn_cit
from tasks.local_causal.graphs import ancestral_labels, from_causallearn


@method(
    name="fci-causallearn",
    kind="baseline",
    tasks=["local-causal-relations"],
    reference="Spirtes et al. FCI; Zhang (2008) rules; causal-learn 0.1.4.8 causallearn.search.ConstraintBased.FCI.fci",
    version="1",
    params={"alpha": 0.01},
    deterministic=True,
)
class FCICausalLearn(OracleMethod):
    """Global FCI over all observed variables, then the read-off for Y."""

    def run(self, ci):
        from causallearn.graph.Edge import Edge
        from causallearn.graph.GraphNode import GraphNode
        from causallearn.search.ConstraintBased.FCI import fci

        GraphNode.__hash__ = lambda node: zlib.crc32(node.get_name().encode())
        Edge.__hash__ = lambda edge: zlib.crc32(str(edge).encode())
        name = causallearn_cit(ci, "local_causal_forward")
        dummy = np.zeros((max(self.n_samples, self.q + 1), self.q))
        g, _ = fci(
            dummy, name, alpha=float(self.params["alpha"]), verbose=False, show_progress=False
        )
        return ancestral_labels(from_causallearn(np.asarray(g.graph)), self.target)
