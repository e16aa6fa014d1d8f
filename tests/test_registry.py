"""bench.registry: name registries, the @method decorator, signatures and discovery by path."""

from __future__ import annotations

import json
import os
import sys
import textwrap
from pathlib import Path

import pytest

from bench import registry
from bench.registry import (
    DISCOVERY_ERRORS,
    METHODS,
    TASKS,
    DiscoveryError,
    DuplicateNameError,
    MethodSpec,
    Registry,
    RegistryError,
    UnknownNameError,
    import_path,
    interface_problems,
    method,
    register_task,
    unknown_message,
)
from bench.task import Metric, Normalization, Task, TaskMeta


@pytest.fixture
def clean_registries():
    """Snapshot METHODS, TASKS, DISCOVERY_ERRORS and plugin modules; restore them afterwards."""
    saved = {r: (dict(r._items), dict(r._sources)) for r in (METHODS, TASKS)}
    errors = list(DISCOVERY_ERRORS)
    modules = set(sys.modules)
    yield
    for r, (items, sources) in saved.items():
        r._items.clear()
        r._items.update(items)
        r._sources.clear()
        r._sources.update(sources)
    DISCOVERY_ERRORS[:] = errors
    for name in set(sys.modules) - modules:
        if name.startswith("bench_plugin_"):
            del sys.modules[name]


# ----------------------------------------------------------------------------- Registry


def test_add_get_names_items_contains_len():
    r: Registry[int] = Registry("widget")
    r.add("b", 2, "b.py:1")
    r.add("a", 1, "a.py:1")
    assert r.get("a") == 1 and r.get("b") == 2
    assert r.names() == ["a", "b"]
    assert r.items() == [("a", 1), ("b", 2)]
    assert "a" in r and "c" not in r
    assert len(r) == 2
    assert r.source("b") == "b.py:1"
    r.clear()
    assert len(r) == 0 and r.names() == []


def test_duplicate_with_different_sources_names_both():
    r: Registry[int] = Registry("widget")
    r.add("gizmo", 1, "pkg/one.py:10")
    with pytest.raises(DuplicateNameError) as info:
        r.add("gizmo", 2, "pkg/two.py:20")
    msg = str(info.value)
    assert "pkg/one.py:10" in msg and "pkg/two.py:20" in msg and "'gizmo'" in msg
    assert isinstance(info.value, RegistryError)
    assert r.get("gizmo") == 1  # the first registration stands


def test_same_source_twice_is_a_no_op():
    r: Registry[str] = Registry("widget")
    r.add("gizmo", "first", "pkg/one.py:10")
    r.add("gizmo", "second", "pkg/one.py:10")
    assert r.get("gizmo") == "first"
    assert len(r) == 1


def test_get_typo_suggests_close_match():
    r: Registry[int] = Registry("task")
    for name in ("maxcut", "knapsack", "coloring"):
        r.add(name, 0, name)
    with pytest.raises(UnknownNameError) as info:
        r.get("maxcutt")
    msg = str(info.value)
    assert msg == "unknown task 'maxcutt'; did you mean 'maxcut'?"
    assert isinstance(info.value, KeyError)  # callers catching KeyError still work


def test_get_without_close_match_lists_known_names():
    r: Registry[int] = Registry("task")
    for name in ("maxcut", "knapsack"):
        r.add(name, 0, name)
    with pytest.raises(UnknownNameError) as info:
        r.get("zzz")
    assert str(info.value) == "unknown task 'zzz'; known: knapsack, maxcut"


def test_unknown_message_cases():
    assert unknown_message("method", "x", []) == "unknown method 'x'; no methods are registered"
    many = [f"name{i:02d}" for i in range(15)]
    msg = unknown_message("method", "qqqq", many)
    assert msg.startswith("unknown method 'qqqq'; known: name00, name01")
    assert "name11" in msg and "name12" not in msg and msg.endswith(" ...")
    two = unknown_message("task", "knapsak", ["knapsack", "knapsacks", "maxcut"])
    assert "did you mean 'knapsack' or 'knapsacks'?" in two


def test_unknown_on_empty_registry():
    with pytest.raises(UnknownNameError, match="no gadgets are registered"):
        Registry("gadget").get("x")


# ----------------------------------------------------------------------------- @method


