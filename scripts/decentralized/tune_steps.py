"""Step-size grids of the decentralized-optimization methods and baselines, on the standard tier's instances.

Usage: python scripts/decentralized/tune_steps.py [--loss ridge] [--seeds 0]

For each baseline and each value of its step parameter, prints the number of
standard instances on which it reached f(mean x) - f* <= 1e-8 within the
round budget, the median rounds when it did, and how often it diverged
(final gap above the start). The published defaults are the largest steps
that never diverged (tasks/decentralized/README.md, "Baselines").
"""

from __future__ import annotations

import argparse
import math

import numpy as np

from baselines.decentralized.dgd import DGD
from baselines.decentralized.diging import DIGing
from baselines.decentralized.extra import EXTRA
from baselines.decentralized.network_dane import NetworkDANE
from bench.registry import get_task
from bench.task import InvalidSolution
from methods.decentralized.spdo import SPDO
from tasks.decentralized.gossip import run_inline

GRIDS = {
    "dgd": (DGD, "step", (1.0, 0.5)),
    "diging": (DIGing, "step", (0.25, 0.125, 0.0625, 0.03125)),
    "extra": (EXTRA, "step", (1.0, 0.5, 0.25)),
    "network-dane": (NetworkDANE, "mu", (0.1, 0.3, 1.0, 3.0)),
    "spdo": (SPDO, "lam", (0.03, 0.1, 0.3, 1.0)),
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--loss", default=None)
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--methods", default=",".join(GRIDS))
    a = ap.parse_args()
    task = get_task("decentralized-optimization")
    seeds = {int(s) for s in a.seeds.split(",")}
    ids = [s.id for s in task.instances("standard") if s.params["seed"] in seeds and (a.loss is None or s.params["loss"] == a.loss)]
    insts = [task.load(i) for i in ids]
    for name in a.methods.split(","):
        cls, key, grid = GRIDS[name]
        for v in grid:
            rounds, diverged, reached = [], 0, 0
            for inst in insts:
                try:
                    m = run_inline(task, inst, cls, params={key: v})
                except InvalidSolution:  # an iterate overflowed to inf: diverged
                    diverged += 1
                    continue
                if not math.isfinite(m["gap_final"]) or m["gap_final"] > 1.0:
                    diverged += 1
                if m["reached_eps8"]:
                    reached += 1
                    rounds.append(m["rounds_eps8"])
            med = float(np.median(rounds)) if rounds else float("nan")
            print(f"{name:13s} {key}={v:<6g} reached {reached}/{len(insts)}  median rounds {med:7.0f}  diverged {diverged}", flush=True)


if __name__ == "__main__":
    main()
