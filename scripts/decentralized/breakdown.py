"""Breakdown curves of ``robust-gossip``: the largest ``b`` each method stays bounded at, per graph.

    python scripts/decentralized/breakdown.py [--store .bench/runs] [--tier standard] [--inline]

For every (workload, graph, placement) of the tier and every method, the
breakdown ``b`` is the largest ``b`` such that at every ``b' <= b`` the
method's run was ``bounded`` (``max_err <= 1``) under *every* attack (the
worst case over attacks and the three scales of the scaled ones stands in for
the paper's attacker, who picks its scale per defense). Beside it: the ratio
``byzantine_weight / mu_min`` of the honest subgraph at that ``b`` (the
quantity the paper's bounds are stated in) and, at the first ``b`` that
breaks, which attack broke it. Reads a run store (``bench run`` output;
results with ``status == ok`` only), or, with ``--inline``, runs every
method in this process (``run_inline``; about a minute for the standard tier).
"""

from __future__ import annotations

import argparse
import re

import pandas as pd

from bench.registry import get_task

ID = re.compile(r"(?P<workload>\w+)-(?P<graph>\w+)-n\d+-d\d+-b(?P<b>\d+)-(?P<place>\w+)-(?P<attack>\w+)-r\d+-s\d+$")


def inline_frame(tier: str) -> pd.DataFrame:
    from baselines.decentralized.rg_clipped_gossip import ClippedGossip
    from baselines.decentralized.rg_gossip import PlainGossip
    from baselines.decentralized.rg_nna import NNA
    from baselines.decentralized.rg_trimmed_mean import TrimmedMean
    from methods.decentralized.cs_plus_rg import CSPlusRG
    from tasks.decentralized.gossip import run_inline

    task = get_task("robust-gossip")
    progs = {"cs-plus-rg": CSPlusRG, "rg-gossip": PlainGossip, "rg-clipped-gossip": ClippedGossip, "rg-nna": NNA, "rg-trimmed-mean": TrimmedMean}
    rows = []
    for spec in task.instances(tier):
        inst = task.load(spec.id)
        for name, prog in progs.items():
            rows.append({"instance": spec.id, "method": name, **run_inline(task, inst, prog)})
    return pd.DataFrame(rows)


def store_frame(store: str, tier: str) -> pd.DataFrame:
    from bench.store import Store

    df = Store(store).frame("robust-gossip")
    df = df[(df["tier"] == tier) & (df["status"] == "ok")]
    out = df[["instance", "method"]].copy()
    out["bounded"] = pd.to_numeric(df["metric.bounded"])
    out["max_err"] = pd.to_numeric(df["metric.max_err"])
    # several seeds: bounded only if every seed was
    return out.groupby(["instance", "method"], as_index=False).agg(bounded=("bounded", "min"), max_err=("max_err", "max"))


def breakdown(df: pd.DataFrame) -> pd.DataFrame:
    """One row per (workload, graph, place, method): breakdown b, its ratio, and what broke next."""
    task = get_task("robust-gossip")
    fields = df["instance"].str.extract(ID)
    df = pd.concat([df.reset_index(drop=True), fields.reset_index(drop=True)], axis=1)
    df["b"] = df["b"].astype(int)
    ratio = {i: task.load(i).references["byzantine_ratio"].value for i in df["instance"].unique()}
    rows = []
    for (w, g, m), sub in df[df["b"] > 0].groupby(["workload", "graph", "method"]):
        best, broke = 0, ""
        for b, at in sub.groupby("b"):
            bad = at[at["bounded"] < 1]
            if len(bad):
                worst = bad.sort_values("max_err").iloc[-1]
                broke = f"b={b}: {worst['attack']} (max_err {worst['max_err']:.3g})"
                break
            best = b
        place = sub["place"].iloc[0]
        r = max((ratio[i] for i in sub[sub["b"] == best]["instance"]), default=0.0)
        tested = int(sub["b"].max())
        rows.append({"workload": w, "graph": g, "place": place, "method": m, "breakdown_b": best, "b_tested": tested, "ratio_at_breakdown": r, "first_break": broke})
    return pd.DataFrame(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--store", default=".bench/runs")
    ap.add_argument("--tier", default="standard")
    ap.add_argument("--inline", action="store_true", help="run every method here instead of reading a store")
    args = ap.parse_args()
    df = inline_frame(args.tier) if args.inline else store_frame(args.store, args.tier)
    out = breakdown(df)
    with pd.option_context("display.width", 200, "display.max_rows", 500, "display.max_colwidth", 60):
        print(out.to_string(index=False, float_format=lambda v: f"{v:.3g}"))


if __name__ == "__main__":
    main()
