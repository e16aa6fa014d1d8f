"""Seconds per call of our bisection f-softargmax against ``entmax``'s, side by side in one run.

Usage: ``OMP_NUM_THREADS=1 python scripts/sparse_losses/operator_speed.py [--rows 64] [--repeats 21]``

For each number of classes k, every operator runs on the same float32 logits
``(rows, k)`` (standard normal), interleaved, ``--repeats`` times after one
warm-up call; the table gives the medians in milliseconds:

- ``ours α=1.5``: ``methods.sparse_losses.fdiv.fsoftargmax`` with the α = 1.5
  divergence and ``q = 1`` (50 halvings, the methods' default);
- ``entmax_bisect``: ``entmax.entmax_bisect(X, alpha=1.5, n_iter=50)``;
- ``entmax15``: ``entmax.entmax15``, the exact sort-based entmax-1.5;
- ``ours JS``: our bisection with the Jensen–Shannon generator (a dense one);

and the largest absolute difference between ours and ``entmax15``. The last line
fits the slope of log(time) against log(k) for each operator over the sizes
where k >= 1,000 (bisection: O(k · n_iter); sort: O(k log k)).
Forward only (no autograd), one thread.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import torch
from entmax import entmax15, entmax_bisect

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from methods.sparse_losses.fdiv import DIVERGENCES, fsoftargmax

SIZES = (10, 100, 1_000, 4_000, 16_000, 32_000)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=64)
    ap.add_argument("--repeats", type=int, default=21)
    args = ap.parse_args()
    torch.set_num_threads(1)
    ops = {
        "ours α=1.5": lambda x: fsoftargmax(x, DIVERGENCES["alpha15"], n_iter=50),
        "entmax_bisect": lambda x: entmax_bisect(x, alpha=1.5, n_iter=50),
        "entmax15": lambda x: entmax15(x, dim=-1),
        "ours JS": lambda x: fsoftargmax(x, DIVERGENCES["js"], n_iter=50),
    }
    print(f"torch {torch.__version__}, float32 logits ({args.rows}, k), median ms of {args.repeats} calls, 1 thread")
    print("| k | " + " | ".join(ops) + " | max abs diff ours vs entmax15 |")
    print("|---:|" + "---:|" * (len(ops) + 1))
    medians: dict[str, list[float]] = {name: [] for name in ops}
    with torch.no_grad():
        for k in SIZES:
            x = torch.randn(args.rows, k, generator=torch.Generator().manual_seed(k))
            times: dict[str, list[float]] = {name: [] for name in ops}
            for op in ops.values():
                op(x)
            for _ in range(args.repeats):
                for name, op in ops.items():
                    t = time.perf_counter()
                    op(x)
                    times[name].append(time.perf_counter() - t)
            diff = (ops["ours α=1.5"](x) - entmax15(x, dim=-1)).abs().max().item()
            row = [statistics.median(times[name]) * 1e3 for name in ops]
            for name, v in zip(ops, row, strict=True):
                medians[name].append(v)
            print(f"| {k:,} | " + " | ".join(f"{v:.3f}" for v in row) + f" | {diff:.1e} |")
    big = [i for i, k in enumerate(SIZES) if k >= 1_000]
    logk = np.log([SIZES[i] for i in big])
    slopes = {name: np.polyfit(logk, np.log([medians[name][i] for i in big]), 1)[0] for name in ops}
    print("slope of log time vs log k (k >= 1,000): " + ", ".join(f"{n} {s:.2f}" for n, s in slopes.items()))


if __name__ == "__main__":
    main()
