"""The trusted gossip simulator that the decentralized tasks share.

Nodes of a graph talk only to their neighbours. The simulator lives on the
task's side of the job: the method process never holds another node's data,
only what the simulator delivers to it, and every count that becomes a metric
(communication rounds, scalars sent per node, local oracle calls) is kept
here, never taken from the method.

Graphs (:func:`make_graph`)
    ``ring``, ``chords`` (a ring plus chords of length ``round(sqrt(n))``),
    ``torus`` (2-D, ``n`` a square), ``er`` (Erdős–Rényi with
    ``p = 2 log(n) / n``, redrawn until connected), ``star``, ``complete``
    and ``cliques`` (two cliques of ``n/2`` joined by ``max(1, n // 10)``
    edges). Each comes with its Metropolis mixing matrix
    (:func:`metropolis`) and the spectral gap of that matrix
    (:func:`spectral_gap`).

The protocol (:class:`GossipSession`)
    A method is a *node program* run for all nodes at once (one numpy row per
    node). At each step it sends one action, a dict with an ``"op"``:

    ``{"op": "mix", "x": (n, d)}``
        one gossip round: node ``i`` receives ``sum_j W_ij x_j`` (its own
        Metropolis weights, its neighbours' rows). Counts one round and ``d``
        scalars sent by every node.
    ``{"op": "exchange", "x": (n, d)}``
        one round in which node ``i`` receives every neighbour's row,
        ``(n, max_degree, d)`` in the order of ``data["neighbours"]`` (padded
        slots are zero; ``data["neighbour_mask"]`` marks the real ones).
        Counts like ``mix``. Byzantine senders (robust-gossip) are replaced
        here by the task's attack, which may send each receiver a different
        row.
    ``{"op": "oracle", "name": str, "x": (n, d), ...}``
        a local call: node ``i`` evaluates its own oracle (gradient, loss,
        histogram: each task names its own) at its row of ``x``. Counts one
        call of that name per node; no communication.
    ``{"op": "done", "x": (n, p)}``
        the method's answer: one row per node.

    Any action may also carry ``"report": (n, p)``, the method's current
    answer, which the task scores on its side to draw the trajectory (for
    example ``f(mean x) - f*`` against rounds). The next state holds the
    reply in ``state["reply"]`` together with the counters so far.

Every array a method sends is checked (shape, finite float), and a bad one is
refused with a message naming the action and the field.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
import scipy.sparse as sp

from bench.registry import unknown_message
from bench.task import InvalidSolution, Session

__all__ = [
    "GRAPH_KINDS",
    "Graph",
    "make_graph",
    "metropolis",
    "spectral_gap",
    "algebraic_connectivity",
    "public_graph_data",
    "Counters",
    "Simulator",
    "GossipSession",
    "ACTIONS",
    "check_rows",
    "node_program_source",
]

GRAPH_KINDS = ("ring", "chords", "torus", "er", "star", "complete", "cliques")
#: The ops a node program may send.
ACTIONS = ("mix", "exchange", "oracle", "done")
#: Widest row a method may send (scalars per node and round).
MAX_WIDTH = 4096


# ----------------------------------------------------------------------------- graphs


@dataclass(frozen=True)
class Graph:
    """An undirected, connected simple graph on nodes ``0..n-1``.

    Attributes
    ----------
    kind
        One of :data:`GRAPH_KINDS`.
    n
        Number of nodes.
    edges
        ``int64 (m, 2)``, each edge once with ``i < j``, sorted.
    """

    kind: str
    n: int
    edges: np.ndarray

    @cached_property
    def adjacency(self) -> sp.csr_matrix:
        """Symmetric 0/1 adjacency, CSR, ``float64``."""
        i, j = self.edges[:, 0], self.edges[:, 1]
        a = sp.coo_matrix((np.ones(2 * len(i)), (np.r_[i, j], np.r_[j, i])), shape=(self.n, self.n))
        return a.tocsr()

    @cached_property
    def degree(self) -> np.ndarray:
        """``int64 (n,)`` node degrees."""
        return np.diff(self.adjacency.indptr).astype(np.int64)

    @cached_property
    def neighbours(self) -> np.ndarray:
        """``int64 (n, max_degree)``: each node's neighbours in increasing order, padded with -1."""
        a = self.adjacency
        width = int(self.degree.max()) if self.n else 0
        out = np.full((self.n, width), -1, dtype=np.int64)
        rows = np.repeat(np.arange(self.n), self.degree)
        slot = np.arange(a.nnz) - np.repeat(a.indptr[:-1], self.degree)
        out[rows, slot] = a.indices
        return out

    @property
    def mask(self) -> np.ndarray:
        """``bool (n, max_degree)``: which slots of :attr:`neighbours` are real."""
        return self.neighbours >= 0

    def is_connected(self) -> bool:
        """Whether the graph has one connected component."""
        n_comp, _ = sp.csgraph.connected_components(self.adjacency, directed=False)
        return n_comp == 1


