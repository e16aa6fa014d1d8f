"""Max-k-Cut on Gset, random regular graphs and weighted Gset (the ROS paper, ICML 2025).

Split the nodes of a weighted graph into ``k`` parts so that the total weight
of the edges between different parts (the cut) is as large as possible.
Weights may be negative (the ±1 Gset graphs), so cutting every edge is not
always best. ``k`` is part of each instance (2, 3 or 4).

Instances (ids):

- ``G<i>-k<k>``: the 71 Gset graphs (:mod:`tasks.maxcut.gset`), k = 2, 3, 4;
- ``reg<d>-n<n>-s<seed>-k<k>``: the ROS code's random regular graphs
  (3-regular for k=2, 5-regular for k=3; :mod:`tasks.maxcut.generators`);
- ``G<i>-w<low>_<high>-s<seed>-k<k>``: G70, G72, G77, G81 with every weight
  multiplied by U[low, high], as the ROS code makes them.

A method receives ``data = {"n", "k", "edges", "weights"}`` (see
:mod:`tasks.maxcut.graph`) and returns one integer label in ``[0, k)`` per
node. See ``tasks/maxcut/README.md``.
"""

from __future__ import annotations

import functools
import hashlib
import re
from typing import Any

import numpy as np

from bench.registry import UnknownNameError, register_task, unknown_message
from bench.solutions import as_int_vector
from bench.task import (
    Instance,
    InstanceSpec,
    Metric,
    Normalization,
    Paper,
    Task,
    TaskMeta,
)
from tasks.maxcut import generators as gen
from tasks.maxcut.graph import cut_value
from tasks.maxcut.gset import GSET_NAMES, gset_info, read_gset
from tasks.maxcut.references import references

__all__ = [
    "MaxCut",
    "GSET_KS",
    "SMOKE_IDS",
    "STANDARD_GSET",
    "parse_instance_id",
    "as_labels",
]

#: k values of the Gset instances (the paper has k=2 and 3; k=4 has no reference here).
GSET_KS: tuple[int, ...] = (2, 3, 4)
#: Gset graphs of the standard tier (besides the four largest): G1-G20 and G43-G47.
STANDARD_GSET: tuple[str, ...] = tuple(f"G{i}" for i in [*range(1, 21), *range(43, 48)])
SMOKE_IDS: tuple[str, ...] = (
    "reg3-n100-s0-k2",
    "reg3-n100-s1-k2",
    "reg5-n100-s0-k3",
    "reg5-n100-s1-k3",
    "G11-k2",
)
#: Budget (s) in the standard tier for graphs with at least this many nodes.
_LARGE_N = 5000
_LARGE_STANDARD_BUDGET = 120.0

_GSET_ID = re.compile(r"^(?P<graph>G[1-9][0-9]*)-k(?P<k>[1-9][0-9]*)$")
_REG_ID = re.compile(r"^reg(?P<d>[1-9][0-9]*)-n(?P<n>[1-9][0-9]*)-s(?P<seed>0|[1-9][0-9]*)-k(?P<k>[1-9][0-9]*)$")
_WEIGHTED_ID = re.compile(
    r"^(?P<graph>G[1-9][0-9]*)-w(?P<low>[0-9.]+)_(?P<high>[0-9.]+)-s(?P<seed>0|[1-9][0-9]*)-k(?P<k>[1-9][0-9]*)$"
)
_ID_FORMAT = (
    "'G<i>-k<k>' (e.g. 'G1-k2'), 'reg<d>-n<nodes>-s<seed>-k<k>' (e.g. 'reg3-n100-s0-k2') "
    "or 'G<i>-w<low>_<high>-s<seed>-k<k>' (e.g. 'G70-w0_10-s0-k2')"
)


# ----------------------------------------------------------------------------- instance specs


def _sign_tag(info: dict[str, Any]) -> tuple[str, str]:
    return ("+1", "plus1") if info["weights"] == "+1" else ("+1/-1", "pm1")


def _gset_spec(graph: str, k: int) -> InstanceSpec:
    info = gset_info(graph)
    signs, tag = _sign_tag(info)
    return InstanceSpec(
        id=f"{graph}-k{k}",
        params={
            "family": "gset",
            "graph": graph,
            "n": info["n"],
            "m": info["m"],
            "k": k,
            "weighted": False,
            "signs": signs,
            "structure": info["type"],
        },
        tags=("gset", "unweighted", tag, info["type"]),
    )


