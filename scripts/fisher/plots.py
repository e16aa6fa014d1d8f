"""Error against n per method and t, with log-log slopes, from published fisher-information runs.

Reads the task's ``ok`` records from the published bundles (``--results``,
default ``results/``) or from a local store (``--store``). Every record is
one instance (a density, t, n and block of 10 independent samples) and holds
the relative error of each sample's estimate (``rel_err_r0`` ...
``rel_err_r9``); the two blocks give 20 samples per (density, t, n). It

- fits, per method and t, ``log(mean rel_err) = a_density + slope * log(n)``
  (one slope, one intercept per density) and prints the slope with a 95%
  bootstrap CI that resamples the 20 samples of every (density, n) cell;
  the same per density;
- prints the mean, median and 90% quantile of the relative error per method,
  t and n (over densities and samples) and the mean signed error (the bias);
- draws the mean relative error against n, one panel per t, into
  ``tasks/fisher/error_vs_n.png``.

Run from the repository root::

    python scripts/fisher/plots.py
    python scripts/fisher/plots.py --store .bench/runs
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

TASK = "fisher-information"
OUT = ROOT / "tasks" / "fisher" / "error_vs_n.png"
REPS = 10
ORDER = ("smoothed-plugin", "clipped-plugin", "kde-plugin", "dsm-fisher")


def load(results: str | None, store: str | None, tier: str) -> pd.DataFrame:
    """One row per (method, density, t, n, sample): the relative error of that sample's estimate."""
    from bench.bundle import task_records

    df = task_records(TASK, results=results or ROOT / "results", store=store, tier=tier)
    cols = [f"metric.rel_err_r{k}" for k in range(REPS)]
    rows = df[
        [
            "method",
            "iparam.density",
            "iparam.t",
            "iparam.n",
            "iparam.seed",
            "metric.signed_rel",
            *cols,
        ]
    ]
    long = rows.melt(
        id_vars=[
            "method",
            "iparam.density",
            "iparam.t",
            "iparam.n",
            "iparam.seed",
            "metric.signed_rel",
        ],
        value_vars=cols,
        var_name="rep",
        value_name="rel",
    )
    long = long.rename(
        columns={
            "iparam.density": "density",
            "iparam.t": "t",
            "iparam.n": "n",
            "iparam.seed": "block",
        }
    )
    long["t"] = long["t"].astype(float)
    long["n"] = long["n"].astype(int)
    return long


def _fit(cells: dict[tuple[str, int], np.ndarray]) -> float:
    """Common slope of log(mean) on log(n) with one intercept per density."""
    xs, ys = [], []
    for dens in sorted({d for d, _ in cells}):
        ns = sorted(n for d, n in cells if d == dens)
        x = np.log(np.array(ns, float))
        y = np.log([cells[dens, n].mean() for n in ns])
        xs.append(x - x.mean())
        ys.append(y - y.mean())
    x, y = np.concatenate(xs), np.concatenate(ys)
    return float((x @ y) / (x @ x))


def slope_ci(d: pd.DataFrame, reps: int = 2000, seed: int = 0) -> tuple[float, float, float]:
    """The slope and its 95% bootstrap CI (samples resampled within each (density, n) cell)."""
    cells = {(k[0], int(k[1])): g["rel"].to_numpy(float) for k, g in d.groupby(["density", "n"])}
    est = _fit(cells)
    rng = np.random.default_rng(seed)
    boots = [
        _fit({k: v[rng.integers(0, len(v), len(v))] for k, v in cells.items()}) for _ in range(reps)
    ]
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
    ts = sorted(df["t"].unique())
    dens = sorted(df["density"].unique())
    per_cell = df.groupby(["method", "t", "density", "n"])["rel"].size()
    print(
        f"{len(df)} estimates; samples per (method, density, t, n): {per_cell.min()}-{per_cell.max()}"
    )
    print(f"densities {dens}; t {ts}; n {sorted(df['n'].unique())}\n")

    fits: dict[tuple[str, float], tuple[float, float, float]] = {}
    print("slope of log(mean rel_err) on log(n), one intercept per density [95% bootstrap CI]")
    print(f"{'method':16s} " + " ".join(f"{'t = ' + format(t, 'g'):>24s}" for t in ts))
    for m in methods:
        cells = []
        for t in ts:
            fits[m, t] = slope_ci(df[(df["method"] == m) & (df["t"] == t)])
            est, lo, hi = fits[m, t]
            cells.append(f"{est:+.2f} [{lo:+.2f}, {hi:+.2f}]")
        print(f"{m:16s} " + " ".join(f"{c:>24s}" for c in cells))
    print("\nthe same per density")
    for m in methods:
        for d in dens:
            cells = []
            for t in ts:
                est, lo, hi = slope_ci(
                    df[(df["method"] == m) & (df["t"] == t) & (df["density"] == d)], reps=500
                )
                cells.append(f"{est:+.2f} [{lo:+.2f}, {hi:+.2f}]")
            print(f"{m:16s} {d:8s} " + " ".join(f"{c:>24s}" for c in cells))

    print("\nmean relative error (over densities and samples) by t and n")
    table = df.pivot_table(index=["method", "t"], columns="n", values="rel", aggfunc="mean")
    print(table.to_string(float_format=lambda v: f"{v:.2e}"))
    print("\nmedian and 90% quantile of the relative error, by t and n")
    q = df.groupby(["method", "t", "n"])["rel"].quantile([0.5, 0.9]).unstack()
    print(q.unstack("n").to_string(float_format=lambda v: f"{v:.2e}"))
    print("\nmean signed relative error (bias) by t and n")
    b = df.drop_duplicates(["method", "density", "t", "n", "block"])
    print(
        b.pivot_table(
            index=["method", "t"], columns="n", values="metric.signed_rel", aggfunc="mean"
        ).to_string(float_format=lambda v: f"{v:+.2e}")
    )

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(ts), figsize=(5 * len(ts), 4.4), sharey=True)
    for ax, t in zip(np.atleast_1d(axes), ts, strict=True):
        for m in methods:
            d = df[(df["method"] == m) & (df["t"] == t)]
            g = d.groupby("n")["rel"]
            mean = g.mean()
            ax.loglog(mean.index, mean.values, "o-", label=f"{m} (slope {fits[m, t][0]:+.2f})")
            if m == "smoothed-plugin":
                ax.fill_between(
                    mean.index, g.quantile(0.1).values, g.quantile(0.9).values, alpha=0.15
                )
        ns = np.array(sorted(df["n"].unique()), float)
        first = df[(df["method"] == methods[0]) & (df["t"] == t) & (df["n"] == ns[0])]["rel"].mean()
        ax.loglog(ns, first * (ns / ns[0]) ** -0.5, "k:", label="n^-1/2")
        ax.set_title(f"t = {t:g} (variance of the smoothing)")
        ax.set_xlabel("n (samples drawn by the task)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    np.atleast_1d(axes)[0].set_ylabel("mean |J_hat - J| / J (3 densities x 20 samples)")
    fig.suptitle(
        "fisher-information: relative error against n (band: smoothed-plugin's 10-90% quantiles)"
    )
    fig.tight_layout()
    fig.savefig(args.out, dpi=110)
    print(f"\nwrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
