"""``ros`` and ``ros-vanilla``: Relax-Optimize-and-Sample (Qiu et al., ICML 2025).

Relax: Max-k-Cut as ``min Tr(X W X^T)`` over ``X`` in the product of
simplices (one row per node here). Optimize: a two-layer GNN
(:class:`~methods.maxcut.gnn.ROSNet`) maps a trainable node embedding to
``X``; its weights (and the embedding) are trained on the instance with Adam.
Sample: best of T categorical roundings of the best ``X`` seen.

``ros`` starts from weights pre-trained on random regular graphs
(:mod:`methods.maxcut.pretrain`, built on first use and cached on disk);
``ros-vanilla`` starts from scratch and aggregates by sum, as the official
``ros_vanilla/models.py`` does (PyG's default ``aggr='add'``).
"""

from __future__ import annotations

import math
import sys
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from bench import prepared, truncated
from bench.registry import method
from methods.maxcut.gnn import Aggregation, ROSNet, xavier_uniform
from methods.maxcut.pretrain import PretrainConfig, pretrained_weights
from methods.maxcut.relaxation import Graph, Objective, best_of_samples, read_graph

__all__ = [
    "solve_ros",
    "solve_ros_vanilla",
    "pretrained_weights",
    "fine_tune",
    "FineTuneResult",
    "supports_maxcut",
    "pretraining_seed",
]

REFERENCE = (
    "Y. Qiu, Y. Xue, A. Wang, Y. Wang, Q. Shi, Z.-Q. Luo, ROS: A GNN-based Relax-Optimize-and-Sample "
    "Framework for Max-k-Cut Problems, ICML 2025 (PMLR 267:50721-50743), arXiv:2412.05146; "
    "official code github.com/NetSysOpt/ROS @ 3957340"
)

#: Width of the node embedding (``dim_embedding`` in ``add_parser.py``).
IN_DIM = 100

#: Fraction of the budget the whole solve may use; the rest is slack for the runner.
BUDGET_FRACTION = 0.9

PARAMS = {
    "lr": 1e-2,
    "weight_decay": 1e-4,
    "tol": 1e-2,
    "patience": 100,
    "max_steps": 10_000,
    "samples": 100,
    "hidden": 100,
}

COMMON_DEVIATIONS = (
    "sparse message passing and a sparse edge-sum loss instead of the official dense n x n W "
    "(same function, O(edges) memory); plain-torch GraphConv/GraphNorm re-implemented from PyG's "
    "definitions instead of PyG; the 100 samples are drawn and scored at once; "
    "fine-tuning stops early when 90% of the time budget would be exceeded (the official code has no "
    "time limit): such a run is recorded as truncated (bench.truncated), never ranked as finished, so "
    "every ok run stopped on patience or max_steps alone; float32 training, float64 cut evaluation; "
    "random streams differ from the official code's, so runs are not bit-reproductions. Same seed, "
    "same labels on CPU with one thread, whatever the machine's speed or load."
)


def supports_maxcut(instance: Any) -> bool | str:
    """Any maxcut instance with ``k >= 2`` and at least one node."""
    data = instance.data
    if int(data["k"]) < 2:
        return f"k={data['k']}: Max-k-Cut needs k >= 2"
    if int(data["n"]) < 1:
        return "the graph has no nodes"
    return True


@dataclass
class FineTuneResult:
    """What :func:`fine_tune` found: the best relaxed ``x`` ``(n, k)`` and how it stopped."""

    probs: torch.Tensor
    loss: float
    steps: int
    stopped: str  # "patience" | "max_steps" | "budget"


def _adam(params: list[torch.nn.Parameter], *, lr: float, weight_decay: float) -> torch.optim.Adam:
    """Adam as in the official code; the fused CPU kernel where this torch has it (>= 2.4)."""
    try:
        return torch.optim.Adam(params, lr=lr, weight_decay=weight_decay, fused=True)
    except (RuntimeError, TypeError, ValueError):
        return torch.optim.Adam(params, lr=lr, weight_decay=weight_decay)