def _regular_spec(d: int, n: int, seed: int, k: int) -> InstanceSpec:
    graph = gen.regular_name(d, n, seed)
    return InstanceSpec(
        id=f"{graph}-k{k}",
        params={
            "family": "regular",
            "graph": graph,
            "n": n,
            "m": n * d // 2,
            "k": k,
            "weighted": False,
            "signs": "+1",
            "degree": d,
            "seed": seed,
        },
        tags=("regular", "unweighted", "plus1"),
    )


def _weighted_spec(graph: str, low: float, high: float, seed: int, k: int) -> InstanceSpec:
    info = gset_info(graph)
    signs, tag = _sign_tag(info)
    return InstanceSpec(
        id=f"{gen.weighted_name(graph, low, high, seed)}-k{k}",
        params={
            "family": "weighted-gset",
            "graph": graph,
            "n": info["n"],
            "m": info["m"],
            "k": k,
            "weighted": True,
            "signs": signs,
            "structure": info["type"],
            "weight_low": low,
            "weight_high": high,
            "seed": seed,
        },
        tags=("weighted-gset", "weighted", tag, info["type"]),
    )


def _regular_specs(sizes: tuple[int, ...]) -> list[InstanceSpec]:
    return [
        _regular_spec(d, n, seed, k)
        for n in sizes
        for k, d in gen.REGULAR_DEGREE.items()
        for seed in gen.REGULAR_SEEDS
    ]


def _weighted_specs(graphs: tuple[str, ...], ranges: tuple[tuple[float, float], ...]) -> list[InstanceSpec]:
    return [
        _weighted_spec(g, low, high, seed, k)
        for g in graphs
        for low, high in ranges
        for seed in gen.WEIGHTED_SEEDS
        for k in (2, 3)
    ]


def _tier_specs(tier: str) -> list[InstanceSpec]:
    # Built afresh on each call: specs hold mutable params dicts.
    if tier == "smoke":
        return [_spec_of(i) for i in SMOKE_IDS]
    if tier == "standard":
        graphs = (*STANDARD_GSET, *gen.WEIGHTED_GRAPHS)
        return [
            *(_gset_spec(g, k) for g in graphs for k in (2, 3)),
            *_regular_specs((1000,)),
            *_weighted_specs(("G70",), ((0.0, 10.0),)),
        ]
    if tier == "full":
        return [
            *(_gset_spec(g, k) for g in GSET_NAMES for k in GSET_KS),
            *_regular_specs(gen.REGULAR_SIZES),
            *_weighted_specs(gen.WEIGHTED_GRAPHS, gen.WEIGHT_RANGES),
        ]
    raise ValueError(f"unknown tier {tier!r}; tiers are smoke, standard, full")


@functools.cache
def _all_specs() -> dict[str, InstanceSpec]:
    # "full" lists every instance; the smoke and standard ones are among them.
    return {s.id: s for s in _tier_specs("full")}


def _spec_of(instance_id: str) -> InstanceSpec:
    kind, parts = parse_instance_id(instance_id)
    if kind == "gset":
        return _gset_spec(parts["graph"], parts["k"])
    if kind == "regular":
        return _regular_spec(parts["d"], parts["n"], parts["seed"], parts["k"])
    return _weighted_spec(parts["graph"], parts["low"], parts["high"], parts["seed"], parts["k"])


def parse_instance_id(instance_id: str) -> tuple[str, dict[str, Any]]:
    """``(family, parts)`` of a listed instance id.

    ``family`` is ``"gset"``, ``"regular"`` or ``"weighted-gset"``; ``parts``
    holds the id's fields (``graph``, ``k``, ``d``, ``n``, ``seed``, ``low``,
    ``high`` as they apply).

    Raises
    ------
    UnknownNameError
        (a ``KeyError``) for a malformed id (the message gives the three forms)
        or a well-formed one that no tier lists (it names the closest ids).
    """
    if not isinstance(instance_id, str):
        raise UnknownNameError(f"maxcut instance ids are strings, got {type(instance_id).__name__}")
    if m := _GSET_ID.match(instance_id):
        kind, parts = "gset", {"graph": m["graph"], "k": int(m["k"])}
    elif m := _REG_ID.match(instance_id):
        kind, parts = "regular", {"d": int(m["d"]), "n": int(m["n"]), "seed": int(m["seed"]), "k": int(m["k"])}
    elif m := _WEIGHTED_ID.match(instance_id):
        try:
            low, high = float(m["low"]), float(m["high"])
        except ValueError:
            raise UnknownNameError(f"malformed maxcut instance id {instance_id!r}; expected {_ID_FORMAT}") from None
        kind = "weighted-gset"
        parts = {"graph": m["graph"], "low": low, "high": high, "seed": int(m["seed"]), "k": int(m["k"])}
    else:
        raise UnknownNameError(f"malformed maxcut instance id {instance_id!r}; expected {_ID_FORMAT}")
    if instance_id not in _known_ids():
        raise UnknownNameError(unknown_message("maxcut instance", instance_id, _known_ids()))
    return kind, parts


