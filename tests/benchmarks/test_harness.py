"""Harness benchmarks (pytest-benchmark; run with `make benchmark`).

- Per-job overhead: a no-op method, from submission to a stored, verified
  record (lock, fork from the warm zygote, protocol, verification, fsynced
  record). Target: median <= 150 ms.
- Parallel speed-up on 0.5 s CPU-bound jobs, ``--jobs 2`` against ``--jobs 1``,
  measured side by side with warm workers. Target: >= 1.8x.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

from conftest import PLUGINS

from bench.backends import LocalBackend
from bench.registry import get_task
from bench.runner import RunOptions, _drive, _Progress, new_sweep_id, plan
from bench.store import Store

METHODS = (str(PLUGINS / "bench_methods.py"),)


def _jobs(method: str, n: int, budget: float = 10.0):
    task = get_task("toy-mean")
    backend_catalog = [
        {"name": method, "kind": "baseline", "tasks": ["toy-mean"], "version": "1", "params": {"seconds": 0.5} if method == "spin" else {}, "grid": None, "budgets": {}}
    ]
    opts = RunOptions(task="toy-mean", tier="smoke", seeds=n, budget=budget, progress=False)  # 3 instances x n
    return plan(task, backend_catalog, opts)


def _run(backend, jobs, store: Path) -> float:
    t0 = time.perf_counter()
    _drive(backend, jobs, Store(store), new_sweep_id(), RunOptions(task="toy-mean", progress=False), _Progress(0, False, ""))
    return time.perf_counter() - t0


def test_per_job_overhead(benchmark, tmp_path):
    backend = LocalBackend(1, METHODS)
    backend.start()
    jobs = iter(_jobs("noop", 400))
    store = tmp_path / "runs"
    try:
        _run(backend, [next(jobs)], store)  # warm caches
        benchmark.pedantic(lambda: _run(backend, [next(jobs)], store), rounds=60, iterations=1, warmup_rounds=2)
    finally:
        backend.close()
    median = benchmark.stats.stats.median
    benchmark.extra_info["median_ms"] = round(median * 1000, 1)
    recs = list(Store(store).iter_records("toy-mean"))
    assert recs and all(r.status == "ok" and r.metrics for r in recs)
    assert median <= 0.150, f"per-job overhead median {median * 1000:.0f} ms > 150 ms"


def test_parallel_speedup(benchmark, tmp_path):
    jobs = _jobs("spin", 12)  # 3 instances x 12 seeds = 36 jobs
    n = len(jobs)
    times = {}
    for workers in (1, 2):
        backend = LocalBackend(workers, METHODS)
        backend.start()
        try:
            runs = []
            for rep in range(3):
                runs.append(_run(backend, jobs, tmp_path / f"w{workers}-{rep}"))  # fresh store: no reuse
            times[workers] = statistics.median(runs)
        finally:
            backend.close()
    speedup = times[1] / times[2]
    benchmark.extra_info.update({"jobs1_s": round(times[1], 2), "jobs2_s": round(times[2], 2), "speedup": round(speedup, 2)})
    benchmark.pedantic(lambda: None, rounds=1, iterations=1)
    print(f"\n{n} jobs of 0.5 s CPU: --jobs 1 {times[1]:.2f} s, --jobs 2 {times[2]:.2f} s, speed-up {speedup:.2f}x")
    assert speedup >= 1.8, f"speed-up {speedup:.2f}x < 1.8x"