def test_method_registers_a_spec_with_metadata(clean_registries):
    def supports(instance):
        return True

    @method(
        name="test-reg-full",
        kind="method",
        tasks=["maxcut", "knapsack"],
        reference="Someone et al. 2025",
        version=3,
        params={"alpha": 0.5},
        grid={"alpha": [0.1, 0.5]},
        deterministic=True,
        supports=supports,
        budgets={"smoke": 5.0},
        deviations="none",
    )
    def solve(instance, *, seed, budget, alpha=0.5):
        """First paragraph.

        Second paragraph is not part of the description.
        """
        return alpha

    assert solve(None, seed=0, budget=1) == 0.5  # the decorator returns the function unchanged
    spec = METHODS.get("test-reg-full")
    assert isinstance(spec, MethodSpec)
    assert spec.target is solve
    assert spec.kind == "method"
    assert spec.tasks == ("maxcut", "knapsack")
    assert spec.version == "3"
    assert spec.params == {"alpha": 0.5}
    assert spec.grid == {"alpha": [0.1, 0.5]}
    assert spec.deterministic is True
    assert spec.supports is supports
    assert spec.budgets == {"smoke": 5.0}
    assert spec.description == "First paragraph."
    assert spec.deviations == "none"
    assert spec.source.startswith(__file__) and spec.source.rsplit(":", 1)[1].isdigit()
    assert METHODS.source("test-reg-full") == spec.source


def test_method_explicit_description_wins_and_params_are_copied(clean_registries):
    params = {"k": 1}

    @method(name="test-reg-desc", kind="baseline", tasks=["t"], params=params, description="explicit")
    def solve(instance, *, seed, budget, k=1):
        """Docstring."""

    params["k"] = 2
    spec = METHODS.get("test-reg-desc")
    assert spec.description == "explicit"
    assert spec.params == {"k": 1}


def test_supports_receives_the_parameters_it_names(clean_registries):
    seen = []

    def by_name(instance, *, limit=1):
        seen.append(limit)
        return True if instance <= limit else f"{instance} > limit={limit}"

    @method(name="test-reg-sup", kind="baseline", tasks=["t"], params={"limit": 1, "other": 0}, supports=by_name)
    def solve(instance, *, seed, budget, limit=1, other=0):
        return None

    spec = METHODS.get("test-reg-sup")
    assert spec.check_supports(2, {"limit": 1, "other": 0}) == "2 > limit=1"
    assert spec.check_supports(2, {"limit": 5, "other": 0}) is True  # `other` is not passed
    assert seen == [1, 5]

    @method(name="test-reg-sup-kw", kind="baseline", tasks=["t"], params={"a": 1},
            supports=lambda inst, **kw: "got " + ",".join(sorted(kw)))
    def solve_kw(instance, *, seed, budget, a=1):
        return None

    assert METHODS.get("test-reg-sup-kw").check_supports(0, {"a": 1}) == "got a"

    @method(name="test-reg-sup-plain", kind="baseline", tasks=["t"], params={"a": 1},
            supports=lambda inst: inst > 0 or "not positive")
    def solve_plain(instance, *, seed, budget, a=1):
        return None

    assert METHODS.get("test-reg-sup-plain").check_supports(0, {"a": 1}) == "not positive"
    assert METHODS.get("test-reg-sup-plain").check_supports(1) is True


def test_method_meta_is_json_serialisable(clean_registries):
    @method(name="test-reg-meta", kind="baseline", tasks=["t"], params={"k": 1}, grid={"k": [1, 2]})
    def solve(instance, *, seed, budget, k=1):
        return None

    meta = METHODS.get("test-reg-meta").meta()
    again = json.loads(json.dumps(meta))
    assert again["name"] == "test-reg-meta"
    assert again["kind"] == "baseline"
    assert again["tasks"] == ["t"]
    assert again["params"] == {"k": 1}
    assert again["grid"] == {"k": [1, 2]}
    assert again["interactive"] is False
    assert isinstance(again["interface_problems"], list)
    assert "target" not in again and "supports" not in again


def test_method_class_target_is_interactive(clean_registries):
    @method(name="test-reg-class", kind="method", tasks=["t"])
    class Learner:
        def __init__(self, instance, *, seed, budget):
            pass

        def select(self, state):
            return 0

    assert METHODS.get("test-reg-class").meta()["interactive"] is True


def test_two_methods_with_one_name_raise(clean_registries):
    @method(name="test-reg-dup", kind="baseline", tasks=["t"])
    def first(instance, *, seed, budget):
        pass

    with pytest.raises(DuplicateNameError) as info:

        @method(name="test-reg-dup", kind="baseline", tasks=["t"])
        def second(instance, *, seed, budget):
            pass

    assert str(info.value).count(__file__) == 2
    assert METHODS.get("test-reg-dup").target is first


