"""Log-log slopes for the privacy family's scaling claims, from published records (or a store).

``bench claims`` has no slope comparison, so the two scaling claims of the family
are read here and quoted in tasks/privacy/README.md:

- private-classification: ``log(train_risk)`` on ``log(n)`` for every method over
  the ``erm-g0.05-n*-d20-o10-e1`` instances (n = 1,000-10,000; the paper's bound
  ``1/(gamma^2 eps n) + |S_out|/(gamma n)`` with |S_out| fixed predicts -1);
- private-distinct-count: ``log(space_words)`` and ``log(max_abs_error)`` on
  ``log(T)`` for every method, separately for ``W = 16`` and ``W = T^(2/3)``
  (the paper: O~(sqrt(W)) space and error for known W, i.e. slope 0 in T at fixed
  W and 1/3 when W = T^(2/3); the linear-space baseline's space grows like T).

Each slope is the least-squares fit over all runs; the 95% CI resamples runs
within each size (seeds), 2,000 bootstrap draws.

Run from the repository root::

    python scripts/privacy/slopes.py --results results
    python scripts/privacy/slopes.py --store .bench/runs
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))


def frame(args: argparse.Namespace, task: str) -> pd.DataFrame:
    """The task's ok standard-tier records of its current version (a store, or published bundles)."""
    from bench.bundle import task_records

    return task_records(task, results=args.results, store=args.store, tier="standard")


def slope_ci(
    x: np.ndarray, y: np.ndarray, reps: int = 2000, seed: int = 0
) -> tuple[float, float, float]:
    """Slope of ``log y`` on ``log x`` and a 95% CI resampling points within each x."""
    lx, ly = np.log(x), np.log(y)
    s = float(np.polyfit(lx, ly, 1)[0])
    rng = np.random.default_rng(seed)
    groups = [np.flatnonzero(x == v) for v in np.unique(x)]
    boots = []
    for _ in range(reps):
        idx = np.concatenate([rng.choice(g, size=len(g)) for g in groups])
        boots.append(np.polyfit(lx[idx], ly[idx], 1)[0])
    lo, hi = np.percentile(boots, [2.5, 97.5])
    return s, float(lo), float(hi)


def classification(args: argparse.Namespace) -> None:
    df = frame(args, "private-classification")
    df = df[df["instance"].str.match(r"erm-g0\.05-n\d+-d20-o10-e1-r1-s0")]
    print(
        "private-classification: slope of log(train_risk) on log(n), gamma 0.05, d 20, 10 outliers, eps 1 (claimed -1)"
    )
    print("| method | n values | slope | 95% CI |")
    print("|---|---|---|---|")
    for m, g in df.groupby("method"):
        n = g["iparam.n"].to_numpy(float)
        r = np.maximum(g["metric.train_risk"].to_numpy(float), 1e-6)
        s, lo, hi = slope_ci(n, r)
        print(f"| {m} | {len(np.unique(n))} | {s:.2f} | [{lo:.2f}, {hi:.2f}] |")


def distinct(args: argparse.Namespace) -> None:
    df = frame(args, "private-distinct-count")
    df = df[df["instance"].str.startswith("stream-")]
    df = df.assign(regime=np.where(df["iparam.W"] == 16, "W = 16", "W = T^(2/3)"))
    print(
        "private-distinct-count: slopes in T (T = 4,096-262,144) of space_words and max_abs_error"
    )
    print("| regime | method | space slope | 95% CI | error slope | 95% CI |")
    print("|---|---|---|---|---|---|")
    for (reg, m), g in df.groupby(["regime", "method"]):
        T = g["iparam.T"].to_numpy(float)
        sp = slope_ci(T, g["metric.space_words"].to_numpy(float))
        err = g["metric.max_abs_error"].to_numpy(float)
        er = slope_ci(T, np.maximum(err, 1e-9)) if err.max() > 0 else (float("nan"),) * 3
        print(
            f"| {reg} | {m} | {sp[0]:.2f} | [{sp[1]:.2f}, {sp[2]:.2f}] | {er[0]:.2f} | [{er[1]:.2f}, {er[2]:.2f}] |"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--store", help="a bench store (e.g. .bench/runs)")
    src.add_argument("--results", help="a published results folder (e.g. results)")
    args = ap.parse_args()
    classification(args)
    print()
    distinct(args)


if __name__ == "__main__":
    main()
