"""Error against cost per method, with log-log slopes, from published nested-expectation runs.

Reads the task's ``ok`` records (``--results``, default ``results/``; or a
local store with ``--store``). Every record holds one seed's errors at the
four budgets of its instance (``err00..err03`` at costs ``cost00..cost03``,
the integrand values the task's oracle counted). For each problem and method
it

- prints the mean, median and 10%/90% quantiles of ``|error|`` over seeds at
  every cost;
- fits ``log10 |error| = a + slope * log10 cost`` by least squares on the
  per-seed points, with a 95% bootstrap CI resampling whole seeds;
- prints the cost at which nkq's mean log10 error reaches nested MC's at the
  largest budget (log-linear interpolation between budgets);

and draws mean ``|error|`` (with the 10-90% band) against cost, one panel per
problem, into ``tasks/nested/error_vs_cost.png``.

Run from the repository root::

    python scripts/nested/plots.py
    python scripts/nested/plots.py --store .bench/runs
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

TASK = "nested-expectation"
OUT = ROOT / "tasks" / "nested" / "error_vs_cost.png"
METHODS = ("nkq", "mc-kq", "mlmc-nested", "nested-mc")
COLORS = {"nkq": "C3", "mc-kq": "C1", "mlmc-nested": "C2", "nested-mc": "C0"}
STAGES = 4


def load(results: str | None, store: str | None, tier: str) -> pd.DataFrame:
    """The task's ``ok`` records of ``tier``, from a store or published bundles."""
    from bench.bundle import task_records

    df = task_records(TASK, results=results or ROOT / "results", store=store, tier=tier)
    cols = [f"metric.{k}{i:02d}" for k in ("err", "cost") for i in range(STAGES)]
    if not set(cols) <= set(df.columns):
        raise SystemExit(f"no per-budget metrics ({cols[0]}...) in the {tier} records")
    return df.dropna(subset=cols)


def curves(df: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """``(errors, costs)`` of shape ``(runs, STAGES)``."""
    err = df[[f"metric.err{k:02d}" for k in range(STAGES)]].to_numpy(float)
    cost = df[[f"metric.cost{k:02d}" for k in range(STAGES)]].to_numpy(float)
    return err, cost


def slope_ci(
    err: np.ndarray, cost: np.ndarray, reps: int = 2000, seed: int = 0
) -> tuple[float, float, float]:
    """Slope of log10 |error| on log10 cost over all (seed, budget) points; CI resamples seeds."""
    x, y = np.log10(cost), np.log10(np.maximum(err, 1e-16))
    est = float(np.polyfit(x.ravel(), y.ravel(), 1)[0])
    rng = np.random.default_rng(seed)
    boots = []
    for _ in range(reps):
        rows = rng.integers(0, x.shape[0], x.shape[0])
        boots.append(np.polyfit(x[rows].ravel(), y[rows].ravel(), 1)[0])
    lo, hi = np.percentile(boots, [2.5, 97.5])
    return est, float(lo), float(hi)


def cost_to_reach(cost: np.ndarray, logerr: np.ndarray, target: float) -> float:
    """First cost at which the mean log10 error curve is <= target (log-linear interpolation); NaN if never."""
    lc = np.log10(cost)
    for k in range(len(logerr)):
        if logerr[k] <= target:
            if k == 0:
                return float(cost[0])
            t = (logerr[k - 1] - target) / (logerr[k - 1] - logerr[k])
            return float(10 ** (lc[k - 1] + t * (lc[k] - lc[k - 1])))
    return float("nan")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--results", default=None, help="published results folder (default results/)")
    ap.add_argument("--store", default=None, help="read a local store instead")
    ap.add_argument("--tier", default="standard")
    ap.add_argument("--out", default=str(OUT))
    a = ap.parse_args(argv)
    df = load(a.results, a.store, a.tier)
    problems = sorted(set(df["instance"]), key=lambda s: s)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ncol = 3
    nrow = -(-len(problems) // ncol)
    fig, axes = plt.subplots(nrow, ncol, figsize=(4.2 * ncol, 3.4 * nrow), squeeze=False)
    for ax, inst in zip(axes.ravel(), problems, strict=False):
        sub = df[df["instance"] == inst]
        print(f"\n== {inst}")
        mean_log: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        for m in METHODS:
            g = sub[sub["method"] == m]
            if g.empty:
                continue
            err, cost = curves(g)
            c = np.median(cost, axis=0)
            s, lo, hi = slope_ci(err, cost)
            mean_log[m] = (c, np.mean(np.log10(np.maximum(err, 1e-16)), axis=0))
            q10, q50, q90 = np.percentile(err, [10, 50, 90], axis=0)
            print(f"{m:12s} seeds {len(g):3d}  slope {s:+.3f} [{lo:+.3f}, {hi:+.3f}]")
            for k in range(STAGES):
                print(
                    f"    cost {c[k]:7.0f}  mean {err[:, k].mean():.3e}  median {q50[k]:.3e}"
                    f"  q10 {q10[k]:.3e}  q90 {q90[k]:.3e}"
                )
            ax.loglog(c, err.mean(axis=0), "o-", color=COLORS[m], label=f"{m} ({s:+.2f})")
            ax.fill_between(c, q10, q90, color=COLORS[m], alpha=0.12)
        if "nkq" in mean_log and "nested-mc" in mean_log:
            target = mean_log["nested-mc"][1][-1]
            c_nkq = cost_to_reach(mean_log["nkq"][0], mean_log["nkq"][1], target)
            print(
                f"nkq reaches nested-mc's mean log10 error at cost {mean_log['nested-mc'][0][-1]:.0f} "
                f"(10^{target:.3f}) at cost {c_nkq:.0f}"
            )
        ax.set_title(inst, fontsize=10)
        ax.set_xlabel("integrand values (oracle count)")
        ax.set_ylabel("|estimate - I|")
        ax.legend(fontsize=7, title="method (slope)", title_fontsize=7)
    for ax in axes.ravel()[len(problems) :]:
        ax.axis("off")
    fig.suptitle(f"{TASK} ({a.tier} tier): mean |error| over seeds, 10-90% band", fontsize=11)
    fig.tight_layout()
    fig.savefig(a.out, dpi=110)
    print(f"\nwrote {a.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
