"""The method side of the ``local-causal-relations`` protocol.

:class:`OracleMethod` runs an ordinary sequential algorithm (``run(ci)``, which calls
``ci(x, y, S)`` and gets a p-value back) in a worker thread, and turns each of its CI calls
into one protocol round: ``select`` forwards the pending query to the task, hands the
task's answer back to the thread, and waits for the next query or the final labels. The
task answers and counts every query (tasks/local_causal/__init__.py, ``CISession``);
answers are cached here only to save round trips (the task counts distinct tests anyway).

:func:`causallearn_cit` wraps ``ci`` as a causal-learn CI test, so that causal-learn's FCI
asks the task's counting oracle too.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

__all__ = ["OracleMethod", "causallearn_cit"]

CI = Callable[[int, int, Iterable[int]], float]


class OracleMethod:
    """Base class: a subclass implements ``run(ci) -> labels`` (int64, one per observed variable, -1 at Y)."""

    def __init__(self, instance: Any, *, seed: int, budget: float, **params: Any) -> None:
        self.q = int(instance.data["n_vars"])
        self.target = int(instance.data["target"])
        self.mode = str(instance.data["mode"])
        self.n_samples = int(instance.data["n_samples"])
        self.seed = seed
        self.params = params
        self._cache: dict[tuple[int, int, frozenset[int]], float] = {}
        self._to_task: queue.Queue = queue.Queue()
        self._to_worker: queue.Queue = queue.Queue()
        self._thread: threading.Thread | None = None
        self._pending: tuple[int, int, frozenset[int]] | None = None

    def run(self, ci: CI) -> np.ndarray:  # pragma: no cover - interface
        raise NotImplementedError

    # --- worker side
    def _ci(self, x: int, y: int, s: Iterable[int]) -> float:
        x, y = int(x), int(y)
        key = (min(x, y), max(x, y), frozenset(int(v) for v in s))
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        self._to_task.put(("query", key))
        val = self._to_worker.get()
        if isinstance(val, BaseException):
            raise val
        self._cache[key] = float(val)
        return float(val)

    def _main(self) -> None:
        try:
            labels = self.run(self._ci)
            self._to_task.put(("labels", np.asarray(labels, dtype=np.int64)))
        except BaseException as exc:
            self._to_task.put(("error", exc))

    # --- protocol side
    def select(self, state: dict[str, Any]) -> dict[str, Any]:
        if self._thread is None:
            self._thread = threading.Thread(target=self._main, daemon=True)
            self._thread.start()
        elif self._pending is not None:
            self._to_worker.put(float(np.asarray(state["p_values"])[0]))
            self._pending = None
        kind, payload = self._to_task.get()
        if kind == "error":
            raise payload
        if kind == "labels":
            return {"labels": payload}
        a, b, s = payload
        self._pending = payload
        mask = np.zeros((1, self.q), dtype=bool)
        mask[0, sorted(s)] = True
        return {"x": np.array([a], dtype=np.int64), "y": np.array([b], dtype=np.int64), "S": mask}


def causallearn_cit(ci: CI, name: str) -> str:
    """Register a causal-learn CI test named ``name`` that forwards to ``ci``; returns the name."""
    from causallearn.utils.cit import CIT_Base, register_ci_test

    class _Forward(CIT_Base):
        def __init__(self, data: np.ndarray, **kwargs: Any) -> None:
            super().__init__(data, **kwargs)
            self.method = name

        def __call__(self, X: Any, Y: Any, condition_set: Any = None) -> float:
            return ci(int(X), int(Y), [int(c) for c in (condition_set or ())])

    register_ci_test(name, _Forward)
    return name
