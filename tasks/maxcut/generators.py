"""Generated maxcut graphs, made as the ROS code makes them, and pinned by digest.

Two families (ROS paper, Qiu et al., ICML 2025, §4.1; official code
NetSysOpt/ROS @ 3957340):

- **Random regular graphs**: ``networkx.random_regular_graph(d, n, seed=seed)``
  with all weights 1 (``utils.generate_graph``, ``--weight_mode 0``), 3-regular
  for k=2 and 5-regular for k=3 (``runner_n{100,1000,10000}_reg[_k3].sh``),
  seeds 0-19. The ROS code then relabels the nodes in sorted order into an
  ``nx.OrderedGraph``; ``random_regular_graph`` already numbers them ``0..n-1``,
  so the relabelling is the identity and the edge set is unchanged.
- **Weighted Gset**: the weight ``w`` of each line of G70, G72, G77 or G81 is
  multiplied by ``(high - low) * r + low`` with ``r = np.random.rand()``, one
  draw per edge line in file order, after ``np.random.seed(seed)``
  (``utils.read_gset``, ``--weight_mode 2``; seeds 0-9 in
  ``runner_weighted_gset_partial[_k3].sh``). Here the same stream comes from
  ``np.random.RandomState(seed)``, which leaves numpy's global state alone.

Every generated graph has its :func:`~tasks.maxcut.graph.graph_digest`
committed in ``generated_sha256.json``; :func:`check_digest` refuses a graph
whose digest differs, so a change in networkx's generator (or numpy's legacy
stream) fails loudly instead of silently changing the benchmark.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

import numpy as np

from tasks.maxcut.graph import canonical_edges, graph_digest

__all__ = [
    "REGULAR_DEGREE",
    "REGULAR_SIZES",
    "REGULAR_SEEDS",
    "WEIGHTED_GRAPHS",
    "WEIGHT_RANGES",
    "WEIGHTED_SEEDS",
    "GeneratorDrift",
    "regular_name",
    "weighted_name",
    "range_label",
    "random_regular",
    "perturbed_weights",
    "committed_digest",
    "check_digest",
]

_HERE = Path(__file__).resolve().parent

#: Degree of the random regular graphs used for each k (ROS runner scripts).
REGULAR_DEGREE: dict[int, int] = {2: 3, 3: 5}
REGULAR_SIZES: tuple[int, ...] = (100, 1000, 10000)
REGULAR_SEEDS: tuple[int, ...] = tuple(range(20))

#: The four largest Gset graphs, the ones the paper perturbs.
WEIGHTED_GRAPHS: tuple[str, ...] = ("G70", "G72", "G77", "G81")
#: (low, high) of the uniform multiplier: Table 3 [0, 10], Table 8 [0.9, 1.1], Table 9 [0, 100].
WEIGHT_RANGES: tuple[tuple[float, float], ...] = ((0.0, 10.0), (0.9, 1.1), (0.0, 100.0))
WEIGHTED_SEEDS: tuple[int, ...] = tuple(range(10))


class GeneratorDrift(RuntimeError):
    """A generated graph differs from the one whose digest is committed."""


def regular_name(d: int, n: int, seed: int) -> str:
    """``"reg3-n100-s0"``: the graph part of a regular instance id."""
    return f"reg{d}-n{n}-s{seed}"


def range_label(low: float, high: float) -> str:
    """``"w0_10"``, ``"w0.9_1.1"``, ``"w0_100"``."""
    return f"w{low:g}_{high:g}"


def weighted_name(graph: str, low: float, high: float, seed: int) -> str:
    """``"G70-w0_10-s0"``: the graph part of a weighted-Gset instance id."""
    return f"{graph}-{range_label(low, high)}-s{seed}"


def random_regular(d: int, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The ROS code's random ``d``-regular graph on ``n`` nodes for ``seed``.

    Returns
    -------
    edges : numpy.ndarray
        ``int64 (n*d/2, 2)``, 0-indexed, ``u < v``, sorted lexicographically.
    weights : numpy.ndarray
        ``float64`` ones.
    """
    import networkx as nx  # imported here: the task module must stay cheap to import

    g = nx.random_regular_graph(d, n, seed=seed)
    if sorted(g.nodes()) != list(range(n)):  # pragma: no cover - networkx numbers them 0..n-1
        raise GeneratorDrift(f"networkx {nx.__version__} labelled the nodes of {regular_name(d, n, seed)} unexpectedly")
    e = canonical_edges(np.array(list(g.edges()), dtype=np.int64))
    e = e[np.lexsort((e[:, 1], e[:, 0]))]
    return e, np.ones(len(e), dtype=np.float64)


def perturbed_weights(weights: np.ndarray, low: float, high: float, seed: int) -> np.ndarray:
    """``weights * U[low, high]``, one draw per edge in order, as the ROS code does.

    Equal, element for element, to the ROS loop
    ``np.random.seed(seed); [w * ((high - low) * np.random.rand() + low) for w in weights]``:
    ``RandomState(seed).random_sample(m)`` yields the same doubles as ``m``
    successive ``np.random.rand()`` calls, and the arithmetic is the same.
    """
    w = np.asarray(weights, dtype=np.float64)
    draws = np.random.RandomState(seed).random_sample(len(w))
    return w * ((high - low) * draws + low)


@functools.cache
def _committed() -> dict[str, str]:
    with open(_HERE / "generated_sha256.json") as fh:
        return json.load(fh)["digests"]


def committed_digest(graph: str) -> str:
    """The committed digest of generated graph ``graph`` (e.g. ``"reg3-n100-s0"``)."""
    try:
        return _committed()[graph]
    except KeyError:
        raise KeyError(f"no committed digest for generated graph {graph!r} (tasks/maxcut/generated_sha256.json)") from None


def check_digest(graph: str, n: int, edges: np.ndarray, weights: np.ndarray) -> str:
    """Digest of a generated graph; :class:`GeneratorDrift` if it is not the committed one."""
    got = graph_digest(n, edges, weights)
    expected = committed_digest(graph)
    if got != expected:
        import networkx as nx

        raise GeneratorDrift(
            f"{graph}: the generated graph has digest {got}, but the committed one is {expected} "
            f"(tasks/maxcut/generated_sha256.json). The generator has drifted (networkx "
            f"{nx.__version__}, numpy {np.__version__}), so this is not the graph the references "
            "and earlier results were computed on. Use a networkx/numpy that reproduces the digests "
            "(checked: networkx 2.5 and 3.6.1; see tasks/maxcut/README.md) rather than re-pinning them."
        )
    return got
