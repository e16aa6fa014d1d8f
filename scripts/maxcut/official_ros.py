"""Run the official ROS code on Gset, repetition by repetition, and compare it with a bundle.

A maintainer's script for the side-by-side in ``methods/maxcut/README.md``. Nothing of the
official code is committed: point ``--official-dir`` at a checkout of NetSysOpt/ROS. The
``run`` step imports neither bench nor numpy 2 specifics, so it runs in a throwaway
virtualenv with the official code's dependencies::

    python3 -m venv /tmp/rosoff && /tmp/rosoff/bin/pip install torch==2.13.0 torch_geometric networkx
    /tmp/rosoff/bin/python scripts/maxcut/official_ros.py run --official-dir ROS --gset-dir ../shared/data/gset \\
        --k 3 --graphs 1-10 --reps 3 --out official_k3.jsonl
    python scripts/maxcut/official_ros.py compare official_k3.jsonl \\
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

Two more steps check that our ``ros`` is the official algorithm, not just a similar one. They
run in this repository's environment and borrow torch_geometric from the official virtualenv::

    python scripts/maxcut/official_ros.py trajectory --official-dir ROS \\
        --official-site /tmp/rosoff/lib/python3.11/site-packages --gset-dir ../shared/data/gset --graph 6
    python scripts/maxcut/official_ros.py pretraining-check --official-dir ROS \\
        --official-site /tmp/rosoff/lib/python3.11/site-packages --gset-dir ../shared/data/gset

``trajectory`` fine-tunes with both loops from one start; ``pretraining-check`` pre-trains with
both from one start and the same inputs. ``run --first-rep N`` adds fresh repetitions to a
file that already holds ``0 .. N-1``.
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

TASK_DIR = Path(__file__).resolve().parents[2] / "tasks" / "maxcut"
"""The task's data (``paper_results.csv``, the kept official runs ``official_ros_k3.jsonl``)."""

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


def _both_runs(ns: argparse.Namespace, reps: str | None = None):
    """The graphs, the kept official runs of ``ns.jsonl`` (with ``ratio``), our ok runs in the bundles, best knowns."""
    import pandas as pd

    names = [f"G{g}" for g in _graphs(ns.graphs)]
    off = pd.read_json(ns.jsonl, lines=True)
    off = off[(off.k == ns.k) & off.graph.isin(names)]
    if reps:
        off = off[off.rep.isin(_graphs(reps))]
    recs = pd.concat([pd.read_parquet(Path(b) / "records.parquet") for b in ns.bundle], ignore_index=True)
    ours = recs[(recs.method == ns.method) & (recs["iparam.k"] == ns.k) & recs["iparam.graph"].isin(names)
                & (recs.status == "ok")]
    best = ours.groupby("iparam.graph")["ref.best_known"].first()
    return names, off.assign(ratio=lambda d: d.cut / d.graph.map(best)), ours, best


def _compare(ns: argparse.Namespace) -> None:
    names, off, ours, best = _both_runs(ns, ns.reps)
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


def _paper_tail(ns: argparse.Namespace) -> None:
    """Where the paper's single-run cut lies among the kept runs of both implementations, graph by graph.

    Pools every official run in ``jsonl`` with our published runs in the bundles (the registered
    ``ros`` only, one configuration), then prints, per graph, the fraction of runs that reach the
    paper's cut, and the expected mean ratio of the best of R runs (R runs drawn without replacement
    per graph, 2000 seeded draws) beside the paper's mean ratio.
    """
    import numpy as np
    import pandas as pd

    names, off, ours, best = _both_runs(ns)
    if ours["params"].nunique() > 1:
        raise SystemExit(f"the bundles hold {ours['params'].nunique()} parameter sets of {ns.method}; pass bundles of one")
    paper = pd.read_csv(TASK_DIR / "paper_results.csv", comment="#")
    paper = paper[(paper.method == ns.method) & (paper.metric == "cut")].set_index("instance")["value"]
    cuts = {g: np.concatenate([off.cut[off.graph == g].to_numpy(float), ours["metric.cut"][ours["iparam.graph"] == g].to_numpy(float)])
            for g in names}  # fmt: skip
    print("| graph | paper's cut | runs | mean cut | best cut | runs reaching the paper's cut |")
    print("|---|---:|---:|---:|---:|---:|")
    for g in names:
        c, p = cuts[g], float(paper[f"{g}-k{ns.k}"])
        print(f"| {g} | {p:.0f} | {c.size} | {c.mean():.1f} | {c.max():.0f} | {int((c >= p).sum())} ({(c >= p).mean():.1%}) |")
    paper_ratio = float(np.mean([paper[f"{g}-k{ns.k}"] / best[g] for g in names]))
    print(f"\npaper: mean ratio {paper_ratio:.4f} (one run per graph)")
    rng = np.random.default_rng(0)
    n_min = min(c.size for c in cuts.values())
    for r in (1, 2, 3, 5, 10):
        if r > n_min:
            break
        draws = [np.mean([rng.choice(cuts[g], r, replace=False).max() / best[g] for g in names]) for _ in range(2000)]
        lo, hi = np.quantile(draws, [0.025, 0.975])
        print(f"best of {r:2d} runs per graph: mean ratio {np.mean(draws):.4f} (95% of draws in [{lo:.4f}, {hi:.4f}]; "
              f"{np.mean(np.array(draws) >= paper_ratio):.1%} at or above the paper's)")


