"""Step-size selection for the bilevel-hypercleaning methods, on development seeds only.

For each method, runs a small grid of step sizes (and its main parameter) on
``digits-p40-b3000`` (a full-tier instance; the standard tier has p30/p50)
with development seeds (default 100; the published runs use seeds 0-2),
in-process (:func:`tasks.bilevel.run_inline`), and prints each setting's
retrained validation loss ``val_loss_retrained``, which is the bilevel upper
objective ``F(x) = f(x, y*(x))`` at the returned weights. The registered
defaults are the grid points with the smallest mean value; test accuracy is
printed but never used to choose.

    .venv/bin/python scripts/bilevel/tune.py [--seeds 100] [--methods tsp,v-pbgd,...]
"""

from __future__ import annotations

import argparse
import itertools
import json

import numpy as np

from bench.registry import METHODS, discover_methods
from tasks.bilevel import BilevelHyperCleaning, run_inline

GRIDS: dict[str, dict[str, list[float]]] = {
    "tsp": {"lr_x": [10.0, 30.0, 100.0, 300.0], "lr_lam": [100.0, 1000.0]},
    "v-pbgd": {"lr_x": [30.0, 100.0, 300.0, 1000.0], "gamma": [1.0, 10.0, 100.0]},
    "bome": {"lr_x": [10.0, 30.0, 100.0, 300.0]},
    "aid-cg": {"lr_x": [10.0, 30.0, 100.0, 300.0]},
    "truncated-unroll": {"lr_x": [10.0, 30.0, 100.0, 300.0]},
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--instance", default="digits-p40-b3000")
    ap.add_argument("--seeds", default="100")
    ap.add_argument("--methods", default=",".join(GRIDS))
    args = ap.parse_args()
    discover_methods()
    task = BilevelHyperCleaning()
    inst = task.load(args.instance)
    seeds = [int(s) for s in args.seeds.split(",")]
    for name in args.methods.split(","):
        spec = METHODS.get(name)
        grid = GRIDS[name]
        rows = []
        for values in itertools.product(*grid.values()):
            over = dict(zip(grid, values, strict=True))
            params = {**spec.params, **over}
            res = [run_inline(task, inst, spec.target, seed=s, params=params) for s in seeds]
            F = float(np.mean([r["val_loss_retrained"] for r in res]))
            acc = float(np.mean([r["test_acc_retrained"] for r in res]))
            rows.append((F, over))
            print(
                f"{name:16s} {json.dumps(over):40s} F={F:.4f} (test_acc_retrained {acc:.3f}, not used)",
                flush=True,
            )
        best = min(rows, key=lambda r: r[0])
        print(f"BEST {name}: {json.dumps(best[1])} F={best[0]:.4f}", flush=True)


if __name__ == "__main__":
    main()
