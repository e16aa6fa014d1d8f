"""Write a comparison-based optimiser as a generator; :class:`ProgramDriver` speaks the task's protocol.

A program is a generator that yields ``(x, y, point)`` (``n`` pairs as two
``(n, d)`` float64 arrays and the current iterate) and receives the ``n`` bits
(``int8``, ``1`` when ``x_i`` won); it returns its final point. It must not ask
for more comparisons than the budget it was given: the driver refuses.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import numpy as np

__all__ = ["Program", "ProgramDriver", "unit"]

Program = Generator[tuple[np.ndarray, np.ndarray, np.ndarray], np.ndarray, np.ndarray]


def unit(rng: np.random.Generator, d: int, n: int | None = None) -> np.ndarray:
    """A uniform direction on the unit sphere (``(d,)``), or ``n`` of them (``(n, d)``)."""
    z = rng.standard_normal(d if n is None else (n, d))
    return z / np.linalg.norm(z, axis=-1, keepdims=True)


class ProgramDriver:
    """Turns a :data:`Program` into ``select(state)`` answers."""

    def __init__(self, program: Program, x0: np.ndarray) -> None:
        self.program = program
        self.point = np.asarray(x0, dtype=np.float64).copy()
        self.started = False

    def select(self, state: dict[str, Any]) -> dict[str, np.ndarray]:
        try:
            if not self.started:
                self.started = True
                x, y, point = next(self.program)
            else:
                x, y, point = self.program.send(np.asarray(state["bits"]))
        except StopIteration as stop:
            return {"done": np.asarray(stop.value, dtype=np.float64)}
        if x.shape[0] > state["left"]:
            raise RuntimeError(
                f"the program asked for {x.shape[0]} comparisons with {state['left']} left"
            )
        self.point = np.asarray(point, dtype=np.float64)
        return {
            "x": np.ascontiguousarray(x, dtype=np.float64),
            "y": np.ascontiguousarray(y, dtype=np.float64),
            "point": self.point.copy(),
        }
