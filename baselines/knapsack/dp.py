"""``dp``: exact dynamic programming over capacity, with a bit-packed table for backtracking."""

from __future__ import annotations

from typing import Any

import numpy as np

from baselines.knapsack._items import read
from bench.registry import method

__all__ = ["MAX_CELLS", "dp_cells", "solve_dp", "supports_dp"]

#: Largest DP table solved: 8e9 cells is 1 GB of keep bits and ~3 s per 1e9
#: cells here; n=5000 of the full tier (~3e9 cells) fits, n=10000 (~1.3e10) does not.
MAX_CELLS = 8e9


def dp_cells(weights: np.ndarray, capacity: int) -> int:
    """Number of (item, capacity) cells :func:`solve_dp` updates and keeps one bit for.

    Item ``j`` updates the capacities ``c`` in ``[lo_j, hi_j]``: ``c`` must be
    able to hold item ``j`` and still reach ``capacity`` with the items after
    it (``lo_j``), and capacities beyond the weight of the items so far behave
    like that weight (``hi_j``). This is about half of ``n * capacity``.
    """
    w = np.asarray(weights, dtype=np.int64)
    prefix = np.cumsum(w)
    hi = np.minimum(capacity, prefix)
    lo = np.maximum(w, capacity - (int(w.sum()) - prefix))
    return int(np.maximum(hi - lo + 1, 0).sum())


def supports_dp(instance: Any) -> bool | str:
    """``True``, or why the DP table would be too large for this instance."""
    _, weights, capacity = read(instance)
    cells = dp_cells(weights, capacity)
    if cells > MAX_CELLS:
        return (
            f"DP table of {cells:.2e} cells (n={len(weights)}, capacity={capacity}) exceeds "
            f"the {MAX_CELLS:.0e}-cell limit ({MAX_CELLS / 8e9:.0f} GB of keep bits)"
        )
    return True


@method(
    name="dp",
    kind="baseline",
    tasks=["knapsack"],
    reference=(
        "R. Bellman, Dynamic Programming, Princeton 1957; "
        "Kellerer, Pferschy and Pisinger, Knapsack Problems, Springer 2004, sec. 2.3"
    ),
    version="1",
    params={},
    deterministic=True,
    supports=supports_dp,
)
def solve_dp(instance: Any, *, seed: int, budget: float) -> np.ndarray:
    """Exact: dynamic programming over capacity, O(n C) time, O(C) values and n C bits.

    ``f[c]`` is the best profit of the items seen so far within weight ``c``;
    each item updates ``f`` with one vectorised ``numpy.maximum`` over the
    capacities that can still matter (see :func:`dp_cells`) and records, as
    packed bits, where taking it was strictly better. Backtracking from the
    full capacity reads an optimal set from those bits. Instances whose table
    exceeds ``MAX_CELLS`` are skipped. ``seed`` and ``budget`` are unused.
    """
    profits, weights, capacity = read(instance)
    n = len(weights)
    p, w = profits.tolist(), weights.tolist()
    dtype = np.int32 if sum(p) < 2**31 - 1 else np.int64
    f = np.zeros(capacity + 1, dtype=dtype)
    # keep[j] = (lo_j, hi_j, bits): bit c - lo_j is set if item j is taken at capacity c.
    keep: list[tuple[int, int, np.ndarray | None]] = []
    seen, to_come = 0, sum(w)
    for pj, wj in zip(p, w, strict=True):
        prev_seen, seen, to_come = seen, seen + wj, to_come - wj
        hi = min(capacity, seen)
        if prev_seen < hi:
            # f is flat beyond the weight seen so far; extend it lazily.
            f[prev_seen + 1 : hi + 1] = f[prev_seen]
        lo = max(wj, capacity - to_come)
        if lo > hi:
            keep.append((lo, hi, None))
            continue
        take = f[lo - wj : hi - wj + 1] + pj  # a copy: each item is used at most once
        current = f[lo : hi + 1]
        keep.append((lo, hi, np.packbits(take > current)))
        np.maximum(current, take, out=current)

    x = np.zeros(n, dtype=np.int8)
    c = capacity
    for j in range(n - 1, -1, -1):
        lo, hi, bits = keep[j]
        if c > hi:
            # c exceeds the weight of items 0..j, so all of them fit: take them all.
            x[: j + 1] = 1
            break
        if bits is not None and c >= lo:
            k = c - lo
            if (int(bits[k >> 3]) >> (7 - (k & 7))) & 1:
                x[j] = 1
                c -= w[j]
    return x
