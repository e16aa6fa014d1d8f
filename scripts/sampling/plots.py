"""Error against adaptive rounds, and rounds-to-eps against log d, from published log-concave-sampling runs.

Reads the task's ``ok`` records from the published bundles (``--results``, default ``results/``)
or from a local store (``--store``) and

- prints, per method and dimension (Gaussian instances, ``kappa = 4``), the mean and the 10/50/90%
  quantiles over replicates (instance seeds x run seeds) of ``rounds_to_eps``, ``grads_to_eps`` and
  the final ``w2``;
- fits, per method, ``log(rounds_to_eps) = a + p * log(log d)`` (the paper's claim: ``p ~ 1`` for
  the parallel Picard method, ``p ~ 2`` for Anari-Chewi-Vuong's) and ``log(rounds_to_eps) = a + q *
  log d`` (polynomial growth, ULA's), each with a 95% bootstrap CI resampling instances (all runs of
  an instance together) within each dimension;
- draws ``tasks/sampling/curves.png``: the error curve ``w2`` against the task's round count at
  each dimension (mean and 10-90% band), and ``rounds_to_eps`` against ``log d`` (log-log).

Run from the repository root::

    python scripts/sampling/plots.py
    python scripts/sampling/plots.py --store .bench/runs
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

TASK = "log-concave-sampling"
OUT = ROOT / "tasks" / "sampling" / "curves.png"
KAPPA = 4
ORDER = ["picard-parallel", "picard-lmc-acv", "randomized-midpoint", "ula"]


def load(results: str | None, store: str | None, tier: str) -> pd.DataFrame:
    """The task's ``ok`` Gaussian records at ``kappa = KAPPA`` of ``tier``."""
    from bench.bundle import task_records

    df = task_records(TASK, results=results or ROOT / "results", store=store, tier=tier)
    df = df[(df["iparam.target"] == "gauss") & (df["iparam.kappa"].astype(int) == KAPPA)].copy()
    df["d"] = df["iparam.d"].astype(int)
    return df


def fit_ci(df: pd.DataFrame, xf, reps: int = 2000, seed: int = 0) -> tuple[float, float, float]:
    """Slope of log(rounds_to_eps) on xf(d), with a 95% CI resampling instances within each d."""
    x = xf(df["d"].to_numpy(float))
    y = np.log(df["metric.rounds_to_eps"].to_numpy(float))
    if len(set(x)) < 2:
        return float("nan"), float("nan"), float("nan")
    est = float(np.polyfit(x, y, 1)[0])
    pos = {idx: i for i, idx in enumerate(df.index)}
    strata = [
        [[pos[i] for i in g.index] for _, g in sd.groupby("instance")] for _, sd in df.groupby("d")
    ]
    rng = np.random.default_rng(seed)
    boots = []
    for _ in range(reps):
        rows = [
            r
            for groups in strata
            for k in rng.integers(0, len(groups), len(groups))
            for r in groups[k]
        ]
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
    methods = [m for m in ORDER if m in set(df["method"])] + sorted(set(df["method"]) - set(ORDER))
    ds = sorted(df["d"].unique())

    print(f"Gaussian instances, kappa = {KAPPA}; replicates = instance seeds x run seeds")
    print(
        f"{'method':22s} {'d':>5s} {'n':>3s} {'rounds_to_eps mean [q10 q50 q90]':>36s} {'grads_to_eps mean':>18s} {'w2 mean':>8s} {'reached':>7s}"
    )
    for m in methods:
        for d in ds:
            s = df[(df["method"] == m) & (df["d"] == d)]
            if s.empty:
                continue
            r = s["metric.rounds_to_eps"].to_numpy(float)
            q = np.percentile(r, [10, 50, 90])
            print(
                f"{m:22s} {d:5d} {len(s):3d} {r.mean():10.1f} [{q[0]:6.0f} {q[1]:6.0f} {q[2]:6.0f}]"
                f"{s['metric.grads_to_eps'].mean():18.0f} {s['metric.w2'].mean():8.3f} {s['metric.reached'].mean():7.2f}"
            )
    print()
    print(
        "log(rounds_to_eps) = a + p log(log d)   and   = a + q log d   (95% bootstrap CI, instances resampled within d)"
    )
    for m in methods:
        s = df[df["method"] == m]
        p = fit_ci(s, lambda d: np.log(np.log(d)))
        q = fit_ci(s, np.log)
        print(
            f"{m:22s} p = {p[0]:5.2f} [{p[1]:5.2f}, {p[2]:5.2f}]   q = {q[0]:5.3f} [{q[1]:5.3f}, {q[2]:5.3f}]"
        )

    import matplotlib
    import matplotlib.ticker

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    curve_cols = sorted(c for c in df.columns if re.fullmatch(r"metric\.w2_r\d+", c))
    R = np.array([int(c.split("_r")[1]) for c in curve_cols])
    fig, axes = plt.subplots(1, len(ds) + 1, figsize=(4.2 * (len(ds) + 1), 3.8))
    colors = dict(zip(methods, plt.rcParams["axes.prop_cycle"].by_key()["color"], strict=False))
    for ax, d in zip(axes[:-1], ds, strict=False):
        for m in methods:
            s = df[(df["method"] == m) & (df["d"] == d)]
            if s.empty:
                continue
            v = s[curve_cols].to_numpy(float)
            ax.plot(R, v.mean(0), "o-", ms=3, color=colors[m], label=m)
            ax.fill_between(
                R, np.percentile(v, 10, 0), np.percentile(v, 90, 0), color=colors[m], alpha=0.15
            )
        ax.axhline(2.0, color="k", lw=0.8, ls="--")
        ax.set_xscale("log", base=2)
        ax.set_yscale("symlog", linthresh=0.5)
        ax.set_ylim(bottom=0)
        ax.set_title(f"d = {d}, kappa = {KAPPA}")
        ax.set_xlabel("adaptive rounds (oracle calls, counted by the task)")
        ax.set_ylabel("debiased W2 (mean, 10-90%)")
    axes[0].legend(fontsize=7)
    ax = axes[-1]
    for m in methods:
        s = df[df["method"] == m].groupby("d")["metric.rounds_to_eps"]
        mean = s.mean()
        ax.errorbar(
            np.log(mean.index),
            mean.values,
            yerr=s.std().values / np.sqrt(s.count().values),
            fmt="o-",
            ms=4,
            color=colors[m],
            label=m,
        )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xticks(np.log(ds))
    ax.set_xticklabels([str(d) for d in ds])
    ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    ax.set_xlabel("d (axis: log d, log scale)")
    ax.set_ylabel("rounds to W2 <= eps = 2 (mean +- se)")
    ax.set_title("rounds to eps against log d")
    fig.tight_layout()
    fig.savefig(args.out, dpi=110)
    print(f"\nwrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
