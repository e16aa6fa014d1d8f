"""bench.store: atomic writes, run records, the store directory, locks and sweeps."""

from __future__ import annotations

import io
import json
import os
import re
import warnings
from pathlib import Path

import numpy as np
import pytest
from pydantic import ValidationError

from bench import wire
from bench.jobs import Job
from bench.store import (
    SCHEMA_VERSION,
    RunRecord,
    Store,
    SweepManifest,
    atomic_write,
    records_frame,
)


def make_record(**overrides) -> RunRecord:
    """A valid record with every required field filled; the key is the job's key."""
    job = dict(
        task="knapsack",
        task_version="1",
        instance="K1",
        instance_digest="d" * 64,
        method="greedy",
        method_version="1",
        kind="baseline",
        params={"b": 2, "a": 1},
        seed=42,
        rep=0,
        master_seed=0,
        budget=10.0,
        threads=1,
        tier="smoke",
        memory_mb=1024.0,
    )
    job.update({k: overrides.pop(k) for k in list(overrides) if k in job})
    fields = dict(
        key=Job(**job).key,
        sweep="sweep-1",
        **job,
        status="ok",
        started_at=1000.0,
        finished_at=1001.5,
        environment={"python": "3.11.7", "cpu": "x86"},
    )
    fields.update(overrides)
    return RunRecord(**fields)


# ----------------------------------------------------------------------------- atomic_write


def test_atomic_write_creates_parents_and_leaves_no_temp_file(tmp_path):
    path = tmp_path / "a" / "b" / "file.json"
    atomic_write(path, b"first")
    assert path.read_bytes() == b"first"
    atomic_write(path, b"second, longer content")
    assert path.read_bytes() == b"second, longer content"
    atomic_write(path, b"")
    assert path.read_bytes() == b""
    assert sorted(p.name for p in path.parent.iterdir()) == ["file.json"]


def test_atomic_write_failure_keeps_old_content_and_removes_temp(tmp_path, monkeypatch):
    path = tmp_path / "file.json"
    atomic_write(path, b"old")

    def fail(*a, **k):
        raise OSError("disk on fire")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(OSError, match="disk on fire"):
        atomic_write(path, b"new")
    monkeypatch.undo()
    assert path.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file.json"]


# ----------------------------------------------------------------------------- RunRecord


def test_record_helper_is_valid_and_key_is_the_job_key():
    rec = make_record()
    assert rec.schema_version == SCHEMA_VERSION == 1
    assert re.fullmatch(r"[0-9a-f]{64}", rec.key)
    assert rec.origin == "local" and rec.attempt == 1 and rec.grace == -1.0


def test_record_rejects_unknown_fields_bad_status_and_bad_key():
    with pytest.raises(ValidationError, match="extra"):
        make_record(bogus=1)
    with pytest.raises(ValidationError):
        make_record(status="done")
    with pytest.raises(ValidationError):
        make_record(key="XYZ")
    with pytest.raises(ValidationError):
        make_record(kind="solver")


# ----------------------------------------------------------------------------- put / get


def test_put_get_roundtrip_and_layout(tmp_path):
    store = Store(tmp_path)
    rec = make_record(metrics={"value": 12.5}, wall_s=0.25)
    store.put(rec)
    path = tmp_path / "knapsack" / rec.key[:2] / f"{rec.key}.json"
    assert store.record_path("knapsack", rec.key) == path
    assert path.is_file()
    got = store.get("knapsack", rec.key)
    assert got == rec
    assert json.loads(path.read_bytes())["metrics"] == {"value": 12.5}