@pytest.mark.parametrize("kind", ["solver", "Method", ""])
def test_method_rejects_bad_kind(clean_registries, kind):
    with pytest.raises(ValueError, match="kind must be 'method' or 'baseline'"):
        method(name="test-reg-badkind", kind=kind, tasks=["t"])  # type: ignore[arg-type]
    assert "test-reg-badkind" not in METHODS


def test_method_rejects_unknown_tier_in_budgets(clean_registries):
    with pytest.raises(ValueError, match=r"unknown tiers \['huge'\]"):
        method(name="test-reg-badtier", kind="baseline", tasks=["t"], budgets={"smoke": 1.0, "huge": 5.0})
    assert "test-reg-badtier" not in METHODS


def test_method_tier_params_are_checked_and_exported(clean_registries):
    with pytest.raises(ValueError, match=r"tier_params: unknown tiers \['huge'\]"):
        method(name="test-reg-tp1", kind="baseline", tasks=["t"], params={"n": 1}, tier_params={"huge": {"n": 2}})
    with pytest.raises(ValueError, match=r"tier_params\['full'\]: 'm' is not a parameter of 'test-reg-tp2'"):
        method(name="test-reg-tp2", kind="baseline", tasks=["t"], params={"n": 1}, tier_params={"full": {"m": 2}})
    assert "test-reg-tp1" not in METHODS and "test-reg-tp2" not in METHODS

    @method(name="test-reg-tp3", kind="baseline", tasks=["t"], params={"n": 1}, tier_params={"full": {"n": None}})
    def f(instance, *, seed, budget, n):
        return n

    assert METHODS.get("test-reg-tp3").meta()["tier_params"] == {"full": {"n": None}}


def test_method_development_seeds_are_checked_and_exported(clean_registries):
    with pytest.raises(ValueError, match="development_seeds of 'test-reg-ds1' must be master seeds"):
        method(name="test-reg-ds1", kind="baseline", tasks=["t"], development_seeds=["2"])
    assert "test-reg-ds1" not in METHODS

    @method(name="test-reg-ds2", kind="baseline", tasks=["t"], development_seeds={2: None, 0: ["a", "b"]})
    def f(instance, *, seed, budget):
        return 0

    @method(name="test-reg-ds3", kind="baseline", tasks=["t"], development_seeds=[5])
    def g(instance, *, seed, budget):
        return 0

    assert METHODS.get("test-reg-ds2").meta()["development_seeds"] == [
        {"master_seed": 0, "instances": ["a", "b"]}, {"master_seed": 2, "instances": None}
    ]  # fmt: skip
    assert METHODS.get("test-reg-ds3").meta()["development_seeds"] == [{"master_seed": 5, "instances": None}]


def test_plan_applies_tier_params_under_param_overrides():
    from bench.registry import get_task
    from bench.runner import RunOptions, plan

    meta = {"name": "m", "kind": "baseline", "version": "1", "params": {"n": 1, "k": 0}, "grid": None,
            "budgets": {}, "tier_params": {"full": {"n": None}}}  # fmt: skip
    task = get_task("knapsack")
    iid = task.instances("smoke")[0].id

    def params(tier, **over):
        (job,) = plan(task, [meta], RunOptions(task="knapsack", tier=tier, instances=[iid], params=over))
        return job.params

    assert params("smoke") == {"k": 0, "n": 1}
    assert params("full") == {"k": 0, "n": None}
    assert params("full", n=5) == {"k": 0, "n": 5}


def test_fixture_restores_methods(clean_registries):
    assert "test-reg-full" not in METHODS and "test-reg-meta" not in METHODS


# ----------------------------------------------------------------------------- interface_problems


def test_missing_seed_and_budget_are_flagged():
    def solve(instance):
        pass

    problems = interface_problems(solve)
    assert "solve must accept the keyword argument 'seed'" in problems
    assert "solve must accept the keyword argument 'budget'" in problems


def test_missing_budget_only():
    def solve(instance, *, seed):
        pass

    problems = interface_problems(solve)
    assert "solve must accept the keyword argument 'budget'" in problems
    assert "solve must accept the keyword argument 'seed'" not in problems


def test_no_positional_instance_argument_is_flagged():
    def solve(*, seed, budget):
        pass

    assert "solve must take the instance as its first argument" in interface_problems(solve)


def test_class_without_select_is_flagged():
    class Learner:
        def __init__(self, instance, *, seed, budget):
            pass

    assert "class Learner has no select(self, state) method" in interface_problems(Learner)


def test_class_init_without_instance_is_flagged():
    class Learner:
        def __init__(self, *, seed, budget):
            pass

        def select(self, state):
            return 0

    assert "Learner.__init__ must take the instance as its first argument" in interface_problems(Learner)


