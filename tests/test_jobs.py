"""bench.jobs: seeds, job keys, parameter grids and the Job record."""

from __future__ import annotations

import dataclasses
import hashlib
import inspect
import json

import pytest

from bench.jobs import KEY_FIELDS, Job, derive_seed, expand_grid, job_key


def make_job(**overrides) -> Job:
    fields = dict(
        task="knapsack",
        task_version="2",
        instance="K1",
        instance_digest="ab" * 32,
        method="greedy",
        method_version="1",
        kind="baseline",
        params={"alpha": 0.5, "steps": 10},
        seed=12345,
        rep=0,
        master_seed=0,
        budget=10.0,
    )
    fields.update(overrides)
    return Job(**fields)


# ----------------------------------------------------------------------------- derive_seed


def test_derive_seed_matches_its_definition():
    # sha256 of the canonical JSON [master, task, instance, rep]; first 4 bytes, little endian, 31 bits.
    text = json.dumps([7, "knapsack", "K1", 3], separators=(",", ":"))
    h = hashlib.sha256(text.encode()).digest()
    assert derive_seed(7, "knapsack", "K1", 3) == int.from_bytes(h[:4], "little") & 0x7FFFFFFF


def test_derive_seed_is_deterministic_and_31_bit():
    seeds = [derive_seed(m, t, i, r) for m in (0, 1, 2**40) for t in ("a", "b") for i in ("x", "y") for r in range(20)]
    assert seeds == [derive_seed(m, t, i, r) for m in (0, 1, 2**40) for t in ("a", "b") for i in ("x", "y") for r in range(20)]
    assert all(isinstance(s, int) and 0 <= s < 2**31 for s in seeds)


def test_derive_seed_takes_no_method():
    # Common random numbers: every method gets the same seed for a repetition.
    assert list(inspect.signature(derive_seed).parameters) == ["master", "task", "instance", "rep"]


def test_derive_seed_differs_across_reps_instances_tasks_and_masters():
    base = derive_seed(0, "knapsack", "K1", 0)
    assert len({derive_seed(0, "knapsack", "K1", r) for r in range(100)}) == 100
    assert derive_seed(0, "knapsack", "K2", 0) != base
    assert derive_seed(0, "maxcut", "K1", 0) != base
    assert derive_seed(1, "knapsack", "K1", 0) != base


def test_derive_seed_does_not_confuse_field_boundaries():
    # ("ab", "c") and ("a", "bc") must not collide, as they would with plain concatenation.
    assert derive_seed(0, "ab", "c", 0) != derive_seed(0, "a", "bc", 0)


def test_derive_seed_coerces_numeric_strings_the_same_way():
    assert derive_seed("3", "t", "i", "1") == derive_seed(3, "t", "i", 1)


# ----------------------------------------------------------------------------- job_key


def test_key_fields_are_the_documented_ones():
    assert set(KEY_FIELDS) == {
        "task", "task_version", "instance", "instance_digest", "method",
        "method_version", "params", "seed", "budget", "threads",
    }


def test_job_key_is_sha256_hex_and_matches_job_key_property():
    job = make_job()
    assert len(job.key) == 64 and all(c in "0123456789abcdef" for c in job.key)
    assert job.key == job_key(job.to_dict())
    assert job.key == job_key({k: getattr(job, k) for k in KEY_FIELDS})


def test_job_key_ignores_params_key_order():
    a = make_job(params={"alpha": 0.5, "steps": 10})
    b = make_job(params={"steps": 10, "alpha": 0.5})
    assert a.key == b.key


CHANGED = {
    "task": "maxcut",
    "task_version": "3",
    "instance": "K2",
    "instance_digest": "cd" * 32,
    "method": "tabu",
    "method_version": "2",
    "params": {"alpha": 0.25, "steps": 10},
    "seed": 12346,
    "budget": 11.0,
    "threads": 2,
}


@pytest.mark.parametrize("name", KEY_FIELDS)
def test_job_key_changes_with_every_key_field(name):
    job = make_job()
    changed = dataclasses.replace(job, **{name: CHANGED[name]})
    assert getattr(changed, name) != getattr(job, name)
    assert changed.key != job.key


