"""Trusted-side graph machinery of ``local-causal-relations``.

- :func:`random_dag`: a seeded Erdős–Rényi DAG with linear-Gaussian weights, a set of
  hidden nodes (common causes with at least two children) and Gaussian samples;
- :func:`d_separated`: d-separation in the full DAG (hidden nodes included, never
  conditioned on), i.e. the oracle CI test among the observed variables;
- :func:`fisher_z_pvalue`: Fisher's z test of a partial correlation, computed from the
  task's own correlation matrix (the same statistic as causal-learn's ``fisherz``);
- :func:`true_pag`: the PAG over the observed variables, from causal-learn's FCI run with
  the d-separation oracle (the truth);
- :func:`ancestral_labels`: the ancestral relation of every observed X to a target Y read
  off a PAG (definite non-cause 0, possible cause 1, definite cause 2). Methods import it
  to read relations off the PAGs they learn.

PAG encoding everywhere in this family: ``M[i, j]`` is the mark **at j** on the edge
``i *-* j``: 0 no edge, 1 circle, 2 arrowhead, 3 tail (the official LocICR code's
``PAGEdge``), so ``i -> j`` is ``M[i, j] = 2, M[j, i] = 3``.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass

import numpy as np

__all__ = [
    "NONE",
    "CIRCLE",
    "ARROW",
    "TAIL",
    "NON_CAUSE",
    "POSSIBLE",
    "CAUSE",
    "LABEL_NAMES",
    "Dag",
    "random_dag",
    "sample_gaussian",
    "sample_discrete",
    "GSquare",
    "d_separated",
    "dag_lists",
    "fisher_z_pvalue",
    "true_pag",
    "from_causallearn",
    "ancestral_labels",
    "is_ancestor",
]

NONE, CIRCLE, ARROW, TAIL = 0, 1, 2, 3
NON_CAUSE, POSSIBLE, CAUSE = 0, 1, 2
LABEL_NAMES = ("definite non-cause", "possible cause", "definite cause")


@dataclass(frozen=True)
class Dag:
    """A DAG on ``p`` nodes (``adj[i, j]`` = 1 for ``i -> j``), its weights and its hidden nodes."""

    adj: np.ndarray  # (p, p) uint8
    weights: np.ndarray  # (p, p) float64, nonzero exactly on edges
    hidden: np.ndarray  # int64, sorted
    observed: np.ndarray  # int64, sorted; observed variable k is DAG node observed[k]

    @property
    def p(self) -> int:
        return int(self.adj.shape[0])


def random_dag(p: int, hidden_pct: int, seed: int, degree: float = 2.0) -> Dag:
    """Random DAG: ER with expected degree ``degree`` in a random causal order.

    Weights ``U(0.5, 1.0)`` with a random sign. ``round(p * hidden_pct / 100)`` nodes
    are hidden, drawn among the nodes with at least two children (latent common causes;
    if too few, the nodes with the most children).
    """
    rng = np.random.default_rng([seed, p, hidden_pct, 7919])
    order = rng.permutation(p)
    prob = min(1.0, degree / (p - 1))
    adj = np.zeros((p, p), dtype=np.uint8)
    for a in range(p):
        for b in range(a + 1, p):
            if rng.random() < prob:
                adj[order[a], order[b]] = 1
    weights = adj * rng.uniform(0.5, 1.0, size=(p, p)) * rng.choice([-1.0, 1.0], size=(p, p))
    k = int(round(p * hidden_pct / 100))
    children = adj.sum(axis=1)
    cand = np.flatnonzero(children >= 2)
    if cand.size >= k:
        hidden = np.sort(rng.choice(cand, size=k, replace=False))
    else:
        hidden = np.sort(np.argsort(-children, kind="stable")[:k])
    observed = np.setdiff1d(np.arange(p), hidden)
    return Dag(
        adj=adj, weights=weights, hidden=hidden.astype(np.int64), observed=observed.astype(np.int64)
    )


def sample_gaussian(dag: Dag, n: int, seed: int) -> np.ndarray:
    """``n`` samples of the linear-Gaussian SEM ``x_j = sum_i w_ij x_i + e_j``, ``e_j ~ N(0, 1)``; all nodes."""
    rng = np.random.default_rng([seed, n, dag.p, 104729])
    p = dag.p
    x = np.zeros((n, p))
    e = rng.standard_normal((n, p))
    for j in _topo(dag.adj):
        x[:, j] = x @ dag.weights[:, j] + e[:, j]
    return x


def sample_discrete(dag: Dag, n: int, seed: int, card: int = 2, conc: float = 0.5) -> np.ndarray:
    """``n`` samples of a discrete Bayesian network on the DAG; all nodes, values ``0..card-1`` (int64).

    Every node takes ``card`` values. A root's distribution is drawn from a symmetric
    Dirichlet(2); a node with ``k`` parents has one distribution per parent configuration
    (``card ** k`` rows), each drawn independently from a symmetric Dirichlet(``conc``). With
    ``conc = 0.5`` the rows tend to sit near the corners of the simplex, so that a change of a
    parent's value usually shifts the child's distribution strongly (no faithfulness is
    guaranteed: two rows can be close by chance). Ancestral sampling in topological order.
    """
    rng = np.random.default_rng([seed, n, dag.p, card, 1299709])
    p = dag.p
    x = np.zeros((n, p), dtype=np.int64)
    for j in _topo(dag.adj):
        pa = np.flatnonzero(dag.adj[:, j])
        if pa.size == 0:
            cpt = rng.dirichlet(np.full(card, 2.0))[None, :]
            cfg = np.zeros(n, dtype=np.int64)
        else:
            cpt = rng.dirichlet(np.full(card, conc), size=card**pa.size)
            cfg = np.zeros(n, dtype=np.int64)
            for v in pa:
                cfg = cfg * card + x[:, v]
        cum = np.cumsum(cpt[cfg], axis=1)
        u = rng.random(n)
        x[:, j] = np.minimum((u[:, None] > cum).sum(axis=1), card - 1)
    return x


class GSquare:
    """The G^2 likelihood-ratio CI test on discrete data: causal-learn's own ``gsq`` test.

    A thin wrapper of ``causallearn.utils.cit.CIT(data, "gsq")`` (causal-learn 0.1.4.8,
    ``Chisq_or_Gsq``), so that its behaviour on sparse tables is causal-learn's, unchanged:
    configurations of the conditioning set that never occur in the data are dropped; inside
    each occurring configuration, a value of x (or y) that never occurs removes one from that
    stratum's degrees of freedom, so a stratum seen once (or with x or y constant) adds 0; the
    degrees of freedom are summed over strata, and **when they sum to 0 the p-value is 1**
    (judged independent). No other small-sample correction is applied (none is added here).
    Measured on ``disc-p20-h15-n2000-s0..s2`` (17 observed binary variables, so LocICR's
    total-conditioning blanket test conditions on 15): most of the 2^15 strata are empty and
    the occupied ones hold a handful of samples; the summed G^2 is then large against its
    reduced degrees of freedom, and most such tests come out *dependent* (p < 0.01 for 7 to
    16 of the 16 other variables, for the observed variables 0, 5 and 10 of each instance), i.e. Markov blankets found by total conditioning
    are too large rather than empty.
    """

    def __init__(self, data: np.ndarray) -> None:
        from causallearn.utils.cit import CIT

        self._cit = CIT(np.asarray(data), "gsq")

    def __call__(self, x: int, y: int, s: list[int]) -> float:
        return float(self._cit(int(x), int(y), sorted(int(c) for c in s)))


def _topo(adj: np.ndarray) -> list[int]:
    indeg = adj.sum(axis=0).astype(int)
    q = deque(int(i) for i in np.flatnonzero(indeg == 0))
    out = []
    while q:
        u = q.popleft()
        out.append(u)
        for v in np.flatnonzero(adj[u]):
            indeg[v] -= 1
            if indeg[v] == 0:
                q.append(int(v))
    if len(out) != adj.shape[0]:
        raise ValueError("not a DAG")
    return out


def d_separated(adj: np.ndarray, x: int, y: int, z: set[int] | frozenset[int], lists=None) -> bool:
    """True when DAG nodes ``x`` and ``y`` are d-separated by ``z`` (the Bayes-ball reachability).

    ``lists`` is ``(parents, children)`` as lists of lists (from :func:`dag_lists`), for speed.
    """
    if x == y:
        return False
    pa, ch = lists if lists is not None else dag_lists(adj)
    z = set(z)
    anc = set(z)  # ancestors of z (z included): colliders in this set are open
    stack = list(z)
    while stack:
        u = stack.pop()
        for w in pa[u]:
            if w not in anc:
                anc.add(w)
                stack.append(w)
    seen = set()
    todo = [(x, True)]  # (node, arrived from a child i.e. travelling up)
    while todo:
        u, up = todo.pop()
        if (u, up) in seen:
            continue
        seen.add((u, up))
        if u == y:
            return False
        if up:
            if u not in z:
                todo.extend((w, True) for w in pa[u])
                todo.extend((w, False) for w in ch[u])
        else:
            if u not in z:
                todo.extend((w, False) for w in ch[u])
            if u in anc:
                todo.extend((w, True) for w in pa[u])
    return True


def dag_lists(adj: np.ndarray) -> tuple[list[list[int]], list[list[int]]]:
    """Parents and children of every node, as Python lists."""
    p = adj.shape[0]
    return [np.flatnonzero(adj[:, j]).tolist() for j in range(p)], [
        np.flatnonzero(adj[i]).tolist() for i in range(p)
    ]


def fisher_z_pvalue(corr: np.ndarray, n: int, x: int, y: int, s: list[int]) -> float:
    """Two-sided p-value of Fisher's z test of ``rho(x, y | s) = 0`` from the correlation matrix ``corr``."""
    idx = [x, y, *s]
    sub = corr[np.ix_(idx, idx)]
    try:
        inv = np.linalg.inv(sub)
    except np.linalg.LinAlgError:
        inv = np.linalg.pinv(sub)
    r = -inv[0, 1] / math.sqrt(abs(inv[0, 0] * inv[1, 1]))
    r = max(min(r, 1.0 - 1e-12), -1.0 + 1e-12)
    stat = math.sqrt(max(n - len(s) - 3, 1)) * abs(0.5 * math.log((1 + r) / (1 - r)))
    return float(math.erfc(stat / math.sqrt(2.0)))


