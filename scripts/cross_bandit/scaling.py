"""Regret quantiles against the horizon for ``cross-learning-bandit``, from published runs or a store.

Every job of the task plays 100 replications at four horizons ``T/8, T/4, T/2, T`` and records
the 99% quantile and the mean of the regret at each (``q99_T8``, ``q99_T4``, ``q99_T2``,
``regret_q99``; ``mean_T*``, ``regret_mean``) and their log-log slopes (``slope_q99``,
``slope_mean``). ``bench claims`` tests the per-job slope (a ``threshold`` claim on
``slope_q99``); this script prints, for every instance and method, the quantiles per horizon
(mean over seeds) and the per-job slopes (mean and range over seeds), the table the family
README quotes. ``bench claims`` has no slope kind of its own: the slope is a task metric.

Run from the repository root::

    python scripts/cross_bandit/scaling.py                    # published bundles in results/
    python scripts/cross_bandit/scaling.py --store .bench/runs  # a local run store
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.bundle import task_records

TASK = "cross-learning-bandit"
ORDER = [
    "sz-cross-exp3",
    "balseiro-known-nu",
    "exp3-per-context",
    "exp3-no-context",
    "uniform-bandit",
]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--results", default=None, help="published results folder (default: results)")
    ap.add_argument("--store", default=None, help="a local run store instead")
    ap.add_argument("--tier", default="standard")
    args = ap.parse_args(argv)
    df = task_records(TASK, results=args.results, store=args.store, tier=args.tier)
    if df.empty:
        raise SystemExit(f"no ok {args.tier}-tier runs of {TASK}")
    cols = ["metric.q99_T8", "metric.q99_T4", "metric.q99_T2", "metric.regret_q99"]
    for inst, sub in df.groupby("instance", sort=True):
        T = int(sub["iparam.T"].iloc[0]) if "iparam.T" in sub else None
        hs = [T // 8, T // 4, T // 2, T] if T else ["T/8", "T/4", "T/2", "T"]
        print(
            f"\n{inst}: 99% quantile of the regret (mean over seeds) at H = {hs}; per-job slopes, mean [min, max] over seeds"
        )
        print(
            f"{'method':20s} "
            + " ".join(f"{str(h):>8s}" for h in hs)
            + f" {'slope_q99':>22s} {'slope_mean':>22s} {'seeds':>5s}"
        )
        methods = [m for m in ORDER if m in set(sub["method"])] + sorted(
            set(sub["method"]) - set(ORDER)
        )
        for m in methods:
            g = sub[sub["method"] == m]
            q = [float(np.mean(g[c])) for c in cols]
            cells = []
            for s in ("metric.slope_q99", "metric.slope_mean"):
                v = g[s].to_numpy(dtype=float)
                cells.append(f"{np.nanmean(v):.3f} [{np.nanmin(v):.3f}, {np.nanmax(v):.3f}]")
            print(
                f"{m:20s} "
                + " ".join(f"{x:8.1f}" for x in q)
                + " "
                + " ".join(f"{c:>22s}" for c in cells)
                + f" {len(g):5d}"
            )


if __name__ == "__main__":
    main()
