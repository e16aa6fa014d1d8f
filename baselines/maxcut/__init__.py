"""Baselines for the ``maxcut`` task (Max-k-Cut on Gset and random graphs), one module per method.

- ``random-cut`` (:mod:`.random_cut`): uniform random labels.
- ``greedy-1opt`` (:mod:`.greedy`): greedy construction in a random order, then
  1-opt local search (numba).
- ``tabu`` (:mod:`.tabu`): one-flip tabu search with elite restarts, BLS/MOH
  style, anytime (numba).
- ``gw`` (:mod:`.gw`): Goemans-Williamson (k=2) / Frieze-Jerrum (k>=3)
  rounding of a low-rank (Burer-Monteiro) SDP solution.
- ``genetic`` (:mod:`.genetic`): the genetic algorithm of ROS's code.
- ``pignn`` (:mod:`.pignn`): PI-GNN as ROS runs it (torch, k=2).
- ``one-exchange`` (:mod:`.one_exchange`): networkx's 1-flip local search
  (k=2, small graphs).

Each ``solve_*`` reads only ``instance.data`` (``n``, ``k``, ``edges``,
``weights``; see ``tasks/maxcut/graph.py``) and returns an ``int64`` array of
``n`` labels in ``[0, k)``. Names are global across tasks, hence
``random-cut`` and ``greedy-1opt`` (knapsack has ``greedy``). See README.md.
"""

from __future__ import annotations

from baselines.maxcut.genetic import solve_genetic
from baselines.maxcut.greedy import solve_greedy
from baselines.maxcut.gw import solve_gw
from baselines.maxcut.one_exchange import solve_one_exchange
from baselines.maxcut.pignn import solve_pignn
from baselines.maxcut.random_cut import solve_random_cut
from baselines.maxcut.tabu import solve_tabu

__all__ = [
    "solve_genetic",
    "solve_greedy",
    "solve_gw",
    "solve_one_exchange",
    "solve_pignn",
    "solve_random_cut",
    "solve_tabu",
]
