"""Chaos: misbehaving methods, and a runner killed with SIGKILL twice mid-sweep.

After resuming, the store must hold exactly one readable record per job, each
with the status its method deserves, and no process of any run may survive.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from conftest import CHAOS, ROOT
from test_runner import EXPECTED

pytestmark = [pytest.mark.chaos, pytest.mark.slow]


def _marked(mark: str) -> list[int]:
    needle = f"BENCH_CHAOS_MARK={mark}".encode()
    out = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/environ", "rb") as fh:
                if needle in fh.read().split(b"\0"):
                    out.append(int(entry.name))
        except OSError:
            continue
    return out


def _wait_gone(mark: str, timeout: float = 10.0) -> list[int]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        alive = _marked(mark)
        if not alive:
            return []
        time.sleep(0.1)
    return _marked(mark)


def _n_records(store: Path) -> int:
    return len(list(store.glob("knapsack/*/*.json")))


def _start(cmd: list[str], env: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen(cmd, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _wait_records(store: Path, at_least: int, proc: subprocess.Popen, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while _n_records(store) < at_least:
        assert proc.poll() is None, f"runner ended early: {proc.stderr.read().decode()[-2000:]}"
        assert time.monotonic() < deadline, "the sweep made no progress"
        time.sleep(0.05)


def test_sigkill_runner_twice_then_resume(tmp_path):
    store = tmp_path / "runs"
    mark = uuid.uuid4().hex
    env = {**os.environ, "BENCH_CHAOS_MARK": mark}
    cmd = [
        sys.executable, "-m", "bench", "run", "--task", "knapsack", "--tier", "smoke",
        "--plugin", CHAOS, "--method", *sorted(EXPECTED), "--seeds", "2",
        "--instances", "uncorrelated-n20-s0", "strongly-correlated-n20-s0",
        "--jobs", "2", "--budget", "0.6", "--memory-mb", "400", "--store", str(store), "--no-progress",
    ]  # fmt: skip

    for kill_after in (4, 12):
        proc = _start(cmd, env)
        _wait_records(store, _n_records(store) + kill_after, proc)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        leftovers = _wait_gone(mark)
        assert leftovers == [], f"processes survived the runner's SIGKILL: {leftovers}"

    proc = _start(cmd, env)
    _, err = proc.communicate(timeout=600)
    # 1: the misbehaving methods never succeed, and the run says so (the sweep itself finished)
    assert proc.returncode == 1, err.decode()[-3000:]
    assert "succeeded (reasons above)" in err.decode()
    assert _wait_gone(mark) == []

    manifests = sorted((store / "_sweeps").glob("*.json"), key=lambda p: p.stat().st_mtime)
    assert len(manifests) == 3
    final = json.loads(manifests[-1].read_text())
    keys = final["keys"]
    assert len(keys) >= 40 and final["finished_at"]
    files = sorted(store.glob("knapsack/*/*.json"))
    assert len(files) == len(keys) == len(set(keys))  # one record per job, no duplicates
    by_key = {}
    for f in files:
        rec = json.loads(f.read_text())  # every record is whole
        assert f.stem == rec["key"]
        by_key[rec["key"]] = rec
    assert set(by_key) == set(keys)
    for rec in by_key.values():
        assert rec["status"] == EXPECTED[rec["method"]], (rec["method"], rec["status"], rec["reason"])
        # a job cut off by a runner kill left no record, so it ran again from scratch
        assert rec["attempt"] == 1 + len(rec["previous_statuses"])
        if rec["status"] == "ok":
            assert (store / rec["solution_file"]).exists()
    # the loader sees the same: nothing corrupted, nothing skipped
    import warnings

    from bench.store import Store

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        df = Store(store).frame("knapsack")
    assert len(df) == len(keys) and df["key"].is_unique