def test_var_kwargs_and_var_args_accept_everything():
    def solve(*args, **kwargs):
        pass

    assert interface_problems(solve, {"alpha": 1, "beta": 2}) == []

    def solve2(instance, **kwargs):
        pass

    assert interface_problems(solve2, {"alpha": 1}) == []

    class Learner:  # inherits object.__init__(self, /, *args, **kwargs)
        def select(self, state):
            return 0

    assert interface_problems(Learner) == []


class _NoSignature:
    """A callable whose signature cannot be read (like some C builtins)."""

    __name__ = "nosig"

    @property
    def __signature__(self):
        raise ValueError("no signature")

    def __call__(self, *a, **k):
        pass


def test_unreadable_signature_is_reported():
    assert interface_problems(_NoSignature()) == ["cannot read the signature of nosig"]


def _well_formed_function(instance, *, seed, budget, alpha=0.5):
    pass


def _well_formed_positional(instance, seed, budget):
    pass


class _WellFormedLearner:
    def __init__(self, instance, *, seed, budget, alpha=0.5):
        pass

    def select(self, state):
        return 0


@pytest.mark.parametrize(
    ("target", "params"),
    [
        (_well_formed_function, {}),
        (_well_formed_function, {"alpha": 0.1}),
        (_well_formed_positional, {}),
        (_WellFormedLearner, {"alpha": 0.1}),
    ],
)
def test_well_formed_targets_have_no_problems(target, params):
    assert interface_problems(target, params) == []


def test_default_param_not_in_signature_is_flagged():
    def solve(instance, *, seed, budget):
        pass

    assert interface_problems(solve, {"alpha": 0.5}) == ["solve must accept the keyword argument 'alpha'"]


# ----------------------------------------------------------------------------- register_task


def _meta(name: str) -> TaskMeta:
    return TaskMeta(
        name=name,
        version="1",
        family="test",
        description="d",
        metrics=[Metric(name="score", direction="max")],
        primary="score",
        normalization=Normalization(zero=0.0, one=1.0),
    )


def test_register_task_rejects_non_task_class(clean_registries):
    class NotATask:
        meta = _meta("test-reg-notatask")

    with pytest.raises(TypeError, match="expects a Task subclass"):
        register_task(NotATask)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="expects a Task subclass"):
        register_task(Task())  # type: ignore[arg-type]
    assert "test-reg-notatask" not in TASKS


def test_register_task_rejects_task_without_meta(clean_registries):
    class NoMeta(Task):
        pass

    n = len(TASKS)
    with pytest.raises(TypeError, match=r"NoMeta has no `meta = TaskMeta\(\.\.\.\)`"):
        register_task(NoMeta)
    assert len(TASKS) == n


def test_register_task_registers_and_sets_data_dir(clean_registries, tmp_path):
    class Good(Task):
        meta = _meta("test-reg-good")

    assert register_task(Good) is Good
    assert TASKS.get("test-reg-good") is Good
    assert Good.data_dir == Path(__file__).parent

    class Placed(Task):
        meta = _meta("test-reg-placed")
        data_dir = tmp_path

    register_task(Placed)
    assert Placed.data_dir == tmp_path  # an explicit data_dir is kept


# ----------------------------------------------------------------------------- import_path


def test_import_path_records_discovery_error_instead_of_raising(clean_registries, tmp_path):
    f = tmp_path / "broken_method.py"
    f.write_text("x = 1\nraise RuntimeError('boom at import')\n")
    import_path(f)
    err = DISCOVERY_ERRORS[-1]
    assert isinstance(err, DiscoveryError)
    assert err.module == str(f.resolve())
    assert err.error == "RuntimeError: boom at import (broken_method.py:2)"
    assert str(err) == f"{f.resolve()}: RuntimeError: boom at import (broken_method.py:2)"
    assert not [m for m in sys.modules if m.startswith("bench_plugin_broken_method_")]


def test_import_path_syntax_error_is_recorded(clean_registries, tmp_path):
    f = tmp_path / "syntax_method.py"
    f.write_text("def oops(:\n")
    n = len(DISCOVERY_ERRORS)
    import_path(f)
    assert len(DISCOVERY_ERRORS) == n + 1
    assert DISCOVERY_ERRORS[-1].error.startswith("SyntaxError")
    # the error names the plugin's own file and line, not the importer's frame
    assert DISCOVERY_ERRORS[-1].error.endswith(f"({f}, line 1)")


# ----------------------------------------------------------------------------- lazy task lookup


