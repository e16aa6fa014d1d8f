"""Speed-up of VIF over brute-force LOO as n grows, from the influence-attribution records.

Reads the task's ``ok`` records, from a published results folder
(``--results results``) or a local store (``--store .bench/runs``), and

1. prints, per instance and method, the median Pearson and the median
   log10 speed-up over the task's warm-started LOO (``log10_speedup``) and over
   the from-scratch LOO (``log10_speedup_cold``) and over the paper-protocol
   LOO, Adam retraining (``log10_speedup_adam``);
2. on the Cox series with d = 10 (n = 200, 400, 700, 1000: four sizes) fits
   the least-squares slope of log(time) on log(n) for the LOO (its time is
   ``method_s / time_ratio``, the same in every record of an instance), the
   from-scratch and Adam LOOs, ``vif`` and ``vif-batched``, and the slope of
   log10(speed-up) on log10(n), with a 95% bootstrap interval resampling the
   runs within each size;
3. extrapolates, from that fit, the n at which each method's speed-up over
   each LOO would reach 1000x (an extrapolation past the measured sizes:
   printed as such).

Run from the repository root::

    python scripts/influence/scaling.py --results results
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

TASK = "influence-attribution"
SERIES = ["cox-n200-d10-s0", "cox-n400-d10-s0", "cox-n700-d10-s0", "cox-n1000-d10-s0"]
METHODS = ["vif", "vif-batched", "naive-if", "tracin-grad", "random-influence"]


def records(args: argparse.Namespace):
    from bench.bundle import task_records

    df = task_records(TASK, results=args.results, store=None if args.results else args.store)  # --store has a default
    df = df[df["status"] == "ok"].copy()
    if df.empty:
        raise SystemExit(f"no ok runs of {TASK} in {args.results or args.store}")
    return df


def col(df, name: str) -> np.ndarray:
    return df[f"metric.{name}"].astype(float).to_numpy()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--results", help="published results folder (e.g. results)")
    ap.add_argument("--store", default=".bench/runs", help="run store, when --results is not given")
    ap.add_argument("--reps", type=int, default=2000, help="bootstrap resamples")
    args = ap.parse_args()
    df = records(args)
    rng = np.random.default_rng(0)

    print(
        "instance                  method              pearson  log10 speed-up over LOO: warm  from scratch  Adam"
    )
    for inst in sorted(df["instance"].unique()):
        for m in METHODS:
            sub = df[(df["instance"] == inst) & (df["method"] == m)]
            if sub.empty:
                continue
            print(
                f"{inst:25s} {m:18s} {np.median(col(sub, 'pearson')):8.4f} "
                f"{np.median(col(sub, 'log10_speedup')):10.2f} {np.median(col(sub, 'log10_speedup_cold')):12.2f}"
                f" {np.median(col(sub, 'log10_speedup_adam')):6.2f}"
            )

    ns = np.array([int(i.split("-")[1][1:]) for i in SERIES], dtype=float)
    lx = np.log10(ns)
    present = [i for i in SERIES if i in set(df["instance"])]
    if len(present) < len(SERIES):
        print(f"\nseries incomplete ({present}); no fit")
        return

    def runs(inst: str, m: str):
        return df[(df["instance"] == inst) & (df["method"] == m)]

    print("\nCox, d = 10, n = " + ", ".join(str(int(n)) for n in ns))
    vif_runs = [runs(i, "vif") for i in SERIES]
    loo = np.array([np.median(col(r, "method_s") / col(r, "time_ratio")) for r in vif_runs])
    cold = np.array(
        [np.median(col(r, "method_s") * 10 ** col(r, "log10_speedup_cold")) for r in vif_runs]
    )
    adam = np.array(
        [np.median(col(r, "method_s") * 10 ** col(r, "log10_speedup_adam")) for r in vif_runs]
    )
    print(
        f"  LOO (warm Newton)        times {np.round(loo, 3)} s, slope of log time on log n {np.polyfit(lx, np.log10(loo), 1)[0]:.2f}"
    )
    print(
        f"  LOO (from scratch)       times {np.round(cold, 3)} s, slope {np.polyfit(lx, np.log10(cold), 1)[0]:.2f}"
    )
    print(
        f"  LOO (Adam, 200 epochs)   times {np.round(adam, 3)} s, slope {np.polyfit(lx, np.log10(adam), 1)[0]:.2f}"
    )
    for m in ("vif", "vif-batched"):
        groups = [col(runs(i, m), "method_s") for i in SERIES]
        med = np.array([np.median(g) for g in groups])
        slope = np.polyfit(lx, np.log10(med), 1)[0]
        boot = [
            np.polyfit(lx, np.log10([np.median(rng.choice(g, g.size)) for g in groups]), 1)[0]
            for _ in range(args.reps)
        ]
        lo, hi = np.percentile(boot, [2.5, 97.5])
        print(f"  {m:24s} times {np.round(med, 3)} s, slope {slope:.2f} [{lo:.2f}, {hi:.2f}]")
        for name, ref in (("warm LOO", loo), ("from-scratch LOO", cold), ("Adam LOO", adam)):
            sp = np.log10(ref / med)
            b, a = np.polyfit(lx, sp, 1)
            where = 10 ** ((3.0 - a) / b) if b > 0 else float("inf")
            reach = (
                "reached at the measured sizes"
                if sp.max() >= 3
                else (
                    f"extrapolated n ~ {where:,.0f}"
                    if np.isfinite(where)
                    else "never (speed-up does not grow)"
                )
            )
            print(
                f"    speed-up over {name:17s} {np.round(10**sp, 1)}x; slope of log10 speed-up on log10 n {b:.2f}; 1000x: {reach}"
            )


if __name__ == "__main__":
    main()