def test_get_missing_is_none_without_warning(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert Store(tmp_path).get("knapsack", "0" * 64) is None


def test_put_overwrites_the_same_key(tmp_path):
    store = Store(tmp_path)
    rec = make_record(status="timeout")
    store.put(rec)
    store.put(make_record(status="ok", previous_statuses=["timeout"]))
    got = store.get("knapsack", rec.key)
    assert got.status == "ok" and got.previous_statuses == ["timeout"]
    assert len(list(store.iter_records())) == 1


def test_put_with_solution_writes_npz_first_and_points_at_it(tmp_path):
    store = Store(tmp_path)
    buf = io.BytesIO()
    wire.save_npz(buf, {"x": np.array([1, 0, 1], dtype=np.int8)})
    rec = store.put(make_record(), solution_npz=buf.getvalue())
    assert rec.solution_file == f"knapsack/{rec.key[:2]}/{rec.key}.npz"
    assert store.solution_path("knapsack", rec.key) == tmp_path / rec.solution_file
    sol = wire.load_npz(str(tmp_path / rec.solution_file))
    assert sol["x"].tolist() == [1, 0, 1]
    assert store.get("knapsack", rec.key).solution_file == rec.solution_file


def test_get_corrupted_record_warns_and_returns_none(tmp_path):
    store = Store(tmp_path)
    rec = make_record()
    path = store.record_path("knapsack", rec.key)
    path.parent.mkdir(parents=True)
    path.write_bytes(b'{"schema_version": 1, "key": ')
    with pytest.warns(UserWarning, match=re.escape(str(path))):
        assert store.get("knapsack", rec.key) is None


def test_get_record_of_another_schema_version_is_not_reused(tmp_path):
    store = Store(tmp_path)
    rec = make_record()
    path = store.record_path("knapsack", rec.key)
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({**json.loads(rec.model_dump_json()), "schema_version": SCHEMA_VERSION + 1}))
    with pytest.warns(UserWarning, match=re.escape(str(path))):
        assert store.get("knapsack", rec.key) is None


# ----------------------------------------------------------------------------- iter_records / frame


def _fill(store: Store) -> list[RunRecord]:
    recs = [
        make_record(instance="K1", rep=0, metrics={"value": 1.0}),
        make_record(instance="K1", rep=1, seed=43, metrics={"value": 2.0}),
        make_record(instance="K2", metrics={"value": 3.0}, status="invalid", reason="overweight"),
        make_record(task="maxcut", instance="G1", metrics={"cut": 10.0}),
    ]
    for r in recs:
        store.put(r)
    return recs


def test_iter_records_all_and_by_task(tmp_path):
    store = Store(tmp_path)
    recs = _fill(store)
    store.put_sweep(_manifest("s1"))  # _sweeps is not a task directory
    assert sorted(r.key for r in store.iter_records()) == sorted(r.key for r in recs)
    assert sorted(r.key for r in store.iter_records("knapsack")) == sorted(r.key for r in recs[:3])
    assert [r.key for r in store.iter_records("maxcut")] == [recs[3].key]
    assert list(store.iter_records("nothing-here")) == []


def test_iter_records_empty_or_missing_store(tmp_path):
    assert list(Store(tmp_path / "does-not-exist").iter_records()) == []
    assert Store(tmp_path / "does-not-exist").frame().empty


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("corrupt", b'{"schema_version": 1, "key": "ab'),
        ("not-utf8", b"\xff\xfe\x00garbage"),
        ("foreign", b'{"hello": 1}'),
        ("a-list", b"[1, 2, 3]"),
        ("other-schema", None),  # filled in below
        ("invalid-fields", None),
    ],
)
def test_bad_files_are_skipped_with_a_warning_naming_them(tmp_path, name, content):
    store = Store(tmp_path)
    good = make_record()
    store.put(good)
    if name == "other-schema":
        content = json.dumps({**json.loads(good.model_dump_json()), "schema_version": 99}).encode()
    elif name == "invalid-fields":
        content = json.dumps({**json.loads(good.model_dump_json()), "status": "finished"}).encode()
    bad = tmp_path / "knapsack" / "zz" / f"{name}.json"
    bad.parent.mkdir(parents=True)
    bad.write_bytes(content)
    with pytest.warns(UserWarning, match=re.escape(str(bad))) as rec:
        got = list(store.iter_records())
    assert [r.key for r in got] == [good.key]
    assert len(rec) == 1
    with pytest.warns(UserWarning, match=re.escape(str(bad))):
        df = store.frame("knapsack")
    assert list(df["key"]) == [good.key]
    skipped: list[str] = []  # the thread-safe form: the messages are collected, nothing is emitted
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        df = store.frame("knapsack", skipped=skipped)
    assert list(df["key"]) == [good.key] and len(skipped) == 1 and str(bad) in skipped[0]


