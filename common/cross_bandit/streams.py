"""The method side of the vectorised-replication protocol of ``cross-learning-bandit``.

The task runs ``S = n_horizons * R`` independent streams at once (see ``tasks/cross_bandit``):
stream ``j`` has horizon ``horizons[j // R]`` (longest first), and the streams still playing at
round ``t`` are the prefix ``0..n_t``. :class:`StreamLearner` turns a learner written for all
streams at once (arrays with a leading stream axis) into ``select(state)`` answers: it passes
last round's feedback to :meth:`StreamLearner.update`, then asks :meth:`StreamLearner.act` for
this round's actions. Streams never share state; each array row belongs to one stream.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["StreamLearner", "softmax_rows", "sample_rows", "exp_weights"]


def softmax_rows(z: np.ndarray) -> np.ndarray:
    """Softmax over the last axis, stabilised by subtracting the row maximum."""
    z = z - z.max(axis=-1, keepdims=True)
    np.exp(z, out=z)
    z /= z.sum(axis=-1, keepdims=True)
    return z


def exp_weights(cum_loss: np.ndarray, eta: np.ndarray) -> np.ndarray:
    """Exponential weights ``p(a) ∝ exp(-eta * cum_loss[..., a])``; ``eta`` broadcasts on the leading axes."""
    return softmax_rows(-eta * cum_loss)


def sample_rows(p: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One draw per row of the ``(n, K)`` probability matrix ``p`` (inverse CDF with one uniform per row)."""
    cdf = np.cumsum(p, axis=1)
    u = rng.random(p.shape[0]) * cdf[:, -1]
    return np.minimum((cdf < u[:, None]).sum(axis=1), p.shape[1] - 1)


class StreamLearner:
    """Base class: one object plays every stream of a job.

    Subclasses implement :meth:`act` and :meth:`update`; attributes set here:
    ``K``, ``C``, ``R``, ``S`` (streams), ``H`` (``int64 (S,)`` horizon of each stream),
    ``rng``. ``self.last`` holds the previous round's ``(contexts, actions)`` of the streams
    that played it.
    """

    def __init__(self, instance: Any, *, seed: int, budget: float, **params: Any) -> None:
        d = instance.data
        self.K, self.C, self.R = int(d["K"]), int(d["C"]), int(d["R"])
        hs = np.asarray(d["horizons"], dtype=np.int64)
        self.H = np.repeat(hs, self.R)
        self.S = len(self.H)
        self.rng = np.random.default_rng(seed)
        self.params = params
        self.last: tuple[np.ndarray, np.ndarray] | None = None

    def act(self, t: int, ctx: np.ndarray) -> np.ndarray:
        """Actions ``int64 (n,)`` of streams ``0..n`` at round ``t`` in contexts ``ctx`` (``int64 (n,)``)."""
        raise NotImplementedError

    def update(self, t: int, ctx: np.ndarray, acts: np.ndarray, loss_rows: np.ndarray) -> None:
        """Learn from round ``t``: streams ``0..n`` played ``acts`` in ``ctx`` and saw ``loss_rows`` ``(n, C)``."""
        raise NotImplementedError

    def select(self, state: dict[str, Any]) -> np.ndarray:
        t = int(state["t"])
        fb = np.asarray(state["feedback"], dtype=np.float64)
        if self.last is not None and len(fb):
            c0, a0 = self.last
            n = len(fb)
            self.update(t - 1, c0[:n], a0[:n], fb)
        ctx = np.asarray(state["contexts"], dtype=np.int64)
        acts = np.asarray(self.act(t, ctx), dtype=np.int64)
        self.last = (ctx, acts)
        return acts.astype(np.int16)
