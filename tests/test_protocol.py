"""The job protocol: interactive tasks, the trust boundary, and per-job threads."""

from __future__ import annotations

import ast
import sys

import pytest
from conftest import CHAOS, GUESS_METHODS, TOY_METHODS

from bench.runner import RunOptions, run_sweep
from bench.store import Store
from bench.verify import verify_frame

pytestmark = pytest.mark.slow


def test_interactive_task_runs_select_rounds_and_replays(store):
    res = run_sweep(RunOptions(task="toy-guess", store=store, progress=False, extra_paths=(GUESS_METHODS,), seeds=2))
    recs = list(Store(store).iter_records("toy-guess"))
    assert len(recs) == len(res.keys) == 12
    for r in recs:
        if r.method == "toy-bisect":
            assert r.status == "ok", r.reason
            assert r.metrics["found"] == 1.0 and 1 <= r.metrics["rounds"] <= 10
        else:
            # the session rejects the out-of-range guess the moment it is made
            assert r.status == "invalid" and "guess 4: 5000 is outside [0, 1024)" in r.reason
    # `bench verify` replays each stored sequence with the task alone
    checks = verify_frame(Store(store).frame("toy-guess"), store)
    assert {c.outcome for c in checks if c.method == "toy-bisect"} == {"match"}
    # a sequence cut short by an invalid action is not a solution: nothing to re-score
    assert {c.outcome for c in checks if c.method == "toy-repeat"} == {"unverifiable"}


def test_the_runner_never_imports_method_code(store):
    """A fresh runner process runs two sweeps; no method module may load in it."""
    import subprocess

    script = f"""
import sys
from bench.runner import RunOptions, run_sweep
run_sweep(RunOptions(task="toy-mean", store={str(store)!r}, progress=False, extra_paths=({TOY_METHODS!r},), methods=["toy-sample-mean", "toy-noisy", "toy-first"]))
run_sweep(RunOptions(task="knapsack", store={str(store)!r}, progress=False, instances=["uncorrelated-n20-s0"]))
print([m for m in sys.modules if m.split(".")[0] in ("methods", "baselines") or m.startswith("bench_plugin_")])
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, check=True)
    assert out.stdout.strip().splitlines()[-1] == "[]"
    assert len(list(Store(store).iter_records("toy-mean"))) == 9


def test_a_job_loads_only_its_tasks_family(store):
    """Workers import methods/<family> and baselines/<family> of the sweep's task, and the job
    child inherits them: it must not import the other families (torch, scikit-learn...) itself."""
    run_sweep(RunOptions(task="knapsack", store=store, progress=False, extra_paths=(CHAOS,),
                         methods=["chaos-modules"], instances=["uncorrelated-n20-s0"]))  # fmt: skip
    (rec,) = Store(store).iter_records("knapsack")
    assert rec.status == "ok", rec.reason
    loaded = ast.literal_eval(rec.stdout_tail.split("LOADED ", 1)[1].splitlines()[0])
    assert "baselines.knapsack" in loaded
    assert [m for m in loaded if "." in m and m.split(".")[1] != "knapsack"] == []


@pytest.mark.parametrize("threads", [1, 2])
def test_every_job_gets_its_thread_count(store, threads):
    run_sweep(
        RunOptions(task="knapsack", store=store, progress=False, extra_paths=(CHAOS,), methods=["chaos-threads"],
                   instances=["uncorrelated-n20-s0"], threads=threads)
    )  # fmt: skip
    (rec,) = Store(store).iter_records("knapsack")
    assert rec.threads == threads
    out = rec.stdout_tail
    assert f"OMP_NUM_THREADS {threads}" in out and f"MKL_NUM_THREADS {threads}" in out
    assert f"BLAS [{threads}]" in out


def test_setup_runs_once_per_worker_outside_the_jobs_clock(store):
    run_sweep(RunOptions(task="toy-mean", store=store, progress=False, extra_paths=(TOY_METHODS,),
                         methods=["toy-prepared", "toy-broken-setup"], seeds=2, jobs=1))  # fmt: skip
    recs = list(Store(store).iter_records("toy-mean"))
    prepared = [r for r in recs if r.method == "toy-prepared"]
    assert all(r.status == "ok" for r in prepared)
    paid = [r.setup_s for r in prepared if r.setup_s]
    assert len(paid) == 1 and paid[0] >= 0.5  # one worker: one setup, recorded once
    assert all(r.wall_s < 0.5 for r in prepared)  # not charged to any job
    broken = [r for r in recs if r.method == "toy-broken-setup"]
    assert broken and all(r.status == "error" and "no weights for this k" in r.reason for r in broken)


def test_setup_can_key_on_the_repetition_and_hand_its_product_to_the_job(store):
    run_sweep(RunOptions(task="toy-mean", store=store, progress=False, extra_paths=(TOY_METHODS,),
                         methods=["toy-prepared-per-rep"], seeds=2, jobs=1, params={"scale": 2.0}))  # fmt: skip
    recs = list(Store(store).iter_records("toy-mean"))
    assert len(recs) == 6 and all(r.status == "ok" for r in recs), [r.reason for r in recs]
    # one setup per repetition, paid by the first job of each; the product reaches every job
    assert sum(1 for r in recs if r.setup_s is not None and r.setup_s > 0) <= 2
    for r in recs:
        assert f"prepared {{'rep': {r.rep}, 'master_seed': 0, 'scale': 2.0}}" in r.stdout_tail, r.stdout_tail


def test_time_left_lets_anytime_methods_stop_in_budget(store):
    run_sweep(RunOptions(task="toy-mean", store=store, progress=False, extra_paths=(TOY_METHODS,),
                         methods=["toy-anytime"], budget=0.5))  # fmt: skip
    recs = list(Store(store).iter_records("toy-mean"))
    assert recs and all(r.status == "ok" and 0.4 <= r.wall_s <= 0.7 for r in recs), [(r.status, r.wall_s) for r in recs]
