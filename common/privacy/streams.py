"""Building blocks of the distinct-count methods: the binary tree mechanism, hashing, and state packing.

Everything a method keeps between rounds goes through :func:`pack` into the
state the task carries and measures (``tasks/privacy/distinct``), and comes back
through :func:`unpack`; randomness is drawn from ``default_rng([seed, round])``,
so nothing survives a round outside the state.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["tree_height", "TreeNoise", "level_of", "pack_counts", "unpack_counts", "LEVEL_MIX"]

#: Odd 64-bit multiplier of the multiply-shift hash that assigns items to sampling levels.
LEVEL_MIX = 0x9E3779B97F4A7C15


def tree_height(T: int) -> int:
    """Number of heights ``H + 1`` of the binary tree over ``T`` steps (each step lies in one node per height)."""
    return max(1, math.ceil(math.log2(T + 1)) + 1)


class TreeNoise:
    """The noise of the binary tree mechanism (Dwork et al. 2010; Chan, Shi and Song 2011), kept in O(log T) words.

    The release at step ``t`` (1-indexed) is the exact prefix sum plus the noise of
    the dyadic nodes ``(h, t >> h)`` for each set bit ``h`` of ``t``. A node's
    noise is drawn the first time it is used; only the newest node of each height
    can be used again, so the state is that node's index and value per height.
    """

    def __init__(
        self,
        heights: int,
        sigma: float,
        idx: np.ndarray | None = None,
        val: np.ndarray | None = None,
    ) -> None:
        self.heights, self.sigma = int(heights), float(sigma)
        self.idx = (
            np.full(self.heights, -1, dtype=np.int64)
            if idx is None
            else np.asarray(idx, dtype=np.int64).copy()
        )
        self.val = (
            np.zeros(self.heights) if val is None else np.asarray(val, dtype=np.float64).copy()
        )

    def noise(self, ts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Total noise at the increasing 1-indexed steps ``ts`` (int64 array)."""
        out = np.zeros(len(ts))
        if not len(ts):
            return out
        for h in range(self.heights):
            node = ts >> h
            use = (node & 1).astype(bool)
            if not use.any():
                continue
            nodes = node[use]
            uniq, inv = np.unique(nodes, return_inverse=True)
            vals = self.sigma * rng.standard_normal(len(uniq))
            if uniq[0] == self.idx[h]:
                vals[0] = self.val[h]
            out[use] += vals[inv]
            self.idx[h], self.val[h] = uniq[-1], vals[-1]
        return out

    def state(self, prefix: str) -> dict[str, Any]:
        return {f"{prefix}idx": self.idx.copy(), f"{prefix}val": self.val.copy()}


def level_of(items: np.ndarray, key: int, levels: int) -> np.ndarray:
    """Sampling level of each item: trailing zeros of a keyed multiply-shift hash, capped at ``levels - 1``.

    An item is at level ``>= j`` with probability ``2^-j``.
    """
    x = (items.astype(np.uint64) ^ np.uint64(key)) * np.uint64(LEVEL_MIX)
    x ^= x >> np.uint64(29)
    x *= np.uint64(0xBF58476D1CE4E5B9)
    x ^= x >> np.uint64(32)
    lev = np.zeros(len(items), dtype=np.int64)
    for j in range(1, levels):
        lev += ((x & np.uint64((1 << j) - 1)) == 0).astype(np.int64)
    return lev


def pack_counts(counts: dict[int, Any], width: int = 1) -> dict[str, np.ndarray]:
    """``{"ids": int64 (m,), "vals": int64 (m, width)}`` from ``{id: int or tuple}``."""
    ids = np.fromiter(counts.keys(), dtype=np.int64, count=len(counts))
    if width == 1:
        vals = np.fromiter(counts.values(), dtype=np.int64, count=len(counts))
    else:
        vals = np.array(list(counts.values()), dtype=np.int64).reshape(len(counts), width)
    return {"ids": ids, "vals": vals}


def unpack_counts(state: dict[str, Any] | None, width: int = 1) -> dict[int, Any]:
    """Inverse of :func:`pack_counts`."""
    if state is None or "ids" not in state:
        return {}
    ids = np.asarray(state["ids"]).tolist()
    vals = np.asarray(state["vals"])
    vals = vals.tolist() if width == 1 else [list(v) for v in vals.tolist()]
    return dict(zip(ids, vals, strict=False))


class StreamMethod:
    """The method side of the ``private-distinct-count`` protocol.

    A subclass implements :meth:`run` on one round: ``(items, deltas, ts, memory, rng, state)``
    to ``(estimates, new memory, epsilon, delta)``, where ``memory`` is the dict it
    returned last round (``None`` on a reset) and ``ts`` the 1-indexed steps.
    Noise comes from ``default_rng([seed, round])`` (an audit's trials are rounds);
    no attribute of the object carries information from one round to the next.
    """

    def __init__(self, instance: Any, *, seed: int, budget: float, **params: Any) -> None:
        self.seed = int(seed)
        self.params = params

    def run(self, items, deltas, ts, memory, rng, state):  # pragma: no cover - interface
        raise NotImplementedError

    def select(self, state: dict[str, Any]) -> dict[str, Any]:
        if state.get("phase") != "stream":
            raise ValueError(f"unknown phase {state.get('phase')!r}; expected 'stream'")
        memory = None if state["reset"] else state["memory"]
        rng = np.random.default_rng([self.seed, int(state["round"])])
        items = np.asarray(state["items"], dtype=np.int64)
        deltas = np.asarray(state["deltas"], dtype=np.int64)
        ts = np.arange(int(state["t0"]) + 1, int(state["t0"]) + 1 + len(items), dtype=np.int64)
        est, mem, eps, delta = self.run(items, deltas, ts, memory, rng, state)
        return {
            "estimates": np.asarray(est, dtype=np.float64),
            "state": mem,
            "epsilon": float(eps),
            "delta": float(delta),
        }


def flip_stream(
    items: np.ndarray, deltas: np.ndarray, table: dict[int, list[int]], cap: int | None
) -> np.ndarray:
    """Per-update change ``z`` (-1, 0, +1) of the distinct count, updating ``table`` ``{id: [count, flips]}`` in place.

    With ``cap``, an item whose indicator has already changed ``cap`` times is
    frozen (its later updates are ignored), which bounds every item's influence
    on the ``z`` sequence by ``cap`` changes on *every* stream (Jain et al.'s
    flippancy blocking).
    """
    z = np.zeros(len(items), dtype=np.int64)
    for i, (x, d) in enumerate(zip(items.tolist(), deltas.tolist(), strict=False)):
        if not d:
            continue
        e = table.get(x)
        if e is None:
            e = table[x] = [0, 0]
        if cap is not None and e[1] >= cap:
            continue
        old = e[0]
        new = old + d
        e[0] = new
        zi = (new > 0) - (old > 0)
        if zi:
            e[1] += 1
            z[i] = zi
    return z