@functools.cache
def _known_ids() -> frozenset[str]:
    return frozenset(
        [f"{g}-k{k}" for g in GSET_NAMES for k in GSET_KS]
        + [
            f"{gen.regular_name(d, n, s)}-k{k}"
            for n in gen.REGULAR_SIZES
            for k, d in gen.REGULAR_DEGREE.items()
            for s in gen.REGULAR_SEEDS
        ]
        + [
            f"{gen.weighted_name(g, lo, hi, s)}-k{k}"
            for g in gen.WEIGHTED_GRAPHS
            for lo, hi in gen.WEIGHT_RANGES
            for s in gen.WEIGHTED_SEEDS
            for k in (2, 3)
        ]
    )


# ----------------------------------------------------------------------------- loading


@functools.cache
def _regular_graph(d: int, n: int, seed: int) -> tuple[np.ndarray, np.ndarray, str]:
    edges, weights = gen.random_regular(d, n, seed)
    digest = gen.check_digest(gen.regular_name(d, n, seed), n, edges, weights)
    edges.setflags(write=False)
    weights.setflags(write=False)
    return edges, weights, digest


def _digest(instance_id: str) -> str:
    """Digest of an instance from committed checksums, without reading its data.

    ``_load`` verifies the data against the same checksums (file sha256 for
    Gset, graph digests for generated graphs), so the digest cannot name data
    that is not what gets loaded.
    """
    kind, p = parse_instance_id(instance_id)
    if kind == "gset":
        base = gset_info(p["graph"])["sha256"]
    elif kind == "regular":
        base = gen.committed_digest(gen.regular_name(p["d"], p["n"], p["seed"]))
    else:
        base = gen.committed_digest(gen.weighted_name(p["graph"], p["low"], p["high"], p["seed"]))
    return hashlib.sha256(f"maxcut|{instance_id}|{base}".encode()).hexdigest()


@functools.lru_cache(maxsize=1024)
def _load(instance_id: str) -> Instance:
    kind, p = parse_instance_id(instance_id)
    spec = _spec_of(instance_id)
    if kind == "gset":
        g = read_gset(p["graph"])
        n, edges, weights = g.n, g.edges, g.weights
        source = {"file_sha256": g.sha256}
    elif kind == "regular":
        n = p["n"]
        edges, weights, digest = _regular_graph(p["d"], n, p["seed"])
        source = {"graph_sha256": digest}
    else:
        g = read_gset(p["graph"])
        n, edges = g.n, g.edges
        weights = gen.perturbed_weights(g.weights, p["low"], p["high"], p["seed"])
        digest = gen.check_digest(gen.weighted_name(p["graph"], p["low"], p["high"], p["seed"]), n, edges, weights)
        weights.setflags(write=False)
        source = {"file_sha256": g.sha256, "graph_sha256": digest}
    data = {"n": n, "k": p["k"], "edges": edges, "weights": weights}
    return Instance(
        id=instance_id,
        params=dict(spec.params),
        data=data,
        private=source,
        references=references(spec.params["graph"], data, gset=kind == "gset"),
        tags=spec.tags,
        digest=_digest(instance_id),
    )


# ----------------------------------------------------------------------------- verification


def as_labels(solution: Any, n: int, k: int) -> np.ndarray:
    """``solution`` as an ``int64`` array of ``n`` labels in ``[0, k)``, or :class:`InvalidSolution`.

    Accepted: a 1-D numpy integer array, or a list/tuple of ints. Refused, each
    with a message saying what to change: other types, float arrays (even with
    integral values: a relaxation is never scored by accident), bool arrays,
    NaN, other shapes and lengths, labels outside ``[0, k)``
    (:func:`bench.solutions.as_int_vector`).
    """
    return as_int_vector(
        solution,
        n,
        low=0,
        high=k,
        item="node",
        value="label",
        float_hint="e.g. np.argmax(probabilities, axis=1), or labels.astype(np.int64) after rounding",
    )


_TEMPLATE = """\
    # A uniformly random k-labelling: always valid; it cuts (k-1)/k of the weight on average.
    rng = np.random.default_rng(seed)
    return rng.integers(0, instance.data["k"], size=instance.data["n"])
"""


