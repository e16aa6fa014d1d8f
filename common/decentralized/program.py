"""Method-side helper for the decentralized tasks: write a node program as a generator.

The trusted simulator (``tasks/decentralized/gossip.py``) asks the method for
one action at a time. :class:`NodeProgram` lets a method write its whole
algorithm as one generator instead: each ``yield`` sends an action and
returns the simulator's reply, and the generator's ``return`` value is the
answer (one row per node)::

    class Averaging(NodeProgram):
        def program(self):
            x = np.asarray(self.data["values"])
            for _ in range(self.rounds_left):
                x = yield mix(x)
            return x

All nodes run in one process, one numpy row each; a node program must only
combine a node's own row with what the simulator delivers to it (``mix``,
``exchange``) and what its own oracle returns.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import numpy as np

__all__ = ["NodeProgram", "Program", "mix", "exchange", "oracle", "done"]

#: A node program: yields actions, receives replies, returns the answer.
Program = Generator[dict[str, Any], Any, np.ndarray]


def mix(x: np.ndarray, report: np.ndarray | None = None) -> dict[str, Any]:
    """One gossip round: the reply is ``W @ x`` (row ``i``: node ``i``'s weighted neighbourhood sum)."""
    return _with_report({"op": "mix", "x": np.asarray(x, dtype=np.float64)}, report)


def exchange(x: np.ndarray, report: np.ndarray | None = None) -> dict[str, Any]:
    """One round: the reply is ``(n, max_degree, d)``, every neighbour's row (``data["neighbours"]`` order)."""
    return _with_report({"op": "exchange", "x": np.asarray(x, dtype=np.float64)}, report)


def oracle(name: str, x: np.ndarray | None = None, report: np.ndarray | None = None, **args: Any) -> dict[str, Any]:
    """A local oracle call at every node (the task names its oracles and their arguments)."""
    act: dict[str, Any] = {"op": "oracle", "name": name, **args}
    if x is not None:
        act["x"] = np.asarray(x, dtype=np.float64)
    return _with_report(act, report)


def done(x: np.ndarray) -> dict[str, Any]:
    """The answer: one row per node."""
    return {"op": "done", "x": np.asarray(x, dtype=np.float64)}


def _with_report(act: dict[str, Any], report: np.ndarray | None) -> dict[str, Any]:
    if report is not None:
        act["report"] = np.asarray(report, dtype=np.float64)
    return act


class NodeProgram:
    """Base class of decentralized methods: subclasses implement :meth:`program`.

    Parameters are those of every interactive method,
    ``(instance, *, seed, budget, **params)``; they are kept as ``data``
    (the instance's public data), ``params``, ``rng`` (seeded) and ``budget``.
    ``rounds_left`` and ``rounds`` follow the simulator's counters.
    """

    def __init__(self, instance: Any, *, seed: int, budget: float, **params: Any) -> None:
        self.data = instance.data
        self.instance = instance
        self.params = params
        self.seed = seed
        self.budget = budget
        self.rng = np.random.default_rng(seed)
        self.n = int(self.data["n_nodes"])
        self.rounds = 0
        self.rounds_left = 0
        self._gen: Program | None = None

    def program(self) -> Program:  # pragma: no cover - interface
        """Yield actions (:func:`mix`, :func:`exchange`, :func:`oracle`); return the answer."""
        raise NotImplementedError

    def select(self, state: dict[str, Any]) -> dict[str, Any]:
        """Answer the simulator: the program's next action, or ``done`` with its return value."""
        self.rounds = int(state["rounds"])
        self.rounds_left = int(state["rounds_left"])
        try:
            if self._gen is None:
                self._gen = self.program()
                return next(self._gen)
            return self._gen.send(state["reply"])
        except StopIteration as stop:
            return done(stop.value)
