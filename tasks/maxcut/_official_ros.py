"""Run the official ROS code on Gset, repetition by repetition, and compare it with a bundle.

A maintainer's script for the side-by-side in ``methods/maxcut/README.md``. Nothing of the
official code is committed: point ``--official-dir`` at a checkout of NetSysOpt/ROS. The
``run`` step imports neither bench nor numpy 2 specifics, so it runs in a throwaway
virtualenv with the official code's dependencies::

    python3 -m venv /tmp/rosoff && /tmp/rosoff/bin/pip install torch==2.13.0 torch_geometric networkx
    /tmp/rosoff/bin/python tasks/maxcut/_official_ros.py run --official-dir ROS --gset-dir ../shared/data/gset \\
        --k 3 --graphs 1-10 --reps 3 --out official_k3.jsonl
    python tasks/maxcut/_official_ros.py compare official_k3.jsonl \\
        results/maxcut/20261202-maintainers-c9247eccc0 --k 3 --graphs 1-10

The protocol is the official one, repeated: repetition ``r`` pre-trains with the official
``pretraining.py`` loop (``ros.utils.get_gnn`` and ``ros.utils.pretraining``: 500 random
``degree``-regular 100-node graphs, one epoch, the parser's default weight decay 0) at
pre-training seed ``2 + r`` (2 is ``add_parser.py``'s default), then fine-tunes and samples
each graph with ``ros.ros.ros`` at seed ``r`` (the runner scripts use 0) with the runner
scripts' flags (``--wd 1e-4 --lr 1e-2``, every other flag at its ``add_parser.py`` default).
That matches our ``ros`` version 2, which pre-trains one network per repetition. Each graph runs
in its own process with one math thread; the time is the official ``ros()`` call, dense ``W``
included. ``read_gset`` below is a re-typed copy of the official reader for
``--weight_mode 1`` (weights as given), since the official one reads a fixed relative path.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from types import SimpleNamespace

PRETRAIN_DEGREE = {2: 3, 3: 5, 10: 7}
"""Pre-training degree per k, as in the paper's Table 1 (the official code takes it as ``--d``)."""


def _graphs(spec: str) -> list[int]:
    out: list[int] = []
    for part in spec.split(","):
        lo, _, hi = part.partition("-")
        out.extend(range(int(lo), int(hi or lo) + 1))
    return out


def _official_args(k: int, seed: int):
    import torch

    return SimpleNamespace(
        seed=seed, k=k, epochs=10_000, lr=1e-2, tol=1e-2, patience=100, wd=1e-4, max_iter=100,
        save=0, pretraining_graphnum=500, pretraining_epochs=1, dim_embedding=100, hidden_dim=100,
        n=100, d=PRETRAIN_DEGREE[k], TORCH_DEVICE=torch.device("cpu"), TORCH_DTYPE=torch.float32,
    )


def _seed_all(seed: int) -> None:
    import random

    import numpy as np
    import torch

    random.seed(seed)
    np.random.seed(seed)  # noqa: NPY002 (the official set_random_seed seeds the global state)
    torch.manual_seed(seed)


def read_gset(path: Path, args):
    """Official ``utils.read_gset`` with ``weight_mode == 1`` (Gset weights as given)."""
    import networkx as nx

    g = nx.Graph()
    with open(path) as f:
        n = int(next(f).split()[0])
        args.n = n
        g.add_nodes_from(range(n))
        for line in f:
            i, j, w = map(int, line.split()[:3])
            g.add_edge(i - 1, j - 1, weight=float(w))
    return g


def _one(ns: argparse.Namespace) -> None:
    """In a child process whose cwd holds the pre-trained weights: one step, one JSON line."""
    import resource
    import time

    import torch

    torch.set_num_threads(1)
    sys.path.insert(0, ns.official_dir)
    args = _official_args(ns.k, ns.seed)
    _seed_all(ns.seed)
    if ns.graph is None:
        from ros.utils import get_gnn, pretraining

        args.wd = 0.0  # pretraining.py runs with the parser default
        net, opt, sched = get_gnn(args, args.TORCH_DEVICE, args.TORCH_DTYPE)
        t0 = time.perf_counter()
        pretraining(args, net, opt, sched, args.pretraining_epochs, args.pretraining_graphnum)
        print("RESULT " + json.dumps({"pretrain_s": time.perf_counter() - t0}))
        return
    from ros.ros import ros

    g = read_gset(Path(ns.gset_dir) / f"G{ns.graph}", args)
    t0, c0 = time.perf_counter(), time.process_time()
    labels = ros(args, g)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    cut = sum(d["weight"] for u, v, d in g.edges(data=True) if labels[u] != labels[v])
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print("RESULT " + json.dumps({"cut": cut, "wall_s": wall, "cpu_s": cpu, "maxrss_mb": rss}))


