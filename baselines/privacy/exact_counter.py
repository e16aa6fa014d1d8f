"""distinct-exact-nonprivate: the exact counter of live items, the non-private reference (declares epsilon = inf).

Stores the count of every item with a positive count (space = the current
number of distinct items) and answers exactly. On audit instances it is the
audit's positive control: its answers reveal the canary.
"""

from __future__ import annotations

import numpy as np

from bench import method
from common.privacy.streams import StreamMethod

__all__ = ["ExactCounter"]


@method(
    name="distinct-exact-nonprivate",
    kind="baseline",
    tasks=["private-distinct-count"],
    reference="exact hash-map counter (non-private reference)",
    version="1",
    params={"mechanism": "none", "accountant": "none"},
    deterministic=True,
    description="Exact, non-private: counts of the live items; the reference row.",
)
class ExactCounter(StreamMethod):
    def run(self, items, deltas, ts, memory, rng, state):
        counts = (
            {}
            if memory is None
            else dict(
                zip(
                    np.asarray(memory["ids"]).tolist(),
                    np.asarray(memory["vals"]).tolist(),
                    strict=False,
                )
            )
        )
        est = np.empty(len(items))
        for i, (x, d) in enumerate(zip(items.tolist(), deltas.tolist(), strict=False)):
            if d:
                v = counts.get(x, 0) + d
                if v > 0:
                    counts[x] = v
                else:
                    counts.pop(x, None)
            est[i] = len(counts)
        mem = {
            "ids": np.fromiter(counts.keys(), dtype=np.int64, count=len(counts)),
            "vals": np.fromiter(counts.values(), dtype=np.int64, count=len(counts)),
        }
        return est, mem, float("inf"), 0.0