def fine_tune(
    net: ROSNet,
    embedding: torch.nn.Parameter,
    agg: Aggregation,
    graph: Graph,
    *,
    lr: float,
    weight_decay: float,
    tol: float,
    patience: int,
    max_steps: int,
    deadline: float = math.inf,
) -> FineTuneResult:
    """Train ``net`` and ``embedding`` jointly on ``graph`` with Adam; keep the best ``x`` seen.

    Early stopping as the official ``run_gnn_tuning`` counts it: a counter
    grows when the loss changed by at most ``tol`` or went up, *relative to
    the best loss so far*, and resets otherwise; training stops when it
    reaches ``patience``. ``deadline`` (``time.monotonic()`` seconds) also
    stops it, before a step that would likely end past it: ``stopped`` is
    then ``"budget"``, and the caller must report the run as truncated
    (its result depends on the machine's speed, not on the work done).
    """
    params = [embedding, *net.parameters()]
    opt = _adam(params, lr=lr, weight_decay=weight_decay)
    objective = Objective(graph)
    prev = best = math.inf
    best_probs: torch.Tensor | None = None
    count = 0
    stopped = "max_steps"
    t_start = time.monotonic()
    steps = 0
    for step in range(max(1, max_steps)):
        probs = net(embedding, agg)
        loss = objective(probs)
        value = float(loss.detach())
        steps = step + 1
        if value < best or best_probs is None:  # keep the first X even if its loss is NaN
            best_probs = probs.detach().clone()
            best = min(best, value)
        if abs(value - prev) <= tol or value > prev:
            count += 1
        else:
            count = 0
        if count >= patience:
            stopped = "patience"
            break
        prev = min(prev, value)
        now = time.monotonic()
        if now + (now - t_start) / steps > deadline:
            stopped = "budget"
            break
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    assert best_probs is not None
    return FineTuneResult(best_probs, best, steps, stopped)


def pretraining_seed(pretrain_seed: int | str, *, rep: int = 0, master_seed: int = 0) -> int:
    """The torch seed of ``ros``'s pre-training for a job of repetition ``rep``.

    ``pretrain_seed`` is an int (one pre-trained network for every job; 2 is
    ``add_parser.py``'s default) or ``"rep"``: each repetition pre-trains
    its own network, with seed ``2 + rep + 1000 * master_seed``. So rep 0 of
    master seed 0 keeps the add_parser seed, and a CI over repetitions
    includes the pre-training's randomness, as a reproduction of the whole
    method would.
    """
    if pretrain_seed == "rep":
        return 2 + int(rep) + 1000 * int(master_seed)
    if isinstance(pretrain_seed, bool) or not isinstance(pretrain_seed, int):
        raise ValueError(f"pretrain_seed must be an int or 'rep', got {pretrain_seed!r}")
    return int(pretrain_seed)


def _pretraining_config(k: int, hidden: int, pretrain_seed: int | str, rep: int, master_seed: int) -> PretrainConfig:
    seed = pretraining_seed(pretrain_seed, rep=rep, master_seed=master_seed)
    return PretrainConfig.for_k(k, hidden=int(hidden), in_dim=IN_DIM, seed=seed)


