"""Accuracy and upper objective against the oracle budget, per method, from a store or published bundles.

Reads the ``bilevel-hypercleaning`` records and prints, per method (mean over
instances and seeds, with the mean paired difference to ``tsp`` and a 95%
bootstrap CI over runs), the test accuracy of the iterate held at 25%, 50%
and 100% of the budget, the retrained test accuracy and the retrained upper
objective, the lower-level gap and the oracle calls by kind. The README's
performance table is this script's output on the published bundle.

    .venv/bin/python scripts/bilevel/convergence.py --results results     # published bundles
    .venv/bin/python scripts/bilevel/convergence.py --store .bench/runs   # a local store
"""

from __future__ import annotations

import argparse

import numpy as np

TASK = "bilevel-hypercleaning"
COLUMNS = (
    "test_acc_q25",
    "test_acc_q50",
    "test_acc",
    "test_acc_retrained",
    "val_loss_retrained",
    "lower_gap",
    "weight_auc",
)
CALLS = ("upper_calls", "lower_calls", "hvp_calls", "rounds")


def paired_ci(diff: np.ndarray, rng: np.random.Generator, boot: int = 2000) -> tuple[float, float]:
    """95% percentile bootstrap CI of the mean of ``diff`` (runs resampled)."""
    idx = rng.integers(0, diff.size, size=(boot, diff.size))
    means = diff[idx].mean(axis=1)
    return float(np.quantile(means, 0.025)), float(np.quantile(means, 0.975))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--results", help="folder of published bundles (results/)")
    src.add_argument("--store", help="a local store (.bench/runs)")
    args = p.parse_args()
    from bench.bundle import task_records

    df = task_records(TASK, results=args.results, store=args.store)
    df = df[df["status"] == "ok"].copy()
    if df.empty:
        raise SystemExit(f"no ok runs of {TASK} in {args.results or args.store}")
    df["seed"] = df["seed"].astype(int)
    rng = np.random.default_rng(0)
    ref = df[df["method"] == "tsp"].set_index(["instance", "seed"])
    print(f"{len(df)} ok runs; mean over instances and seeds; [paired difference to tsp, 95% CI]")
    print(f"{'method':18s}" + "".join(f"{c:>34s}" for c in COLUMNS))
    for method, sub in sorted(df.groupby("method"), key=lambda kv: kv[0] != "tsp"):
        s = sub.set_index(["instance", "seed"])
        cells = []
        for c in COLUMNS:
            col = f"metric.{c}"
            mean = float(s[col].mean())
            if method == "tsp":
                cells.append(f"{mean:.4f}".rjust(34))
                continue
            joined = s[[col]].join(ref[[col]].rename(columns={col: f"{col}_tsp"}), how="inner")
            diff = (joined[col] - joined[f"{col}_tsp"]).to_numpy(float)
            lo, hi = paired_ci(diff, rng)
            cells.append(f"{mean:.4f} [{diff.mean():+.4f} {lo:+.4f},{hi:+.4f}]".rjust(34))
        print(f"{method:18s}" + "".join(cells))
    print()
    print(f"{'method':18s}" + "".join(f"{c:>14s}" for c in CALLS) + f"{'wall_s':>10s}")
    for method, sub in sorted(df.groupby("method")):
        vals = [float(sub[f"metric.{c}"].mean()) for c in CALLS]
        print(
            f"{method:18s}"
            + "".join(f"{v:14.0f}" for v in vals)
            + f"{float(sub['wall_s'].median()):10.2f}"
        )


if __name__ == "__main__":
    main()