def test_every_key_field_has_a_changed_value_above():
    assert set(CHANGED) == set(KEY_FIELDS)


@pytest.mark.parametrize(
    ("name", "value"),
    [("tier", "full"), ("kind", "method"), ("memory_mb", 123.0), ("rep", 5), ("master_seed", 99), ("grace", 3.0)],
)
def test_job_key_ignores_fields_outside_key_fields(name, value):
    job = make_job()
    changed = dataclasses.replace(job, **{name: value})
    assert getattr(changed, name) != getattr(job, name)
    assert changed.key == job.key


def test_job_key_changes_with_an_added_param():
    assert make_job(params={"alpha": 0.5, "steps": 10, "x": None}).key != make_job().key


def test_job_key_ignores_extra_fields_and_needs_all_key_fields():
    d = {k: getattr(make_job(), k) for k in KEY_FIELDS}
    assert job_key({**d, "anything": 1}) == job_key(d)
    del d["seed"]
    with pytest.raises(KeyError):
        job_key(d)


# ----------------------------------------------------------------------------- expand_grid


def test_expand_grid_without_grid_is_the_defaults_copied():
    defaults = {"a": 1, "b": [2]}
    for grid in (None, {}):
        out = expand_grid(defaults, grid)
        assert out == [{"a": 1, "b": [2]}]
        out[0]["a"] = 99
        assert defaults["a"] == 1


def test_expand_grid_is_a_sorted_cartesian_product_on_top_of_defaults():
    defaults = {"a": 1, "b": 2, "c": 3}
    grid = {"b": [10, 20], "a": [5, 6]}  # given out of order: names are sorted
    assert expand_grid(defaults, grid) == [
        {"a": 5, "b": 10, "c": 3},
        {"a": 5, "b": 20, "c": 3},
        {"a": 6, "b": 10, "c": 3},
        {"a": 6, "b": 20, "c": 3},
    ]


def test_expand_grid_adds_names_missing_from_defaults():
    assert expand_grid({"x": 0}, {"y": ["p", "q", "r"]}) == [{"x": 0, "y": "p"}, {"x": 0, "y": "q"}, {"x": 0, "y": "r"}]


def test_expand_grid_size_is_the_product():
    out = expand_grid({}, {"a": [1, 2, 3], "b": [1, 2], "c": [1, 2, 3, 4]})
    assert len(out) == 24
    assert len({json.dumps(d, sort_keys=True) for d in out}) == 24


def test_expand_grid_does_not_mutate_defaults():
    defaults = {"a": 1}
    expand_grid(defaults, {"a": [2, 3]})
    assert defaults == {"a": 1}


# ----------------------------------------------------------------------------- Job


@pytest.mark.parametrize(
    ("budget", "grace", "expected"),
    [
        (10.0, -1.0, 12.0),  # default grace 1 + 0.1 * 10
        (0.0, -1.0, 1.0),
        (60.0, -1.0, 67.0),
        (10.0, 0.0, 10.0),  # explicit zero grace is honoured, not replaced by the default
        (10.0, 2.5, 12.5),
    ],
)
def test_hard_limit_is_budget_plus_grace(budget, grace, expected):
    assert make_job(budget=budget, grace=grace).hard_limit == pytest.approx(expected)


def test_default_grace_and_threads_tier_memory():
    job = make_job()
    assert job.grace == -1.0 and job.threads == 1 and job.tier == "smoke" and job.memory_mb == 4096.0


def test_to_dict_from_dict_roundtrip_including_json():
    job = make_job(threads=4, tier="full", memory_mb=512.0, grace=0.5)
    d = job.to_dict()
    assert set(d) == {f.name for f in dataclasses.fields(Job)}
    assert Job.from_dict(d) == job
    again = Job.from_dict(json.loads(json.dumps(d)))
    assert again == job
    assert again.key == job.key


def test_from_dict_rejects_unknown_fields():
    with pytest.raises(TypeError):
        Job.from_dict({**make_job().to_dict(), "bogus": 1})


def test_job_is_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        make_job().seed = 1  # type: ignore[misc]


def test_label():
    assert make_job(rep=3).label() == "greedy on knapsack/K1 seed 3"
