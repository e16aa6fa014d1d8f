"""Rounds and local gradient calls to reach 1e-8, against the similarity knob delta (decentralized-optimization).

``python scripts/decentralized/delta_curve.py [--results results]`` reads the
published standard-tier runs (each method in its registered configuration,
:func:`bench.claims.registered_records`) and prints one markdown row per
method and delta: the median over instances and seeds of ``rounds_eps8``
(communication rounds until ``f(mean x) - f* <= 1e-8``; the 1,000-round
budget when never reached), how many runs reached it, the median local
gradient calls per node until then (``grads_eps8``), the median exact prox
calls per node in all, and the ratio of the method's median rounds to the
best baseline's at that delta. Quoted in
tasks/decentralized/optimization/README.md, "Performance"; a test checks the
quote against this output.
"""

from __future__ import annotations

import argparse
import warnings
from pathlib import Path

import pandas as pd

__all__ = ["TASK", "curve_table", "markdown", "main"]

TASK = "decentralized-optimization"


def curve_table(results: str | Path = "results") -> pd.DataFrame:
    """One row per method and delta: medians of rounds/grads to 1e-8, runs reaching it, prox calls."""
    from bench.bundle import load_bundles
    from bench.claims import registered_records

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        b = load_bundles(results, TASK)
    df = b.records
    if df.empty:
        return pd.DataFrame()
    df = df[(df["tier"] == "standard") & (df["status"] == "ok")]
    df = registered_records(df, b.methods.get(TASK, {}))
    delta = pd.to_numeric(df["iparam.delta"], errors="coerce")
    num = {k: pd.to_numeric(df[f"metric.{k}"], errors="coerce") for k in ("rounds_eps8", "grads_eps8", "reached_eps8", "prox_calls")}
    frame = pd.DataFrame({"method": df["method"], "kind": df["kind"], "delta": delta, **num})
    rows = []
    for (method, kind, d), g in frame.groupby(["method", "kind", "delta"]):
        rows.append({"method": method, "kind": kind, "delta": float(d), "runs": len(g),
                     "reached": int(g["reached_eps8"].sum()), "rounds": float(g["rounds_eps8"].median()),
                     "grads": float(g["grads_eps8"].median()), "prox": float(g["prox_calls"].median())})  # fmt: skip
    out = pd.DataFrame(rows)
    best = out[out["kind"] == "baseline"].groupby("delta")["rounds"].min()
    out["vs_best"] = out["rounds"] / out["delta"].map(best)
    return out.sort_values(["delta", "kind", "rounds", "method"], ascending=[True, False, True, True]).reset_index(drop=True)


def markdown(table: pd.DataFrame) -> str:
    """The table as README markdown."""
    lines = ["| delta | method | reached 1e-8 | median rounds | / best baseline | median grads per node | median prox calls |",
             "|---|---|---|---|---|---|---|"]  # fmt: skip
    for r in table.itertuples():
        name = f"**`{r.method}`**" if r.kind == "method" else f"`{r.method}`"
        lines.append(f"| {r.delta:g} | {name} | {r.reached}/{r.runs} | {r.rounds:.0f} | {r.vs_best:.2f} | {r.grads:.0f} | {r.prox:.0f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--results", default="results", help="the published results directory")
    a = ap.parse_args(argv)
    table = curve_table(a.results)
    if table.empty:
        raise SystemExit(f"error: no standard-tier {TASK} results under {a.results}")
    print(markdown(table))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