def _edges(pairs: np.ndarray) -> np.ndarray:
    p = np.sort(np.asarray(pairs, dtype=np.int64).reshape(-1, 2), axis=1)
    p = p[p[:, 0] != p[:, 1]]
    return np.unique(p, axis=0)


def make_graph(kind: str, n: int, seed: int = 0) -> Graph:
    """Build graph ``kind`` on ``n`` nodes (``seed`` matters for ``er`` only).

    Raises
    ------
    ValueError
        For an unknown kind, ``n < 3``, a torus whose ``n`` is not a square of
        at least 3, or ``cliques`` with an odd ``n``.
    """
    if kind not in GRAPH_KINDS:
        raise ValueError(unknown_message("graph", kind, GRAPH_KINDS))
    if n < 3:
        raise ValueError(f"graph {kind}: needs at least 3 nodes, got n={n}")
    idx = np.arange(n)
    if kind == "ring":
        pairs = np.c_[idx, (idx + 1) % n]
    elif kind == "chords":
        c = max(2, round(math.sqrt(n)))
        pairs = np.r_[np.c_[idx, (idx + 1) % n], np.c_[idx, (idx + c) % n]]
    elif kind == "torus":
        s = math.isqrt(n)
        if s * s != n or s < 3:
            raise ValueError(f"graph torus: n must be a square of at least 9 (n = s*s), got n={n}")
        r, c = np.divmod(idx, s)
        pairs = np.r_[np.c_[idx, r * s + (c + 1) % s], np.c_[idx, ((r + 1) % s) * s + c]]
    elif kind == "er":
        p = min(1.0, 2.0 * math.log(n) / n)
        rng = np.random.default_rng([seed, n, 7])
        iu, ju = np.triu_indices(n, 1)
        for _ in range(1000):
            keep = rng.random(iu.size) < p
            g = Graph(kind, n, _edges(np.c_[iu[keep], ju[keep]]))
            if g.is_connected():
                return g
        raise RuntimeError(f"graph er: no connected draw in 1000 tries (n={n}, p={p:.3g})")
    elif kind == "star":
        pairs = np.c_[np.zeros(n - 1, dtype=np.int64), idx[1:]]
    elif kind == "complete":
        iu, ju = np.triu_indices(n, 1)
        pairs = np.c_[iu, ju]
    else:  # cliques
        if n % 2 or n < 6:
            raise ValueError(f"graph cliques: n must be even and at least 6, got n={n}")
        h = n // 2
        iu, ju = np.triu_indices(h, 1)
        bridges = max(1, n // 10)
        b = np.arange(bridges)
        pairs = np.r_[np.c_[iu, ju], np.c_[iu + h, ju + h], np.c_[b, b + h]]
    return Graph(kind, n, _edges(pairs))


def metropolis(graph: Graph) -> sp.csr_matrix:
    """Metropolis–Hastings weights: ``W_ij = 1 / (1 + max(d_i, d_j))`` on edges, rows summing to 1.

    Symmetric and doubly stochastic, with positive diagonal on every graph
    (so the chain is aperiodic, also on bipartite rings and tori).
    """
    d = graph.degree.astype(np.float64)
    i, j = graph.edges[:, 0], graph.edges[:, 1]
    w = 1.0 / (1.0 + np.maximum(d[i], d[j]))
    off = sp.coo_matrix((np.r_[w, w], (np.r_[i, j], np.r_[j, i])), shape=(graph.n, graph.n)).tocsr()
    diag = 1.0 - np.asarray(off.sum(axis=1)).ravel()
    return (off + sp.diags(diag)).tocsr()


def spectral_gap(W: sp.spmatrix | np.ndarray) -> float:
    """``1 - max(|lambda_2|, |lambda_n|)`` of a symmetric mixing matrix (dense eigvalsh)."""
    dense = W.toarray() if sp.issparse(W) else np.asarray(W)
    lam = np.linalg.eigvalsh(dense)
    lam = np.sort(np.abs(lam))[::-1]
    return float(1.0 - lam[1]) if lam.size > 1 else 1.0


def algebraic_connectivity(graph: Graph) -> float:
    """Second-smallest eigenvalue of the graph Laplacian ``D - A`` (the Fiedler value)."""
    lap = sp.diags(graph.degree.astype(np.float64)) - graph.adjacency
    lam = np.linalg.eigvalsh(lap.toarray())
    return float(np.sort(lam)[1])


def public_graph_data(graph: Graph, W: sp.csr_matrix) -> dict[str, Any]:
    """What every node may know about its place in the graph, for ``Instance.data``.

    ``neighbours`` (``(n, max_degree)``, -1 padded), ``neighbour_mask``,
    ``neighbour_weights`` (its Metropolis weights, 0 in padded slots),
    ``self_weight`` (``W_ii``) and ``degree``; ``n_nodes`` and the graph's
    ``kind``. The spectral gap is public too (H-DCP's correction uses it).
    """
    nb = graph.neighbours
    mask = nb >= 0
    weights = np.zeros(nb.shape)
    rows = np.nonzero(mask)[0]
    weights[mask] = np.asarray(W[rows, nb[mask]]).ravel()
    return {
        "n_nodes": graph.n,
        "graph": graph.kind,
        "neighbours": nb,
        "neighbour_mask": mask,
        "neighbour_weights": weights,
        "self_weight": W.diagonal().copy(),
        "degree": graph.degree,
        "spectral_gap": spectral_gap(W),
    }


# ----------------------------------------------------------------------------- the engine


@dataclass
class Counters:
    """What the simulator has counted so far.

    Attributes
    ----------
    rounds
        Communication rounds (``mix`` and ``exchange`` actions).
    scalars
        ``float64 (n,)``: scalars each node has sent to each of its
        neighbours, summed over rounds (a broadcast of ``d`` numbers counts ``d``).
    oracle
        Calls per oracle name, each an ``int64 (n,)`` per-node count.
    steps
        Actions received (every op).
    """

    n: int
    rounds: int = 0
    scalars: np.ndarray = field(default=None)  # type: ignore[assignment]
    oracle: dict[str, np.ndarray] = field(default_factory=dict)
    steps: int = 0

    def __post_init__(self) -> None:
        if self.scalars is None:
            self.scalars = np.zeros(self.n)

    def calls(self, name: str) -> np.ndarray:
        """Per-node calls of oracle ``name`` (zeros if never called)."""
        return self.oracle.get(name, np.zeros(self.n, dtype=np.int64))

    def as_dict(self) -> dict[str, Any]:
        """Plain data: rounds, per-node scalars and oracle calls."""
        return {
            "rounds": self.rounds,
            "scalars": self.scalars.copy(),
            "oracle": {k: v.copy() for k, v in self.oracle.items()},
            "steps": self.steps,
        }


#: An attack: ``attack(x, round) -> (n, max_degree, d)`` rows every receiver gets
#: from each of its slots, given the current rows of all nodes (honest ones true).
#: Only the slots whose sender is Byzantine are used.
Attack = Callable[[np.ndarray, int], np.ndarray]


class Simulator:
    """The trusted engine: mixing matrix, neighbour table, faults and counters.

    Parameters
    ----------
    graph, W
        The graph and its mixing matrix.
    byzantine
        ``bool (n,)``: nodes whose messages the attack replaces (``None``: none).
    attack
        Called for every round with Byzantine nodes (see :data:`Attack`).
    """

    def __init__(
        self,
        graph: Graph,
        W: sp.csr_matrix,
        byzantine: np.ndarray | None = None,
        attack: Attack | None = None,
    ) -> None:
        self.graph, self.W = graph, W.tocsr()
        self.n = graph.n
        self.nb = graph.neighbours
        self.mask = self.nb >= 0
        self.safe_nb = np.where(self.mask, self.nb, 0)
        self.byzantine = np.zeros(self.n, dtype=bool) if byzantine is None else np.asarray(byzantine, dtype=bool)
        if self.byzantine.any() and attack is None:
            raise ValueError("Byzantine nodes need an attack")
        self.attack = attack
        # slots whose sender is Byzantine, for every receiver
        self.byz_slot = self.mask & self.byzantine[self.safe_nb]
        self.counters = Counters(self.n)

    def _count_round(self, width: int) -> None:
        self.counters.rounds += 1
        self.counters.scalars += width

    def exchange(self, x: np.ndarray) -> np.ndarray:
        """One round: every node's row to each neighbour; ``(n, max_degree, d)`` received rows."""
        self._count_round(x.shape[1])
        got = x[self.safe_nb]  # (n, D, d)
        got[~self.mask] = 0.0
        if self.byz_slot.any():
            assert self.attack is not None
            fake = np.asarray(self.attack(x, self.counters.rounds), dtype=np.float64)
            got[self.byz_slot] = fake[self.byz_slot]
        return got

    def mix(self, x: np.ndarray) -> np.ndarray:
        """One gossip round: ``W @ x``, with Byzantine senders' rows replaced by the attack."""
        if not self.byz_slot.any():
            self._count_round(x.shape[1])
            return np.asarray(self.W @ x)
        got = self.exchange(x)
        w = np.zeros(self.nb.shape)
        w[self.mask] = np.asarray(self.W[np.nonzero(self.mask)[0], self.nb[self.mask]]).ravel()
        return self.W.diagonal()[:, None] * x + np.einsum("ij,ijk->ik", w, got)

    def oracle(self, name: str, calls: int = 1) -> None:
        """Count ``calls`` local calls of oracle ``name`` at every node."""
        c = self.counters.oracle.setdefault(name, np.zeros(self.n, dtype=np.int64))
        c += calls


def check_rows(value: Any, n: int, what: str, width: int | None = None) -> np.ndarray:
    """``value`` as a finite ``float64 (n, d)`` array (a vector of length ``n`` becomes ``(n, 1)``).

    Raises
    ------
    InvalidSolution
        Naming ``what`` and the problem: not an array, wrong number of rows
        or columns, too wide, or a NaN/inf entry.
    """
    if not isinstance(value, (np.ndarray, list, tuple)):
        raise InvalidSolution(f"{what}: expected a float array with one row per node ({n}), got {type(value).__name__}")
    try:
        a = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InvalidSolution(f"{what}: cannot read it as a float array: {exc}") from None
    if a.ndim == 1:
        a = a[:, None]
    if a.ndim != 2 or a.shape[0] != n:
        raise InvalidSolution(f"{what}: expected shape ({n}, d), one row per node, got {a.shape}")
    if width is not None and a.shape[1] != width:
        raise InvalidSolution(f"{what}: expected {width} column(s), got {a.shape[1]}")
    if a.shape[1] > MAX_WIDTH:
        raise InvalidSolution(f"{what}: rows of {a.shape[1]} scalars exceed the limit of {MAX_WIDTH} per node and round")
    if not np.isfinite(a).all():
        bad = np.argwhere(~np.isfinite(a))[0]
        raise InvalidSolution(f"{what}: entry {tuple(int(v) for v in bad)} is {a[tuple(bad)]}; every entry must be finite")
    return a


class GossipSession(Session):
    """The trusted side of a decentralized job: runs the protocol of this module.

    A task subclasses it and implements :meth:`call_oracle` (its local
    oracles), :meth:`score_report` (what it records from a ``report``) and,
    if it wants, :meth:`forced_end` (an answer that ends the job early: a
    stopping rule the task owns). The solution :meth:`solution` returns holds the answer, the
    counters and the trace; it is built here and never by the method.

    Parameters
    ----------
    sim
        The engine.
    max_rounds
        Communication rounds allowed; past them, ``mix``/``exchange`` are refused.
    max_steps
        Actions allowed in all (a bound on oracle calls too).
    answer_width
        Columns the ``done`` answer must have (``None``: any).
    """

    oracles: tuple[str, ...] = ()

    def __init__(self, sim: Simulator, *, max_rounds: int, max_steps: int, answer_width: int | None = None) -> None:
        self.sim = sim
        self.n = sim.n
        self.max_rounds, self.max_steps = int(max_rounds), int(max_steps)
        self.answer_width = answer_width
        self.reply: Any = None
        self.answer: np.ndarray | None = None
        self.trace: list[dict[str, Any]] = []
        self.finished = False

    # -- hooks -----------------------------------------------------------------------
    def call_oracle(self, name: str, x: np.ndarray | None, action: dict[str, Any]) -> Any:  # pragma: no cover
        """Answer a local oracle call (and count it with ``self.sim.oracle``)."""
        raise NotImplementedError

    def score_report(self, report: np.ndarray) -> dict[str, float]:
        """What to record from a ``report`` (default: nothing)."""
        return {}

    def forced_end(self) -> np.ndarray | None:
        """An answer that ends the job now (default: none). Called before every state."""
        return None

    # -- the protocol ----------------------------------------------------------------
    def state(self) -> dict[str, Any] | None:
        if self.finished:
            return None
        forced = self.forced_end()
        if forced is not None:
            self.answer = forced
            self.finished = True
            return None
        c = self.sim.counters
        return {
            "reply": self.reply,
            "rounds": c.rounds,
            "rounds_left": self.max_rounds - c.rounds,
            "steps": c.steps,
        }

    def apply(self, action: Any) -> None:
        c = self.sim.counters
        if not isinstance(action, dict):
            raise InvalidSolution(f"action {c.steps}: expected a dict with an 'op' ({', '.join(ACTIONS)}), got {type(action).__name__}")
        op = action.get("op")
        if op not in ACTIONS:
            raise InvalidSolution(f"action {c.steps}: " + unknown_message("op", str(op), ACTIONS))
        c.steps += 1
        if c.steps > self.max_steps:
            raise InvalidSolution(f"action {c.steps}: more than the {self.max_steps} actions this instance allows")
        what = f"action {c.steps} ({op})"
        if "report" in action and action["report"] is not None:
            rep = check_rows(action["report"], self.n, f"{what}: field 'report'", self.answer_width)
            calls = {f"calls_{k}": float(v.mean()) for k, v in c.oracle.items()}
            self.trace.append({"rounds": c.rounds, "steps": c.steps, **calls, **self.score_report(rep)})
        if op == "done":
            self.answer = check_rows(action.get("x"), self.n, f"{what}: field 'x'", self.answer_width)
            self.finished = True
            return
        if op in ("mix", "exchange"):
            if c.rounds >= self.max_rounds:
                raise InvalidSolution(f"{what}: the {self.max_rounds} communication rounds of this instance are spent; send 'done'")
            x = check_rows(action.get("x"), self.n, f"{what}: field 'x'")
            self.reply = self.sim.mix(x) if op == "mix" else self.sim.exchange(x)
            return
        name = action.get("name")
        if name not in self.oracles:
            raise InvalidSolution(f"{what}: " + unknown_message("oracle", str(name), self.oracles))
        x = action.get("x")
        self.reply = self.call_oracle(name, None if x is None else check_rows(x, self.n, f"{what}: field 'x'"), action)

    def solution(self) -> dict[str, Any]:
        """The answer, the counters and the trace, as plain data for ``Task.evaluate``."""
        c = self.sim.counters
        keys = sorted({k for e in self.trace for k in e})
        trace = {k: np.asarray([e.get(k, np.nan) for e in self.trace], dtype=np.float64) for k in keys}
        return {
            "x": self.answer,
            "rounds": c.rounds,
            "steps": c.steps,
            "scalars": c.scalars.copy(),
            "oracle": {k: v.copy() for k, v in c.oracle.items()},
            "trace": trace,
        }


# ----------------------------------------------------------------------------- scaffolding

_METHOD_FILE = '''\
"""{name}: a node program for the ``{task}`` task.

Deviations
----------
List every departure from the paper or its official code, and why.
"""

from __future__ import annotations

import numpy as np

from bench import method
from common.decentralized.program import NodeProgram, exchange, mix, oracle


@method(
    name="{name}",
    kind="{kind}",
    tasks=["{task}"],
    reference="",
    version="1",
    params={{}},
    deterministic=True,
)
class Program(NodeProgram):
{body}
'''


def node_program_source(task: str, name: str, kind: str, body: str) -> str:
    """Source of a new method file (``bench new-method``) for a decentralized task.

    ``body`` is the class body of a :class:`~common.decentralized.program.NodeProgram`.
    """
    from bench.scaffold import NAME_RE

    if not NAME_RE.match(name):
        raise ValueError(f"method name {name!r} must be lower case letters, digits, '-' or '_'")
    if kind not in ("method", "baseline"):
        raise ValueError(f"--kind must be 'method' or 'baseline', got {kind!r}")
    return _METHOD_FILE.format(name=name, kind=kind, task=task, body=body.rstrip("\n"))


def run_inline(task: Any, instance: Any, program: Any, *, seed: int = 0, params: dict[str, Any] | None = None) -> dict[str, float]:
    """Run a node program against ``task``'s session in this process and score it.

    For tests and maintainer scripts (step-size grids, faithfulness checks),
    where a subprocess per run would cost more than the run. The runner never
    uses it: a published run always goes through the sandboxed protocol.
    ``program`` is a :class:`~common.decentralized.program.NodeProgram`
    subclass (the method's class); ``instance`` a loaded instance.
    """
    from bench.task import Instance

    public = Instance(id=instance.id, params=instance.params, data=instance.data, tags=instance.tags, digest="public")
    obj = program(public, seed=seed, budget=float("inf"), **(params or {}))
    session = task.session(instance, seed)
    while (state := session.state()) is not None:
        session.apply(obj.select(state))
    return task.evaluate(instance, session.solution())