#: Our parameter names for the official ``GCN_dev`` state dict (PyG ``GraphConv`` and ``GraphNorm``).
OFFICIAL_TO_OURS = {
    f"{conv}.lin_rel.weight": f"{conv}.rel_weight" for conv in ("conv1", "conv2")
} | {f"{conv}.lin_rel.bias": f"{conv}.rel_bias" for conv in ("conv1", "conv2")} | {
    f"{conv}.lin_root.weight": f"{conv}.root_weight" for conv in ("conv1", "conv2")
} | {f"bn{i}.{p}": f"norm{i}.{p}" for i in (1, 2) for p in ("weight", "bias", "mean_scale")}


def _borrow_official(ns: argparse.Namespace) -> None:
    """Make the official checkout and its virtualenv's torch_geometric importable here, on one thread."""
    import torch

    sys.path.insert(0, str(ns.official_dir.resolve()))
    sys.path.append(str(ns.official_site.resolve()))
    torch.set_num_threads(1)


def _both_graphs(g, k: int):
    """An official networkx Gset graph as ours (``read_graph``) and as the official edge list (both directions)."""
    import numpy as np
    import torch

    from methods.maxcut.relaxation import read_graph

    edges = np.array([(a, b) for a, b in g.edges()], dtype=np.int64)
    weights = np.array([w for _, _, w in g.edges(data="weight")], dtype=np.float64)
    graph = read_graph({"n": g.number_of_nodes(), "k": k, "edges": edges, "weights": weights})
    # each edge in both directions, one after the other, as the official get_gnn_tuning builds it
    index = torch.stack([torch.stack([graph.u, graph.v], 1).reshape(-1), torch.stack([graph.v, graph.u], 1).reshape(-1)])
    return graph, index, graph.w.repeat_interleave(2)


def _trajectory(ns: argparse.Namespace) -> None:
    """Fine-tune with the official loop and with ours from the same weights and embedding; compare.

    Runs in this repository's environment with the official checkout and its virtualenv's
    site-packages (for torch_geometric) appended to ``sys.path``. Both sides start from one
    official pre-training (``ros.utils.pretraining`` at seed ``--pretrain-seed``) and one
    Xavier-uniform embedding, take ``n`` Adam steps with patience switched off, and the best
    relaxed ``X`` of each is scored with our float64 objective. Same algorithm, same numbers up
    to float rounding; a different one drifts apart within a few steps.
    """
    import contextlib
    import io

    import torch

    _borrow_official(ns)
    from ros.models import GCN_dev
    from ros.utils import get_gnn, get_matrix, pretraining, run_gnn_tuning

    from methods.maxcut.gnn import Aggregation, ROSNet, xavier_uniform
    from methods.maxcut.relaxation import Objective
    from methods.maxcut.ros import fine_tune

    args = _official_args(ns.k, ns.pretrain_seed)
    args.wd = 0.0
    _seed_all(ns.pretrain_seed)
    net0, opt0, sched0 = get_gnn(args, args.TORCH_DEVICE, args.TORCH_DTYPE)
    with tempfile.TemporaryDirectory() as tmp, contextlib.chdir(tmp), contextlib.redirect_stdout(io.StringIO()):
        pretraining(args, net0, opt0, sched0, args.pretraining_epochs, args.pretraining_graphnum)
    weights = {k: v.detach().clone() for k, v in net0.state_dict().items()}
    g = read_gset(Path(ns.gset_dir) / f"G{ns.graph}", args)
    graph, edges, edge_w = _both_graphs(g, ns.k)
    dense_w = get_matrix(args, g)
    emb0 = xavier_uniform((args.n, args.dim_embedding), torch.Generator().manual_seed(ns.seed))
    objective = Objective(graph, torch.float64)
    print(f"G{ns.graph}, k={ns.k}, official pre-training seed {ns.pretrain_seed}, embedding seed {ns.seed}")
    print("| Adam steps | official: best relaxed loss | ours | max abs difference of X |")
    print("|---:|---:|---:|---:|")
    for steps in ns.steps:
        off = GCN_dev(args.dim_embedding, args.hidden_dim, ns.k)
        off.load_state_dict(weights)
        inputs = torch.nn.Embedding(args.n, args.dim_embedding)
        inputs.weight.data.copy_(emb0)
        opt = torch.optim.Adam([*off.parameters(), *inputs.parameters()], lr=args.lr, weight_decay=1e-4)
        with contextlib.redirect_stdout(io.StringIO()):
            x_off = run_gnn_tuning(args, dense_w, edges, edge_w, off, opt, steps, args.tol, 10**9, inputs).detach().T
        ours = ROSNet(args.dim_embedding, args.hidden_dim, ns.k)
        ours.load_state_dict({OFFICIAL_TO_OURS[k]: t for k, t in weights.items()})
        x_ours = fine_tune(ours, torch.nn.Parameter(emb0.clone()), Aggregation(graph, "mean"), graph, lr=args.lr,
                           weight_decay=1e-4, tol=args.tol, patience=10**9, max_steps=steps).probs  # fmt: skip
        f_off, f_ours = float(objective(x_off.double())), float(objective(x_ours.double()))
        print(f"| {steps} | {f_off:.4f} | {f_ours:.4f} | {float((x_off - x_ours).abs().max()):.1e} |", flush=True)