def _solve(
    instance: Any,
    *,
    seed: int,
    budget: float,
    pretrained: bool,
    pretrain_seed: int | str = "rep",
    lr: float,
    weight_decay: float,
    tol: float,
    patience: int,
    max_steps: int,
    samples: int,
    hidden: int,
) -> np.ndarray:
    t0 = time.monotonic()
    budget = float(budget) if budget and budget > 0 else math.inf
    graph = read_graph(instance.data)
    gen = torch.Generator().manual_seed(int(seed))
    net = ROSNet(IN_DIM, int(hidden), graph.k, gen)
    if pretrained:
        weights = prepared()  # the setup's network for this job's k and repetition
        if weights is None:  # called outside a bench job: prepare here, as repetition 0
            weights = pretrained_weights(graph.k, _pretraining_config(graph.k, hidden, pretrain_seed, 0, 0))
        net.load_state_dict(weights)
    embedding = torch.nn.Parameter(xavier_uniform((graph.n, IN_DIM), gen))
    agg = Aggregation(graph, "mean" if pretrained else "add")
    # Rounding costs about samples * (n + m) cheap operations; leave room for it.
    reserve = 2e-7 * max(1, samples) * (graph.n + graph.m) + 0.05
    deadline = t0 + BUDGET_FRACTION * budget - reserve
    result = fine_tune(
        net,
        embedding,
        agg,
        graph,
        lr=lr,
        weight_decay=weight_decay,
        tol=tol,
        patience=int(patience),
        max_steps=int(max_steps),
        deadline=deadline,
    )
    if result.stopped == "budget":
        note = (
            f"ros: fine-tuning stopped by the time budget after {result.steps} steps "
            f"({time.monotonic() - t0:.1f} s of {budget:.1f} s), before patience or max_steps"
        )
        print(note, file=sys.stderr)
        # The cut now depends on how fast the machine ran: the record must not pass for a finished run.
        truncated(note)
    labels, _cut = best_of_samples(result.probs, graph, int(samples), gen)
    return labels


def _prepare_pretraining(
    instance_params: dict[str, Any], *, rep: int, master_seed: int, hidden: int, pretrain_seed: int | str
) -> dict[str, torch.Tensor]:
    """The method's setup: the pre-trained weights for this k and repetition (trained or loaded)."""
    k = int(instance_params["k"])
    return pretrained_weights(k, _pretraining_config(k, hidden, pretrain_seed, rep, master_seed))


def _pretraining_key(
    instance_params: dict[str, Any], *, rep: int, master_seed: int, hidden: int, pretrain_seed: int | str
) -> tuple[int, int, int]:
    """Jobs with the same k, width and pre-training seed share one setup per worker."""
    k = int(instance_params["k"])
    return k, int(hidden), pretraining_seed(pretrain_seed, rep=rep, master_seed=master_seed)


