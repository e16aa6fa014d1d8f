"""The runner end to end: statuses, isolation, measurements, resume, backends."""

from __future__ import annotations

import time

import pytest
from conftest import CHAOS, TOY_METHODS, job_processes_alive

from bench.runner import RunOptions, UsageError, run_sweep
from bench.store import Store

pytestmark = pytest.mark.slow


def _opts(store, **kw) -> RunOptions:
    base = dict(task="knapsack", tier="smoke", instances=TWO, store=store, progress=False, extra_paths=(CHAOS,), jobs=2, memory_mb=400.0)
    base.update(kw)
    return RunOptions(**base)


TWO = ["uncorrelated-n20-s0", "strongly-correlated-n20-s0"]
#: The status each test-only method of tests/plugins/chaos_methods.py must get.
EXPECTED = {
    "chaos-ok": "ok",
    "chaos-slow": "ok",
    "chaos-crash": "error",
    "chaos-exit": "error",
    "chaos-hang": "timeout",
    "chaos-ignore-term": "timeout",
    "chaos-fork": "ok",
    "chaos-alloc": "killed",
    "chaos-invalid": "invalid",
    "chaos-print": "ok",
    "chaos-segv": "killed",
    "chaos-parricide": "error",
}


def test_every_misbehaviour_gets_its_status(store):
    res = run_sweep(_opts(store, methods=sorted(EXPECTED), budget=1.0))
    recs = list(Store(store).iter_records("knapsack"))
    assert len(recs) == len(res.keys) and len({r.key for r in recs}) == len(recs)
    for r in recs:
        assert r.status == EXPECTED[r.method], (r.method, r.status, r.reason)
        if r.status == "timeout":
            assert 1.0 < r.wall_s < 4.0, r.wall_s  # killed at budget + grace (1 + 0.1*budget)
        if r.status == "ok":
            assert r.metrics["value"] == 0.0 and r.solution_file
    loud = next(r for r in recs if r.method == "chaos-print")
    assert loud.stdout_tail.rstrip().endswith("END-OF-OUTPUT") and len(loud.stdout_tail) <= 4001
    crash = next(r for r in recs if r.method == "chaos-crash")
    assert "deliberate crash" in crash.reason and "RuntimeError" in crash.traceback
    alloc = next(r for r in recs if r.method == "chaos-alloc")
    assert "memory" in alloc.reason
    seg = next(r for r in recs if r.method == "chaos-segv")
    assert "SIGSEGV" in seg.reason
    slow = next(r for r in recs if r.method == "chaos-slow")
    assert slow.trace and slow.trace[0].metrics["value"] == 0.0 and slow.trace[0].t < slow.wall_s
    deadline = time.monotonic() + 5
    while job_processes_alive() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert job_processes_alive() == [], "a job left processes behind"


def test_resume_skips_finished_and_retries_failed(store):
    opts = _opts(store, methods=["chaos-ok", "chaos-crash"])
    first = run_sweep(opts)
    n = len(first.keys)
    assert first.counts["ok"] == first.counts["error"] == n // 2
    second = run_sweep(opts)
    assert second.cached == n // 2  # ok jobs reused, crashed ones rerun
    recs = {r.method: r for r in Store(store).iter_records("knapsack")}
    assert recs["chaos-crash"].attempt == 2 and recs["chaos-crash"].previous_statuses == ["error"]
    assert recs["chaos-ok"].attempt == 1
    opts.force = True
    third = run_sweep(opts)
    assert third.cached == 0
    assert all(r.attempt >= 2 for r in Store(store).iter_records("knapsack"))


def test_same_seed_same_numbers(tmp_path):
    a = run_sweep(_opts(tmp_path / "a", methods=["random-fill", "greedy"], extra_paths=(), seeds=2))
    b = run_sweep(_opts(tmp_path / "b", methods=["random-fill", "greedy"], extra_paths=(), seeds=2, jobs=1))
    ra = {r.key: r for r in Store(tmp_path / "a").iter_records("knapsack")}
    rb = {r.key: r for r in Store(tmp_path / "b").iter_records("knapsack")}
    assert a.keys == b.keys and set(ra) == set(rb)
    for k in ra:
        assert ra[k].status == "ok"
        assert ra[k].metrics == rb[k].metrics
        assert ra[k].solution_sha256 == rb[k].solution_sha256
    # different reps really get different seeds
    assert len({r.seed for r in ra.values() if r.method == "random-fill"}) == len([r for r in ra.values() if r.method == "random-fill"])


