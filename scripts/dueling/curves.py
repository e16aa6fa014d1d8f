"""Comparisons-to-eps curves of ``dueling-optimization`` from a published bundle (or a store), per instance.

Prints, per instance and method: the mean final gap, the mean per-run
``eps_slope`` (the slope of log comparisons-to-eps against log 1/eps, the
per-run form of the paper's rates), the levels reached, and, for gp-ngd
(our sign-NGD reading of the abstract, a baseline since its version 2) against
every other method, the comparisons each needs to reach the deepest eps
level that *both* reach in every seed (the cost at equal quality), with their
ratio. Run from the repository root::

    python scripts/dueling/curves.py results/dueling-optimization/<bundle>/records.parquet
"""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd

sys.path.insert(0, ".")
from tasks.dueling import BUDGETS, EPS_LEVELS


def main(path: str) -> None:
    d = pd.read_parquet(path)
    d = d[(d["status"] == "ok") & (d["tier"] == "standard")]
    budget = BUDGETS["standard"]
    cols = [f"metric.frac_to_eps{j:02d}" for j in range(len(EPS_LEVELS))]
    print(f"{'instance':26s} {'method':19s} {'gap':>9s} {'slope':>6s} {'levels':>6s}")
    for inst, g in d.groupby("instance"):
        for meth, h in g.groupby("method"):
            print(
                f"{inst:26s} {meth:19s} {h['metric.gap'].mean():9.2e} {h['metric.eps_slope'].mean():6.2f} {h['metric.levels_reached'].mean():6.1f}"
            )
        gp = g[g["method"] == "gp-ngd"][cols].to_numpy()
        for meth in sorted(set(g["method"]) - {"gp-ngd"}):
            other = g[g["method"] == meth][cols].to_numpy()
            both = np.flatnonzero((gp < 1.0).all(axis=0) & (other < 1.0).all(axis=0))
            if both.size == 0:
                print(f"    gp-ngd vs {meth}: no level reached by both in every seed")
                continue
            j = int(both[-1])
            a, b = gp[:, j].mean() * budget, other[:, j].mean() * budget
            print(
                f"    gp-ngd vs {meth}: eps = {EPS_LEVELS[j]:.1e}: {a:9.0f} vs {b:9.0f} comparisons (ratio {b / a:5.1f}x)"
            )


if __name__ == "__main__":
    main(sys.argv[1])