def from_causallearn(g: np.ndarray) -> np.ndarray:
    """causal-learn's ``graph.graph`` (``G[i, j]`` = mark at i: -1 tail, 1 arrow, 2 circle) to ``M`` (mark at j)."""
    conv = {0: NONE, -1: TAIL, 1: ARROW, 2: CIRCLE}
    p = g.shape[0]
    m = np.zeros((p, p), dtype=np.int64)
    for i in range(p):
        for j in range(p):
            if i != j and g[j, i] != 0:
                m[i, j] = conv[int(g[j, i])]
    return m


def true_pag(dag: Dag) -> np.ndarray:
    """The PAG over the observed variables, as FCI with a perfect oracle returns it.

    The skeleton and separating sets are those of the true MAG: observed X, Y are
    non-adjacent iff they are d-separated by their observed ancestors
    ``An({X, Y}) ∩ O \\ {X, Y}`` (Richardson and Spirtes 2002, no selection variables),
    which is then their separating set. FCI's orientation phase is causal-learn's own
    (``rule0``, R1-R4 with discriminating paths answered by the d-separation oracle,
    R8-R10; R5-R7 never fire without selection bias), so the truth is what
    ``causallearn.search.ConstraintBased.FCI.fci`` would return with a d-separation test,
    without its exponential possible-d-sep search.
    """
    from causallearn.graph.Edge import Edge
    from causallearn.graph.Endpoint import Endpoint
    from causallearn.graph.GeneralGraph import GeneralGraph
    from causallearn.graph.GraphNode import GraphNode
    from causallearn.search.ConstraintBased import FCI as F

    obs = [int(v) for v in dag.observed]
    q = len(obs)
    lists = dag_lists(dag.adj)
    # ancestors of every node (itself included)
    anc = [set() for _ in range(dag.p)]
    for j in range(dag.p):
        anc[j] = {j}
        stack = [j]
        while stack:
            u = stack.pop()
            for w in lists[0][u]:
                if w not in anc[j]:
                    anc[j].add(w)
                    stack.append(w)
    obs_pos = {v: k for k, v in enumerate(obs)}
    nodes = []
    for i in range(q):
        node = GraphNode(f"X{i + 1}")
        node.add_attribute("id", i)
        nodes.append(node)
    graph = GeneralGraph(nodes)
    sep_sets: dict[tuple[int, int], set[int]] = {}
    for i in range(q):
        for j in range(i + 1, q):
            a, b = obs[i], obs[j]
            cond = {v for v in (anc[a] | anc[b]) if v in obs_pos} - {a, b}
            if d_separated(dag.adj, a, b, cond, lists):
                s = {obs_pos[v] for v in cond}
                sep_sets[(i, j)] = s
                sep_sets[(j, i)] = s
            else:
                graph.add_edge(Edge(nodes[i], nodes[j], Endpoint.CIRCLE, Endpoint.CIRCLE))

    def oracle(x, y, cond=()):
        return float(
            d_separated(dag.adj, obs[int(x)], obs[int(y)], {obs[int(c)] for c in cond}, lists)
        )

    dummy = np.zeros((q + 1, q))
    F.reorientAllWith(graph, Endpoint.CIRCLE)
    F.rule0(graph, nodes, sep_sets, None, False)
    change = True
    while change:
        change = False
        change = F.rulesR1R2cycle(graph, None, change, False)
        change = F.ruleR3(graph, sep_sets, None, change, False)
        change = F.ruleR4B(graph, -1, dummy, oracle, 0.5, sep_sets, change, None, False)
        change = F.ruleR5(graph, change, False)
        change = F.ruleR6(graph, change, False)
        change = F.ruleR7(graph, change, False)
        change = F.rule8(graph, nodes, change)
        change = F.rule9(graph, nodes, change)
        change = F.rule10(graph, change)
    return from_causallearn(np.asarray(graph.graph))