@register_task
class MaxCut(Task):
    """Max-k-Cut, scored by the cut weight recomputed from the returned labels.

    A solution is one integer label in ``[0, k)`` per node (``int`` numpy array
    or list of ints, length ``n``). ``evaluate`` recomputes the cut from the
    instance's own edges and weights and reports it against the best-known
    value where one exists (Gset, k=2 and 3).
    """

    meta = TaskMeta(
        name="maxcut",
        version="1",
        family="maxcut",
        area="combinatorial optimisation",
        paper=Paper(
            title="ROS: A GNN-based Relax-Optimize-and-Sample Framework for Max-k-Cut Problems",
            authors=["Yeqing Qiu", "Ye Xue", "Akang Wang", "Yiheng Wang", "Qingjiang Shi", "Zhi-Quan Luo"],
            arxiv="2412.05146",
            venue="ICML 2025",
            code_url="https://github.com/NetSysOpt/ROS",
        ),
        description=(
            "Max-k-Cut (k = 2, 3, 4): split the nodes into k parts to maximise the weight of the edges "
            "between parts. Gset (71 graphs), the ROS paper's random regular graphs and its weighted "
            "Gset; scored against best-known values where they exist."
        ),
        metrics=[
            Metric(name="cut", direction="max", description="total weight of the edges whose endpoints get different labels"),
            Metric(name="ratio", direction="max", description="cut / best-known cut (absent where there is no best-known value)"),
            Metric(name="gap_pct", direction="min", unit="%", description="100 * (best known - cut) / best known (absent without one)"),
            Metric(name="n_used_labels", direction="max", unit="labels", description="how many of the k labels are used (informational)"),
        ],
        primary="cut",
        normalization=Normalization(
            kind="linear",
            zero="random",
            one="best_known",
            description="0 for the expected cut of a uniformly random labelling, 1 for the best-known cut",
        ),
        gap_reference="best_known",
        budgets={"smoke": 20.0, "standard": 60.0, "full": 1800.0},
    )
    template = _TEMPLATE

    def instances(self, tier: str) -> list[InstanceSpec]:
        """Instances of ``tier`` in a stable order: Gset, then regular, then weighted Gset."""
        return _tier_specs(tier)

    def all_instances(self) -> dict[str, InstanceSpec]:
        """Every instance by id (the full tier lists them all)."""
        return dict(_all_specs())

    def budget(self, tier: str, spec: InstanceSpec) -> float:
        """Seconds per job: 20 (smoke; several times the slowest smoke job, for loaded machines), 60 (standard; 120 for graphs of 5,000+ nodes), 1800 (full).

        1800 s is the paper's 30-minute timeout.
        """
        if tier == "standard" and int(spec.params.get("n", 0)) >= _LARGE_N:
            return _LARGE_STANDARD_BUDGET
        return float(self.meta.budgets[tier])

    def load(self, instance_id: str) -> Instance:
        """Load one instance (cached in-process).

        ``data`` holds ``n``, ``k``, ``edges`` (read-only ``int64 (m, 2)``,
        0-indexed, ``u < v``) and ``weights`` (read-only ``float64 (m,)``).
        ``private`` holds the sha256 of the file and/or generated graph.

        Raises
        ------
        UnknownNameError
            (a ``KeyError``) for a malformed or unlisted id.
        tasks.maxcut.gset.GsetError
            If a Gset file cannot be found, fetched, verified or parsed.
        tasks.maxcut.generators.GeneratorDrift
            If networkx or numpy generate a graph other than the committed one.
        """
        return _load(instance_id)

    def instance_digest(self, instance_id: str) -> str:
        """Job-key digest from committed checksums (planning never reads graph files)."""
        _spec_of(instance_id)  # unknown ids fail here, as in load
        return _digest(instance_id)

    def evaluate(self, instance: Instance, solution: Any) -> dict[str, float]:
        """Recompute the cut from ``solution`` and the instance's graph.

        Returns ``cut`` and ``n_used_labels`` always, and ``ratio`` and
        ``gap_pct`` where the instance has a best-known value (Gset, k=2 and 3).

        Raises
        ------
        InvalidSolution
            For anything but ``n`` integer labels in ``[0, k)``; see :func:`as_labels`.
        """
        data = instance.data
        n, k = int(data["n"]), int(data["k"])
        labels = as_labels(solution, n, k)
        edges = np.asarray(data["edges"], dtype=np.int64)
        weights = np.asarray(data["weights"], dtype=np.float64)
        cut = cut_value(edges, weights, labels)
        metrics = {"cut": cut, "n_used_labels": float(np.unique(labels).size)}
        ref = instance.references.get("best_known")
        # Without a best-known value (k=4, generated graphs) ratio and gap are left
        # out rather than NaN: the run store cannot read NaN metrics back.
        if ref is not None and float(ref.value) > 0:
            best = float(ref.value)
            metrics["ratio"] = cut / best
            metrics["gap_pct"] = 100.0 * (best - cut) / best
        return metrics
