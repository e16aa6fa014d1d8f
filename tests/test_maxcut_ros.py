"""The ROS methods for ``maxcut`` (``ros``, ``ros-vanilla``, ``md``), tested in-process on one thread.

The sparse pieces are checked against dense hand computations on tiny
graphs; the methods are called directly (no workers) on a 100-node
3-regular graph. Pre-training goes to a temporary ``XDG_CACHE_HOME``.
"""

from __future__ import annotations

import time
from pathlib import Path
from types import SimpleNamespace

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
import torch

import methods.maxcut.pretrain as pretrain_mod
from bench.registry import METHODS, interface_problems
from methods.maxcut import solve_md, solve_ros, solve_ros_vanilla
from methods.maxcut.gnn import Aggregation, GraphConv, GraphNorm, ROSNet, xavier_uniform
from methods.maxcut.md import mirror_descent, objective
from methods.maxcut.pretrain import PretrainConfig, cache_path, pretrained_weights
from methods.maxcut.relaxation import (
    Objective,
    best_of_samples,
    cut_values,
    read_graph,
    relaxed_objective,
    sample_labels,
)
from methods.maxcut.ros import fine_tune

SOLVERS = {"ros": solve_ros, "ros-vanilla": solve_ros_vanilla, "md": solve_md}


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def cache_home(tmp_path_factory):
    """A private XDG_CACHE_HOME for the whole module (pre-training is paid once per k)."""
    home = tmp_path_factory.mktemp("xdg-cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("XDG_CACHE_HOME", str(home))
        yield home


def as_instance(edges, weights, n: int, k: int) -> SimpleNamespace:
    """The public view a method gets (read-only arrays, as the task hands them out)."""
    data = {
        "n": n,
        "k": k,
        "edges": np.array(edges, dtype=np.int64).reshape(-1, 2),
        "weights": np.array(weights, dtype=np.float64),
    }
    data["edges"].flags.writeable = False
    data["weights"].flags.writeable = False
    return SimpleNamespace(
        id="made-up", params={"n": n, "m": len(data["edges"]), "k": k}, data=data, tags=()
    )


def regular(n: int, d: int, k: int, seed: int = 0) -> SimpleNamespace:
    g = nx.random_regular_graph(d, n, seed=seed)
    edges = np.array(sorted((min(a, b), max(a, b)) for a, b in g.edges()), dtype=np.int64)
    return as_instance(edges, np.ones(len(edges)), n, k)


def random_signed(n: int, m: int, k: int, seed: int) -> SimpleNamespace:
    rng = np.random.default_rng(seed)
    pairs = set()
    while len(pairs) < m:
        a, b = sorted(rng.choice(n, 2, replace=False).tolist())
        pairs.add((a, b))
    edges = np.array(sorted(pairs), dtype=np.int64)
    return as_instance(edges, rng.choice([-1.0, 1.0, 2.5], size=m), n, k)


def dense_w(data) -> np.ndarray:
    n = data["n"]
    w = np.zeros((n, n))
    for (a, b), x in zip(data["edges"], data["weights"], strict=True):
        w[a, b] = w[b, a] = x
    return w


def cut_of(data, labels) -> float:
    e = data["edges"]
    return float(np.sum(data["weights"][labels[e[:, 0]] != labels[e[:, 1]]]))


# ----------------------------------------------------------------------------- GNN layers


@pytest.mark.parametrize("aggr", ["mean", "add"])
@pytest.mark.parametrize("out_dim", [2, 5])  # narrower than the input (linear first) and not
def test_graphconv_matches_a_dense_hand_computation(aggr, out_dim):
    # 5 nodes; node 4 is isolated; weights of both signs.
    inst = as_instance([[0, 1], [0, 2], [1, 2], [2, 3]], [1.0, -2.0, 0.5, 3.0], n=5, k=2)
    graph = read_graph(inst.data)
    w = dense_w(inst.data)
    if aggr == "mean":
        deg = (w != 0).sum(axis=1)  # number of neighbours, not the weight sum (PyG scatter-mean)
        a = w / np.maximum(deg, 1)[:, None]
    else:
        a = w
    conv = GraphConv(4, out_dim, torch.Generator().manual_seed(3)).double()
    h = torch.randn(5, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(4))
    expected = torch.from_numpy(a) @ h @ conv.rel_weight.T + conv.rel_bias + h @ conv.root_weight.T
    got = conv(h, Aggregation(graph, aggr, dtype=torch.float64))
    torch.testing.assert_close(got, expected)
    # the isolated node only sees itself
    torch.testing.assert_close(got[4], conv.rel_bias + h[4] @ conv.root_weight.T)


def test_mean_aggregation_divides_by_the_neighbour_count_not_the_weight_sum():
    inst = as_instance([[0, 1], [0, 2]], [2.0, 4.0], n=3, k=2)
    agg = Aggregation(read_graph(inst.data), "mean", dtype=torch.float64)
    h = torch.tensor([[0.0], [1.0], [1.0]], dtype=torch.float64)
    assert agg(h)[0, 0].item() == pytest.approx((2.0 + 4.0) / 2)


def test_sparse_aggregation_gradient_is_the_transpose():
    inst = random_signed(12, 30, 2, seed=1)
    graph = read_graph(inst.data)
    agg = Aggregation(graph, "mean", dtype=torch.float64)
    h = torch.randn(12, 3, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(agg, (h,))


def test_graphnorm_centres_and_scales_each_feature():
    norm = GraphNorm(6)
    h = torch.randn(50, 6) * 3 + torch.arange(6.0)
    y = norm(h)
    torch.testing.assert_close(y.mean(dim=0), torch.zeros(6), atol=1e-5, rtol=0)
    torch.testing.assert_close(y.pow(2).mean(dim=0), torch.ones(6), atol=1e-3, rtol=0)


def test_graphnorm_fused_backward_matches_autograd():
    norm = GraphNorm(4).double()
    with torch.no_grad():
        norm.weight.uniform_(0.5, 2.0)
        norm.bias.uniform_(-1.0, 1.0)
        norm.mean_scale.uniform_(0.0, 2.0)
    h = torch.randn(9, 4, dtype=torch.float64, requires_grad=True)
    torch.testing.assert_close(norm(h), norm.reference(h))
    g = torch.randn(9, 4, dtype=torch.float64)
    params = [h, norm.weight, norm.bias, norm.mean_scale]
    fused = torch.autograd.grad(norm(h), params, g)
    plain = torch.autograd.grad(norm.reference(h), params, g)
    for a, b in zip(fused, plain, strict=True):
        torch.testing.assert_close(a, b)


def test_rosnet_outputs_rows_on_the_simplex():
    inst = regular(30, 3, 3)
    graph = read_graph(inst.data)
    gen = torch.Generator().manual_seed(0)
    net = ROSNet(10, 8, 3, gen)
    x = net(xavier_uniform((30, 10), gen), Aggregation(graph, "mean"))
    assert x.shape == (30, 3)
    assert bool((x >= 0).all())
    torch.testing.assert_close(x.sum(dim=1), torch.ones(30))


# ----------------------------------------------------------------------------- relaxation and sampling


def test_sparse_loss_equals_the_dense_trace():
    inst = random_signed(25, 60, 3, seed=2)
    graph = read_graph(inst.data)
    w_half = dense_w(inst.data) / 2  # the official get_matrix stores w / 2
    x = torch.softmax(torch.randn(25, 3, dtype=torch.float64), dim=1).requires_grad_()
    dense = torch.trace(x.T @ torch.from_numpy(w_half) @ x)
    torch.testing.assert_close(relaxed_objective(x, graph), dense)
    obj = Objective(graph, dtype=torch.float64)
    torch.testing.assert_close(obj(x), dense)
    (grad,) = torch.autograd.grad(obj(x), x)
    torch.testing.assert_close(grad, 2 * torch.from_numpy(w_half) @ x.detach())


def test_md_objective_helper_matches_the_edge_sum():
    inst = random_signed(20, 40, 2, seed=3)
    graph = read_graph(inst.data)
    x = np.random.default_rng(0).dirichlet(np.ones(2), size=20)
    value = objective(x, sp.csr_matrix(dense_w(inst.data)))
    assert value == pytest.approx(float(relaxed_objective(torch.from_numpy(x), graph)))


def test_sampling_gives_valid_labels_and_the_best_cut():
    inst = random_signed(40, 120, 3, seed=4)
    graph = read_graph(inst.data)
    probs = torch.softmax(torch.randn(40, 3), dim=1)
    labels = sample_labels(probs, 64, torch.Generator().manual_seed(0))
    assert labels.shape == (64, 40) and labels.dtype == torch.int64
    assert int(labels.min()) >= 0 and int(labels.max()) < 3
    cuts = cut_values(labels, graph)
    for t in range(64):
        assert cuts[t].item() == pytest.approx(cut_of(inst.data, labels[t].numpy()))
    best, value = best_of_samples(probs, graph, 64, torch.Generator().manual_seed(0))
    assert best.dtype == np.int64 and best.shape == (40,)
    assert value == pytest.approx(cut_of(inst.data, best))
    assert value == pytest.approx(float(cuts.max()))


def test_sampling_follows_the_probabilities():
    probs = torch.tensor([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.25, 0.75, 0.0]])
    labels = sample_labels(probs, 4000, torch.Generator().manual_seed(1))
    assert bool((labels[:, 0] == 0).all()) and bool((labels[:, 1] == 2).all())
    share = (labels[:, 2] == 1).double().mean().item()
    assert share == pytest.approx(0.75, abs=0.03)
    assert not bool((labels[:, 2] == 2).any())


# ----------------------------------------------------------------------------- mirror descent


def test_mirror_descent_decreases_the_relaxed_objective():
    inst = random_signed(60, 200, 3, seed=5)
    graph = read_graph(inst.data)
    w = sp.csr_matrix(dense_w(inst.data))
    x = np.random.default_rng(0).random((60, 3))
    x /= x.sum(axis=1, keepdims=True)
    values = [objective(x, w)]
    for _ in range(30):
        x = mirror_descent(graph, x, max_iters=1).x
        values.append(objective(x, w))
    assert values[-1] < values[0] - 1.0
    assert all(
        b <= a + 1e-9 for a, b in zip(values, values[1:], strict=False)
    )  # step 1/L is a descent step
    done = mirror_descent(graph, x, epsilon=1e-8)
    assert done.stopped == "converged"
    assert objective(done.x, w) <= values[-1] + 1e-9


# ----------------------------------------------------------------------------- pre-training cache


def test_pretraining_is_built_once_then_loaded(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    config = PretrainConfig.for_k(3, graphs=6, nodes=20, in_dim=8, hidden=8)
    path = cache_path(config)
    assert not path.exists()
    assert path.parent == tmp_path / "bench" / "ros"
    assert "k3" in path.name and torch.__version__.split("+")[0] in path.name
    first = pretrained_weights(3, config)
    assert path.exists()
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no temporary file left

    def refuse(_config):
        raise AssertionError("pre-training ran again instead of loading the cache")

    monkeypatch.setattr(pretrain_mod, "pretrain", refuse)
    second = pretrained_weights(3, config)
    assert first.keys() == second.keys()
    for name in first:
        torch.testing.assert_close(first[name], second[name], rtol=0, atol=0)
    # another configuration is another file
    assert cache_path(PretrainConfig.for_k(3, graphs=7, nodes=20, in_dim=8, hidden=8)) != path


def test_pretraining_is_deterministic_and_runs_on_one_thread():
    config = PretrainConfig.for_k(2, graphs=4, nodes=12, in_dim=6, hidden=6)
    a = pretrain_mod.pretrain(config)
    torch.set_num_threads(2)
    try:
        b = pretrain_mod.pretrain(config)
        assert torch.get_num_threads() == 2  # the caller's setting is restored
    finally:
        torch.set_num_threads(1)
    for name in a:
        torch.testing.assert_close(a[name], b[name], rtol=0, atol=0)


def test_the_cache_key_covers_the_source():
    assert len(pretrain_mod.source_digest()) == 16
    blob = PretrainConfig.for_k(2).digest()
    pretrain_mod.source_digest.cache_clear()
    try:
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(pretrain_mod, "_SOURCES", ("gnn.py",))
            assert PretrainConfig.for_k(2).digest() != blob
    finally:
        pretrain_mod.source_digest.cache_clear()
    assert PretrainConfig.for_k(2).digest() == blob


def test_pretraining_degrees():
    assert [pretrain_mod.pretraining_degree(k) for k in (2, 3, 4, 10)] == [3, 5, 5, 7]


# ----------------------------------------------------------------------------- fine-tuning and the methods


def test_fine_tune_keeps_the_best_and_stops_on_patience():
    inst = regular(50, 3, 2)
    graph = read_graph(inst.data)
    gen = torch.Generator().manual_seed(0)
    net = ROSNet(8, 8, 2, gen)
    emb = torch.nn.Parameter(xavier_uniform((50, 8), gen))
    res = fine_tune(
        net, emb, Aggregation(graph, "add"), graph,
        lr=1e-2, weight_decay=1e-4, tol=1e-2, patience=20, max_steps=3000,
    )  # fmt: skip
    assert res.stopped == "patience" and res.steps < 3000
    assert res.loss == pytest.approx(float(relaxed_objective(res.probs, graph)), rel=1e-5)
    assert res.loss < graph.total_weight / 2  # below a uniform X (f = total weight / k)


def test_methods_are_registered_with_their_params():
    for name in ("ros", "ros-vanilla", "md"):
        spec = METHODS.get(name)
        assert spec.kind == "method" and spec.tasks == ("maxcut",)
        assert spec.deterministic
        assert spec.deviations
        assert interface_problems(spec.target, spec.params) == []
    assert METHODS.get("ros").params == {
        "lr": 1e-2, "weight_decay": 1e-4, "tol": 1e-2, "patience": 100,
        "max_steps": 10_000, "samples": 100, "hidden": 100, "pretrain_seed": "rep",
    }  # fmt: skip
    assert METHODS.get("ros-vanilla").params == {
        k: v for k, v in METHODS.get("ros").params.items() if k != "pretrain_seed"
    }
    assert METHODS.get("md").params["epsilon"] == 1e-8


# ROS at k=3 pre-trains a second network (about 3 s): make test-long checks it
@pytest.mark.parametrize(
    ("name", "k"),
    [pytest.param(n, k, marks=pytest.mark.long if (n, k) == ("ros", 3) else ()) for k in (2, 3) for n in sorted(SOLVERS)],
)
def test_each_method_returns_a_good_labelling(name, k, cache_home):
    inst = regular(100, 3, k)
    if name == "ros":
        pretrained_weights(k)  # the first job pays the pre-training; not timed here
    t0 = time.perf_counter()
    labels = SOLVERS[name](inst, seed=0, budget=30.0, **METHODS.get(name).params)
    elapsed = time.perf_counter() - t0
    assert isinstance(labels, np.ndarray) and labels.dtype == np.int64 and labels.shape == (100,)
    assert labels.min() >= 0 and labels.max() < k
    m = len(inst.data["edges"])
    assert cut_of(inst.data, labels) > (k - 1) / k * m  # better than a random labelling's mean
    assert elapsed < 10.0


# ros-vanilla trains from scratch twice (about 2 s): make test-long; ros runs at k=2, whose
# pre-trained network make test already has (k=3's is make test-long's)
@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.long if n == "ros-vanilla" else ()) for n in sorted(SOLVERS)])
def test_same_seed_same_labels(name, cache_home):
    inst = random_signed(80, 240, 2 if name == "ros" else 3, seed=6)
    a = SOLVERS[name](inst, seed=7, budget=30.0)
    b = SOLVERS[name](inst, seed=7, budget=30.0)
    np.testing.assert_array_equal(a, b)


