"""Active-learning benchmarks (pytest-benchmark; run with `make benchmark`).

- One DIRECT selection round on a 20,000-point pool with 10 classes, learner
  fit excluded (the plan is driven directly with an oracle array, no process
  round trips). Target: median < 1 s, for the standard batch of 100 and for a
  LabelBench-sized batch of 1,000.
- GALAXY and BADGE rounds on the same pool, for comparison (no target).
"""

from __future__ import annotations

import numpy as np
import pytest

from baselines.active_learning.classic import Badge
from baselines.active_learning.galaxy import galaxy_plan
from common.active_learning.driver import RoundContext
from methods.active_learning.direct import direct_plan

N, K, D = 20_000, 10, 16


def _pool(seed: int = 0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, K, N)
    centers = rng.normal(0, 2.0, (K, D))
    X = centers[y] + rng.normal(0, 1.0, (N, D))
    logits = X @ centers.T / 2.0
    P = np.exp(logits - logits.max(1, keepdims=True))
    P /= P.sum(1, keepdims=True)
    labeled = rng.choice(N, 1000, replace=False)
    return X, P, y, labeled


def _drive(plan, oracle):
    n = 0
    try:
        idx = next(plan)
        while True:
            n += idx.size
            idx = plan.send(oracle[idx])
    except StopIteration:
        return n


@pytest.mark.parametrize("batch", [100, 1000])
def test_direct_round_20k_pool(benchmark, batch):
    X, P, y, labeled = _pool()
    ctx = RoundContext(X, P, labeled, y[labeled], budget=batch, n_classes=K, round=1)
    spent = benchmark.pedantic(
        lambda: _drive(direct_plan(ctx, np.random.default_rng(0), B1=5, min_budget_per_class=60), y),
        rounds=7,
        iterations=1,
        warmup_rounds=1,
    )
    median = benchmark.stats.stats.median
    benchmark.extra_info["median_s"] = round(median, 3)
    assert spent == batch
    assert median < 1.0, f"DIRECT round on a {N}-point, {K}-class pool took {median:.2f} s (median) > 1 s"


def test_galaxy_round_20k_pool(benchmark):
    X, P, y, labeled = _pool()
    ctx = RoundContext(X, P, labeled, y[labeled], budget=100, n_classes=K, round=1)
    spent = benchmark.pedantic(lambda: _drive(galaxy_plan(ctx, np.random.default_rng(0)), y), rounds=3, iterations=1)
    assert spent == 100


def test_badge_round_20k_pool(benchmark):
    X, P, y, labeled = _pool()
    strat = Badge(None, seed=0, budget=10.0)
    state = {"features": X, "proba": P, "labeled": labeled, "remaining": 100}
    out = benchmark.pedantic(lambda: strat.select(state), rounds=3, iterations=1)
    assert out.size == 100
