"""``milp``: HiGHS branch-and-cut through ``scipy.optimize.milp``."""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.optimize import Bounds, LinearConstraint, milp  # at import: the zygote warms it once

from baselines.knapsack._items import by_efficiency, fill, read, repair
from bench.registry import method

__all__ = ["solve_milp"]


@method(
    name="milp",
    kind="baseline",
    tasks=["knapsack"],
    reference=(
        "Q. Huangfu and J. A. J. Hall, Parallelizing the dual revised simplex method, "
        "Math. Prog. Comp. 10, 2018 (HiGHS), through scipy.optimize.milp"
    ),
    version="1",
    params={"time_fraction": 0.8, "mip_rel_gap": 0.0},
    # HiGHS is deterministic, but where its time limit stops the search
    # depends on the machine's speed.
    deterministic=False,
)
def solve_milp(
    instance: Any, *, seed: int, budget: float, time_fraction: float = 0.8, mip_rel_gap: float = 0.0
) -> np.ndarray:
    """Solve the integer program with HiGHS and return its best feasible point.

    HiGHS runs for at most ``time_fraction * budget`` seconds with relative gap
    ``mip_rel_gap`` (0: run until optimality is proven). Its incumbent is
    rounded, repaired to feasibility and filled greedily; if HiGHS found no
    incumbent, or the greedy packing is better, the greedy packing is returned.
    Exact when HiGHS finishes in time; on strongly correlated instances with
    n >= 1000 it usually does not, and returns a near-optimal packing.
    ``seed`` is unused (``scipy.optimize.milp`` exposes no HiGHS seed).
    """

    profits, weights, capacity = read(instance)
    n = len(weights)
    greedy = fill(np.zeros(n, dtype=np.int8), by_efficiency(profits, weights), weights, capacity)
    res = milp(
        -profits.astype(float),
        constraints=LinearConstraint(weights.astype(float)[None, :], -np.inf, capacity),
        integrality=np.ones(n),
        bounds=Bounds(0, 1),
        options={"time_limit": max(time_fraction * budget, 0.1), "mip_rel_gap": mip_rel_gap},
    )
    if res.x is None:
        return greedy
    x = repair(np.rint(res.x), profits, weights, capacity)
    return x if int(profits @ x) >= int(profits @ greedy) else greedy
