"""dp-distinct-jain-linear: the linear-space mechanism of Jain et al. (NeurIPS 2023), known-flippancy version.

Reference: Palak Jain, Iden Kalemaj, Sofya Raskhodnikova, Satchit Sivakumar, Adam
Smith, "Counting Distinct Elements in the Turnstile Model with Differential
Privacy under Continual Observation", NeurIPS 2023 (arXiv:2306.06723). Our
reading (the paper body was not read here; UNVERIFIED): keep every item's count
and *flippancy* (how often its presence indicator changed), freeze an item once
its flippancy reaches the bound ``w`` (so that every item changes the
distinct-count difference sequence at most ``w`` times on every stream), and
release the prefix sums of that sequence with the binary tree mechanism with
Gaussian noise; l2 sensitivity ``sqrt(w * heights)``. Space: one entry per item
ever seen (linear in the stream).

Deviations (also in tasks/privacy/README.md)
--------------------------------------------
- ``w`` is the instance's occurrency bound ``W`` (an upper bound on every item's
  flippancy here); the paper's mechanism for unknown flippancy (which runs
  several thresholds and chooses privately) is not implemented.
"""

from __future__ import annotations

import math

import numpy as np

from bench import method
from common.privacy.accounting import epsilon_of, gaussian_sigma, rho_for
from common.privacy.streams import StreamMethod, TreeNoise, flip_stream, tree_height

__all__ = ["JainLinear"]


@method(
    name="dp-distinct-jain-linear",
    kind="baseline",
    tasks=["private-distinct-count"],
    reference="Jain, Kalemaj, Raskhodnikova, Sivakumar and Smith (NeurIPS 2023), arXiv:2306.06723",
    version="1",
    params={"mechanism": "flippancy-blocking+binary-tree-gaussian", "accountant": "zcdp"},
    description="Linear-space mechanism: every item's count and flippancy, blocking at w = W, binary tree mechanism with Gaussian noise.",
    deviations="Known-flippancy version (w = W); the unknown-w mechanism is not implemented.",
)
class JainLinear(StreamMethod):
    def run(self, items, deltas, ts, memory, rng, state):
        T, W, eps, delta = (
            int(state["T"]),
            int(state["W"]),
            float(state["epsilon"]),
            float(state["delta"]),
        )
        heights = tree_height(T)
        rho = rho_for(eps, delta)
        sigma = gaussian_sigma(math.sqrt(W * heights), rho)
        if memory is None:
            table: dict[int, list[int]] = {}
            c, tree = 0, TreeNoise(heights, sigma)
        else:
            vals = np.asarray(memory["vals"]).reshape(-1, 2).tolist()
            table = dict(zip(np.asarray(memory["ids"]).tolist(), vals, strict=False))
            c, tree = int(memory["c"]), TreeNoise(heights, sigma, memory["tidx"], memory["tval"])
        z = flip_stream(items, deltas, table, W)
        exact = c + np.cumsum(z)
        est = np.maximum(0.0, exact + tree.noise(ts, rng))
        mem = {
            "ids": np.fromiter(table.keys(), dtype=np.int64, count=len(table)),
            "vals": np.array(list(table.values()), dtype=np.int64).reshape(-1, 2),
            "c": int(exact[-1]) if len(exact) else c,
            **tree.state("t"),
        }
        return est, mem, epsilon_of(rho, delta), delta
