"""The trusted gossip simulator (``tasks/decentralized/gossip.py``) that the decentralized tasks share.

Graphs, Metropolis weights and spectral gaps are checked against closed forms
and networkx; the counters and the Byzantine replacement against a direct
computation; the protocol against bad actions, each refused with a message
naming the action and the field.
"""

from __future__ import annotations

import math

import networkx as nx
import numpy as np
import pytest

from bench.task import InvalidSolution
from common.decentralized.program import NodeProgram, exchange, mix, oracle
from tasks.decentralized.gossip import (
    GRAPH_KINDS,
    GossipSession,
    Simulator,
    algebraic_connectivity,
    make_graph,
    metropolis,
    public_graph_data,
    spectral_gap,
)

SIZES = {"ring": 12, "chords": 25, "torus": 16, "er": 30, "star": 9, "complete": 7, "cliques": 20}


@pytest.mark.parametrize("kind", GRAPH_KINDS)
def test_graphs_are_connected_simple_and_metropolis_is_doubly_stochastic(kind):
    g = make_graph(kind, SIZES[kind], seed=3)
    assert g.is_connected()
    assert (g.edges[:, 0] < g.edges[:, 1]).all() and len(np.unique(g.edges, axis=0)) == len(g.edges)
    W = metropolis(g).toarray()
    assert np.allclose(W, W.T) and np.allclose(W.sum(axis=1), 1.0)
    assert (np.diag(W) > 0).all() and (W >= 0).all()
    # only edges (and the diagonal) carry weight
    A = g.adjacency.toarray()
    assert ((W > 0) <= (A + np.eye(g.n) > 0)).all()
    gap = spectral_gap(W)
    assert 0 < gap <= 1


def test_degrees_and_neighbour_table_match_networkx():
    g = make_graph("er", 40, seed=1)
    G = nx.Graph(g.edges.tolist())
    assert [G.degree[i] for i in range(40)] == g.degree.tolist()
    for i in range(40):
        assert sorted(G.neighbors(i)) == [j for j in g.neighbours[i] if j >= 0]


def test_spectral_gap_of_the_ring_has_its_closed_form():
    # Metropolis on a ring: 1/3 on each edge and the diagonal; eigenvalues 1/3 + 2/3 cos(2 pi k / n).
    n = 10
    gap = spectral_gap(metropolis(make_graph("ring", n)))
    lam = 1 / 3 + 2 / 3 * np.cos(2 * np.pi * np.arange(1, n) / n)
    assert gap == pytest.approx(1 - np.abs(lam).max(), abs=1e-12)
    assert algebraic_connectivity(make_graph("ring", n)) == pytest.approx(2 - 2 * math.cos(2 * math.pi / n))


def test_two_cliques_have_a_small_gap_and_the_complete_graph_a_full_one():
    assert spectral_gap(metropolis(make_graph("complete", 8))) == pytest.approx(1.0)
    assert spectral_gap(metropolis(make_graph("cliques", 20))) < spectral_gap(metropolis(make_graph("er", 20, 0)))


@pytest.mark.parametrize(("kind", "n", "msg"), [("torus", 10, "square"), ("cliques", 9, "even"), ("ring", 2, "at least 3"), ("rng", 9, "did you mean 'ring'")])
def test_bad_graphs_are_refused_by_name(kind, n, msg):
    with pytest.raises((ValueError, KeyError), match=msg):
        make_graph(kind, n)


def test_mix_and_exchange_count_rounds_and_scalars():
    g = make_graph("torus", 16)
    W = metropolis(g)
    sim = Simulator(g, W)
    x = np.random.default_rng(0).standard_normal((16, 3))
    assert np.allclose(sim.mix(x), W.toarray() @ x)
    got = sim.exchange(x)
    assert got.shape == (16, 4, 3)
    for i in range(16):
        assert np.allclose(got[i], x[g.neighbours[i]])
    sim.oracle("grad")
    assert sim.counters.rounds == 2 and (sim.counters.scalars == 6).all()
    assert sim.counters.calls("grad").tolist() == [1] * 16 and sim.counters.calls("prox").sum() == 0