def _child(ns: argparse.Namespace, cwd: Path, graph: int | None, seed: int) -> dict:
    """Run ``_one`` in ``cwd``: pre-training when ``graph`` is None, else ROS on Gset graph ``graph``."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    # the child runs in cwd, so both directories are passed as absolute paths
    cmd = [sys.executable, str(Path(__file__).resolve()), "_one", "--official-dir", str(Path(ns.official_dir).resolve()),
           "--gset-dir", str(Path(ns.gset_dir).resolve()), "--k", str(ns.k), "--seed", str(seed)]
    cmd += [] if graph is None else ["--graph", str(graph)]
    out = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    lines = [x for x in out.stdout.splitlines() if x.startswith("RESULT ")]
    if out.returncode or not lines:
        what = "pre-training" if graph is None else f"graph {graph}"
        raise SystemExit(f"official run failed ({what}, seed {seed}): {out.stderr.strip()[-500:]}")
    return json.loads(lines[-1][7:])


def _run(ns: argparse.Namespace) -> None:
    graphs = _graphs(ns.graphs)
    with open(ns.out, "a") as out, tempfile.TemporaryDirectory() as tmp:
        for rep in range(ns.first_rep, ns.first_rep + ns.reps):
            cwd = Path(tmp) / f"rep{rep}"
            cwd.mkdir()
            pre = _child(ns, cwd, None, 2 + rep)
            for g in graphs:
                rec = {"graph": f"G{g}", "k": ns.k, "rep": rep, "pretrain_seed": 2 + rep, "seed": rep,
                       "pretrain_s": pre["pretrain_s"], **_child(ns, cwd, g, rep)}
                out.write(json.dumps(rec) + "\n")
                out.flush()
                print(json.dumps(rec), flush=True)


def _compare(ns: argparse.Namespace) -> None:
    import pandas as pd

    off = pd.read_json(ns.jsonl, lines=True)
    off = off[off.k == ns.k]
    names = [f"G{g}" for g in _graphs(ns.graphs)]
    recs = pd.concat([pd.read_parquet(Path(b) / "records.parquet") for b in ns.bundle], ignore_index=True)
    ours = recs[(recs.method == ns.method) & (recs["iparam.k"] == ns.k) & recs["iparam.graph"].isin(names)
                & (recs.status == "ok")]
    best = ours.groupby("iparam.graph")["ref.best_known"].first()
    off = off[off.graph.isin(names)].assign(ratio=lambda d: d.cut / d.graph.map(best))
    rows = []
    for name in names:
        o, m = off[off.graph == name], ours[ours["iparam.graph"] == name]
        rows.append(f"| {name} | {best[name]:.0f} | {o.cut.mean():.1f} | {o.ratio.mean():.4f} "
                    f"| {m['metric.cut'].mean():.1f} | {m['metric.ratio'].mean():.4f} "
                    f"| {o.wall_s.median():.1f} | {m.wall_s.median():.1f} |")
    print("| graph | best known | official mean cut | official ratio | ours mean cut | ours ratio "
          "| official median s | ours median s |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    print("\n".join(rows))
    from bench.stats import stratified_bootstrap_ci

    per_rep_off = off.groupby("rep").ratio.mean()
    per_rep_ours = ours.groupby(["master_seed", "rep"])["metric.ratio"].mean()
    ci_off = stratified_bootstrap_ci([off.ratio[off.graph == g].to_numpy() for g in names])
    ci_ours = stratified_bootstrap_ci([ours["metric.ratio"][ours["iparam.graph"] == g].to_numpy() for g in names])
    print(f"\nofficial: mean {ci_off[0]:.4f}, 95% CI [{ci_off[1]:.4f}, {ci_off[2]:.4f}] ({len(off)} runs), per repetition "
          + " / ".join(f"{x:.4f}" for x in per_rep_off))
    print(f"ours:     mean {ci_ours[0]:.4f}, 95% CI [{ci_ours[1]:.4f}, {ci_ours[2]:.4f}] ({len(ours)} runs), per repetition "
          + " / ".join(f"{x:.4f}" for x in per_rep_ours))
    print("(95% CIs: bench.stats.stratified_bootstrap_ci, runs resampled within each graph, as bench claims does)")
    print(f"median wall per graph: official {off.wall_s.median():.1f} s (cpu {off.cpu_s.median():.1f} s), "
          f"ours {ours.wall_s.median():.1f} s; official peak RSS up to {off.maxrss_mb.max():.0f} MB")


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--official-dir", required=True, type=Path)
    r.add_argument("--gset-dir", required=True, type=Path)
    r.add_argument("--k", type=int, default=3, choices=sorted(PRETRAIN_DEGREE))
    r.add_argument("--graphs", default="1-10")
    r.add_argument("--reps", type=int, default=3)
    r.add_argument("--first-rep", type=int, default=0,
                   help="first repetition (pre-training seed 2 + rep, fine-tuning seed rep); later runs add fresh ones")
    r.add_argument("--out", required=True, type=Path)
    one = sub.add_parser("_one")
    one.add_argument("--official-dir", required=True)
    one.add_argument("--gset-dir", required=True)
    one.add_argument("--k", type=int, required=True)
    one.add_argument("--graph", type=int, help="Gset graph number (default: pre-train in the working directory)")
    one.add_argument("--seed", type=int, required=True)
    c = sub.add_parser("compare")
    c.add_argument("jsonl", type=Path)
    c.add_argument("bundle", type=Path, nargs="+", help="one or more bundles; their records are pooled")
    c.add_argument("--k", type=int, default=3)
    c.add_argument("--graphs", default="1-10")
    c.add_argument("--method", default="ros")
    ns = p.parse_args(argv)
    {"run": _run, "_one": _one, "compare": _compare}[ns.cmd](ns)


if __name__ == "__main__":
    main()
