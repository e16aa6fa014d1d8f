"""Issue 7's quality target, computed: does each projected model at least match ``rsgm``?

``python scripts/manifold_diffusion/quality_target.py [--results results]`` prints, for every
standard-tier instance, the paired C2ST difference ``model - rsgm`` (same job seed; each
method in its registered configuration, :func:`bench.claims.registered_records`) of the
paper's configuration and of this bench's tuned variant, its mean with a 95% percentile
bootstrap interval over the seeds, and a reading: ``ahead`` (the whole interval below 0; lower
C2ST is better), ``behind`` (the whole interval above 0) or ``level``. The target ("sample
quality at least matches RSGM's on the standard tier at equal budget") holds on an instance
unless the model is ``behind`` there. This is the bench's own target, not a claim of the paper
(those are in ``claims.toml``). With 3 seeds an interval is rough: it resamples three pairs.
"""

from __future__ import annotations

import argparse
import math
import warnings
from pathlib import Path

import pandas as pd

__all__ = ["MODELS", "target_table", "markdown", "main"]

TASK = "manifold-diffusion"
MODELS = ("projected-diffusion", "projected-diffusion-tuned")
BASELINE = "rsgm"
ORDER = ("torus2", "torus10", "sphere2", "so3", "so6", "u4", "u9")


def target_table(results: str | Path = "results", *, seed: int = 0) -> pd.DataFrame:
    """One row per model and standard instance: ``model, instance, pairs, diff, ci_low, ci_high, reading``."""
    from bench.bundle import load_bundles
    from bench.claims import registered_records
    from bench.stats import bootstrap_ci

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        b = load_bundles(results, TASK)
    df = b.records
    df = df[(df["tier"] == "standard") & (df["status"] == "ok")]
    df = registered_records(df, b.methods.get(TASK, {}))
    c2st = df.assign(c2st=pd.to_numeric(df["metric.c2st"], errors="coerce")).set_index(["method", "instance", "seed"])["c2st"].sort_index()
    rows = []
    for model in MODELS:
        for inst in ORDER:
            try:
                a, r = c2st.loc[(model, inst)], c2st.loc[(BASELINE, inst)]
            except KeyError:
                continue
            d = (a - r).dropna()
            lo, hi = bootstrap_ci(d.to_numpy(), seed=seed)
            reading = "–" if math.isnan(lo) else "ahead" if hi < 0 else "behind" if lo > 0 else "level"
            rows.append({"model": model, "instance": inst, "pairs": len(d), "diff": float(d.mean()),
                         "ci_low": lo, "ci_high": hi, "reading": reading})  # fmt: skip
    return pd.DataFrame(rows, columns=["model", "instance", "pairs", "diff", "ci_low", "ci_high", "reading"])


def markdown(table: pd.DataFrame) -> str:
    """The table as README markdown, one column per instance, and a verdict line per model."""
    insts = [i for i in ORDER if i in set(table["instance"])]
    lines = ["| C2ST − rsgm (paired, 95% CI) | " + " | ".join(insts) + " | target |", "|---|" + "---|" * (len(insts) + 1)]
    for model in MODELS:
        t = table[table["model"] == model].set_index("instance")
        if t.empty:
            continue
        cells = []
        for i in insts:
            if i not in t.index:
                cells.append("–")
                continue
            r = t.loc[i]
            cells.append(f"{r['diff']:+.3f} [{r['ci_low']:+.3f}, {r['ci_high']:+.3f}] {r['reading']}")
        behind = [i for i in insts if i in t.index and t.loc[i, "reading"] == "behind"]
        verdict = "holds" if not behind else f"not met ({', '.join(behind)})"
        lines.append(f"| `{model}` | " + " | ".join(cells) + f" | {verdict} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--results", default="results", help="the published results directory")
    a = ap.parse_args(argv)
    table = target_table(a.results)
    if table.empty:
        raise SystemExit(f"error: no standard-tier {TASK} results of {', '.join(MODELS)} and {BASELINE} under {a.results}")
    print(markdown(table))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
