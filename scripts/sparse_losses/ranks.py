"""The rank of the α = 1.5 loss among all losses on every track (the claim ``alpha15-ranks-top-two``).

Usage::

    python scripts/sparse_losses/ranks.py --store .bench/runs [--tier standard]
    python scripts/sparse_losses/ranks.py --results results [--tier standard]

A track is one instance (data set × model × label noise). For each, every
method's mean ``--metric`` over its ``ok`` runs is ranked (1 = best; ties share
the better rank) and the table prints the rank of every method. The last line
says whether ``--method`` has rank ≤ ``--max-rank`` on every track (the
paper's "α = 1.5 performs well across tasks", read as "rank ≤ 2 of all
losses"). ``bench claims`` has no rank comparison, so this claim is marked
``not_testable`` in claims.toml and read here. Methods' means are point
estimates: a rank says nothing about whether the difference exceeds the
run-to-run spread (the paired ``versus`` claims do).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

TASK = "sparse-probability-losses"


def load(store: str | None, results: str | None) -> pd.DataFrame:
    """The task's records (one row per job) from a run store or a results folder, registered configurations only."""
    from bench.claims import registered_records

    if results:
        from bench.bundle import load_bundles

        b = load_bundles(results, TASK, warn=False)
        return registered_records(b.records, b.methods.get(TASK, {}))
    from bench.store import Store

    return Store(store).frame(TASK)


def rank_table(df: pd.DataFrame, *, tier: str, metric: str) -> pd.DataFrame:
    """Ranks, one row per method and one column per instance (1 = best by the metric's direction)."""
    from bench.registry import get_task

    direction = get_task(TASK).meta.metric(metric).direction
    df = df[(df["tier"] == tier) & (df["status"] == "ok")]
    means = df.assign(v=pd.to_numeric(df[f"metric.{metric}"])).groupby(["instance", "method"])["v"].mean().unstack(0)
    return means.rank(ascending=direction == "min", method="min").astype("Int64")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--store")
    src.add_argument("--results")
    ap.add_argument("--tier", default="standard")
    ap.add_argument("--metric", default="accuracy")
    ap.add_argument("--method", default="fsoftargmax-alpha15")
    ap.add_argument("--max-rank", type=int, default=2)
    args = ap.parse_args()
    ranks = rank_table(load(args.store, args.results), tier=args.tier, metric=args.metric)
    if ranks.empty or args.method not in ranks.index:
        sys.exit(f"no ok {args.tier}-tier runs of {args.method} on {TASK}")
    cols = list(ranks.columns)
    print("| method | " + " | ".join(cols) + " |\n|---|" + "---:|" * len(cols))
    for name, row in ranks.iterrows():
        print(f"| {name} | " + " | ".join("–" if pd.isna(v) else str(v) for v in row) + " |")
    mine = ranks.loc[args.method]
    worst = mine[mine > args.max_rank]
    verdict = "holds" if worst.empty and not mine.isna().any() else "does not hold"
    print(
        f"\n{args.method}: rank <= {args.max_rank} by {args.metric} on {int((mine <= args.max_rank).sum())} of "
        f"{len(mine)} tracks ({args.tier}); the claim {verdict}"
        + ("" if worst.empty else f" (misses: {', '.join(f'{i} rank {r}' for i, r in worst.items())})")
    )


if __name__ == "__main__":
    main()