def test_ros_uses_the_cache_built_for_its_k(cache_home):
    pretrained_weights(2)
    files = sorted(Path(cache_home, "bench", "ros").glob("*k2*"))
    assert len(files) == 1
    mtime = files[0].stat().st_mtime_ns
    solve_ros(regular(40, 3, 2), seed=1, budget=30.0)
    assert files[0].stat().st_mtime_ns == mtime


def test_ros_respects_a_small_budget(cache_home):
    pretrained_weights(2)
    inst = regular(3000, 3, 2, seed=1)
    t0 = time.perf_counter()
    labels = solve_ros(inst, seed=0, budget=0.5)
    elapsed = time.perf_counter() - t0
    assert labels.shape == (3000,)
    assert elapsed < 0.5 + 1.0  # slack for a loaded machine


def test_each_repetition_pretrains_its_own_network():
    from methods.maxcut.ros import pretraining_seed

    assert [pretraining_seed("rep", rep=r) for r in range(3)] == [2, 3, 4]  # rep 0 keeps add_parser's seed
    assert pretraining_seed("rep", rep=1, master_seed=1) == 1003
    assert pretraining_seed(7, rep=2) == 7
    with pytest.raises(ValueError, match="pretrain_seed must be an int or 'rep'"):
        pretraining_seed("per-seed", rep=0)


