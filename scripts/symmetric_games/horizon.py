"""Gap to the equal share against the horizon T, on Majority Vote (plurality, n = 3, two actions).

Runs the task's own session and verifier in-process (no store, no sandbox) for
T in 250, 500, 1000, 2000, 4000, one seed, and prints per method the worst gap
against fixed opponents (``gap_fixed_pure``), against switching opponents and
over the suite, with the log-log slope of ``|gap|`` against T. Hedge's bound
against fixed identical opponents is ``sqrt(ln A / (2T))``, slope -1/2;
SAOL's strongly adaptive regret ``O(sqrt(|I|) log T)`` gives ``|gap|``
slope about -1/2 as well (up to the log).

Usage: ``.venv/bin/python scripts/symmetric_games/horizon.py`` (about a minute).
"""

from __future__ import annotations

import numpy as np

from baselines.symmetric_games.hedge_plain import HedgePlain
from bench.registry import get_task
from bench.task import Instance
from methods.symmetric_games.mimic import MimicOpponents
from methods.symmetric_games.saol_hedge import SaolHedge, SaolHedgeLong

HORIZONS = (250, 500, 1000, 2000, 4000)
METHODS = {
    "saol-hedge": (SaolHedge, {}),
    "saol-hedge-long": (SaolHedgeLong, {"min_level": 5}),
    "hedge-plain": (HedgePlain, {}),
    "mimic-opponents": (MimicOpponents, {"window": 1}),
}


def run(task, T: int, cls, kw: dict, seed: int = 0) -> dict[str, float]:
    fields = {"game": "plurality", "n": 3, "a": 2, "g": 0, "T": T}
    data, _ = task.generate(fields)
    inst = Instance(id=f"plurality-n3-a2-g0-T{T}", params=fields, data=data)
    sess = task.session(inst, seed)
    m = cls(inst, seed=seed, budget=1.0, **kw)
    while (st := sess.state()) is not None:
        sess.apply(m.select(st))
    return task.evaluate(inst, sess.solution())


def main() -> None:
    task = get_task("symmetric-games")
    print(
        "| method | metric | "
        + " | ".join(f"T={T}" for T in HORIZONS)
        + " | slope of log abs(gap) |"
    )
    print("|---" * (len(HORIZONS) + 3) + "|")
    for name, (cls, kw) in METHODS.items():
        res = [run(task, T, cls, kw) for T in HORIZONS]
        for metric in ("gap_fixed_pure", "gap_switching", "min_gap"):
            v = np.array([r[metric] for r in res])
            a = np.abs(v)
            slope = (
                np.polyfit(np.log(HORIZONS), np.log(a), 1)[0] if (a > 1e-12).all() else float("nan")
            )
            print(
                f"| `{name}` | {metric} | "
                + " | ".join(f"{x:.4f}" for x in v)
                + f" | {slope:.2f} |"
            )


if __name__ == "__main__":
    main()
