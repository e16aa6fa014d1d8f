"""Measure the maxcut baselines in-process, for the README's table (not a bench sweep).

    python -m baselines.maxcut._measure --budget 60 --method gw genetic --instances G1-k2 G6-k3

One thread for numpy, numba and torch. Prints one line per (instance, method):
cut, best known, ratio, seconds. A method's own tier budget is not applied:
every job gets ``--budget`` seconds (``supports`` is checked first). Instances
come from the ``maxcut`` task (``bench.registry.get_task("maxcut").load``).
"""

from __future__ import annotations

import argparse
import os
import time

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import torch  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

from baselines.maxcut._graph import cut_value, read  # noqa: E402
from bench.registry import METHODS, discover_methods, get_task  # noqa: E402

NAMES = ("random-cut", "greedy-1opt", "tabu", "gw", "genetic", "pignn", "one-exchange")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--instances", nargs="+", required=True, help="maxcut instance ids, e.g. G1-k2")
    ap.add_argument("--method", nargs="+", default=list(NAMES))
    ap.add_argument("--budget", type=float, default=60.0)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    discover_methods()
    task = get_task("maxcut")
    with threadpool_limits(1):
        for iid in args.instances:
            inst = task.load(iid)
            ref = inst.references.get("best_known")
            for name in args.method:
                spec = METHODS.get(name)
                ok = spec.supports(inst) if spec.supports else True
                if ok is not True:
                    print(f"{iid:10s} {name:13s} skipped: {ok}", flush=True)
                    continue
                t0 = time.monotonic()
                labels = spec.target(inst, seed=args.seed, budget=args.budget, **spec.params)
                took = time.monotonic() - t0
                value = cut_value(read(inst), labels)
                ratio = f"{value / ref.value:.4f}" if ref else "-"
                best = f"{ref.value:.0f}" if ref else "-"
                print(f"{iid:10s} {name:13s} cut {value:9.0f}  best-known {best:>6s}  ratio {ratio}  {took:7.2f} s", flush=True)


if __name__ == "__main__":
    main()
