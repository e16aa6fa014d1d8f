"""Nested Monte Carlo with ``N = M = n``: ``mean_i f(mean_j g_ij)`` (e.g. Rainforth et al., 2018).

``N = M`` is the allocation the paper's synthetic comparison uses (official
``N_T_ratio = 1``); the cost-optimal NMC allocation for smooth ``f``
(``M ~ sqrt(N)``) is not used: UNVERIFIED whether it would change the ranking.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bench import method
from common.nested.driver import OracleStrategy, Plan, estimate, inner, outer, split_inner
from common.nested.estimators import inner_mc
from tasks.nested import apply_f


@method(
    name="nested-mc",
    kind="baseline",
    tasks=["nested-expectation"],
    reference="nested Monte Carlo (Hong and Juneja 2009; Rainforth et al. 2018), N = M",
    version="1",
    params={},
    deterministic=True,
)
class NestedMC(OracleStrategy):
    """Nested Monte Carlo with N = M = n."""

    def plan(self, state: dict[str, Any]) -> Plan:
        n, p = int(state["n"]), state["problem"]
        yield outer(n)
        idx = np.arange(n)
        parts = split_inner((yield inner(idx, n)), idx)
        yield estimate(float(np.mean(apply_f(p["f"], inner_mc(parts)))))
