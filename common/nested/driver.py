"""Turn an estimator written as a generator of oracle requests into ``select(state)`` answers.

A plan is a generator that yields actions made by :func:`outer`, :func:`inner`
and :func:`estimate`; each ``yield`` of an outer or inner request returns the
oracle's reply (``{"u": ...}`` or ``{"owner", "e", "g"}``).
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import numpy as np

__all__ = ["Plan", "OracleStrategy", "outer", "inner", "estimate", "split_inner"]

Plan = Generator[dict[str, Any], dict[str, Any], None]


def outer(count: int) -> dict[str, Any]:
    return {"op": "outer", "count": int(count)}


def inner(index: np.ndarray, count: np.ndarray | int) -> dict[str, Any]:
    index = np.asarray(index, dtype=np.int64)
    count = np.broadcast_to(np.asarray(count, dtype=np.int64), index.shape).copy()
    return {"op": "inner", "index": index, "count": count}


def estimate(value: float) -> dict[str, Any]:
    return {"op": "estimate", "value": float(value)}


def split_inner(reply: dict[str, Any], index: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per requested outer index (in order): its ``(e, g)`` rows of the reply."""
    owner = np.asarray(reply["owner"])
    e = np.asarray(reply["e"], float)
    g = np.asarray(reply["g"], float)
    out = []
    for i in np.asarray(index).tolist():
        m = owner == i
        out.append((e[m], g[m]))
    return out


class OracleStrategy:
    """Base class: subclasses implement :meth:`plan`, restarted at every stage (``(instance, *, seed, budget, **params)``)."""

    def __init__(self, instance: Any, *, seed: int, budget: float, **params: Any) -> None:
        self.rng = np.random.default_rng(seed)
        self.params = params
        self._plan: Plan | None = None
        self._stage = -1

    def plan(self, state: dict[str, Any]) -> Plan:  # pragma: no cover - interface
        raise NotImplementedError

    def select(self, state: dict[str, Any]) -> dict[str, Any]:
        if self._plan is None or int(state.get("stage", 0)) != self._stage:
            self._stage = int(state.get("stage", 0))
            self._plan = self.plan(state)
            return next(self._plan)
        return self._plan.send(state["reply"])