@pytest.mark.slow
@pytest.mark.long  # a real sweep with pre-training per repetition: ~10 s
def test_the_runner_hands_each_repetition_its_pretrained_network(tmp_path, monkeypatch):
    """Through real workers: one setup per (k, rep), the network read with bench.prepared()."""
    from bench.runner import RunOptions, run_sweep
    from bench.store import Store

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    store = tmp_path / "runs"
    run_sweep(RunOptions(task="maxcut", store=store, progress=False, methods=["ros"],
                         instances=["reg3-n100-s0-k2"], seeds=2, jobs=1))  # fmt: skip
    recs = sorted(Store(store).iter_records("maxcut"), key=lambda r: r.rep)
    assert [r.status for r in recs] == ["ok"] * 2, [r.reason for r in recs]
    assert all(r.setup_s is not None and r.setup_s > 0 for r in recs)  # one worker, two networks
    for rep in (0, 1):
        assert cache_path(PretrainConfig.for_k(2, seed=2 + rep)).exists()
    # rep 0 through the runner is the direct call, which prepares rep 0's network itself
    from bench.registry import get_task
    from bench.wire import load_npz

    rec = recs[0]
    direct = solve_ros(get_task("maxcut").load(rec.instance), seed=rec.seed, budget=30.0)
    np.testing.assert_array_equal(direct, load_npz(str(Store(store).solution_path("maxcut", rec.key))))
