"""robust-gossip: Byzantine-robust gossip (CS+-RG; Gaucher, Dieuleveut and Hendrikx, ICML 2025).

``n`` nodes of a graph, ``b`` of them Byzantine, run a gossip algorithm; every
message a Byzantine node sends is replaced by the task's attack
(:mod:`.attacks`), which knows the honest rows. Two workloads:

``consensus``
    each node holds a vector ``x_i(0)`` in ``R^d`` (oracle ``value``); after
    ``rounds`` rounds the honest nodes should all sit at the mean of the
    honest initial vectors.
``dsgd``
    each node holds samples of a heterogeneous l2-logistic regression (oracle
    ``grad``: a minibatch gradient at its row, drawn here); the honest nodes
    should all sit at the minimiser ``x*_H`` of the honest nodes' pooled loss,
    and the honest average should have a low loss on a test set kept here.

Byzantine nodes are placed at random (``random``, honest subgraph kept
connected) or at the graph's weakest cut (``cut``: the endpoints of the edges
that the sign of the Fiedler vector cuts, nearest the cut first, skipping any
node whose loss would disconnect the honest subgraph).

The answer is one row per node; rows of Byzantine nodes are ignored by every
metric. The verifier measures the honest rows against the target ``m`` (the
honest initial mean, or ``x*_H``) relative to the starting error ``s``
(``max_{i in H} ||x_i(0) - m||``, or ``||x*_H||`` from the start at 0):
``max_err = max_{i in H} ||x_i - m|| / s`` (primary), ``mean_err``, the
honest-mean ``bias`` and ``spread``, and, for ``dsgd``, the honest average's
test loss. A run is ``bounded`` when ``max_err <= 1`` (no worse than at the
start); the breakdown curve is read off the sweep over ``b``
(``scripts/decentralized/breakdown.py``). Each instance's references hold the
paper's quantities: ``mu_min`` (algebraic connectivity of the honest
subgraph's weighted Laplacian), ``byzantine_weight`` ``b_w`` (the largest total
weight of Byzantine neighbours of an honest node) and their ratio.
See ``tasks/decentralized/robust/README.md``.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.optimize import minimize

from bench.instances import Catalog, CatalogTask, Choice, IdForm, Int, grid
from bench.registry import register_task
from bench.task import (
    Instance,
    InstanceSpec,
    InvalidSolution,
    Metric,
    Normalization,
    Paper,
    Reference,
    Session,
    TaskMeta,
)
from tasks.decentralized.gossip import (
    GossipSession,
    Graph,
    Simulator,
    check_rows,
    make_graph,
    metropolis,
    node_program_source,
    public_graph_data,
)
from tasks.decentralized.robust.attacks import (
    ATTACKS,
    SPECTRAL_TOL,
    fiedler,
    honest_laplacian,
    make_attack,
)

__all__ = ["CATALOG", "WORKLOADS", "PLACEMENTS", "RobustGossipTask", "place_byzantine", "consensus_values", "LogisticData"]

WORKLOADS = ("consensus", "dsgd")
PLACEMENTS = ("random", "cut")
#: The simulator's graphs, and two dense ones of the paper's experiments built here (:func:`task_graph`).
GRAPHS = ("ring", "chords", "torus", "er", "cliques", "complete", "twoworlds", "erdense")
#: ``erdense``: the edge probability (the simulator's ``er`` uses ``2 log(n) / n``).
ER_DENSE_P = 0.5
#: ``bounded``: max_err at most this (no worse than at the start).
BOUND = 1.0
#: ``reached``: max_err at most this.
REACHED = 0.1
#: D-SGD: samples per node, minibatch, test samples per honest node, l2 weight.
SAMPLES, BATCH, TEST, LAMBDA = 64, 8, 100, 1e-2
#: Offset between the two sides of the weakest cut (consensus values, dsgd feature means).
OFFSET = 2.0


def _check(fields: dict[str, Any]) -> None:
    if fields["graph"] == "torus" and math.isqrt(fields["n"]) ** 2 != fields["n"]:
        raise ValueError(f"{fields}: a torus needs a square number of nodes")
    if fields["graph"] in ("cliques", "twoworlds") and fields["n"] % 2:
        raise ValueError(f"{fields}: two cliques need an even number of nodes")
    if (fields["b"] == 0) != (fields["attack"] == "none"):
        raise ValueError(f"{fields}: attack 'none' goes with b=0, and b=0 with attack 'none'")
    if fields["b"] >= fields["n"] // 2:
        raise ValueError(f"{fields}: b must be below half the nodes")


def _sweep(workload, graph, n, d, bs, place, attacks, rounds, seeds=(0,), clean=True):
    """The clean run (b=0) and every ``b`` x attack at one placement."""
    out = [] if not clean else grid(workload=(workload,), graph=(graph,), n=(n,), d=(d,), b=(0,), place=("random",), attack=("none",), rounds=(rounds,), seed=seeds)
    return out + grid(workload=(workload,), graph=(graph,), n=(n,), d=(d,), b=bs, place=(place,), attack=attacks, rounds=(rounds,), seed=seeds)


_ALL = ("alie", "signflip", "large", "dissensus", "spectral", "spectralsmall", "spectralbig")

CATALOG = Catalog(
    IdForm(
        "robust-gossip",
        "{workload}-{graph}-n{n}-d{d}-b{b}-{place}-{attack}-r{rounds}-s{seed}",
        example="consensus-twoworlds-n20-d10-b3-cut-spectral-r100-s0",
        workload=Choice(WORKLOADS, what="workload"),
        graph=Choice(GRAPHS, what="graph"),
        n=Int(label="nodes", minimum=3),
        d=Int(label="dimension", minimum=1),
        b=Int(label="byzantine"),
        place=Choice(PLACEMENTS, what="placement"),
        attack=Choice(ATTACKS, what="attack"),
        rounds=Int(label="rounds", minimum=1),
        seed=Int(),
    ),
    {
        "smoke": grid(workload=("consensus",), graph=("twoworlds",), n=(20,), d=(10,), b=(3,), place=("cut",), attack=("spectral",), rounds=(100,), seed=(0,))
        + grid(workload=("dsgd",), graph=("chords",), n=(16,), d=(10,), b=(1,), place=("random",), attack=("large",), rounds=(100,), seed=(0,)),
        "standard": _sweep("consensus", "twoworlds", 20, 10, (1, 2, 3, 4, 5, 6), "cut", _ALL, 200)
        + _sweep("consensus", "erdense", 20, 10, (1, 2, 3, 4, 5, 6), "cut", _ALL, 200)
        + _sweep("consensus", "complete", 20, 10, (1, 2, 3, 4, 6, 8), "random", _ALL, 200)
        + _sweep("consensus", "er", 20, 10, (1, 2, 3), "cut", _ALL, 200)
        + _sweep("consensus", "torus", 16, 10, (1, 2), "cut", _ALL, 200)
        + _sweep("consensus", "cliques", 20, 10, (1, 2), "cut", _ALL, 200)
        + _sweep("dsgd", "twoworlds", 20, 10, (1, 2, 4), "cut", ("signflip", "large", "spectral"), 200)
        + _sweep("dsgd", "erdense", 20, 10, (1, 2, 4), "cut", ("signflip", "large", "spectral"), 200),
        "full": _sweep("consensus", "cliques", 30, 50, tuple(range(1, 15)), "cut", _ALL, 500, (0, 1, 2))
        + _sweep("consensus", "er", 30, 50, tuple(range(1, 15)), "cut", _ALL, 500, (0, 1, 2))
        + _sweep("consensus", "er", 30, 50, tuple(range(1, 15)), "random", _ALL, 500, (0, 1, 2), clean=False)
        + _sweep("consensus", "torus", 36, 50, tuple(range(1, 8)), "cut", _ALL, 500, (0, 1, 2))
        + _sweep("consensus", "chords", 36, 50, tuple(range(1, 15)), "random", _ALL, 500, (0, 1, 2))
        + _sweep("dsgd", "cliques", 30, 20, (1, 2, 4, 6, 8), "cut", _ALL, 1000, (0, 1, 2))
        + _sweep("dsgd", "er", 30, 20, (1, 2, 4, 6, 8), "cut", _ALL, 1000, (0, 1, 2)),
    },
    validate=_check,
)


# ----------------------------------------------------------------------------- the instance


def task_graph(kind: str, n: int, seed: int) -> Graph:
    """The simulator's graph ``kind``, or one of the two dense graphs of the paper's experiments.

    ``twoworlds``: two cliques of ``n/2`` nodes; node ``i`` of the first is
    joined to nodes ``n/2 + (i + k) mod (n/2)``, ``k < n // 3`` of the second
    (the paper's code, ``topology.py``, "two_worlds" with ``hyper = 8`` for 13-node cliques).
    ``erdense``: Erdős–Rényi with ``p = ER_DENSE_P``, redrawn until connected (the
    paper's averaging runs sweep ``p`` from 0.3 to 1 on 20 honest nodes).
    """
    if kind == "twoworlds":
        if n % 2 or n < 6:
            raise ValueError(f"graph twoworlds: n must be even and at least 6, got n={n}")
        h = n // 2
        iu, ju = np.triu_indices(h, 1)
        i, k = np.meshgrid(np.arange(h), np.arange(max(1, n // 3)), indexing="ij")
        cross = np.c_[i.ravel(), h + (i + k).ravel() % h]
        pairs = np.r_[np.c_[iu, ju], np.c_[iu + h, ju + h], cross]
        p = np.unique(np.sort(pairs, axis=1), axis=0)
        return Graph(kind, n, p[p[:, 0] != p[:, 1]].astype(np.int64))
    if kind == "erdense":
        rng = np.random.default_rng([seed, n, 13])
        iu, ju = np.triu_indices(n, 1)
        for _ in range(1000):
            keep = rng.random(iu.size) < ER_DENSE_P
            g = Graph(kind, n, np.c_[iu[keep], ju[keep]].astype(np.int64))
            if g.is_connected():
                return g
        raise RuntimeError(f"graph erdense: no connected draw (n={n})")
    return make_graph(kind, n, seed)


def _honest_connected(graph: Graph, honest: np.ndarray) -> bool:
    idx = np.flatnonzero(honest)
    sub = graph.adjacency[idx][:, idx]
    return sp.csgraph.connected_components(sub, directed=False)[0] == 1


def place_byzantine(graph: Graph, W: sp.csr_matrix, b: int, place: str, seed: int) -> np.ndarray:
    """``bool (n,)``: the Byzantine nodes, keeping the honest subgraph connected.

    ``random``: uniformly, redrawn until the honest subgraph is connected.
    ``cut``: the sign of the Fiedler vector of ``I - W`` splits the graph;
    nodes incident to a cut edge come first, then the others, each group by
    increasing ``|v_i|`` (nearest the cut), nodes of equal ``|v_i|`` (to 9
    digits) alternating between the two sides, lowest index first; a node is
    taken unless its loss would disconnect the honest subgraph.
    """
    n = graph.n
    rng = np.random.default_rng([seed, n, b, 11])
    if place == "random":
        for _ in range(1000):
            byz = np.zeros(n, dtype=bool)
            byz[rng.choice(n, size=b, replace=False)] = True
            if _honest_connected(graph, ~byz):
                return byz
        raise RuntimeError(f"no placement of {b} Byzantine nodes keeps the honest {graph.kind} graph connected")
    _, v, _ = fiedler(np.eye(n) - W.toarray())
    side = v >= -SPECTRAL_TOL  # an entry within rounding of zero: the positive side, on every CPU
    i, j = graph.edges[:, 0], graph.edges[:, 1]
    on_cut = np.zeros(n, dtype=bool)
    cut = side[i] != side[j]
    on_cut[i[cut]] = True
    on_cut[j[cut]] = True
    # |v| rounded: symmetric graphs (two cliques, rings) give equal |v| up to rounding. Version 1
    # let the rounding decide, so the placement changed with the CPU; ties now alternate between
    # the two sides, lowest index first on each, so that both sides of the cut get Byzantine nodes.
    groups: dict[tuple[bool, float], list[int]] = {}
    for k in range(n):
        groups.setdefault((not on_cut[k], round(abs(float(v[k])), 9)), []).append(k)
    order = []
    for key in sorted(groups):
        pos = [k for k in groups[key] if side[k]]
        neg = [k for k in groups[key] if not side[k]]
        for plus, minus in itertools.zip_longest(pos, neg):
            order += [k for k in (plus, minus) if k is not None]
    byz = np.zeros(n, dtype=bool)
    for k in order:
        if byz.sum() == b:
            break
        byz[k] = True
        if not _honest_connected(graph, ~byz):
            byz[k] = False
    if byz.sum() < b:
        raise RuntimeError(f"no cut placement of {b} Byzantine nodes keeps the honest {graph.kind} graph connected")
    return byz


def _sides(W: sp.csr_matrix) -> np.ndarray:
    """``+1 / -1`` per node: the side of the weakest cut (sign of the Fiedler vector of ``I - W``)."""
    _, v, _ = fiedler(np.eye(W.shape[0]) - W.toarray())
    return np.where(v >= -SPECTRAL_TOL, 1.0, -1.0)


def consensus_values(n: int, d: int, sides: np.ndarray, seed: int) -> np.ndarray:
    """``x_i(0) = g_i + OFFSET s_i u``: ``g_i ~ N(0, I/d)``, ``u`` a random unit vector, ``s_i`` the node's side."""
    rng = np.random.default_rng([seed, n, d, 3])
    u = rng.standard_normal(d)
    u /= np.linalg.norm(u)
    return rng.standard_normal((n, d)) / math.sqrt(d) + OFFSET * sides[:, None] * u[None, :]


def _sigmoid(t: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * t))


class LogisticData:
    """Node data of the ``dsgd`` workload and the pooled honest objective (trusted side).

    Node ``i``'s features are ``N(OFFSET s_i u / sqrt(d), I / d)`` scaled by
    ``sqrt(d)`` so that each has unit variance per coordinate... in short:
    ``a = z + OFFSET s_i u`` with ``z ~ N(0, I)``; its labels are ``+-1`` with
    ``P(+1) = sigmoid(a . (theta + s_i delta))``: the two sides of the weakest
    cut disagree both in features and in models (heterogeneous data).
    """

    def __init__(self, n: int, d: int, sides: np.ndarray, seed: int) -> None:
        rng = np.random.default_rng([seed, n, d, 5])
        u = rng.standard_normal(d)
        u /= np.linalg.norm(u)
        theta = rng.standard_normal(d) / math.sqrt(d) * 2.0
        delta = rng.standard_normal(d) / math.sqrt(d)

        def draw(m: int) -> tuple[np.ndarray, np.ndarray]:
            A = rng.standard_normal((n, m, d)) + OFFSET * 0.5 * sides[:, None, None] * u
            z = np.einsum("imd,id->im", A, theta[None, :] + sides[:, None] * delta[None, :])
            return A, np.where(rng.random((n, m)) < _sigmoid(z), 1.0, -1.0)

        self.A, self.y = draw(SAMPLES)
        self.A_test, self.y_test = draw(TEST)
        self.n, self.d = n, d

    def smoothness(self) -> float:
        """An upper bound on every local smoothness constant."""
        return max(float(np.linalg.eigvalsh(self.A[i].T @ self.A[i] / SAMPLES).max()) for i in range(self.n)) * 0.25 + LAMBDA


def _loss(A: np.ndarray, y: np.ndarray, x: np.ndarray) -> float:
    """Mean logistic loss of samples ``A (m, d)``, ``y (m,)`` at ``x`` (no l2 term)."""
    return float(np.mean(np.logaddexp(0.0, -y * (A @ x))))


def _honest_optimum(A: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Minimiser of the pooled l2-logistic loss of the honest samples (L-BFGS, then Newton)."""
    A2, y2 = A.reshape(-1, A.shape[-1]), y.reshape(-1)
    m, d = A2.shape

    def f(x):
        return _loss(A2, y2, x) + 0.5 * LAMBDA * x @ x

    def g(x):
        return A2.T @ (-y2 * _sigmoid(-y2 * (A2 @ x))) / m + LAMBDA * x

    x = minimize(f, np.zeros(d), jac=g, method="L-BFGS-B", options={"gtol": 1e-12, "ftol": 0, "maxiter": 5000}).x
    for _ in range(20):
        gr = g(x)
        if np.linalg.norm(gr) < 1e-13:
            break
        s = _sigmoid(y2 * (A2 @ x))
        H = (A2 * (s * (1 - s))[:, None]).T @ A2 / m + LAMBDA * np.eye(d)
        x = x - np.linalg.solve(H, gr)
    return x


# ----------------------------------------------------------------------------- the protocol


class RobustSession(GossipSession):
    """Oracles ``value`` (consensus: each node's vector) and ``grad`` (dsgd: a minibatch gradient)."""

    oracles = ("value", "grad")

    def __init__(self, sim: Simulator, fields: dict[str, Any], private: dict[str, Any], seed: int) -> None:
        super().__init__(sim, max_rounds=fields["rounds"], max_steps=4 * fields["rounds"] + 16, answer_width=fields["d"])
        self.fields, self.private = fields, private
        self.rng = np.random.default_rng([seed, 17])

    def call_oracle(self, name: str, x: np.ndarray | None, action: dict[str, Any]) -> np.ndarray:
        what = f"action {self.sim.counters.steps} (oracle {name})"
        workload = self.fields["workload"]
        if (name == "value") != (workload == "consensus"):
            raise InvalidSolution(f"{what}: the {workload} workload has oracle {'value' if workload == 'consensus' else 'grad'} only")
        self.sim.oracle(name)
        if name == "value":
            return np.array(self.private["values"])
        d = self.fields["d"]
        if x is None or x.shape[1] != d:
            raise InvalidSolution(f"{what}: field 'x' must be ({self.n}, {d})")
        A, y = self.private["A"], self.private["y"]
        pick = np.argsort(self.rng.random((self.n, A.shape[1])), axis=1)[:, :BATCH]
        Ab = np.take_along_axis(A, pick[:, :, None], axis=1)
        yb = np.take_along_axis(y, pick, axis=1)
        z = np.einsum("imd,id->im", Ab, x)
        r = -yb * _sigmoid(-yb * z) / BATCH
        return np.einsum("imd,im->id", Ab, r) + LAMBDA * x


_TEMPLATE = '''\
    """Plain gossip as an F-RG step: x_i <- x_i + eta sum_j w_ij (x_j - x_i) (no robustness)."""

    def program(self):
        w = np.asarray(self.data["neighbour_weights"])
        eta = 1.0 / float(self.data["laplacian_max_eig"])
        if self.data["workload"] == "consensus":
            x = yield oracle("value")
            while self.rounds_left > 0:
                got = yield exchange(x)
                x = x + eta * np.einsum("ik,ikd->id", w, got - x[:, None, :])
            return x
        x = np.zeros((self.n, int(self.data["dim"])))
        lr = 1.0 / float(self.data["smoothness"])
        while self.rounds_left > 0:
            g = yield oracle("grad", x)
            y = x - lr * g
            got = yield exchange(y)
            x = y + eta * np.einsum("ik,ikd->id", w, got - y[:, None, :])
        return x
'''


@register_task
class RobustGossipTask(CatalogTask):
    """Distance of the honest nodes to the honest target after ``rounds`` rounds under attack.

    The solution is what :class:`RobustSession` builds: the final rows ``x``
    (``(n, d)``; Byzantine rows ignored), the counters and the trace.
    """

    meta = TaskMeta(
        name="robust-gossip",
        version="2",
        family="decentralized",
        area="distributed optimisation",
        paper=Paper(
            title="Unified Breakdown Analysis for Byzantine Robust Gossip (ICML 2025)",
            authors=["Renaud Gaucher", "Aymeric Dieuleveut", "Hadrien Hendrikx"],
            arxiv="2410.10418",
            venue="ICML 2025",
            code_url="https://github.com/renaudgaucher/Byzantine-Robust-Gossip",
        ),
        description=(
            "Average consensus and D-SGD (heterogeneous logistic regression) on graphs with b Byzantine nodes at random "
            "or at the weakest cut, under ALIE, sign-flip, large-value, dissensus and the paper's spectral attack; the "
            "verifier measures the honest nodes' distance to the honest target relative to the start."
        ),
        metrics=[
            Metric(name="max_err", direction="min", description="max over honest nodes of ||x_i - m|| / s (m: honest target, s: starting max error)"),
            Metric(name="log10_max_err", direction="min", description="log10 of max_err (floored at 1e-12): a paired difference of -1 is 10x closer"),
            Metric(name="mean_err", direction="min", description="mean over honest nodes of ||x_i - m|| / s"),
            Metric(name="bias", direction="min", description="||mean_H x - m|| / s: how far the honest average was dragged"),
            Metric(name="spread", direction="min", description="max over honest nodes of ||x_i - mean_H x|| / s: disagreement"),
            Metric(name="bounded", direction="max", description=f"1 if max_err <= {BOUND:g} (no worse than at the start)"),
            Metric(name="reached", direction="max", description=f"1 if max_err <= {REACHED:g}"),
            Metric(name="test_loss", direction="min", description="dsgd: test logistic loss of the honest average (absent for consensus: the store holds no NaN)"),
            Metric(name="excess_test_loss", direction="min", description="dsgd: test_loss minus that of x*_H (absent for consensus: the store holds no NaN)"),
            Metric(name="test_acc", direction="max", description="dsgd: test accuracy of the honest average (absent for consensus: the store holds no NaN)"),
            Metric(name="rounds", direction="min", unit="rounds", description="communication rounds used"),
            Metric(name="oracle_calls", direction="min", unit="calls", description="local oracle calls per node (value or grad)"),
        ],
        primary="max_err",
        normalization=Normalization(kind="log", zero=1.0, one=1e-6, description="log-scaled: 0 at the starting error, 1 at a millionth of it"),
        interactive=True,
        budgets={"smoke": 20.0, "standard": 60.0, "full": 600.0},
    )
    template = _TEMPLATE
    catalog = CATALOG

    def spec(self, fields: dict[str, Any]) -> InstanceSpec:
        return InstanceSpec(
            id=CATALOG.form.format(**fields),
            params=dict(fields),
            tags=("generated", fields["workload"], fields["graph"], fields["attack"], fields["place"]),
        )

    def _setup(self, fields: dict[str, Any]) -> tuple[Graph, sp.csr_matrix, np.ndarray]:
        g = task_graph(fields["graph"], fields["n"], fields["seed"])
        W = metropolis(g)
        byz = place_byzantine(g, W, fields["b"], fields["place"], fields["seed"])
        return g, W, byz

    def generate(self, fields: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """Public: the graph as each node knows it, ``byzantine_weight`` (the bound ``b_w`` every
        F-RG rule is given: the largest total weight of Byzantine neighbours of an honest node),
        ``byzantine_neighbours`` (the largest number of them), ``n_byzantine`` (``b``),
        ``laplacian_max_eig`` (of ``I - W``), ``dim``, ``workload`` and, for dsgd, ``smoothness``.
        Private: which nodes are Byzantine, the values or samples, the test set, the target."""
        g, W, byz = self._setup(fields)
        n, d = fields["n"], fields["d"]
        data = public_graph_data(g, W)
        nb, mask = data["neighbours"], data["neighbour_mask"]
        byz_slot = mask & byz[np.where(mask, nb, 0)]
        bw = np.where(byz_slot, data["neighbour_weights"], 0.0).sum(axis=1)
        honest = ~byz
        lam = np.linalg.eigvalsh(np.eye(n) - W.toarray())
        data.update(
            workload=fields["workload"],
            dim=d,
            max_rounds=fields["rounds"],
            n_byzantine=int(fields["b"]),
            byzantine_weight=float(bw[honest].max()) if byz.any() else 0.0,
            byzantine_neighbours=int(byz_slot.sum(axis=1)[honest].max()) if byz.any() else 0,
            laplacian_max_eig=float(lam[-1]),
        )
        sides = _sides(W)
        private: dict[str, Any] = {"byzantine": byz}
        if fields["workload"] == "consensus":
            values = consensus_values(n, d, sides, fields["seed"])
            target = values[honest].mean(axis=0)
            private.update(values=values, target=target, scale=float(np.linalg.norm(values[honest] - target, axis=1).max()))
        else:
            ld = LogisticData(n, d, sides, fields["seed"])
            data["smoothness"] = ld.smoothness()
            data["batch"] = BATCH
            x_star = _honest_optimum(ld.A[honest], ld.y[honest])
            private.update(
                A=ld.A,
                y=ld.y,
                A_test=ld.A_test[honest].reshape(-1, d),
                y_test=ld.y_test[honest].reshape(-1),
                target=x_star,
                scale=float(np.linalg.norm(x_star)),
            )
        return data, private

    def reference(self, fields: dict[str, Any], data: dict[str, Any], private: dict[str, Any]) -> dict[str, Reference]:
        g, W, byz = self._setup(fields)
        mu_min, _, mu_max = fiedler(honest_laplacian(W, ~byz))
        bw = float(data["byzantine_weight"])
        refs = {
            "mu_min": Reference(value=mu_min, source="algebraic connectivity of the honest subgraph's Metropolis-weighted Laplacian (numpy eigh)"),
            "mu_max": Reference(value=mu_max, source="largest eigenvalue of the honest subgraph's weighted Laplacian"),
            "byzantine_weight": Reference(value=bw, source="max over honest nodes of the Metropolis weight of their Byzantine neighbours"),
            "byzantine_ratio": Reference(value=bw / mu_min if mu_min > 0 else math.inf, source="byzantine_weight / mu_min, the quantity the paper's breakdown bounds are stated in"),
        }
        if fields["workload"] == "dsgd":
            x = private["target"]
            refs["test_loss_star"] = Reference(
                value=_loss(private["A_test"], private["y_test"], x), source="test loss of x*_H, the honest pooled l2-logistic minimiser (L-BFGS then Newton)"
            )
        return refs

    def session(self, instance: Instance, seed: int) -> Session:
        fields = CATALOG.form.parse(instance.id)
        g, W, _ = self._setup(fields)
        byz = np.asarray(instance.private["byzantine"])
        attack = make_attack(fields["attack"], W, g.neighbours, ~byz) if byz.any() else None
        sim = Simulator(g, W, byzantine=byz, attack=attack)
        return RobustSession(sim, fields, instance.private, seed)

    def scaffold(self, name: str, kind: str) -> str:
        return node_program_source(self.meta.name, name, kind, self.template)

    def evaluate(self, instance: Instance, solution: Any) -> dict[str, float]:
        """Recompute every metric from the honest rows of the answer.

        Raises
        ------
        InvalidSolution
            If the solution is not the session's dict (fields ``x``, ``rounds``,
            ``oracle``), or ``x`` is not a finite ``(n, d)`` array.
        """
        fields = CATALOG.form.parse(instance.id)
        n, d = fields["n"], fields["d"]
        if not isinstance(solution, dict) or not {"x", "rounds", "oracle"} <= set(solution):
            raise InvalidSolution("the solution must be the session's dict with fields 'x', 'rounds' and 'oracle'")
        X = check_rows(solution["x"], n, "field 'x'", d)
        honest = ~np.asarray(instance.private["byzantine"])
        m = np.asarray(instance.private["target"])
        s = float(instance.private["scale"]) or 1.0
        H = X[honest]
        dist = np.linalg.norm(H - m, axis=1) / s
        mean = H.mean(axis=0)
        max_err = float(dist.max())
        oracle = solution["oracle"] or {}
        calls = sum(float(np.mean(np.asarray(v)[honest])) for v in oracle.values())
        out = {
            "max_err": max_err,
            "log10_max_err": math.log10(max(max_err, 1e-12)),
            "mean_err": float(dist.mean()),
            "bias": float(np.linalg.norm(mean - m) / s),
            "spread": float(np.linalg.norm(H - mean, axis=1).max() / s),
            "bounded": float(max_err <= BOUND),
            "reached": float(max_err <= REACHED),
            "rounds": float(solution["rounds"]),
            "oracle_calls": calls,
        }
        if fields["workload"] == "dsgd":
            At, yt = instance.private["A_test"], instance.private["y_test"]
            out["test_loss"] = _loss(At, yt, mean)
            out["excess_test_loss"] = out["test_loss"] - instance.references["test_loss_star"].value
            out["test_acc"] = float(np.mean(np.sign(At @ mean) == yt))
        return out
