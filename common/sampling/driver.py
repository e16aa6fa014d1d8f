"""Session-driven sampler base class and the shared schedule.

A sampler subclasses :class:`OracleSampler` and writes :meth:`OracleSampler.run` as a
generator: ``g = yield from self.grad(X)`` spends one adaptive round (a batch
``X``), ``yield from self.snapshot(S)`` lets the task score the particles now
(free), and ``yield {"samples": S}`` ends the session.
"""

from __future__ import annotations

import math
from collections.abc import Generator
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["OracleSampler", "Schedule", "schedule"]


@dataclass(frozen=True)
class Schedule:
    """Horizon and step sizes shared by every method (see :func:`schedule`)."""

    T: float  # time horizon of the Langevin diffusion
    delta: float  # Euler sub-step (ULA's step)
    h: float  # Picard window length
    M: int  # sub-steps per window
    N: int  # windows
    K: int  # Picard iterations per window (Anari-Chewi-Vuong)
    w0: float  # upper estimate of W2(x0, pi)


def schedule(state: dict[str, Any], *, window: float = 0.5, bias: float = 0.5) -> Schedule:
    """The schedule every method here uses, from the task's first state.

    - ``w0 = rms(x0) * sqrt(d) + sqrt(d / alpha)``: a bound on ``W2(x0, pi)`` when
      the target's mode is near the origin (the methods do not know it);
    - ``T = log(4 w0 / eps) / alpha``: Langevin contracts W2 at rate ``alpha``, so
      the initial error is below ``eps / 4`` at ``T``;
    - ``delta = 4 bias eps / (sqrt(d) beta)``: the Euler step whose stationary W2 bias on a
      Gaussian, about ``(delta / 4) sqrt(sum_i lambda_i) <= delta sqrt(d) beta / 4``,
      is ``bias * eps``;
    - ``h = window / beta`` (Picard windows contract when ``beta h < 1``), ``M = ceil(h / delta)``,
      ``N = ceil(T / h)``;
    - ``K = ceil(log2(sqrt(d) / eps)) + 2``: Picard iterations per window; each halves
      the window's error (factor ``beta h = 1/2``), and the first guess (the window's
      start held constant) is off by about ``sqrt(2 h d)``.
    """
    x0 = np.asarray(state["x0"])
    d = int(state["d"])
    alpha, beta, eps = float(state["alpha"]), float(state["beta"]), float(state["eps_design"])
    w0 = math.sqrt(float(np.mean(np.sum(x0 * x0, axis=1)))) + math.sqrt(d / alpha)
    T = math.log(max(4.0 * w0 / eps, math.e)) / alpha
    delta = min(4.0 * bias * eps / (math.sqrt(d) * beta), window / beta)
    h = window / beta
    M = max(1, math.ceil(h / delta - 1e-9))
    N = max(1, math.ceil(T / h - 1e-9))
    K = max(1, math.ceil(math.log2(max(math.sqrt(d) / eps, 1.0)))) + 2
    return Schedule(T=T, delta=h / M, h=h, M=M, N=N, K=K, w0=w0)


class OracleSampler:
    """Base class: turns the generator :meth:`run` into the runner's ``select(state)`` calls."""

    def __init__(self, instance: Any, *, seed: int, budget: float, **params: Any) -> None:
        self.seed = int(seed)
        self.params = params
        self.rng = np.random.default_rng([self.seed, 20250711])
        self._gen: Generator[dict[str, Any], dict[str, Any], None] | None = None
        self.info: dict[str, Any] = {}

    # -- protocol ----------------------------------------------------------------
    def select(self, state: dict[str, Any]) -> dict[str, Any]:
        if self._gen is None:
            self.info = dict(state)
            self._gen = self.run()
            return next(self._gen)
        return self._gen.send(state)

    def grad(self, X: np.ndarray) -> Generator[dict[str, Any], dict[str, Any], np.ndarray]:
        """One adaptive round: the gradients at the rows of ``X``.

        Queries travel in float32 (half the bytes through the sandbox's pipe; the task
        computes in float64 and answers in float32); the particles stay float64.
        """
        st = yield {"query": np.ascontiguousarray(X, dtype=np.float32)}
        return np.asarray(st["grad"], dtype=np.float64)

    def snapshot(self, S: np.ndarray) -> Generator[dict[str, Any], dict[str, Any], None]:
        """Let the task score the particles ``S`` now (no round is spent)."""
        yield {"snapshot": np.ascontiguousarray(S, dtype=np.float64)}

    def run(
        self,
    ) -> Generator[dict[str, Any], dict[str, Any], None]:  # pragma: no cover - interface
        raise NotImplementedError

    # -- helpers -----------------------------------------------------------------
    @property
    def x0(self) -> np.ndarray:
        return np.array(self.info["x0"], dtype=np.float64)

    @staticmethod
    def every(total: int, snaps: int = 40) -> int:
        """Snapshot period giving about ``snaps`` snapshots over ``total`` steps."""
        return max(1, total // snaps)