def test_measurements_are_the_runners(store):
    res = run_sweep(_opts(store, methods=["chaos-ok", "chaos-slow"], jobs=1))
    for r in Store(store).iter_records("knapsack"):
        assert r.threads == 1 and r.environment["python"] and r.environment["cpu_cores"]
        assert r.environment["load_1m_start"] >= 0 and r.environment["load_1m_end"] >= 0
        assert r.environment["speed_probe_ms"] > 0  # the machine's speed when the job started
        assert r.cpu_s is not None and r.peak_rss_mb is not None and r.job_s >= r.wall_s
        if r.method == "chaos-slow":
            assert r.wall_s >= 0.8 and r.cpu_s < 0.5  # sleeping costs no CPU
        assert r.peak_rss_mb < 100  # the inherited zygote pages are not counted
    assert res.counts["ok"] == len(res.keys)


def test_toy_task_skips_are_recorded(store):
    res = run_sweep(RunOptions(task="toy-mean", store=store, progress=False, extra_paths=(TOY_METHODS,), methods=["toy-first"]))
    recs = {r.instance: r for r in Store(store).iter_records("toy-mean")}
    assert recs["mu2"].status == "skipped" and "on purpose" in recs["mu2"].reason
    assert res.counts["skipped"] == 1 and res.counts["ok"] == 2


def test_unknown_names_are_usage_errors(store):
    with pytest.raises(UsageError, match="did you mean 'chaos-ok'"):
        run_sweep(_opts(store, methods=["chaos-okk"]))
    with pytest.raises(UsageError, match="unknown task 'knapsak'; did you mean 'knapsack'"):
        run_sweep(_opts(store, task="knapsak"))
    with pytest.raises(UsageError, match="no selected method has a parameter"):
        run_sweep(_opts(store, methods=["chaos-ok"], params={"nope": 1}))


def test_dask_backend_matches_local(tmp_path):
    pytest.importorskip("distributed")
    local = run_sweep(_opts(tmp_path / "l", methods=["greedy", "random-fill"], extra_paths=()))
    dask = run_sweep(_opts(tmp_path / "d", methods=["greedy", "random-fill"], extra_paths=(), backend="dask"))
    assert local.keys == dask.keys
    rl = {r.key: r.metrics for r in Store(tmp_path / "l").iter_records("knapsack")}
    rd = {r.key: r.metrics for r in Store(tmp_path / "d").iter_records("knapsack")}
    assert rl == rd and dask.counts["ok"] == len(dask.keys)


@pytest.mark.long  # 13 s; make test keeps the Dask sweep that must match the local one
def test_dask_backend_survives_misbehaving_methods(tmp_path):
    pytest.importorskip("distributed")
    res = run_sweep(_opts(tmp_path, methods=["chaos-crash", "chaos-hang", "chaos-ok"], instances=TWO[:1], backend="dask", budget=0.5))
    statuses = {r.method: r.status for r in Store(tmp_path).iter_records("knapsack")}
    assert statuses == {"chaos-crash": "error", "chaos-hang": "timeout", "chaos-ok": "ok"}
    assert res.counts["timeout"] >= 1


def test_two_runners_on_one_store_never_duplicate(store):
    """Two runners start the same sweep on one store: each job runs once, one record each."""
    import subprocess
    import sys

    from conftest import ROOT

    cmd = [sys.executable, "-m", "bench", "run", "--task", "knapsack", "--plugin", CHAOS, "--method", "chaos-slow",
           "--seeds", "3", "--instances", *TWO, "--store", str(store), "--no-progress"]  # fmt: skip
    procs = [subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) for _ in range(2)]
    for p in procs:
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0, err.decode()[-2000:]
    files = list(store.glob("knapsack/*/*.json"))
    recs = list(Store(store).iter_records("knapsack"))
    assert len(files) == len(recs) == len({r.key for r in recs})
    assert all(r.status == "ok" and r.attempt == 1 for r in recs), "a job ran twice"
    sweeps = Store(store).sweeps("knapsack")
    assert len(sweeps) == 2 and sweeps[0].keys == sweeps[1].keys and len(recs) == len(sweeps[0].keys)
