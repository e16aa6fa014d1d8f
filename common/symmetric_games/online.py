"""Online learners over ``A`` actions, vectorised over ``K`` independent scenarios (rewards in [0, 1]).

- :class:`Hedge`: exponential weights with a fixed step, ``x_t ~ exp(eta * sum_{s<t} r_s)``.
- :class:`SAOL`: the Strongly Adaptive Online Learner of Daniely, Gonen and
  Shalev-Shwartz (ICML 2015, "Strongly Adaptive Online Learning",
  Algorithm 1) with Hedge as the black box: one Hedge per interval of the
  geometric covering ``[i 2^k, (i + 1) 2^k - 1]`` (1-based rounds,
  ``i >= 1``); each interval's Hedge restarts at the interval's start with
  the step tuned to its length, ``sqrt(8 ln A / 2^k)``. The active
  intervals are combined with weights ``w(I)`` that start at ``eta_I =
  min(1/2, 1/sqrt(|I|))`` and are multiplied by ``1 + eta_I * (r . x^I -
  r . x)`` (the interval's instantaneous regret against the combination).
  This is our reading of SAOL from Daniely et al.; the equal-share paper's
  own instantiation ("SAOL_H") is UNVERIFIED (not read).

  ``min_level = m > 0`` (our variant, not Daniely et al.'s) keeps only the
  intervals of length ``2^m`` or more: the shortest intervals' Hedge copies
  restart every few rounds, play near-uniform strategies, and with their
  large starting weights they dilute the combination for thousands of rounds
  (measured in the README).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["Hedge", "SAOL", "softmax_rows"]


def softmax_rows(z: np.ndarray) -> np.ndarray:
    z = z - z.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


class Hedge:
    """Exponential weights with step ``eta`` for ``K`` scenarios at once."""

    def __init__(self, K: int, A: int, eta: float) -> None:
        self.eta = float(eta)
        self.cum = np.zeros((K, A))

    def play(self) -> np.ndarray:
        return softmax_rows(self.eta * self.cum)

    def update(self, reward: np.ndarray) -> None:
        self.cum += reward


class SAOL:
    """SAOL over Hedge black boxes (see the module docstring), ``K`` scenarios at once."""

    def __init__(self, K: int, A: int, min_level: int = 0) -> None:
        self.K, self.A = K, A
        self.min_level = int(min_level)
        self.tau = 1  # 1-based round of the next play
        self.levels: list[dict] = []
        self._x_levels: list[np.ndarray] = []
        self._p: np.ndarray | None = None

    def _refresh(self) -> None:
        """Start the intervals that begin at round ``tau``.

        With ``min_level = m`` the covering keeps the intervals of length
        ``2^k``, ``k >= m``, on the shifted clock ``tau + 2^m - 1`` (level
        ``m`` then starts at round 1); ``m = 0`` is Daniely et al.'s covering.
        """
        m = self.min_level
        clock = self.tau - 1 + (1 << m)
        k = m
        while (1 << k) <= clock:
            length = 1 << k
            if clock % length == 0:  # a new interval of level k starts here
                eta_i = min(0.5, 1.0 / math.sqrt(length))
                state = {
                    "eta_i": eta_i,
                    "eta_h": math.sqrt(8.0 * math.log(self.A) / length),
                    "w": np.full(self.K, eta_i),
                    "cum": np.zeros((self.K, self.A)),
                }
                if k - m < len(self.levels):
                    self.levels[k - m] = state
                else:
                    self.levels.append(state)
            k += 1

    def play(self) -> np.ndarray:
        self._refresh()
        xs = [softmax_rows(lv["eta_h"] * lv["cum"]) for lv in self.levels]
        w = np.stack([lv["w"] for lv in self.levels], axis=1)  # (K, L)
        p = w / w.sum(axis=1, keepdims=True)
        self._x_levels, self._p = xs, p
        return np.einsum("kl,lka->ka", p, np.stack(xs))

    def update(self, reward: np.ndarray) -> None:
        """Feed the rewards of the round just played (``(K, A)`` in [0, 1])."""
        x = np.einsum("kl,lka->ka", self._p, np.stack(self._x_levels))
        g = np.einsum("ka,ka->k", reward, x)
        for lv, xl in zip(self.levels, self._x_levels, strict=True):
            gl = np.einsum("ka,ka->k", reward, xl)
            lv["w"] = lv["w"] * (1.0 + lv["eta_i"] * (gl - g))
            lv["cum"] = lv["cum"] + reward
        self.tau += 1
