"""dp-distinct-laplace-steps: per-step Laplace noise on the distinct-count differences (the naive mechanism).

Every update's change ``z_t`` of the distinct count (-1, 0, +1) gets independent
Laplace noise and the release is the running sum. With flippancy blocking at
``W`` (as in Jain et al.), one item changes at most ``W`` entries of ``z`` by 1,
so the l1 sensitivity is ``W`` and the noise scale ``W / epsilon`` gives pure
``epsilon``-DP (item level); the error grows like ``sqrt(t) W / epsilon``.
Linear space (the blocking table). The card's "naive per-step Laplace noise".
"""

from __future__ import annotations

import numpy as np

from bench import method
from common.privacy.streams import StreamMethod, flip_stream

__all__ = ["LaplaceSteps"]


@method(
    name="dp-distinct-laplace-steps",
    kind="baseline",
    tasks=["private-distinct-count"],
    reference="Laplace mechanism on each step's difference (Dwork et al. 2010, the input-perturbation counter), with flippancy blocking",
    version="1",
    params={"mechanism": "per-step-laplace+flippancy-blocking", "accountant": "pure-dp"},
    description="Naive baseline: Laplace(W/epsilon) on every step's change of the distinct count, released as a running sum; linear space.",
)
class LaplaceSteps(StreamMethod):
    def run(self, items, deltas, ts, memory, rng, state):
        W, eps = int(state["W"]), float(state["epsilon"])
        if memory is None:
            table: dict[int, list[int]] = {}
            s = 0.0
        else:
            vals = np.asarray(memory["vals"]).reshape(-1, 2).tolist()
            table = dict(zip(np.asarray(memory["ids"]).tolist(), vals, strict=False))
            s = float(memory["s"])
        z = flip_stream(items, deltas, table, W)
        est_raw = s + np.cumsum(z + rng.laplace(0.0, W / eps, size=len(z)))
        mem = {
            "ids": np.fromiter(table.keys(), dtype=np.int64, count=len(table)),
            "vals": np.array(list(table.values()), dtype=np.int64).reshape(-1, 2),
            "s": float(est_raw[-1]) if len(est_raw) else s,
        }
        return np.maximum(0.0, est_raw), mem, eps, 0.0
