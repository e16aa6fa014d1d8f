"""dp-distinct-sublinear: sublinear-space DP continual distinct counting (Cummings et al., ICML 2025), our reading.

Reference: Rachel Cummings, Alessandro Epasto, Jieming Mao, Tamalika Mukherjee,
Tingting Ou, Peilin Zhong, "Differentially Private Space-Efficient Algorithms for
Counting Distinct Elements in the Turnstile Model", ICML 2025 (PMLR 267:11662-11691),
arXiv:2505.23682. No official code found; only the abstract and front matter could
be read here, so the construction is our reading of its claims ("O~_eta(sqrt(W))
additive error, using O~_eta(sqrt(W)) space" when a bound W on the occurrency is
known, with a "(1 + eta)-relative approximation") and is UNVERIFIED.

What it does (item-level privacy; each item appears at most W times):

- items are hashed to nested sampling levels (level >= j with probability 2^-j),
  ``levels = ceil(log2 T) / 2 + 1`` of them;
- the method stores exact counts only for items at levels ``>= j_min``, and the
  exact number ``c_j`` of live sampled items for ``j >= j_min``;
- every level's count is released by a binary tree mechanism with Gaussian
  noise; an item changes its level indicators at most W times, and interval
  sums of a 0/1 indicator's differences are in {-1, 0, 1}, so the l2
  sensitivity over all levels and heights is ``sqrt(levels * W * heights)``
  (zCDP, converted to the instance's (epsilon, delta));
- the estimate is ``2^j_min`` times the noisy count of level ``j_min``; when that
  noisy count passes ``tau = kappa * sigma_out / eta`` (checked every 256 updates),
  level ``j_min`` is dropped (its items are forgotten) and ``j_min`` moves up, so
  the stored items stay below ``tau + 3 sigma_out + 256`` with high probability:
  space O~(sqrt(W) / eta), independent of T and of the universe. The switch
  depends only on released noisy counts (post-processing), so it costs no privacy.

Deviations (also in tasks/privacy/README.md)
--------------------------------------------
- UNVERIFIED construction (see above); in particular a dropped level never comes
  back (the paper presumably keeps linear sketches that recover after
  deletions), so after the count falls, errors stay at the coarser level's scale.
- Privacy holds under the occurrency promise (every item appears at most W
  times; the task's streams keep it); the method does not track the occurrency
  of items it does not store.
- ``eta = 0.25``, ``kappa = 2``: our defaults.
"""

from __future__ import annotations

import math

import numpy as np

from bench import method
from common.privacy.accounting import epsilon_of, gaussian_sigma, rho_for
from common.privacy.streams import StreamMethod, TreeNoise, level_of, tree_height

__all__ = ["SublinearDistinct", "BLOCK"]

#: Updates between two checks of the level switch.
BLOCK = 256


@method(
    name="dp-distinct-sublinear",
    kind="method",
    tasks=["private-distinct-count"],
    reference="Cummings, Epasto, Mao, Mukherjee, Ou and Zhong (ICML 2025), arXiv:2505.23682",
    version="1",
    params={
        "mechanism": "sampled-levels+binary-tree-gaussian",
        "accountant": "zcdp",
        "eta": 0.25,
        "kappa": 2.0,
    },
    description="Nested hash-sampling levels, exact counts for the sampled items of the finest level in use, binary tree mechanism (Gaussian) per level, level switch on the noisy count; space O~(sqrt(W)/eta).",
    deviations="Construction UNVERIFIED (paper body not read); dropped levels do not recover after deletions; privacy under the occurrency promise.",
)
class SublinearDistinct(StreamMethod):
    """Our reading of the paper's known-W mechanism (module docstring)."""

    def __init__(
        self,
        instance,
        *,
        seed: int,
        budget: float,
        mechanism: str,
        accountant: str,
        eta: float,
        kappa: float,
    ) -> None:
        super().__init__(instance, seed=seed, budget=budget)
        self.eta, self.kappa = float(eta), float(kappa)

    def run(self, items, deltas, ts, memory, rng, state):
        T, W, eps, delta = (
            int(state["T"]),
            int(state["W"]),
            float(state["epsilon"]),
            float(state["delta"]),
        )
        heights = tree_height(T)
        levels = math.ceil(math.log2(max(T, 2))) // 2 + 1
        rho = rho_for(eps, delta)
        sigma = gaussian_sigma(math.sqrt(levels * W * heights), rho)
        sigma_out = sigma * math.sqrt(heights)
        tau = self.kappa * sigma_out / self.eta
        if memory is None:
            key = int(np.random.default_rng([self.seed, 7]).integers(1, 2**62))
            counts: dict[int, int] = {}
            c = np.zeros(levels, dtype=np.int64)
            jmin = 0
            tree = TreeNoise(heights, sigma)
        else:
            key = int(memory["key"])
            counts = dict(
                zip(
                    np.asarray(memory["ids"]).tolist(),
                    np.asarray(memory["vals"]).tolist(),
                    strict=False,
                )
            )
            c = np.asarray(memory["c"], dtype=np.int64).copy()
            jmin = int(memory["jmin"])
            tree = TreeNoise(heights, sigma, memory["tidx"], memory["tval"])
        lev = level_of(items, key, levels)
        est = np.empty(len(items))
        for a in range(0, len(items), BLOCK):
            b = min(len(items), a + BLOCK)
            z = np.zeros(b - a, dtype=np.int64)
            for i, (x, d, lv) in enumerate(
                zip(items[a:b].tolist(), deltas[a:b].tolist(), lev[a:b].tolist(), strict=False)
            ):
                if not d or lv < jmin:
                    continue
                old = counts.get(x, 0)
                new = old + d
                if new > 0:
                    counts[x] = new
                else:
                    counts.pop(x, None)
                z[i] = (new > 0) - (old > 0)
            exact = c[jmin] + np.cumsum(z)
            nz = np.flatnonzero(z)
            if nz.size:
                for j in range(jmin, levels):
                    c[j] += int(z[nz][lev[a:b][nz] >= j].sum())
            noisy = exact + tree.noise(ts[a:b], rng)
            est[a:b] = np.maximum(0.0, (2.0**jmin) * noisy)
            if noisy[-1] > tau and jmin < levels - 1:
                jmin += 1
                if counts:
                    ids = np.fromiter(counts.keys(), dtype=np.int64, count=len(counts))
                    keep = ids[level_of(ids, key, levels) >= jmin]
                    counts = {x: counts[x] for x in keep.tolist()}
                tree = TreeNoise(heights, sigma)
        mem = {
            "ids": np.fromiter(counts.keys(), dtype=np.int64, count=len(counts)),
            "vals": np.fromiter(counts.values(), dtype=np.int64, count=len(counts)),
            "c": c,
            "jmin": jmin,
            "key": key,
            **tree.state("t"),
        }
        return est, mem, epsilon_of(rho, delta), delta
