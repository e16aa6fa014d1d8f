"""The path a stranger walks to submit a method: scaffold, validate, run, see why a job failed.

Every registered task must scaffold a method file that passes ``bench validate``
as written (the full check, one conformance suite per task, is ``long``; the
fast check here renders, compiles and reads every scaffold). A failed job's
reason reaches the screen and the exit code, not only the store's JSON.
"""

from __future__ import annotations

import ast
import json

import pytest
from conftest import TOY_METHODS

from bench.registry import get_task, task_index_from_registry

#: The tasks of the repository (not the test-only ones of tests/plugins).
TASKS = sorted(task_index_from_registry())

FAILING = '''
import numpy as np
from bench import method


@method(name="sub-raises", kind="baseline", tasks=["toy-mean"], reference="test", deterministic=True)
def raises(instance, *, seed, budget):
    raise ValueError("boom from the method")


@method(name="sub-shape", kind="baseline", tasks=["toy-mean"], reference="test", deterministic=True)
def wrong_shape(instance, *, seed, budget):
    return np.zeros(3)


@method(name="sub-votes", kind="baseline", tasks=["toy-mean"], reference="test", params={"votes": 3}, deterministic=True)
def votes(instance, *, seed, budget, votes):
    return np.array(float(instance.data["x"][: int(votes)].mean()))
'''


def _registered(source: str) -> tuple[str, str, list[str]]:
    """(name, kind, tasks) of the single ``@method(...)`` in ``source``, read without importing it."""
    calls = [
        d for node in ast.walk(ast.parse(source)) if isinstance(node, (ast.FunctionDef, ast.ClassDef))
        for d in node.decorator_list if isinstance(d, ast.Call) and getattr(d.func, "id", "") == "method"
    ]  # fmt: skip
    assert len(calls) == 1, f"expected one @method, found {len(calls)}"
    kw = {k.arg: ast.literal_eval(k.value) for k in calls[0].keywords if k.arg in ("name", "kind", "tasks")}
    return kw["name"], kw["kind"], kw["tasks"]


@pytest.mark.parametrize("task", TASKS)
def test_every_task_scaffolds_a_method_file(task):
    """Filled in (no ``{name}`` or doubled braces left), compiles, and registers one method for the task."""
    source = get_task(task).scaffold("my-own", "baseline")
    compile(source, f"{task}.py", "exec")
    assert "{name}" not in source and "{{" not in source and "}}" not in source
    assert source.lstrip().startswith('"""') and source.count("from __future__ import annotations") == 1
    assert _registered(source) == ("my-own", "baseline", [task])


@pytest.mark.long
@pytest.mark.parametrize("task", TASKS)
def test_every_tasks_scaffold_passes_validate(cli, tmp_path, task):
    """``bench new-method`` then ``bench validate`` on the file as written: what a newcomer starts from works."""
    path = tmp_path / "my_own.py"
    rc, _, err = cli("new-method", "--task", task, "--name", "my-own", "--output", path)
    assert rc == 0, err
    rc, out, err = cli("validate", path, "--jobs", "2")
    assert rc == 0, out[-3000:] + err
    assert "PASSED" in out


def test_new_method_refuses_to_overwrite_and_checks_names(cli, tmp_path):
    path = tmp_path / "m.py"
    assert cli("new-method", "--task", "dueling-optimization", "--name", "my-duel", "--output", path)[0] == 0
    rc, _, err = cli("new-method", "--task", "dueling-optimization", "--name", "my-duel", "--output", path)
    assert rc == 2 and "already exists" in err
    rc, _, err = cli("new-method", "--task", "knapsack", "--name", "Bad Name", "--output", tmp_path / "x.py")
    assert rc == 2 and "must be lower case" in err


def test_run_says_why_jobs_failed_and_exits_non_zero(cli, tmp_path):
    """The first reason per failing (method, instance) is on screen; a method with no success fails the run."""
    plugin = tmp_path / "failing.py"
    plugin.write_text(FAILING)
    store = tmp_path / "runs"
    args = ("run", "--task", "toy-mean", "--plugin", plugin, "--plugin", TOY_METHODS, "--store", store, "--no-progress")
    rc, out, err = cli(*args, "--method", "toy-sample-mean", "sub-raises", "sub-shape")
    assert rc == 1, out + err
    assert "sub-raises on mu0: error: ValueError: boom from the method" in out
    assert "sub-shape on mu0: invalid: expected one number, got an array of dtype float64 and shape (3,)" in out
    assert "no job of sub-raises, sub-shape succeeded" in err
    assert "toy-sample-mean on" not in out  # a method whose runs all ended ok has no reason line

    rc, out, err = cli(*args, "--method", "sub-votes", "--param", "votes=abc")
    assert rc == 1 and "sub-votes on mu0: error: ValueError: invalid literal for int() with base 10: 'abc'" in out, out

    rc, out, err = cli(*args, "--method", "toy-sample-mean")
    assert rc == 0, out + err

    # show has the reason: a column in csv and json, lines under the table
    rc, out, _ = cli("show", "--task", "toy-mean", "--store", store, "--format", "json")
    rows = {(r["method"], r["instance"]): r["reason"] for r in json.loads(out)}
    assert rows[("sub-raises", "mu1")] == "error: ValueError: boom from the method"
    assert rows[("toy-sample-mean", "mu1")] == ""
    rc, out, _ = cli("show", "--task", "toy-mean", "--store", store, "--format", "csv")
    assert out.splitlines()[0].split(",").count("reason") == 1
    rc, out, _ = cli("show", "--task", "toy-mean", "--store", store)
    assert "sub-shape on mu2: invalid: expected one number" in out


