"""Baselines for the ``knapsack`` task, one module per method.

- ``random-fill`` (:mod:`.random_fill`): random order, take what fits.
- ``greedy`` (:mod:`.greedy`): Dantzig's ratio greedy with the best-single-item
  fix, a 1/2-approximation.
- ``dp`` (:mod:`.dp`): exact dynamic programming over capacity.
- ``milp`` (:mod:`.milp`): HiGHS through ``scipy.optimize.milp``.

Each ``solve_*`` reads only ``instance.data`` and returns a 0/1 ``int8`` array
of length ``n``.
"""

from __future__ import annotations

from baselines.knapsack.dp import solve_dp, supports_dp
from baselines.knapsack.greedy import solve_greedy
from baselines.knapsack.milp import solve_milp
from baselines.knapsack.random_fill import solve_random_fill

__all__ = ["solve_dp", "solve_greedy", "solve_milp", "solve_random_fill", "supports_dp"]