def _pretraining_check(ns: argparse.Namespace) -> None:
    """Pre-train with the official loop and with ours from the same start and the same inputs; compare.

    Both nets start from one set of initial weights, and the 500 graphs' random input features
    are drawn once and fed to both (``init.xavier_uniform_`` in the official loop and
    ``xavier_uniform`` in ours are replaced by a queue of the same tensors). Compared: the
    pre-training loss on graphs 0, 10, ..., 490 (the official loop prints every tenth), and
    the function the two finished nets compute on Gset graph ``--graph`` for one embedding.
    As a yardstick, ours runs a second time with every input scaled by ``1 + 2**-22`` (about one
    float32 rounding): pre-training from GraphNorm's initial mean scale of 1 amplifies rounding
    noise, so two runs of the same code drift apart by as much as the two implementations do.
    Individual weights are not compared: GraphNorm's mean scale and the preceding bias are
    nearly interchangeable (with a mean scale of 1 the bias has no effect), so Adam moves them
    along directions set by rounding noise, differently in each implementation, while the
    function stays the same.
    """
    import contextlib
    import io
    import re
    from unittest import mock

    import torch

    _borrow_official(ns)
    import ros.utils as official_utils
    from ros.models import GCN_dev

    import methods.maxcut.pretrain as ours_pretrain
    from methods.maxcut.gnn import Aggregation, ROSNet, xavier_uniform
    from methods.maxcut.relaxation import Objective

    gen = torch.Generator().manual_seed(ns.pretrain_seed)
    start = ROSNet(100, 100, ns.k, gen).state_dict()
    feats = [xavier_uniform((100, 100), gen) for _ in range(500)]
    to_official = {ours: theirs for theirs, ours in OFFICIAL_TO_OURS.items()}

    args = _official_args(ns.k, ns.pretrain_seed)
    args.wd = 0.0
    net, opt, sched = official_utils.get_gnn(args, args.TORCH_DEVICE, args.TORCH_DTYPE)
    net.load_state_dict({to_official[k]: t for k, t in start.items()})
    printed = io.StringIO()
    queue = iter(feats)
    with (
        mock.patch.object(official_utils.init, "xavier_uniform_", lambda t: t.copy_(next(queue))),
        tempfile.TemporaryDirectory() as tmp, contextlib.chdir(tmp), contextlib.redirect_stdout(printed),
    ):  # fmt: skip
        official_utils.pretraining(args, net, opt, sched, args.pretraining_epochs, args.pretraining_graphnum)
    official_loss = {int(m[1]): float(m[2]) for m in re.finditer(r"^gn (\d+): (\S+) lr", printed.getvalue(), re.M)}

    def ours_run(scale: float) -> tuple[list[float], dict[str, torch.Tensor]]:
        """Our pre-training from the shared start, inputs times ``scale``; the loss of every graph."""
        losses: list[float] = []
        real_objective = ours_pretrain.Objective

        def recording(graph):
            f = real_objective(graph)

            def call(x):
                value = f(x)
                losses.append(float(value.detach()))
                return value

            return call

        def fresh(*a, **kw):
            n = ROSNet(*a[:3])
            n.load_state_dict(start)
            return n

        feed = iter(feats)
        with (
            mock.patch.object(ours_pretrain, "ROSNet", fresh),
            mock.patch.object(ours_pretrain, "xavier_uniform", lambda shape, g: next(feed) * scale),
            mock.patch.object(ours_pretrain, "Objective", recording),
        ):
            weights = ours_pretrain.pretrain(ours_pretrain.PretrainConfig.for_k(ns.k, seed=ns.pretrain_seed))
        return losses, weights

    ours_loss, mine = ours_run(1.0)
    nudged, _ = ours_run(1.0 + 2.0**-22)  # about one float32 rounding of every input

    print(f"pre-training, k={ns.k}, degree {PRETRAIN_DEGREE[ns.k]}: one shared start and shared inputs")
    print("| graph | official loss | ours | relative difference | ours, inputs x (1 + 2^-22): difference to ours |")
    print("|---:|---:|---:|---:|---:|")
    for i in (0, 10, 50, 100, 160, 200, 330, 400, 490):
        o, m, z = official_loss[i], ours_loss[i], nudged[i]
        print(f"| {i} | {o:.5f} | {m:.5f} | {abs(o - m) / abs(o):.1e} | {abs(z - m) / abs(m):.1e} |")
    rel = max(abs(official_loss[i] - ours_loss[i]) / abs(official_loss[i]) for i in official_loss)
    self_rel = max(abs(nudged[i] - ours_loss[i]) / abs(ours_loss[i]) for i in official_loss)
    print(f"largest relative difference over the {len(official_loss)} printed graphs: official vs ours {rel:.1e}; "
          f"ours vs ours with nudged inputs {self_rel:.1e}")

    g = read_gset(Path(ns.gset_dir) / f"G{ns.graph}", args)
    graph, index, index_w = _both_graphs(g, ns.k)
    emb = xavier_uniform((args.n, 100), torch.Generator().manual_seed(0))
    off = GCN_dev(100, 100, ns.k)
    off.load_state_dict(net.state_dict())
    with torch.no_grad():
        x_off = off(emb, index, index_w).T
        ours_net = ROSNet(100, 100, ns.k)
        ours_net.load_state_dict(mine)
        x_ours = ours_net(emb, Aggregation(graph, "mean"))
    objective = Objective(graph, torch.float64)
    print(f"G{ns.graph}: relaxed loss of the official net's X {float(objective(x_off.double())):.4f}, of ours "
          f"{float(objective(x_ours.double())):.4f}; max abs difference of X {float((x_off - x_ours).abs().max()):.1e}")


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
    c.add_argument("--reps", help="only these official repetitions, e.g. 0-2 (default: all in the file)")
    pt = sub.add_parser("paper-tail", help="where the paper's single-run cuts lie among the kept runs of both codes")
    pt.add_argument("jsonl", type=Path)
    pt.add_argument("bundle", type=Path, nargs="+", help="one or more bundles; their records are pooled")
    pt.add_argument("--k", type=int, default=3)
    pt.add_argument("--graphs", default="1-10")
    pt.add_argument("--method", default="ros")
    t = sub.add_parser("trajectory", help="official fine-tuning vs ours, step for step, from the same start")
    t.add_argument("--official-dir", required=True, type=Path)
    t.add_argument("--official-site", required=True, type=Path, help="site-packages of the official virtualenv")
    t.add_argument("--gset-dir", required=True, type=Path)
    t.add_argument("--k", type=int, default=3, choices=sorted(PRETRAIN_DEGREE))
    t.add_argument("--graph", type=int, default=6)
    t.add_argument("--pretrain-seed", type=int, default=5)
    t.add_argument("--seed", type=int, default=0, help="seed of the shared embedding")
    t.add_argument("--steps", type=int, nargs="+", default=[1, 10, 50, 200, 800])
    q = sub.add_parser("pretraining-check", help="official pre-training vs ours from the same start and inputs")
    q.add_argument("--official-dir", required=True, type=Path)
    q.add_argument("--official-site", required=True, type=Path, help="site-packages of the official virtualenv")
    q.add_argument("--k", type=int, default=3, choices=sorted(PRETRAIN_DEGREE))
    q.add_argument("--pretrain-seed", type=int, default=5)
    q.add_argument("--gset-dir", required=True, type=Path)
    q.add_argument("--graph", type=int, default=6)
    ns = p.parse_args(argv)
    {"run": _run, "_one": _one, "compare": _compare, "paper-tail": _paper_tail, "trajectory": _trajectory,
     "pretraining-check": _pretraining_check}[ns.cmd](ns)  # fmt: skip


if __name__ == "__main__":
    main()