@method(
    name="ros",
    kind="method",
    tasks=["maxcut"],
    reference=REFERENCE,
    # 3: a run that the time budget cuts short ends truncated instead of ok (same labels otherwise)
    version="3",
    params={**PARAMS, "pretrain_seed": "rep"},
    deterministic=True,
    supports=supports_maxcut,
    setup=_prepare_pretraining,
    setup_key=_pretraining_key,
    description=(
        "ROS: a two-layer GraphConv/GraphNorm GNN pre-trained on random regular graphs, fine-tuned "
        "per instance on the simplex relaxation min Tr(X W X^T), then best of 100 categorical samples."
    ),
    deviations=(
        COMMON_DEVIATIONS + " Pre-training is re-run locally (deterministic, cached under "
        "$XDG_CACHE_HOME/bench/ros/) instead of loading the released gcn_model_ood_k*.pth; it runs as "
        "the method's setup, once per worker, k and repetition, timed as setup_s and never in a job's "
        "time. Each repetition pre-trains its own network (seed 2 + rep; the paper reports single "
        "runs of one released network), so the CI over seeds includes the pre-training's randomness; "
        "pretrain_seed=2 gives one network for all. k=4 pre-trains on 5-regular graphs and k>=5 "
        "(other than 10) on 7-regular ones: the paper gives degrees for k=2, 3, 10 only. Pre-training "
        "weight decay 0 and seed 2 for rep 0 (add_parser defaults; the official command line is "
        "UNVERIFIED)."
    ),
)
def solve_ros(
    instance: Any,
    *,
    seed: int,
    budget: float,
    lr: float = 1e-2,
    weight_decay: float = 1e-4,
    tol: float = 1e-2,
    patience: int = 100,
    max_steps: int = 10_000,
    samples: int = 100,
    hidden: int = 100,
    pretrain_seed: int | str = "rep",
) -> np.ndarray:
    """ROS with pre-training: fine-tune the pre-trained GNN on the instance, then sample.

    Returns int64 labels ``(n,)`` in ``[0, k)``. ``budget`` is in seconds.

    Settings and sources ([P] = paper §4.1, [C] = official code):

    - GNN: GraphConv(100 -> hidden, mean aggregation with edge weights) ->
      GraphNorm -> softmax -> GraphConv(hidden -> k, mean) -> GraphNorm ->
      softmax [P, C ``ros/models.py``]; node input = trainable
      ``Embedding(n, 100)``, Xavier-uniform [C ``get_gnn_tuning``].
    - Pre-trained weights: :func:`methods.maxcut.pretrain.pretrained_weights`,
      built by the method's setup once per worker, k and repetition and read
      with :func:`bench.prepared`. ``pretrain_seed="rep"`` (the default)
      gives repetition ``r`` its own network, pre-trained with seed
      ``2 + r`` (:func:`pretraining_seed`), so that the spread over seeds
      includes the pre-training's; an int fixes one network for all.
      Called outside a bench job, ``solve_ros`` prepares repetition 0's.
    - Fine-tuning: Adam, lr 1e-2 [P, C], weight decay 1e-4 [C runners],
      early stopping tol 1e-2 / patience 100 [P, C], at most 10,000 steps
      [C ``epochs``]; the best relaxed X seen is kept [C].
    - Loss: ``sum_edges w_uv <x_u, x_v>``, which is the official
      ``Tr(X W' X^T)`` with ``W'`` = half the weights; the tolerance is
      absolute, so this scale is the official one.
    - Rounding: best of 100 categorical samples, scored with the original
      weights [P Alg. 1, C ``max_iter``].

    Deviations: sparse instead of dense W; PyG layers re-implemented in plain
    torch; pre-training re-run locally (not the released checkpoints), with
    weight decay 0 (UNVERIFIED what the authors used) and k=4 -> 5-regular
    graphs (our choice: the paper has no k=4); one pre-training per
    repetition instead of one released network (so the CI covers it);
    budget-based early stop at 90% of ``budget`` (reported on stderr, and
    the run recorded as truncated); different random streams.
    """
    return _solve(
        instance,
        seed=seed,
        budget=budget,
        pretrained=True,
        lr=lr,
        weight_decay=weight_decay,
        tol=tol,
        patience=patience,
        max_steps=max_steps,
        samples=samples,
        hidden=hidden,
        pretrain_seed=pretrain_seed,
    )


@method(
    name="ros-vanilla",
    kind="method",
    tasks=["maxcut"],
    reference=REFERENCE,
    # 2: a run that the time budget cuts short ends truncated instead of ok (same labels otherwise)
    version="2",
    params=PARAMS,
    deterministic=True,
    supports=supports_maxcut,
    description=(
        "ROS-vanilla: the ROS GNN (sum aggregation) trained from scratch on each instance, then best "
        "of 100 categorical samples."
    ),
    deviations=COMMON_DEVIATIONS,
)
def solve_ros_vanilla(
    instance: Any,
    *,
    seed: int,
    budget: float,
    lr: float = 1e-2,
    weight_decay: float = 1e-4,
    tol: float = 1e-2,
    patience: int = 100,
    max_steps: int = 10_000,
    samples: int = 100,
    hidden: int = 100,
) -> np.ndarray:
    """ROS without pre-training: the same GNN from a fresh initialisation, trained on the instance.

    As [C] ``ros_vanilla/``: GraphConv with PyG's default **sum**
    aggregation (``aggr='add'``; ROS proper uses ``'mean'``), GraphNorm,
    softmax after both layers, trainable Xavier ``Embedding(n, 100)``, Adam
    lr 1e-2 / weight decay 1e-4, the same early stopping and sampling.
    Deviations: as ``ros`` minus pre-training (sparse W, plain-torch layers,
    90%-of-budget stop recorded as truncated, different random streams).
    """
    return _solve(
        instance,
        seed=seed,
        budget=budget,
        pretrained=False,
        lr=lr,
        weight_decay=weight_decay,
        tol=tol,
        patience=patience,
        max_steps=max_steps,
        samples=samples,
        hidden=hidden,
    )
