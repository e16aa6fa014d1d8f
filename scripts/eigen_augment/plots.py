"""Time against n, and quality against the paper's regime quantity, from published eigenvalue-augmentation runs.

Reads the task's ``ok`` records from the published bundles (``--results``,
default ``results/``) or from a local store (``--store``) and

- fits, per method, ``log(wall_s) = a + slope * log(n)`` over all standard
  instances (n = 30, 50, 60, 100: four sizes; kinds pooled) and prints the
  slope with a 95% bootstrap CI resampling instances;
- prints each method's mean ``gain_ratio`` per instance kind;
- draws both (time against n; gain_ratio against the instance's regime
  quantity ``(bound - lambda_min(M)) / (R ln k)``) into
  ``tasks/eigen_augment/scaling.png``.

Run from the repository root::

    python scripts/eigen_augment/plots.py
    python scripts/eigen_augment/plots.py --store .bench/runs
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

TASK = "eigenvalue-augmentation"
OUT = ROOT / "tasks" / "eigen_augment" / "scaling.png"


def load(results: str | None, store: str | None) -> pd.DataFrame:
    """The task's ``ok`` records, from a store or published bundles."""
    from bench.bundle import task_records

    return task_records(TASK, results=results or ROOT / "results", store=store)


def slope_ci(df: pd.DataFrame, reps: int = 2000, seed: int = 0) -> tuple[float, float, float]:
    """Slope of log(wall_s) on log(n), pooled, with a 95% CI resampling whole instances."""
    x, y = np.log(df["iparam.n"].to_numpy(float)), np.log(df["wall_s"].to_numpy(float))
    est = float(np.polyfit(x, y, 1)[0])
    groups = [g.index.to_numpy() for _, g in df.groupby("instance")]
    rng = np.random.default_rng(seed)
    pos = {idx: i for i, idx in enumerate(df.index)}
    boots = []
    for _ in range(reps):
        pick = np.concatenate([groups[i] for i in rng.integers(0, len(groups), len(groups))])
        rows = [pos[i] for i in pick]
        if len(set(x[rows])) > 1:
            boots.append(np.polyfit(x[rows], y[rows], 1)[0])
    lo, hi = np.percentile(boots, [2.5, 97.5])
    return est, float(lo), float(hi)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--results", default=None, help="published results folder (default results/)")
    ap.add_argument("--store", default=None, help="read a local store instead")
    ap.add_argument("--out", default=str(OUT))
    args = ap.parse_args(argv)
    df = load(args.results, args.store)
    methods = sorted(df["method"].unique())
    print("method                        wall_s slope in n [95% CI]   median wall_s")
    fits = {}
    for m in methods:
        d = df[df["method"] == m]
        fits[m] = slope_ci(d)
        est, lo, hi = fits[m]
        print(f"{m:29s} {est:+.2f} [{lo:+.2f}, {hi:+.2f}]          {d['wall_s'].median():.3f}")
    print()
    table = df.pivot_table(
        index="method", columns="iparam.kind", values="metric.gain_ratio", aggfunc="mean"
    )
    print("mean gain_ratio by instance kind")
    print(table.round(3).to_string())

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4.2))
    for m in methods:
        d = df[df["method"] == m]
        med = d.groupby("iparam.n")["wall_s"].median()
        a1.loglog(med.index, med.values, "o-", label=f"{m} (slope {fits[m][0]:+.2f})")
        per = d.groupby("instance").agg(
            regime=("ref.regime", "first"), gain=("metric.gain_ratio", "mean")
        )
        a2.scatter(per["regime"], per["gain"], s=18, label=m)
    a1.set_xlabel("n (matrix size)")
    a1.set_ylabel("median wall time per job (s)")
    a1.set_title("time against n, standard tier (kinds pooled)")
    a1.legend(fontsize=7)
    a2.set_xlabel("(bound - lambda_min(M)) / (R ln k)")
    a2.set_ylabel("gain_ratio (mean over seeds)")
    a2.set_title("share of the possible increase against the regime quantity")
    a2.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(args.out, dpi=110)
    print(f"\nwrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
