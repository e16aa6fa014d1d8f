"""Play one learner on a listed ``cross-learning-bandit`` instance in-process, for horizons beyond the standard tier.

The standard tier stops at T = 8000 (the CPU budget of a published sweep). This script runs a
learner through the task's own session and verifier in one process, without the sandbox (so
without its per-round round trip), on any listed instance, e.g. a full-tier one, and prints the
99% quantile and the mean of the regret at each of the instance's four horizons and their
log-log slopes: what the task would record, not a published result. It answers whether a
slope above 0.5 at T <= 8000 falls at longer horizons.

Run from the repository root::

    python scripts/cross_bandit/long_horizon.py auction-C20-K10-T64000-R100-s0 sz-cross-exp3 --seed 0
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from baselines.cross_bandit.exp3 import Exp3NoContext, Exp3PerContext, UniformBandit
from baselines.cross_bandit.oracle import BalseiroKnownNu
from bench.registry import METHODS, get_task
from bench.task import Instance
from methods.cross_bandit.sz_cross_exp3 import SchneiderZimmert

CLASSES = {
    "sz-cross-exp3": SchneiderZimmert,
    "balseiro-known-nu": BalseiroKnownNu,
    "exp3-per-context": Exp3PerContext,
    "exp3-no-context": Exp3NoContext,
    "uniform-bandit": UniformBandit,
}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("instance")
    ap.add_argument("method", choices=sorted(CLASSES))
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    task = get_task("cross-learning-bandit")
    inst = task.load(args.instance)
    params = dict(METHODS.get(args.method).params or {})
    public = Instance(
        id=inst.id, params=inst.params, data=inst.data, tags=inst.tags, digest="public"
    )
    t0 = time.process_time()
    learner = CLASSES[args.method](public, seed=args.seed, budget=1e9, **params)
    session = task.session(inst, args.seed)
    while (state := session.state()) is not None:
        session.apply(learner.select(state))
    m = task.evaluate(inst, session.solution())
    T = int(inst.params["T"])
    hs = [T // 8, T // 4, T // 2, T]
    q = [m["q99_T8"], m["q99_T4"], m["q99_T2"], m["regret_q99"]]
    mean = [m["mean_T8"], m["mean_T4"], m["mean_T2"], m["regret_mean"]]
    print(f"{args.instance} {args.method} seed {args.seed} ({time.process_time() - t0:.0f} s CPU)")
    print("H        " + " ".join(f"{h:>9d}" for h in hs))
    print("q99      " + " ".join(f"{v:9.1f}" for v in q) + f"   slope_q99 {m['slope_q99']:.3f}")
    print(
        "mean     " + " ".join(f"{v:9.1f}" for v in mean) + f"   slope_mean {m['slope_mean']:.3f}"
    )
    print(
        f"q99/sqrt(KT) at T: {m['regret_q99_per_sqrt_kt']:.3f}; uniform's expected regret {inst.references['uniform'].value:.1f}"
    )


if __name__ == "__main__":
    main()
