"""Regenerate ``gset_sha256.json`` and ``generated_sha256.json`` (maintainers only).

    python scripts/maxcut/make_digests.py [--shared ../shared]

- ``gset_sha256.json``: n, m, weights, type, size and sha256 of the 71 Gset
  files, read from ``shared/data/gset/SOURCE.md`` and checked against the
  files there.
- ``generated_sha256.json``: the :func:`~tasks.maxcut.graph.graph_digest` of
  every generated graph (random regular, weighted Gset), computed with the
  networkx and numpy installed. Only re-pin these digests on purpose: the
  point of the file is to notice when a new networkx draws other graphs.

Both files are task data and stay in ``tasks/maxcut/``. Run from anywhere; paths are
found from the repository root.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TASK_DIR = ROOT / "tasks" / "maxcut"
sys.path.insert(0, str(ROOT))  # the checkout's tasks/, whichever copy is installed

_ROW = re.compile(
    r"^\| (G\d+) \| (\d+) \| (\d+) \| ([^|]+?) \| (\w+) \| (\d+) \| `([0-9a-f]{64})` \|"
)


def gset_table(shared: Path) -> dict:
    source = shared / "data" / "gset" / "SOURCE.md"
    files = {}
    for line in source.read_text().splitlines():
        m = _ROW.match(line)
        if m:
            name, n, mm, weights, kind, size, sha = m.groups()
            data = (source.parent / name).read_bytes()
            if hashlib.sha256(data).hexdigest() != sha or len(data) != int(size):
                raise SystemExit(f"{name}: the file in {source.parent} does not match SOURCE.md")
            files[name] = {
                "n": int(n),
                "m": int(mm),
                "weights": weights,
                "type": kind,
                "bytes": int(size),
                "sha256": sha,
            }
    if len(files) != 71:
        raise SystemExit(f"expected 71 Gset rows in {source}, found {len(files)}")
    return {
        "about": (
            "sha256 of the 71 Gset files as copied byte-for-byte from GitHub NetSysOpt/ROS @ "
            "39573402372470d7aba72c246db73b415b71b4ef (instance/G<k>/G<k>.txt), from "
            "shared/data/gset/SOURCE.md; type labels (random/planar/toroidal) follow public READMEs; "
            "weights are measured from the files. Regenerate with scripts/maxcut/make_digests.py."
        ),
        "files": dict(sorted(files.items(), key=lambda kv: int(kv[0][1:]))),
    }


def generated_table() -> dict:
    import networkx as nx
    import numpy as np

    from tasks.maxcut import generators as gen
    from tasks.maxcut.graph import graph_digest
    from tasks.maxcut.gset import read_gset

    digests = {}
    for n in gen.REGULAR_SIZES:
        for d in sorted(set(gen.REGULAR_DEGREE.values())):
            for seed in gen.REGULAR_SEEDS:
                e, w = gen.random_regular(d, n, seed)
                digests[gen.regular_name(d, n, seed)] = graph_digest(n, e, w)
    for g in gen.WEIGHTED_GRAPHS:
        base = read_gset(g)
        for low, high in gen.WEIGHT_RANGES:
            for seed in gen.WEIGHTED_SEEDS:
                w = gen.perturbed_weights(base.weights, low, high, seed)
                digests[gen.weighted_name(g, low, high, seed)] = graph_digest(base.n, base.edges, w)
    return {
        "about": (
            "graph_digest (tasks/maxcut/graph.py) of every generated maxcut graph; load() refuses a "
            "graph whose digest differs. Regular graphs: networkx.random_regular_graph(d, n, seed), "
            "weights 1. Weighted Gset: file weights times U[low, high] from "
            "numpy.random.RandomState(seed), one draw per edge line in file order."
        ),
        "generated_with": {"networkx": nx.__version__, "numpy": np.__version__},
        "cross_checked": (
            "2026-11-30: all 120 regular-graph digests recomputed in a separate venv with networkx 2.5 "
            "(the ROS code's pin; Python 3.11, numpy 1.26.4) through the ROS code's "
            "relabel_nodes_sorted_ordered (nx.OrderedGraph), and all 120 weighted-Gset digests through a "
            "re-typed ROS utils.read_gset loop (np.random.seed + np.random.rand per line): identical"
        ),
        "digests": digests,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    ap.add_argument("--only", choices=["gset", "generated"])
    a = ap.parse_args()
    if a.only in (None, "gset"):
        (TASK_DIR / "gset_sha256.json").write_text(json.dumps(gset_table(a.shared), indent=1) + "\n")
    if a.only in (None, "generated"):
        (TASK_DIR / "generated_sha256.json").write_text(json.dumps(generated_table(), indent=1) + "\n")


if __name__ == "__main__":
    main()