def is_ancestor(adj: np.ndarray, a: int, b: int) -> bool:
    """Directed path ``a -> ... -> b`` in the DAG (``a == b`` counts)."""
    seen = {a}
    stack = [a]
    while stack:
        u = stack.pop()
        if u == b:
            return True
        for v in np.flatnonzero(adj[u]):
            v = int(v)
            if v not in seen:
                seen.add(v)
                stack.append(v)
    return False


def _directed_reach(m: np.ndarray, x: int) -> set[int]:
    """Nodes reachable from x along directed edges u -> v (M[u, v] = arrow, M[v, u] = tail)."""
    seen = {x}
    stack = [x]
    while stack:
        u = stack.pop()
        for v in np.flatnonzero((m[u] == ARROW) & (m[:, u] == TAIL)):
            v = int(v)
            if v not in seen:
                seen.add(v)
                stack.append(v)
    return seen


def _pd_reach(m: np.ndarray, x: int) -> set[int]:
    """Nodes reachable from x along possibly directed edges ``u *-* v``: no arrowhead at u, no tail at v."""
    seen = {x}
    stack = [x]
    while stack:
        u = stack.pop()
        for v in np.flatnonzero(m[u] != NONE):
            v = int(v)
            if m[v, u] == ARROW or m[u, v] == TAIL or v in seen:
                continue
            seen.add(v)
            stack.append(v)
    return seen


