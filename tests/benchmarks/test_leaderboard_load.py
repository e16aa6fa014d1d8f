"""Leaderboard load time on generated bundles (pytest-benchmark; `make benchmark`).

Target (issue 4): 100,000 result records load in under 3 s from Parquet
bundles. The bundles are generated in the published layout (10 bundles of
10,000 records, the columns ``bench publish`` writes, traces included); the
measured call is the body of the app's ``st.cache_data`` loader.
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from bench.store import SCHEMA_VERSION
from leaderboard.data import load_results

N_BUNDLES, PER_BUNDLE = 10, 10_000
META = {
    "name": "synth", "version": "1", "family": "synth", "paper": None, "description": "generated",
    "metrics": [{"name": "score", "direction": "max", "unit": "", "description": ""}], "primary": "score",
    "normalization": {"kind": "linear", "zero": 0.0, "one": "best", "description": ""},
    "gap_reference": "best", "interactive": False, "budgets": {"smoke": 1.0, "standard": 1.0, "full": 1.0}, "superseded_by": None,
}  # fmt: skip


def _bundle(root: Path, b: int, rng: np.random.Generator) -> None:
    n = PER_BUNDLE
    d = root / "synth" / f"20260101-maintainers-{b:010d}"
    d.mkdir(parents=True)
    inst = rng.integers(0, 500, n)
    df = pd.DataFrame({
        "schema_version": SCHEMA_VERSION, "key": [f"{b:04d}{i:060d}" for i in range(n)], "sweep": f"s{b}", "attempt": 1,
        "task": "synth", "task_version": "1", "instance": [f"i{k}" for k in inst], "instance_digest": "0" * 64,
        "method": [f"m{k}" for k in rng.integers(0, 10, n)], "method_version": "1",
        "kind": np.where(rng.random(n) < 0.2, "method", "baseline"), "params": "{}", "seed": rng.integers(0, 2**31, n),
        "rep": rng.integers(0, 5, n), "master_seed": 0, "budget": 60.0, "threads": 1, "tier": "standard", "memory_mb": 4096.0,
        "instance_tags": "generated", "status": rng.choice(["ok", "ok", "ok", "invalid", "timeout"], n), "reason": "",
        "error_type": "", "traceback": "", "wall_s": rng.exponential(3.0, n), "cpu_s": rng.exponential(3.0, n),
        "peak_rss_mb": rng.uniform(50, 500, n), "started_at": 1.8e9, "finished_at": 1.8e9 + 5, "stdout_tail": "", "stderr_tail": "",
        "origin": "local", "iparam.n": inst * 10, "ref.best": 100.0, "n_checkpoints": 3,
        "trace": json.dumps([{"t": 0.1, "metrics": {"score": 50.0}, "invalid": None}] * 3), "metric.score": rng.uniform(0, 100, n),
        "env.cpu_model": "Generated CPU", "env.cpu_cores": 2, "env.git_commit": "f" * 40, "env.bench_version": "0.1.0",
    })  # fmt: skip
    df.to_parquet(d / "records.parquet", index=False)
    (d / "task.json").write_text(json.dumps({"meta": META, "tiers": {}, "instances": {}}))
    (d / "claims.json").write_text(json.dumps({"claims": [], "paper_results": []}))
    (d / "methods.json").write_text("[]")
    (d / "manifest.json").write_text(json.dumps({"schema_version": SCHEMA_VERSION, "bundle": d.name, "task": "synth", "origin": "maintainers"}))


@pytest.fixture(scope="module")
def big_results(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("big")
    rng = np.random.default_rng(0)
    for b in range(N_BUNDLES):
        _bundle(root, b, rng)
    return root


def test_100k_records_load_under_3s(benchmark, big_results):
    data = benchmark.pedantic(load_results, args=(big_results,), rounds=3, iterations=1)
    assert len(data.records) == N_BUNDLES * PER_BUNDLE and not data.warnings
    assert statistics.median(benchmark.stats.stats.data) < 3.0
