"""Seconds per layer against the input width n for GANQ, GPTQ and weighted k-means, with fitted slopes.

GANQ's round costs O(m n^2) in its S-step (a back-substitution per column) and
O(m 2^b n^2) in its T-step (the 2^b x 2^b systems S_i H S_i^T); GPTQ costs
O(n^3) for the inverse Cholesky plus O(m n^2) for the error feedback; k-means
is O(m n 2^b) per Lloyd iteration. Here m = 256 rows, n in {128, 256, 512,
1024}, 3 bits, p = 2n calibration inputs drawn with correlated columns; one
thread, the median of ``--repeats`` runs per size, the slope of log time on
log n by least squares.

    OMP_NUM_THREADS=1 python scripts/lut_quantization/scaling.py [--repeats 3] [--out tasks/lut_quantization/scaling.csv]
"""

from __future__ import annotations

import argparse
import csv
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from baselines.lut_quantization.gptq import gptq_layer
from baselines.lut_quantization.kmeans import kmeans_layer
from methods.lut_quantization.ganq import ganq_layer

SIZES = (128, 256, 512, 1024)
M = 256


def problem(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng([seed, n])
    mix = np.eye(n) + rng.standard_normal((n, n)) / np.sqrt(n)
    return 0.02 * rng.standard_normal((M, n)), mix @ rng.standard_normal((n, 2 * n))


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", type=Path, default=Path("tasks/lut_quantization/scaling.csv"))
    a = ap.parse_args(argv)
    runs = {
        "ganq": lambda W, X: ganq_layer(W, X, 3),
        "gptq": lambda W, X: gptq_layer(W, X, 3),
        "kmeans": lambda W, X: kmeans_layer(W, X, 3, seed=0),
    }
    rows = []
    with threadpool_limits(1):
        for n in SIZES:
            W, X = problem(n)
            for name, run in runs.items():
                times = []
                for _ in range(a.repeats):
                    t = time.perf_counter()
                    run(W, X)
                    times.append(time.perf_counter() - t)
                rows.append({"method": name, "m": M, "n": n, "seconds": float(np.median(times))})
                print(
                    f"{name:7s} n={n:5d}  {rows[-1]['seconds']:.3f} s (median of {a.repeats})",
                    flush=True,
                )
    with a.out.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    for name in runs:
        pts = [(r["n"], r["seconds"]) for r in rows if r["method"] == name]
        slope = np.polyfit(np.log([p[0] for p in pts]), np.log([p[1] for p in pts]), 1)[0]
        print(f"{name}: slope of log seconds on log n = {slope:.2f}")
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