def test_list_sweeps_names_the_ids_publish_takes(cli, tmp_path):
    from conftest import run_toy_sweep

    store = run_toy_sweep(tmp_path / "runs", ("toy-sample-mean", "toy-first"), 1)
    rc, out, _ = cli("list", "sweeps", "--store", store)
    assert rc == 0
    (manifest,) = (store / "_sweeps").glob("*.json")
    sweep = json.loads(manifest.read_text())["sweep"]
    line = next(line for line in out.splitlines() if sweep in line)
    assert "toy-mean" in line and "smoke" in line and "ok:5" in line and "skipped:1" in line
    assert "toy-first, toy-sample-mean" in line
    rc, out, _ = cli("list", "sweeps", "--store", tmp_path / "empty", "--task", "toy-mean")
    assert rc == 0 and "no sweeps in" in out
    rc, _, err = cli("list", "sweeps", "--store", store, "--task", "toy-men")
    assert rc == 2 and "did you mean 'toy-mean'" in err


def test_import_warnings_are_said_once_and_only_for_the_listed_family():
    from bench.cli import _relevant_errors

    errors = [
        "methods.sparse_losses.entmax_x: ModuleNotFoundError: No module named 'entmax'",
        "methods.maxcut.broken: ImportError: boom",
        "/tmp/plugin.py: SyntaxError: invalid syntax (/tmp/plugin.py, line 3)",
        "methods.maxcut.broken: ImportError: boom",
    ]
    assert _relevant_errors(errors, "maxcut") == errors[1:3]
    assert _relevant_errors(errors, None) == errors[:3]


def test_at_80_columns_no_id_or_number_is_cut(cli, tmp_path, monkeypatch):
    from conftest import run_toy_sweep

    store = run_toy_sweep(tmp_path / "runs", ("toy-sample-mean", "toy-noisy"), 2)
    monkeypatch.setenv("COLUMNS", "80")
    rc, out, _ = cli("list", "tasks")
    assert rc == 0 and "…" not in out
    assert all(len(line) <= 80 for line in out.splitlines() if "─" not in line)
    for task in TASKS:
        assert task in out.split(), f"{task} is cut or missing at 80 columns"
    rc, out, _ = cli("show", "--task", "toy-mean", "--store", store)
    assert rc == 0 and "…" not in out
    assert {"mu0", "mu1", "mu2"} <= set(out.split()) and "toy-sample-mean" in out.split()


def test_dry_run_prints_the_plan_and_runs_nothing(cli, tmp_path):
    from conftest import run_toy_sweep

    store = run_toy_sweep(tmp_path / "runs", ("toy-sample-mean",), 1)
    before = sorted(p.name for p in store.rglob("*"))
    rc, out, _ = cli("run", "--task", "toy-mean", "--plugin", TOY_METHODS, "--method", "toy-sample-mean", "toy-noisy",
                     "--seeds", "2", "--store", store, "--dry-run")  # fmt: skip
    assert rc == 0, out
    assert "plan: toy-mean [smoke] (nothing is run)" in out
    assert "12 jobs on 3 instances x 2 seed(s); 3 already in the store (reused), 9 to run" in out
    # the three toy-sample-mean jobs of rep 1 are timed by rep 0's records; toy-noisy's run at the budget
    assert "(3 of 9 jobs timed by earlier runs" in out
    assert sorted(p.name for p in store.rglob("*")) == before


def test_task_all_refuses_options_of_one_task(cli):
    rc, _, err = cli("run", "--task", "all", "--method", "greedy")
    assert rc == 2 and "--task all takes no --method" in err


def test_show_ranks_a_new_method_against_the_published_ones(cli, tmp_path):
    """A store holding only the newcomer's runs is shown beside the published runs of the other methods."""
    from conftest import run_toy_sweep

    theirs = run_toy_sweep(tmp_path / "theirs", ("toy-first", "toy-noisy"), 1)
    results = tmp_path / "results"
    assert cli("publish", "--task", "toy-mean", "--store", theirs, "--results", results, "--origin", "maintainers")[0] == 0
    mine = run_toy_sweep(tmp_path / "mine", ("toy-sample-mean", "toy-noisy"), 1)
    rc, out, _ = cli("show", "--task", "toy-mean", "--store", mine, "--against", results, "--format", "json")
    rows = json.loads(out)
    assert {r["method"] for r in rows} == {"toy-sample-mean", "toy-noisy", "toy-first"}
    # the store's own toy-noisy replaces the published one: one row per instance, its own hardware/sweep
    assert [r["runs"] for r in rows if r["method"] == "toy-noisy"] == [1, 1, 1]
    rc, out, _ = cli("show", "--task", "toy-mean", "--store", mine, "--against", results)
    assert f"from the published bundles under {results} (not this store): toy-first" in out.replace("\n", "")
    assert "ranking on the smoke tier" in out
    rc, out, _ = cli("show", "--task", "toy-mean", "--store", mine, "--against", "none", "--format", "json")
    assert {r["method"] for r in json.loads(out)} == {"toy-sample-mean", "toy-noisy"}
