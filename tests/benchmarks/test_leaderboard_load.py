"""Leaderboard load time on generated bundles (pytest-benchmark; `make benchmark`).

Target (issue 4): 100,000 result records load in under 3 s from Parquet
bundles. The folder is :mod:`benchmarks.leaderboard_synth`'s: 30 tasks,
33 bundles in ``bench publish``'s format (hashed manifests, traces included,
three partial supersedes), 100,000 records that count. The measured call is
the body of the app's cached loader, :func:`leaderboard.data.load_results`.
"""

from __future__ import annotations

import statistics
from pathlib import Path

import pytest

from benchmarks.leaderboard_synth import N_RECORDS, N_TASKS, make_results
from leaderboard.data import load_results


@pytest.fixture(scope="module")
def big_results(tmp_path_factory) -> Path:
    return make_results(tmp_path_factory.mktemp("big") / "results")


def test_100k_records_load_under_3s(benchmark, big_results):
    data = benchmark.pedantic(load_results, args=(big_results,), rounds=3, iterations=1)
    assert len(data.records) == N_RECORDS and len(data.tasks) == N_TASKS and not data.warnings
    assert not data.records["key"].duplicated().any() and len(data.superseded) == 3
    assert statistics.median(benchmark.stats.stats.data) < 3.0
