"""Error against n per estimator, from published unnormalized-estimation runs.

Reads the task's ``ok`` records (``--results``, default ``results/``, or a
local ``--store``) and, per model (ising, tgauss, poly when present) and
method,

- prints the mean and the 10/50/90% quantiles of ``||theta_hat - theta*||_2``
  over the instance seeds at each n (the cost: the number of samples the task
  drew);
- fits ``log(err) = a + slope * log(n)`` over all rows and prints the slope
  with a 95% bootstrap CI that resamples instance seeds within each n
  (the paper's rate reads as slope -1/2);
- prints the ratio of mean errors to mle-exact's at the largest n, with a
  bootstrap CI (pairs resampled by instance), and the ratio to the
  Cramer-Rao RMS error ``sqrt(tr I^-1 / n)`` (``eff_ratio``);
- draws the error against n (mean, and the 10-90% band of the paper's two
  methods and the MLE) with the Cramer-Rao line into ``tasks/nce/error_vs_n.png``.

Run from the repository root::

    python scripts/nce/plots.py
    python scripts/nce/plots.py --store .bench/runs
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

TASK = "unnormalized-estimation"
OUT = ROOT / "tasks" / "nce" / "error_vs_n.png"
PAPER = ("alpha-cnce", "f-cond-nce")
BANDS = ("alpha-cnce", "f-cond-nce", "mle-exact")


def load(results: str | None, store: str | None, tier: str) -> pd.DataFrame:
    """The task's ``ok`` records of ``tier``, one row per instance and method (run seeds averaged)."""
    from bench.bundle import task_records

    df = task_records(TASK, results=results or ROOT / "results", store=store, tier=tier)
    df["n"] = df["iparam.n"].astype(int)
    df["model"] = df["iparam.model"].astype(str)
    df["iseed"] = df["iparam.seed"].astype(int)
    keys = ["model", "n", "iseed", "instance", "method"]
    return (
        df.groupby(keys, as_index=False)[["metric.err", "metric.eff_ratio", "ref.cramer_rao"]]
        .mean()
        .rename(columns={"metric.err": "err", "metric.eff_ratio": "eff", "ref.cramer_rao": "crb"})
    )


def slope_ci(d: pd.DataFrame, reps: int = 2000, seed: int = 0) -> tuple[float, float, float]:
    """Slope of log(err) on log(n) with a 95% CI resampling instance seeds within each n."""
    x, y = np.log(d["n"].to_numpy(float)), np.log(d["err"].to_numpy(float))
    if len(set(x)) < 2:
        return float("nan"), float("nan"), float("nan")
    est = float(np.polyfit(x, y, 1)[0])
    groups = [np.flatnonzero(d["n"].to_numpy() == n) for n in sorted(d["n"].unique())]
    rng = np.random.default_rng(seed)
    boots = []
    for _ in range(reps):
        rows = np.concatenate([g[rng.integers(0, len(g), len(g))] for g in groups])
        boots.append(np.polyfit(x[rows], y[rows], 1)[0])
    lo, hi = np.percentile(boots, [2.5, 97.5])
    return est, float(lo), float(hi)


def ratio_ci(
    a: np.ndarray, b: np.ndarray, reps: int = 5000, seed: int = 0
) -> tuple[float, float, float]:
    """mean(a) / mean(b) over paired instances, with a 95% bootstrap CI."""
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(a), (reps, len(a)))
    boots = a[idx].mean(1) / b[idx].mean(1)
    lo, hi = np.percentile(boots, [2.5, 97.5])
    return float(a.mean() / b.mean()), float(lo), float(hi)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--results", default=None, help="published results folder (default results/)")
    ap.add_argument("--store", default=None, help="read a local store instead")
    ap.add_argument("--tier", default="standard")
    ap.add_argument("--out", default=str(OUT))
    args = ap.parse_args(argv)
    df = load(args.results, args.store, args.tier)
    models = [m for m in ("ising", "tgauss", "poly") if m in set(df["model"])]
    methods = sorted(df["method"].unique(), key=lambda m: (m not in PAPER, m))
    fits = {}
    for model in models:
        dm = df[df["model"] == model]
        ns = sorted(dm["n"].unique())
        seeds = dm.groupby("n")["iseed"].nunique()
        print(f"== {model}: n = {ns}, instance seeds per n = {sorted(set(seeds))}")
        q = dm.groupby(["method", "n"])["err"].describe(percentiles=[0.1, 0.5, 0.9])
        print("err = ||theta_hat - theta*||_2: mean [10%, 50%, 90%] per n")
        for m in methods:
            cells = [
                f"{q.loc[(m, n), 'mean']:.4f} [{q.loc[(m, n), '10%']:.3f}, {q.loc[(m, n), '50%']:.3f}, {q.loc[(m, n), '90%']:.3f}]"
                for n in ns
                if (m, n) in q.index
            ]
            print(f"  {m:22s} " + "  ".join(cells))
        print(
            "slope of log(err) on log(n) [95% bootstrap CI, seeds resampled within n]; paper: -1/2"
        )
        for m in methods:
            fits[model, m] = slope_ci(dm[dm["method"] == m])
            est, lo, hi = fits[model, m]
            print(f"  {m:22s} {est:+.3f} [{lo:+.3f}, {hi:+.3f}]")
        nmax = ns[-1]
        top = dm[dm["n"] == nmax].pivot_table(index="iseed", columns="method", values="err")
        eff = dm[dm["n"] == nmax].groupby("method")["eff"].mean()
        print(
            f"at n = {nmax}: mean err / mle-exact's mean err [95% CI], and mean err / Cramer-Rao RMS"
        )
        for m in methods:
            if "mle-exact" in top and m in top:
                pair = top[[m, "mle-exact"]].dropna()
                r, lo, hi = ratio_ci(pair[m].to_numpy(), pair["mle-exact"].to_numpy())
                print(
                    f"  {m:22s} {r:.3f} [{lo:.3f}, {hi:.3f}]   eff_ratio {eff.get(m, float('nan')):.3f}"
                )
        print()

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(models), figsize=(5.6 * len(models), 4.6), squeeze=False)
    for ax, model in zip(axes[0], models, strict=True):
        dm = df[df["model"] == model]
        for i, m in enumerate(methods):
            d = dm[dm["method"] == m]
            g = d.groupby("n")["err"]
            mean = g.mean()
            style = "o-" if m in PAPER else "s--"
            ax.loglog(
                mean.index,
                mean.values,
                style,
                color=f"C{i}",
                lw=2 if m in PAPER else 1,
                label=f"{m} (slope {fits[model, m][0]:+.2f})",
            )
            if m in BANDS:
                ax.fill_between(
                    mean.index,
                    g.quantile(0.1).values,
                    g.quantile(0.9).values,
                    color=f"C{i}",
                    alpha=0.12,
                )
        crb = dm.groupby("n")["crb"].mean()
        ax.loglog(
            crb.index, crb.values, "k:", lw=1.2, label="Cramer-Rao RMS sqrt(tr I^-1/n) (slope -1/2)"
        )
        ax.set_xlabel("n (samples drawn by the task's oracle)")
        ax.set_ylabel("||theta_hat - theta*||_2 (mean over 20 seeds)")
        ax.set_title(f"{model}: error against n (bands: 10-90%)")
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(args.out, dpi=100)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
