"""Speed of the trusted gossip simulator (pytest-benchmark; `make benchmark`).

Issue 28's target: 1,000 rounds on a 1,024-node torus with d = 100 in under
10 s on one core, through the whole protocol a published run uses (action
checks, the round, the counters, the next state). The per-round times
against the number of nodes, with their slope, come from
``python scripts/decentralized/gossip_scaling.py`` (tasks/decentralized/README.md,
"Performance").
"""

from __future__ import annotations

import pytest
from script_modules import load_script

run_rounds = load_script("scripts/decentralized/gossip_scaling.py").run_rounds


def test_1000_rounds_on_a_1024_node_torus_under_10_s(benchmark):
    s = benchmark.pedantic(run_rounds, args=("torus", 1024, 100, 1000, "mix"), rounds=3, iterations=1)
    benchmark.extra_info["seconds"] = s
    assert s < 10.0, s


@pytest.mark.parametrize("op", ["mix", "exchange"])
@pytest.mark.parametrize("n", [16, 256, 1024])
def test_seconds_per_round(benchmark, op, n):
    s = benchmark.pedantic(run_rounds, args=("torus", n, 100, 200, op), rounds=3, iterations=1)
    benchmark.extra_info["s_per_round"] = s / 200
    assert s > 0