def test_byzantine_senders_are_replaced_only_on_their_edges():
    g = make_graph("ring", 8)
    byz = np.zeros(8, dtype=bool)
    byz[3] = True
    sim = Simulator(g, metropolis(g), byzantine=byz, attack=lambda x, t: np.full((8, g.neighbours.shape[1], x.shape[1]), 99.0))
    x = np.arange(8, dtype=float)[:, None]
    got = sim.exchange(x)
    for i in range(8):
        for slot, j in enumerate(g.neighbours[i]):
            assert got[i, slot, 0] == (99.0 if j == 3 else j)
    # mixing sees the same replacement: node 2 and 4 average in 99 instead of 3
    mixed = sim.mix(x)
    W = metropolis(g).toarray()
    x_seen = np.tile(x[:, 0], (8, 1))
    x_seen[:, 3] = 99.0
    x_seen[3, 3] = 3.0  # a node's own value is never replaced
    assert np.allclose(mixed[:, 0], (W * x_seen).sum(axis=1))


def test_public_graph_data_matches_the_mixing_matrix():
    g = make_graph("chords", 25)
    W = metropolis(g)
    data = public_graph_data(g, W)
    dense = W.toarray()
    for i in range(25):
        js = data["neighbours"][i][data["neighbour_mask"][i]]
        assert np.allclose(data["neighbour_weights"][i][data["neighbour_mask"][i]], dense[i, js])
    assert np.allclose(data["self_weight"] + data["neighbour_weights"].sum(axis=1), 1.0)


# ----------------------------------------------------------------------------- the protocol


class _Sum(GossipSession):
    oracles = ("value",)

    def __init__(self, sim, values):
        super().__init__(sim, max_rounds=5, max_steps=20, answer_width=1)
        self.values = values

    def call_oracle(self, name, x, action):
        self.sim.oracle(name)
        return self.values

    def score_report(self, report):
        return {"spread": float(report.max() - report.min())}


def _session():
    g = make_graph("ring", 6)
    return _Sum(Simulator(g, metropolis(g)), np.arange(6.0)[:, None]), g


def test_a_node_program_runs_through_the_session_and_the_counts_are_the_simulators():
    sess, g = _session()

    class Average(NodeProgram):
        def program(self):
            x = yield oracle("value")
            while self.rounds_left > 0:
                x = yield mix(x, report=x)
            return x

    inst = type("I", (), {"data": public_graph_data(g, metropolis(g))})()
    prog = Average(inst, seed=0, budget=1.0)
    while (st := sess.state()) is not None:
        sess.apply(prog.select(st))
    sol = sess.solution()
    assert sol["rounds"] == 5 and sol["oracle"]["value"].tolist() == [1] * 6
    assert sol["trace"]["rounds"].tolist() == [0, 1, 2, 3, 4]
    assert np.all(np.diff(sol["trace"]["spread"]) <= 1e-12)  # mixing never widens the spread
    assert np.allclose(sol["x"].mean(), 2.5)  # W is doubly stochastic: the mean is kept


@pytest.mark.parametrize(
    ("action", "msg"),
    [
        ([1, 2], "expected a dict"),
        ({"op": "gossip"}, "unknown op 'gossip'"),
        ({"op": "mix", "x": np.ones((5, 1))}, r"field 'x': expected shape \(6, d\)"),
        ({"op": "mix", "x": np.full((6, 1), np.nan)}, "entry .* is nan"),
        ({"op": "mix", "x": "abc"}, "field 'x': expected a float array"),
        ({"op": "oracle", "name": "grad"}, "unknown oracle 'grad'"),
        ({"op": "done", "x": np.ones((6, 2))}, r"expected 1 column\(s\)"),
        ({"op": "exchange", "x": np.ones((6, 1)), "report": np.ones(3)}, "field 'report'"),
    ],
)
def test_bad_actions_are_refused_with_the_field_named(action, msg):
    sess, _ = _session()
    sess.state()
    with pytest.raises(InvalidSolution, match=msg):
        sess.apply(action)


def test_rounds_past_the_budget_are_refused():
    sess, _ = _session()
    for _ in range(5):
        sess.apply(exchange(np.zeros((6, 1))))
    with pytest.raises(InvalidSolution, match="5 communication rounds of this instance are spent"):
        sess.apply(mix(np.zeros((6, 1))))


def test_steps_past_the_budget_are_refused():
    sess, _ = _session()
    for _ in range(20):
        sess.apply(oracle("value"))
    with pytest.raises(InvalidSolution, match="more than the 20 actions"):
        sess.apply(oracle("value"))