def test_the_task_index_is_current():
    """tasks/index.json names every task of the tasks package and its module (rewrite: scripts/write_task_index.py)."""
    committed = json.loads(registry.TASK_INDEX.read_text())["tasks"]
    assert committed == registry.task_index_from_registry(), "tasks/index.json is stale: run `python scripts/write_task_index.py`"


def _fresh_python(code: str, env: dict[str, str] | None = None) -> str:
    import subprocess

    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120,
                         env={**os.environ, **(env or {})}, check=True)  # fmt: skip
    return out.stdout.strip().splitlines()[-1]


def test_looking_up_a_task_imports_its_module_only():
    """A runner or worker that needs knapsack must not pay for torch and the other families."""
    loaded = _fresh_python("""
        import sys
        from bench.registry import get_task
        get_task("knapsack")
        print(sorted({m.split(".")[1] for m in sys.modules if m.startswith("tasks.")} | ({"torch"} & set(sys.modules))))
    """)
    assert loaded == "['knapsack']"


def test_a_stale_index_entry_falls_back_to_full_discovery(tmp_path):
    """The index is a shortcut only: a wrong module, or a task it lacks, is still found (or suggested)."""
    index = tmp_path / "index.json"
    index.write_text(json.dumps({"tasks": {"knapsack": "tasks.no_such_module", "maxcut": "tasks.knapsack"}}))
    out = _fresh_python(f"""
        from bench import registry
        registry.TASK_INDEX = __import__("pathlib").Path({str(index)!r})
        a = registry.get_task("knapsack").meta.name
        b = registry.get_task("maxcut").meta.name
        try:
            registry.get_task("knapsak")
        except registry.UnknownNameError as exc:
            print(a, b, "|", exc)
    """)
    assert out == "knapsack maxcut | unknown task 'knapsak'; did you mean 'knapsack'?"


def test_import_path_registers_methods_once(clean_registries, tmp_path):
    f = tmp_path / "one_method.py"
    f.write_text(
        textwrap.dedent(
            """
            from bench import method

            @method(name="test-reg-path-one", kind="baseline", tasks=["t"])
            def solve(instance, *, seed, budget):
                return 0
            """
        )
    )
    import_path(f)
    spec = METHODS.get("test-reg-path-one")
    assert spec.source == f"{f.resolve()}:4"
    import_path(f)  # already imported: a no-op, not a duplicate
    assert METHODS.get("test-reg-path-one") is spec


def test_import_path_same_name_twice_in_a_file_is_reported(clean_registries, tmp_path):
    f = tmp_path / "dup_methods.py"
    f.write_text(
        textwrap.dedent(
            """
            from bench import method

            @method(name="test-reg-path-dup", kind="baseline", tasks=["t"])
            def a(instance, *, seed, budget):
                return 0

            @method(name="test-reg-path-dup", kind="baseline", tasks=["t"])
            def b(instance, *, seed, budget):
                return 1
            """
        )
    )
    n = len(DISCOVERY_ERRORS)
    import_path(f)  # one bad file must not take the whole catalog down
    assert len(DISCOVERY_ERRORS) == n + 1
    msg = str(DISCOVERY_ERRORS[-1])
    assert "DuplicateNameError" in msg and f"{f.resolve()}:4" in msg and f"{f.resolve()}:8" in msg
    del DISCOVERY_ERRORS[n:]


def test_import_path_directory_skips_private_files(clean_registries, tmp_path):
    (tmp_path / "_private.py").write_text("raise RuntimeError('must not be imported')\n")
    (tmp_path / "dir_method.py").write_text(
        "from bench import method\n"
        "@method(name='test-reg-path-dir', kind='baseline', tasks=['t'])\n"
        "def solve(instance, *, seed, budget):\n    return 0\n"
    )
    (tmp_path / "notes.txt").write_text("raise SystemExit\n")
    n = len(DISCOVERY_ERRORS)
    import_path(tmp_path)
    assert "test-reg-path-dir" in METHODS
    assert len(DISCOVERY_ERRORS) == n


def test_import_path_missing_file_raises(tmp_path):
    with pytest.raises(FileNotFoundError, match="no such file"):
        import_path(tmp_path / "nope.py")


def test_plugin_paths_splits_on_pathsep(monkeypatch):
    monkeypatch.setenv("BENCH_TEST_PATHS_X", os.pathsep.join(["a.py", "", "b/c.py"]))
    assert registry.plugin_paths("BENCH_TEST_PATHS_X") == ["a.py", "b/c.py"]
    monkeypatch.delenv("BENCH_TEST_PATHS_X")
    assert registry.plugin_paths("BENCH_TEST_PATHS_X") == []
