"""Time against n and quality per method, from published discrepancy runs.

Reads the task's ``ok`` records from the published bundles (``--results``,
default ``results/``) or from a local store (``--store``) and

- fits, per method, ``log(wall_s) = a + slope * log(n)`` on the sparse
  instances (``nnz/n = 8`` fixed, the paper's ``nnz(A) + n^3`` setting; the
  standard tier has n = 64-1,024) and on the dense ones (nnz = m n), and
  prints each slope with a 95% bootstrap CI resampling whole instances; then
  the same on the sparse instances with n >= 256 (where the start-up of a
  job no longer dominates);
- prints each method's mean ``ratio`` (``||Ax||_inf`` over the
  random-colouring scale) per kind and shape, and the paired difference
  fast-walk minus plain-walk;
- draws time against n (sparse and dense) and ratio against n into
  ``tasks/discrepancy/scaling.png``.

Run from the repository root::

    python scripts/discrepancy/plots.py
    python scripts/discrepancy/plots.py --store .bench/runs
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

TASK = "discrepancy"
OUT = ROOT / "tasks" / "discrepancy" / "scaling.png"
#: The second fit uses the sparse instances with n >= LARGE only.
LARGE = 256


def load(results: str | None, store: str | None, tier: str) -> pd.DataFrame:
    """The task's ``ok`` records of ``tier``, from a store or published bundles."""
    from bench.bundle import task_records

    df = task_records(TASK, results=results or ROOT / "results", store=store, tier=tier)
    df["n"] = df["iparam.n"].astype(int)
    return df


def slope_ci(df: pd.DataFrame, reps: int = 2000, seed: int = 0) -> tuple[float, float, float]:
    """Slope of log(wall_s) on log(n), pooled, with a 95% CI resampling whole instances."""
    x, y = np.log(df["n"].to_numpy(float)), np.log(df["wall_s"].to_numpy(float))
    if len(set(x)) < 2:
        return float("nan"), float("nan"), float("nan")
    est = float(np.polyfit(x, y, 1)[0])
    pos = {idx: i for i, idx in enumerate(df.index)}
    groups = [[pos[i] for i in g.index] for _, g in df.groupby("instance")]
    rng = np.random.default_rng(seed)
    boots = []
    for _ in range(reps):
        rows = [r for k in rng.integers(0, len(groups), len(groups)) for r in groups[k]]
        if len(set(x[rows])) > 1:
            boots.append(np.polyfit(x[rows], y[rows], 1)[0])
    lo, hi = np.percentile(boots, [2.5, 97.5])
    return est, float(lo), float(hi)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--results", default=None, help="published results folder (default results/)")
    ap.add_argument("--store", default=None, help="read a local store instead")
    ap.add_argument("--tier", default="standard")
    ap.add_argument("--out", default=str(OUT))
    args = ap.parse_args(argv)
    df = load(args.results, args.store, args.tier)
    df["family"] = np.where(df["iparam.kind"] == "sparse", "sparse", "dense")
    methods = sorted(df["method"].unique())
    fits: dict[tuple[str, str], tuple[float, float, float]] = {}
    print("wall_s slope in n [95% CI, instances resampled]")
    print(f"{'method':16s} {'sparse (nnz/n = 8)':>28s} {'dense (nnz = mn)':>28s}")
    for m in methods:
        cells = []
        for fam in ("sparse", "dense"):
            d = df[(df["method"] == m) & (df["family"] == fam)]
            fits[m, fam] = slope_ci(d)
            est, lo, hi = fits[m, fam]
            ns = sorted(d["n"].unique())
            cells.append(f"{est:+.2f} [{lo:+.2f}, {hi:+.2f}] n={ns[0]}-{ns[-1]}")
        print(f"{m:16s} {cells[0]:>28s} {cells[1]:>28s}")
    print()
    print(f"the same on the sparse instances with n >= {LARGE} only (the asymptotic end)")
    for m in methods:
        d = df[(df["method"] == m) & (df["family"] == "sparse") & (df["n"] >= LARGE)]
        est, lo, hi = slope_ci(d)
        print(
            f"{m:16s} {est:+.2f} [{lo:+.2f}, {hi:+.2f}] n={[int(v) for v in sorted(d['n'].unique())]}"
        )
    print()
    med = df.pivot_table(index="method", columns="n", values="wall_s", aggfunc="median")
    print("median wall_s by n (all kinds)")
    print(med.round(3).to_string())
    print()
    table = df.pivot_table(
        index="method",
        columns=["iparam.kind", "iparam.shape"],
        values="metric.ratio",
        aggfunc="mean",
    )
    print("mean ratio = ||Ax||_inf / (max_i ||a_i|| sqrt(2 ln 2m)) by kind and shape")
    print(table.round(3).to_string())
    if {"fast-walk", "plain-walk"} <= set(methods):
        key = ["instance", "seed"]
        a = df[df["method"] == "fast-walk"].set_index(key)["metric.ratio"]
        b = df[df["method"] == "plain-walk"].set_index(key)["metric.ratio"]
        diff = (a - b).dropna()
        per = diff.groupby(level="instance").mean()
        rng = np.random.default_rng(0)
        boots = [per.to_numpy()[rng.integers(0, len(per), len(per))].mean() for _ in range(5000)]
        lo, hi = np.percentile(boots, [2.5, 97.5])
        print(
            f"\nfast-walk - plain-walk ratio: mean {per.mean():+.4f} [95% CI {lo:+.4f}, {hi:+.4f}] "
            f"over {len(per)} instances ({len(diff)} pairs)"
        )

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(15, 4.4))
    for ax, fam in zip(axes[:2], ("sparse", "dense"), strict=True):
        for m in methods:
            d = df[(df["method"] == m) & (df["family"] == fam)]
            if d.empty:
                continue
            g = d.groupby("n")["wall_s"].median()
            ax.loglog(g.index, g.values, "o-", label=f"{m} (slope {fits[m, fam][0]:+.2f})")
        ns = np.array(sorted(df[df["family"] == fam]["n"].unique()), dtype=float)
        if len(ns):
            ref = (
                df[(df["family"] == fam) & (df["method"] == "plain-walk")]
                .groupby("n")["wall_s"]
                .median()
            )
            if not ref.empty:
                y0 = float(ref.iloc[-1])
                ax.loglog(
                    ns, y0 * (ns / ns[-1]) ** 3, "k:", lw=1, label="n^3 (paper, combinatorial)"
                )
        ax.set_xlabel("n (columns)")
        ax.set_ylabel("median wall time per job (s)")
        title = "sparse A, nnz/n = 8" if fam == "sparse" else "dense A (Gaussian, Rademacher)"
        ax.set_title(f"time against n: {title}")
        ax.legend(fontsize=7)
    ax = axes[2]
    for i, m in enumerate(methods):
        for fam, style in (("dense", "o-"), ("sparse", "s--")):
            g = df[(df["method"] == m) & (df["family"] == fam)].groupby("n")["metric.ratio"].mean()
            ax.semilogx(g.index, g.values, style, color=f"C{i}", label=f"{m} ({fam})")
    ax.set_xlabel("n (columns)")
    ax.set_ylabel("mean ratio (square and tall pooled)")
    ax.set_title("||Ax||_inf / random-colouring scale")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(args.out, dpi=100)
    print(f"\nwrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
