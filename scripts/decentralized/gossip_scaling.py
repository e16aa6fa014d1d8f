"""Time per simulated round of the trusted gossip simulator, against the number of nodes.

Usage: python scripts/decentralized/gossip_scaling.py [--rounds 200] [--d 100] [--repeats 3]

Every round goes through the whole protocol a published run uses: a node
program's action is checked (:func:`tasks.decentralized.gossip.check_rows`),
the simulator mixes or exchanges, counts the round and the scalars, and the
next state is built (:class:`tasks.decentralized.gossip.GossipSession`). The
program is plain averaging (``x <- W x``, or the mean of what ``exchange``
delivers), so the time is the simulator's, not a method's.

Prints, for ``op`` in ``mix`` and ``exchange`` on 2-D tori of 16 ... 1,024
nodes (and rings, whose neighbour table is narrower), the median seconds per
round over ``--repeats`` runs, and the log-log slope of time against nodes
(``numpy.polyfit`` over the sizes). Quoted in tasks/decentralized/README.md,
"Performance"; the 1,000-round target is ``tests/benchmarks/test_gossip.py``.
"""

from __future__ import annotations

import argparse
import math
import os
import time
from typing import Any

import numpy as np

from tasks.decentralized.gossip import GossipSession, Simulator, make_graph, metropolis

SIZES = (16, 64, 256, 1024)


class _Averaging(GossipSession):
    """The session of a task with no oracle: what the simulator costs per round."""

    oracles = ()


def run_rounds(kind: str, n: int, d: int, rounds: int, op: str = "mix") -> float:
    """Seconds for ``rounds`` rounds of ``op`` on graph ``kind`` with ``n`` nodes, ``d`` scalars each."""
    g = make_graph(kind, n, 0)
    session = _Averaging(Simulator(g, metropolis(g)), max_rounds=rounds, max_steps=rounds + 1)
    x = np.random.default_rng(0).standard_normal((n, d))
    mask = g.mask[:, :, None]
    deg = np.maximum(g.degree, 1)[:, None]
    t0 = time.perf_counter()
    while (state := session.state()) is not None:
        if state["rounds_left"] == 0:
            session.apply({"op": "done", "x": x})
            continue
        session.apply({"op": op, "x": x})
        reply: Any = session.reply
        x = reply if op == "mix" else (reply * mask).sum(axis=1) / deg
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=200)
    ap.add_argument("--d", type=int, default=100)
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args()
    print(f"threads OMP={os.environ.get('OMP_NUM_THREADS', 'unset')}; d={a.d}; {a.rounds} rounds; median of {a.repeats}")
    print("| graph | op | " + " | ".join(f"n={n}" for n in SIZES) + " | slope |")
    print("|---|---|" + "---|" * (len(SIZES) + 1))
    for kind in ("torus", "ring"):
        for op in ("mix", "exchange"):
            per = []
            for n in SIZES:
                s = [run_rounds(kind, n, a.d, a.rounds, op) for _ in range(a.repeats)]
                per.append(float(np.median(s)) / a.rounds)
            slope = float(np.polyfit(np.log(SIZES), np.log(per), 1)[0])
            cells = " | ".join(f"{1e6 * p:.0f} µs" for p in per)
            print(f"| {kind} | {op} | {cells} | {slope:.2f} |", flush=True)
    n = max(SIZES)
    one_k = float(np.median([run_rounds("torus", n, a.d, 1000, "mix") for _ in range(a.repeats)]))
    print(f"1,000 rounds of mix, {int(math.sqrt(n))}x{int(math.sqrt(n))} torus, d={a.d}: {one_k:.2f} s (target < 10 s)")


if __name__ == "__main__":
    main()
