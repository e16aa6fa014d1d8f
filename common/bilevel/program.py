"""Method-side helper for ``bilevel-hypercleaning``: write a bilevel method as a generator.

The task (``tasks/bilevel/__init__.py``) answers rounds of oracle queries.
:class:`OracleProgram` lets a method write its whole algorithm as one
generator: each ``yield [queries]`` sends one round and returns the list of
replies, and the generator's ``return (x, y)`` is the answer (upper logits
``x``, lower model ``y``). The base class reports the current ``self.x`` /
``self.y`` with every round, so the task can score the iterate it held at
25% and 50% of the budget; a method keeps those two attributes current.

Conventions shared by every method of the family (so that step sizes are
comparable):

- the upper variable is ``x`` in R^n, the example weights are ``sigmoid(x)``;
  ``x`` starts at 0 (weights 1/2) and ``y`` at 0;
- a lower-level step is ``lr_y / L`` with ``L = state["smoothness"]`` (the
  task's bound on the Lipschitz constant of ``grad_y g``);
- an upper step is ``lr_x * n`` (``grad_x`` of anything here carries a
  ``1/n``, one term per example), with ``lr_x`` the parameter.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import numpy as np
from scipy.special import expit

__all__ = ["OracleProgram", "Program"]

#: A bilevel program: yields rounds (lists of queries), receives the replies, returns ``(x, y)``.
Program = Generator[list[dict[str, Any]], list[dict[str, Any]], tuple[np.ndarray, np.ndarray]]


class OracleProgram:
    """Base class of the family's methods: subclasses implement :meth:`program`.

    Attributes
    ----------
    n, p, K
        Training examples, lower-level rows (features + bias) and classes.
    x, y
        The current iterate (``(n,)`` logits and ``(p, K)`` model), reported every round.
    budget_left, smoothness
        From the task's state, refreshed before every resume of the generator.
    """

    def __init__(self, instance: Any, *, seed: int, budget: float, **params: Any) -> None:
        self.data = instance.data
        self.params = params
        self.seed = int(seed)
        self.rng = np.random.default_rng(seed)
        self.n = int(self.data["n_train"])
        self.p = int(self.data["n_params"])
        self.K = int(self.data["n_classes"])
        self.mu = float(self.data["mu"])
        self.max_batch = int(self.data["max_batch"])
        self.x = np.zeros(self.n)
        self.y = np.zeros((self.p, self.K))
        self.budget_left = int(self.data["budget"])
        self.smoothness = 1.0
        self._gen: Program | None = None

    # -- queries -------------------------------------------------------------------
    @staticmethod
    def f(x: np.ndarray, y: np.ndarray) -> dict[str, Any]:
        """Upper-level value and gradients at ``(x, y)`` (one upper call)."""
        return {
            "oracle": "f",
            "x": np.asarray(x, dtype=np.float64),
            "y": np.asarray(y, dtype=np.float64),
        }

    @staticmethod
    def g(x: np.ndarray, y: np.ndarray) -> dict[str, Any]:
        """Lower-level value and gradients at ``(x, y)`` (one lower call)."""
        return {
            "oracle": "g",
            "x": np.asarray(x, dtype=np.float64),
            "y": np.asarray(y, dtype=np.float64),
        }

    @staticmethod
    def hvp(x: np.ndarray, y: np.ndarray, v: np.ndarray) -> dict[str, Any]:
        """``grad^2_yy g v`` and ``grad^2_xy g v`` at ``(x, y)`` (one call)."""
        return {
            "oracle": "hvp",
            "x": np.asarray(x, dtype=np.float64),
            "y": np.asarray(y, dtype=np.float64),
            "v": np.asarray(v, dtype=np.float64),
        }

    def program(self) -> Program:  # pragma: no cover - interface
        """Yield rounds of queries; return ``(x, y)``."""
        raise NotImplementedError

    # -- the protocol ----------------------------------------------------------------
    def _report(self) -> dict[str, np.ndarray]:
        return {
            "weights": expit(np.asarray(self.x, dtype=np.float64)),
            "model": np.asarray(self.y, dtype=np.float64),
        }

    def select(self, state: dict[str, Any]) -> dict[str, Any]:
        """Answer the task: the program's next round (with the current iterate), or ``done``."""
        self.budget_left = int(state["budget_left"])
        self.smoothness = float(state["smoothness"])
        try:
            queries = (
                next(self._gen_start()) if self._gen is None else self._gen.send(state["reply"])
            )
        except StopIteration as stop:
            x, y = stop.value
            return {
                "done": True,
                "weights": expit(np.asarray(x, dtype=np.float64)),
                "model": np.asarray(y, dtype=np.float64),
            }
        return {"queries": list(queries), "report": self._report()}

    def _gen_start(self) -> Program:
        self._gen = self.program()
        return self._gen