def test_frame_flattens_records(tmp_path):
    store = Store(tmp_path)
    store.put(
        make_record(
            params={"b": 2, "a": 1},
            metrics={"value": 12.5, "gap": 0.1},
            environment={"python": "3.11.7", "cpu": "x86"},
            instance_params={"n": 50, "density": 0.3},
            instance_tags=["small", "random"],
            references={"best_known": 13.0, "random": 2.0},
            previous_statuses=["timeout", "killed"],
            trace=[{"t": 0.5, "metrics": {"value": 10.0}}, {"t": 1.0, "metrics": {"value": 12.5}}],
            wall_s=1.25,
        )
    )
    df = store.frame()
    assert len(df) == 1
    r = df.iloc[0]
    assert r["metric.value"] == 12.5 and r["metric.gap"] == 0.1
    assert r["env.python"] == "3.11.7" and r["env.cpu"] == "x86"
    assert r["iparam.n"] == 50 and r["iparam.density"] == 0.3
    assert r["ref.best_known"] == 13.0 and r["ref.random"] == 2.0
    assert r["params"] == '{"a": 1, "b": 2}'
    assert json.loads(r["params"]) == {"a": 1, "b": 2}
    assert r["instance_tags"] == "small,random"
    assert r["previous_statuses"] == "timeout,killed"
    assert r["n_checkpoints"] == 2
    assert json.loads(r["trace"])[1] == {"t": 1.0, "metrics": {"value": 12.5}, "invalid": None}
    assert r["wall_s"] == 1.25
    for gone in ("metrics", "environment", "instance_params", "references"):
        assert gone not in df.columns


def test_records_frame_params_are_canonical_across_key_order():
    a = make_record(params={"x": 1, "y": [1, 2]})
    b = make_record(params={"y": [1, 2], "x": 1}).model_dump()  # dicts are accepted too
    df = records_frame([a, b])
    assert df["params"].nunique() == 1
    assert df["params"].iloc[0] == json.dumps({"x": 1, "y": [1, 2]}, sort_keys=True)


def test_records_frame_missing_metric_is_nan():
    df = records_frame([make_record(metrics={"value": 1.0}), make_record(metrics={})])
    assert df["metric.value"].iloc[0] == 1.0 and np.isnan(df["metric.value"].iloc[1])


def test_records_frame_of_nothing_has_the_record_columns():
    df = records_frame([])
    assert df.empty
    assert {"key", "task", "status", "wall_s", "metrics"} <= set(df.columns)


# ----------------------------------------------------------------------------- locks


def test_try_lock_is_exclusive_until_unlock(tmp_path):
    store = Store(tmp_path)
    key = "ab" + "0" * 62
    fd = store.try_lock("knapsack", key)
    assert isinstance(fd, int)
    assert (tmp_path / "knapsack" / "ab" / f"{key}.lock").exists()
    try:
        assert store.try_lock("knapsack", key) is None  # another open file description
        other = store.try_lock("knapsack", "ab" + "1" * 62)  # a different job is independent
        assert other is not None
        Store.unlock(other)
    finally:
        Store.unlock(fd)
    fd2 = store.try_lock("knapsack", key)
    assert fd2 is not None
    Store.unlock(fd2)
    fd3 = store.wait_lock("knapsack", key)  # free now: returns at once
    Store.unlock(fd3)