def _uncovered_pd_reaches(m: np.ndarray, x: int, first: int, y: int) -> bool:
    """Is there an uncovered possibly directed walk ``x, first, ..., y``? (BFS over consecutive pairs)."""
    adjm = m != NONE
    start = (x, first)
    seen = {start}
    q = deque([start])
    while q:
        a, b = q.popleft()
        if b == y:
            return True
        for c in np.flatnonzero(adjm[b]):
            c = int(c)
            if c == a or adjm[a, c]:
                continue  # covered triple (or going back)
            if m[c, b] == ARROW or m[b, c] == TAIL:
                continue  # not possibly directed b -> c
            if (b, c) not in seen:
                seen.add((b, c))
                q.append((b, c))
    return False


def ancestral_labels(m: np.ndarray, y: int) -> np.ndarray:
    """The relation of every node X to ``y`` in the PAG ``m``: 0 non-cause, 1 possible, 2 definite; ``y`` gets -1.

    - definite non-cause: no possibly directed path from X to Y (no edge on it has an
      arrowhead at its near end);
    - definite cause: a directed path X -> ... -> Y, or two uncovered possibly directed
      paths X, V1, ..., Y and X, V2, ..., Y with V1, V2 non-adjacent (Roumpelaki et al.
      2016; there is no selection bias here, so the unshielded non-collider V1 - X - V2 has
      a tail at X in every MAG of the class and the non-colliders push it to Y). The exact
      statement of that theorem is UNVERIFIED here (recalled, not re-read); the test suite
      checks soundness against the generating DAG;
    - possible cause otherwise.
    """
    p = m.shape[0]
    out = np.full(p, POSSIBLE, dtype=np.int64)
    out[y] = -1
    for x in range(p):
        if x == y:
            continue
        if y in _directed_reach(m, x):
            out[x] = CAUSE
            continue
        if y not in _pd_reach(m, x):
            out[x] = NON_CAUSE
            continue
        firsts = [
            int(v)
            for v in np.flatnonzero(m[x] != NONE)
            if m[v, x] != ARROW and m[x, v] != TAIL and _uncovered_pd_reaches(m, x, int(v), y)
        ]
        if any(m[a, b] == NONE for i, a in enumerate(firsts) for b in firsts[i + 1 :]):
            out[x] = CAUSE
    return out
