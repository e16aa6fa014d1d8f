"""Check the committed digests against the ROS code's own environment (networkx 2.5).

Standalone: it imports neither bench nor numpy 2, so it runs in a throwaway
virtualenv with the ROS code's pins::

    python3 -m venv /tmp/nx25
    /tmp/nx25/bin/pip install networkx==2.5 "numpy<2"   # networkx 2.5 does not import with numpy 2
    /tmp/nx25/bin/python scripts/maxcut/check_networkx25.py --gset-dir ../shared/data/gset

It regenerates every random regular graph through a re-typed copy of the ROS
code's ``generate_graph`` path (``nx.random_regular_graph`` then
``relabel_nodes_sorted_ordered`` into an ``nx.OrderedGraph``), and every
weighted Gset graph through a re-typed copy of its ``read_gset`` loop
(``np.random.seed(seed)``, one ``np.random.rand()`` per edge line), digests
each as :func:`tasks.maxcut.graph.graph_digest` does, and compares with
``generated_sha256.json``. Exit status 0 when all match.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

TASK_DIR = Path(__file__).resolve().parents[2] / "tasks" / "maxcut"


def relabel_nodes_sorted_ordered(nx, g):
    """As in NetSysOpt/ROS ``utils.py`` (``nx.OrderedGraph`` exists in networkx 2.5; in which later
    version it was removed is UNVERIFIED here, hence the ``hasattr``)."""
    mapping = {old: new for new, old in enumerate(sorted(g.nodes()))}
    g_temp = nx.relabel_nodes(g, mapping)
    g_new = nx.OrderedGraph() if hasattr(nx, "OrderedGraph") else nx.Graph()
    g_new.add_nodes_from(sorted(g_temp.nodes()))
    g_new.add_edges_from(g_temp.edges())
    return g_new


def read_gset_weighted(nx, np, path: Path, lrange: float, rrange: float):
    """As in NetSysOpt/ROS ``utils.read_gset`` with ``weight_mode == 2`` (global numpy RNG)."""
    g = nx.Graph()
    with open(path) as f:
        num_nodes = int(next(f).split()[0])
        g.add_nodes_from(range(num_nodes))
        for line in f:
            i, j, w = map(int, line.split()[:3])
            g.add_edge(i - 1, j - 1, weight=float(w) * ((rrange - lrange) * np.random.rand() + lrange))
    return num_nodes, g


def digest(n: int, rows) -> str:
    rows = sorted((min(u, v), max(u, v), float(w)) for u, v, w in rows)
    h = hashlib.sha256(f"{n} {len(rows)}\n".encode())
    h.update("".join(f"{u} {v} {w!r}\n" for u, v, w in rows).encode())
    return h.hexdigest()


def main() -> int:
    import networkx as nx
    import numpy as np

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gset-dir", type=Path, required=True, help="directory holding G70, G72, G77, G81")
    ap.add_argument("--skip-weighted", action="store_true")
    a = ap.parse_args()
    committed = json.loads((TASK_DIR / "generated_sha256.json").read_text())["digests"]
    bad, checked = [], 0
    for name, expected in sorted(committed.items()):
        if name.startswith("reg"):
            d, n, s = (int(p[1:]) if i else int(p[3:]) for i, p in enumerate(name.split("-")))
            g = relabel_nodes_sorted_ordered(nx, nx.random_regular_graph(d, n, seed=s))
            got = digest(n, ((u, v, 1.0) for u, v in g.edges()))
        elif a.skip_weighted:
            continue
        else:
            graph, rng, seed = name.split("-")
            low, high = (float(x) for x in rng[1:].split("_"))
            np.random.seed(int(seed[1:]))  # noqa: NPY002 - the ROS code's legacy global RNG, on purpose
            n, g = read_gset_weighted(nx, np, a.gset_dir / graph, low, high)
            got = digest(n, ((u, v, d["weight"]) for u, v, d in g.edges(data=True)))
        checked += 1
        if got != expected:
            bad.append(name)
    print(f"networkx {nx.__version__}, numpy {np.__version__}: {checked - len(bad)} of {checked} digests match")
    for name in bad:
        print(f"  differs: {name}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
