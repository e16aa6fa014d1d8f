"""The holdout tier (bench/holdout.py): secret seeds, public ids that reveal nothing, one-line refusals."""

from __future__ import annotations

import subprocess
import sys

import pytest

from bench import holdout
from bench.registry import get_task
from bench.runner import RunOptions, UsageError, plan

SECRET = "unit-test-secret-0123456789abcdef"


@pytest.fixture
def secret(monkeypatch):
    # the test process stays dumpable (protect_process has its own test, in a subprocess)
    monkeypatch.setattr(holdout, "protect_process", lambda: None)
    monkeypatch.setenv(holdout.ENV, SECRET)
    for name in ("knapsack", "iv-bounds"):
        get_task(name).__dict__.pop("_holdout_map", None)
    yield SECRET
    for name in ("knapsack", "iv-bounds"):
        get_task(name).__dict__.pop("_holdout_map", None)


def test_holdout_mirrors_the_standard_tier_with_secret_seeds(secret, monkeypatch):
    task = get_task("knapsack")
    held = task.holdout_instances()
    standard = task.instances("standard")
    assert len(held) == len(standard)
    assert [s.params for s in held] == [{k: v for k, v in s.params.items() if k != "seed"} for s in standard]
    for spec in held:
        assert "seed" not in spec.params and "holdout" in spec.tags
        assert spec.id.rsplit("-", 1)[1].startswith("sh") and len(spec.id.rsplit("-", 1)[1]) == 10
    # the same secret gives the same instances; another secret gives others
    inst = task.load(held[0].id)
    assert inst.id == held[0].id and "seed" not in inst.params
    again = task.load(held[0].id)
    assert again.digest == inst.digest
    monkeypatch.setenv(holdout.ENV, SECRET + "-other")
    other = task.holdout_instances()
    assert {s.id for s in other}.isdisjoint({s.id for s in held})
    with pytest.raises(KeyError, match="not made by this secret"):
        task.clear_cache()
        task.load(held[0].id)


def test_a_holdout_instance_is_none_of_the_public_ones(secret):
    task = get_task("knapsack")
    public = {task.load(s.id).digest for s in task.instances("standard")}
    held = [task.load(s.id) for s in task.holdout_instances()[:5]]
    assert all(h.digest not in public for h in held)
    assert len({h.digest for h in held}) == 5


def test_the_runner_plans_holdout_jobs_with_the_base_tiers_budget(secret):
    task = get_task("knapsack")
    methods = [{"name": "dp", "kind": "baseline", "version": "1", "params": {}, "grid": {}, "budgets": {}, "tasks": ["knapsack"]}]
    jobs = plan(task, methods, RunOptions(task="knapsack", tier="holdout"))
    assert len(jobs) == len(task.holdout_instances())
    assert {j.tier for j in jobs} == {"holdout"}
    assert {j.budget for j in jobs} == {task.meta.budgets["standard"]}


def test_without_a_secret_or_for_fixed_data_the_holdout_tier_is_refused(monkeypatch, cli):
    monkeypatch.delenv(holdout.ENV, raising=False)
    with pytest.raises(UsageError, match="BENCH_HOLDOUT_SECRET"):
        plan(get_task("knapsack"), [], RunOptions(task="knapsack", tier="holdout"))
    monkeypatch.setenv(holdout.ENV, "short")
    with pytest.raises(UsageError, match="at least 16"):
        plan(get_task("knapsack"), [], RunOptions(task="knapsack", tier="holdout"))
    monkeypatch.setenv(holdout.ENV, SECRET)
    monkeypatch.setattr(holdout, "protect_process", lambda: None)
    with pytest.raises(UsageError, match="maxcut has no holdout tier"):
        plan(get_task("maxcut"), [], RunOptions(task="maxcut", tier="holdout"))
    monkeypatch.delenv(holdout.ENV)
    code, _, err = cli("run", "--task", "knapsack", "--tier", "holdout")
    assert code == 2 and "BENCH_HOLDOUT_SECRET" in err and "Traceback" not in err


def test_a_holdout_looking_id_without_the_secret_says_why(monkeypatch):
    monkeypatch.delenv(holdout.ENV, raising=False)
    with pytest.raises(KeyError, match="looks like a holdout instance id"):
        get_task("knapsack").load("uncorrelated-n100-sh0123abcd")


def test_the_secrets_holder_becomes_non_dumpable():
    code = (
        "import ctypes, os; os.environ['BENCH_HOLDOUT_SECRET'] = 'x' * 16; from bench import holdout; "
        "libc = ctypes.CDLL(None); before = libc.prctl(3, 0, 0, 0, 0); holdout.secret(); "
        "print(before, libc.prctl(3, 0, 0, 0, 0))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout.split() == ["1", "0"]


def test_the_zygote_environment_has_no_secret(monkeypatch):
    monkeypatch.setenv(holdout.ENV, SECRET)
    assert holdout.ENV not in holdout.scrub(dict(__import__("os").environ))