# ----------------------------------------------------------------------------- sweeps


def _manifest(sweep: str, task: str = "knapsack", started_at: float = 1.0) -> SweepManifest:
    return SweepManifest(
        sweep=sweep,
        task=task,
        command="bench run knapsack",
        args={"tier": "smoke", "reps": 3},
        keys=["a" * 64, "b" * 64],
        started_at=started_at,
        environment={"python": "3.11"},
    )


def test_sweeps_roundtrip_filter_and_order(tmp_path):
    store = Store(tmp_path)
    m2 = _manifest("s2", started_at=20.0)
    m1 = _manifest("s1", started_at=10.0)
    m3 = _manifest("s3", task="maxcut", started_at=5.0)
    for m in (m2, m1, m3):
        store.put_sweep(m)
    assert store.sweep_path("s1") == tmp_path / "_sweeps" / "s1.json"
    assert store.sweeps("knapsack") == [m1, m2]
    assert store.sweeps() == [m3, m1, m2]
    assert store.sweeps("nothing") == []


def test_sweeps_skip_corrupted_manifest_with_warning(tmp_path):
    store = Store(tmp_path)
    store.put_sweep(_manifest("s1"))
    bad = tmp_path / "_sweeps" / "bad.json"
    bad.write_text("{not json")
    with pytest.warns(UserWarning, match=re.escape(str(bad))):
        assert [m.sweep for m in store.sweeps()] == ["s1"]


def test_sweep_finished_at_update(tmp_path):
    store = Store(tmp_path)
    m = _manifest("s1")
    store.put_sweep(m)
    store.put_sweep(m.model_copy(update={"finished_at": 99.0}))
    assert store.sweeps()[0].finished_at == 99.0


def test_default_store_follows_env(monkeypatch, tmp_path):
    monkeypatch.setenv("BENCH_STORE", str(tmp_path / "x"))
    assert Store().root == tmp_path / "x"
    monkeypatch.delenv("BENCH_STORE")
    assert Store().root == Path(".bench/runs")


def test_nan_and_infinite_metrics_survive_a_round_trip(tmp_path):
    """A NaN metric (e.g. a ratio with no reference) must never make a record unreadable."""
    import math
    import warnings

    store = Store(tmp_path)
    rec = make_record(metrics={"cut": 5.0, "ratio": float("nan"), "gap": float("inf")})
    store.put(rec)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        back = store.get(rec.task, rec.key)
        frame = store.frame(rec.task)
    assert back is not None and math.isnan(back.metrics["ratio"]) and back.metrics["gap"] == math.inf
    assert len(frame) == 1 and math.isnan(frame["metric.ratio"].iloc[0])


def test_task_records_filters_a_store_by_status_and_tier_and_names_an_empty_source(tmp_path):
    from bench.bundle import task_records

    store = Store(tmp_path / "runs")
    store.put(make_record(seed=1))
    store.put(make_record(seed=2, status="error", error_type="RuntimeError"))
    store.put(make_record(seed=3, tier="standard"))
    df = task_records("knapsack", store=store.root)
    assert sorted(df["seed"]) == [1, 3]
    df = task_records("knapsack", store=store.root, tier="smoke", ok_only=False)
    assert sorted(df["seed"]) == [1, 2]
    with pytest.raises(SystemExit, match=r"no maxcut records in .*runs"):
        task_records("maxcut", store=store.root)
    # a record of an earlier task version (history kept beside its rerun) is left out unless asked for
    store.put(make_record(seed=4, task_version="0"))
    assert sorted(task_records("knapsack", store=store.root)["seed"]) == [1, 3]
    assert sorted(task_records("knapsack", store=store.root, version=None)["seed"]) == [1, 3, 4]
    assert sorted(task_records("knapsack", store=store.root, version="0")["seed"]) == [4]
