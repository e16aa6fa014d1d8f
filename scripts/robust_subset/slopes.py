"""Log-log slopes over k of GM Matching's and uniform sampling's errors (the paper's O(1/k) vs O(1/sqrt(k)) claim).

The claim ``gm-matching-rate-1-over-k`` in tasks/robust_subset/claims.toml is
a slope over k, which no single instance records (one instance has one k), so
this script tests it. For each setting (corruption kind, alpha, n, d) it fits
``log(error) = a + slope * log(k)`` by least squares and prints the slope with
a 95% bootstrap CI:

- gm-matching: ``gm_gap = ||mean(S) - GM(X)||`` (the quantity of the paper's
  theorem: the distance of the subset mean to the geometric median it matches);
- uniform: ``mean_gap = ||mean(S) - mean(X)||`` (uniform sampling's error
  against its own target, the O(1/sqrt(k)) of the abstract) and ``gm_gap``.

Two sources:

``--store DIR`` (or ``--results DIR``, a published results folder) reads the
task's ``ok`` records (the standard tier has k = 1%, 5%, 20% of n = 2,000 and
5,000, so 6 values of k per (kind, alpha, d) when both n are pooled; the
bootstrap resamples runs within each k).

``--direct`` draws instances in-process with the task's generator at
n = 2,000, d = 32 and k = 10, 20, ..., 320 (doubling), ``--reps`` instance
seeds, runs gm-matching and uniform (``--draws`` seeds per instance) and
scores them with the task's own formulas; the bootstrap resamples whole
instance seeds. This is the run the family README quotes.

Run from the repository root::

    OMP_NUM_THREADS=1 python scripts/robust_subset/slopes.py --direct
    python scripts/robust_subset/slopes.py --store .bench/runs
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import tasks.robust_subset as task_module
from baselines.robust_subset import uniform
from methods.robust_subset import gm_matching

TASK = "robust-subset-selection"


def slope(k: np.ndarray, err: np.ndarray) -> float:
    """Least-squares slope of ``log(err)`` against ``log(k)`` (arrays of equal length)."""
    return float(np.polyfit(np.log(k), np.log(err), 1)[0])


def boot_groups(
    groups: list[tuple[np.ndarray, np.ndarray]], reps: int, rng: np.random.Generator
) -> tuple[float, float, float]:
    """Slope of the pooled points and a 95% CI resampling whole groups (instance seeds)."""
    k = np.concatenate([g[0] for g in groups])
    e = np.concatenate([g[1] for g in groups])
    est = slope(k, e)
    boots = []
    for _ in range(reps):
        pick = rng.integers(0, len(groups), len(groups))
        boots.append(
            slope(
                np.concatenate([groups[i][0] for i in pick]),
                np.concatenate([groups[i][1] for i in pick]),
            )
        )
    lo, hi = np.percentile(boots, [2.5, 97.5])
    return est, float(lo), float(hi)


def boot_within_k(
    k: np.ndarray, e: np.ndarray, reps: int, rng: np.random.Generator
) -> tuple[float, float, float]:
    """Slope and a 95% CI resampling runs within each value of k (stratified)."""
    est = slope(k, e)
    idx_by_k = [np.flatnonzero(k == v) for v in np.unique(k)]
    boots = []
    for _ in range(reps):
        pick = np.concatenate([rng.choice(ix, len(ix)) for ix in idx_by_k])
        boots.append(slope(k[pick], e[pick]))
    lo, hi = np.percentile(boots, [2.5, 97.5])
    return est, float(lo), float(hi)


def direct(args: argparse.Namespace) -> None:
    rng = np.random.default_rng(0)
    ks = np.array([10, 20, 40, 80, 160, 320])
    settings = [("clean", 0)] + [(kind, a) for a in args.alphas for kind in task_module.KINDS[1:]]
    print(
        f"direct: n={args.n}, d={args.d}, k={ks.tolist()}, {args.reps} instance seeds, {args.draws} uniform draws each"
    )
    print(
        f"{'kind':9s} {'alpha':>5s}  {'gm-matching gm_gap':>30s}  {'uniform mean_gap':>30s}  {'uniform gm_gap':>30s}"
    )
    for kind, alpha in settings:
        g_gm, g_um, g_ug = [], [], []
        for seed in range(args.reps):
            g = task_module.generate(kind, alpha, args.n, args.d, seed)
            X = g["X"]
            gm = task_module.geometric_median(X)
            mean = X.mean(axis=0)
            e_gm, e_um, e_ug = [], [], []
            for k in ks:
                inst = SimpleNamespace(data={"X": X, "y": g["y"], "k": int(k)})
                solve = getattr(gm_matching.solve, "__wrapped__", gm_matching.solve)
                S = solve(inst, seed=0, budget=0, eps=1e-5, max_iter=5000, score="greedy")
                e_gm.append(np.linalg.norm(X[S].mean(0) - gm))
                um, ug = [], []
                for r in range(args.draws):
                    U = getattr(uniform.solve, "__wrapped__", uniform.solve)(
                        inst, seed=1000 * seed + r, budget=0
                    )
                    um.append(np.linalg.norm(X[U].mean(0) - mean))
                    ug.append(np.linalg.norm(X[U].mean(0) - gm))
                e_um.append(np.mean(um))
                e_ug.append(np.mean(ug))
            g_gm.append((ks.astype(float), np.array(e_gm)))
            g_um.append((ks.astype(float), np.array(e_um)))
            g_ug.append((ks.astype(float), np.array(e_ug)))
        cells = [boot_groups(g, args.boot, rng) for g in (g_gm, g_um, g_ug)]
        print(
            f"{kind:9s} {alpha:5d}  "
            + "  ".join(f"{e:+.3f} [{lo:+.3f}, {hi:+.3f}]".rjust(30) for e, lo, hi in cells)
        )


def from_records(args: argparse.Namespace) -> None:
    from bench.bundle import task_records

    df = task_records(TASK, results=args.results, store=args.store)
    df = df[(df["status"] == "ok") & (df["method"].isin(["gm-matching", "uniform"]))]
    if df.empty:
        raise SystemExit(
            f"no ok runs of gm-matching or uniform for {TASK} in {args.store or args.results}"
        )
    rng = np.random.default_rng(0)
    keys = ["iparam.kind", "iparam.alpha", "iparam.d"]
    print(
        "from records: slopes of log(error) on log(k) pooled over n, 95% CI resampling runs within each k"
    )
    print(
        f"{'kind':9s} {'alpha':>5s} {'d':>4s}  {'gm-matching gm_gap':>30s}  {'uniform mean_gap':>30s}  {'uniform gm_gap':>30s}"
    )
    for (kind, alpha, d), sub in df.groupby(keys, sort=True):
        cells = []
        for method, metric in (
            ("gm-matching", "gm_gap"),
            ("uniform", "mean_gap"),
            ("uniform", "gm_gap"),
        ):
            m = sub[sub["method"] == method]
            col = f"metric.{metric}"
            if col not in m.columns or m["iparam.k_size"].nunique() < 2:
                cells.append("n/a".rjust(30))
                continue
            k = m["iparam.k_size"].to_numpy(float)
            e = m[col].to_numpy(float)
            est, lo, hi = boot_within_k(k, e, args.boot, rng)
            cells.append(f"{est:+.3f} [{lo:+.3f}, {hi:+.3f}]".rjust(30))
        print(f"{kind:9s} {int(alpha):5d} {int(d):4d}  " + "  ".join(cells))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument(
        "--direct", action="store_true", help="draw instances in-process (the README's run)"
    )
    src.add_argument("--store", help="a bench store (e.g. .bench/runs)")
    src.add_argument("--results", help="a published results folder (e.g. results)")
    p.add_argument("--n", type=int, default=2000)
    p.add_argument("--d", type=int, default=32)
    p.add_argument("--alphas", type=int, nargs="+", default=[20, 40])
    p.add_argument("--reps", type=int, default=5, help="instance seeds (--direct)")
    p.add_argument("--draws", type=int, default=5, help="uniform draws per instance (--direct)")
    p.add_argument("--boot", type=int, default=2000, help="bootstrap resamples")
    args = p.parse_args()
    direct(args) if args.direct else from_records(args)


if __name__ == "__main__":
    main()
