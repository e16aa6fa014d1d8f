"""The hostile-submission battery: one small hostile method per attack, through the real runner.

Every attack must end *contained*: a non-``ok`` status, or an ``ok`` whose
verified metrics the attack did not improve (an empty knapsack stays worth 0),
and no effect outside the job (no file written, no connection made, no
process left). The methods live in ``tests/plugins/hostile_methods.py``; the
README's "Security" section quotes this battery's table. Where a layer of
:mod:`bench.confine` is missing on this kernel, the test that needs it is
skipped with the reason, never passed.

| # | attack | method | outcome |
|---|---|---|---|
| 1 | replay the answer key from the public id | hostile-replay-iv, hostile-replay-causal | public tier: works (oracle score); holdout tier: ``error`` |
| 2 | heap, frames, ``/proc/<ancestor>/environ,mem,cwd`` | hostile-introspect | nothing private in the child; ``/proc`` files closed (Landlock) |
| 3 | write into the store, ``results/``, the repository | hostile-write | every write refused; the store holds the real records only |
| 4 | TCP/UDP to 127.0.0.1, outbound TCP, abstract Unix socket | hostile-socket | all refused (network namespace, Landlock) |
| 5 | fork storm; setsid + double fork | hostile-forkstorm | ``ok`` at value 0; no process survives the job |
| 6 | ignore SIGTERM and spin; allocate past the cap | chaos-ignore-term, chaos-alloc | ``timeout``; ``killed`` |
| 7 | monkeypatch the verifier; forged messages on the pipe | hostile-monkeypatch, hostile-forge, hostile-forge-baseline | ``invalid``; ``error`` (protocol) |
| 8 | extra fields; 50 MB out; control characters | hostile-extra-fields, hostile-huge, hostile-control-chars | ``invalid``; ``invalid``; ``error`` with escapes neutralised |
| 9 | HTML/JS in strings shown by the leaderboard | tests/test_hostile_leaderboard.py | shown as text |
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from conftest import CHAOS, PLUGINS, ROOT, job_processes_alive

from bench.runner import RunOptions, run_sweep
from bench.sandbox import _probe_confinement
from bench.store import Store

pytestmark = [pytest.mark.slow, pytest.mark.long]

HOSTILE = str(PLUGINS / "hostile_methods.py")
KNAPSACK = ["uncorrelated-n20-s0"]
LAYERS = ",".join(_probe_confinement())
needs_landlock = pytest.mark.skipif("landlock" not in LAYERS, reason=f"no Landlock on this kernel ({LAYERS or 'no layers'}): see README, Security")
needs_netns = pytest.mark.skipif("netns" not in LAYERS, reason=f"no network namespace here ({LAYERS or 'no layers'}): see README, Security")


def _run(store: Path, task: str, methods: list[str], instances: list[str], **kw):
    opts = RunOptions(
        task=task, methods=methods, instances=instances, store=store, progress=False,
        extra_paths=(HOSTILE, CHAOS), jobs=1, memory_mb=kw.pop("memory_mb", 600.0), **kw,
    )
    run_sweep(opts)
    return {r.method: r for r in Store(store).iter_records(task)}


def _report(rec) -> dict:
    line = next(x for x in rec.stdout_tail.splitlines() if x.startswith("HOSTILE "))
    return json.loads(line[len("HOSTILE "):])


@pytest.fixture(scope="module")
def battery(tmp_path_factory):
    """One sweep of every knapsack attack (so the battery pays for one worker start), with its targets.

    Yields ``(records by method, store, write targets, (tcp, udp, unix) listeners, files to read)``.
    """
    root = tmp_path_factory.mktemp("battery")
    store = root / "runs"
    (store / "knapsack").mkdir(parents=True)
    outside = root / "outside"
    outside.mkdir()
    targets = [store, store / "knapsack", ROOT / "results", ROOT, outside]
    planted = store / "planted-solution.json"  # where another job's record would be
    planted.write_text('{"solution": "the best one"}')
    secret = outside / "id_rsa"
    secret.write_text("PRIVATE KEY")
    published = next(p for p in sorted((ROOT / "results").rglob("*.json")))
    files = {"store": planted, "results": published, "secret": secret, "code": ROOT / "bench" / "task.py"}
    tcp = socket.create_server(("127.0.0.1", 0))
    port = tcp.getsockname()[1]
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", port))
    name = "bench-hostile-" + uuid.uuid4().hex
    unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    unix.bind("\0" + name)
    unix.listen()
    methods = ["hostile-introspect", "hostile-write", "hostile-read", "hostile-socket", "hostile-forkstorm", "hostile-monkeypatch",
               "hostile-forge", "hostile-forge-baseline", "hostile-huge", "hostile-control-chars"]
    params = {"targets": ":".join(map(str, targets)), "port": port, "abstract": name, "files": ":".join(map(str, files.values()))}
    try:
        recs = _run(store, "knapsack", methods, KNAPSACK, params=params)
        yield recs, store, targets, (tcp, udp, unix), files
    finally:
        for s in (tcp, udp, unix):
            s.close()


# ----------------------------------------------------------------------------- 1. replay


def test_replaying_the_public_id_rebuilds_the_answer_key_of_a_public_tier(store):
    """The attack is real on public tiers (what the holdout tier is for): the oracle's own bounds and the truth."""
    iv = _run(store, "iv-bounds", ["hostile-replay-iv"], ["mono-z20-n600-s0"])["hostile-replay-iv"]
    assert iv.status == "ok", iv.reason
    assert iv.metrics["coverage"] == 1.0 and iv.metrics["width_vs_oracle"] == pytest.approx(1.0, rel=1e-9)
    lc = _run(store, "local-causal-relations", ["hostile-replay-causal"], ["oracle-p12-h15-n0-s0"])["hostile-replay-causal"]
    assert lc.status == "ok", lc.reason
    assert lc.metrics["macro_f1"] == 1.0 and lc.metrics["ci_tests"] == 0


_HOLDOUT_RUN = """
import json, sys
from pathlib import Path
from bench.registry import get_task
from bench.runner import RunOptions, run_sweep
from bench.store import Store
task, method, store, plugin = sys.argv[1:5]
first = get_task(task).holdout_instances()[0].id
run_sweep(RunOptions(task=task, tier="holdout", methods=[method], instances=[first], store=Path(store),
                     progress=False, extra_paths=(plugin,), jobs=1, memory_mb=600.0))
rec = next(Store(Path(store)).iter_records(task))
print(json.dumps({"id": first, "status": rec.status, "reason": rec.reason, "tier": rec.tier}))
"""


@pytest.mark.parametrize(("task", "method"), [("iv-bounds", "hostile-replay-iv"), ("local-causal-relations", "hostile-replay-causal")])
def test_the_holdout_tier_cannot_be_replayed(tmp_path, task, method):
    env = {**os.environ, "BENCH_HOLDOUT_SECRET": "test-secret-" + uuid.uuid4().hex}
    out = subprocess.run(
        [sys.executable, "-c", _HOLDOUT_RUN, task, method, str(tmp_path / "runs"), HOSTILE],
        env=env, cwd=ROOT, capture_output=True, text=True, timeout=300, check=True,
    )
    rec = json.loads(out.stdout.strip().splitlines()[-1])
    assert rec["tier"] == "holdout" and "-sh" in rec["id"]
    assert rec["status"] == "error", rec
    assert "holdout" in rec["reason"] and "BENCH_HOLDOUT_SECRET" in rec["reason"], rec["reason"]


def test_the_secret_never_reaches_a_job(tmp_path):
    """The zygote's environment is scrubbed: the introspecting method sees no secret."""
    code = (
        "import sys, json; from pathlib import Path; from bench.runner import RunOptions, run_sweep; "
        "from bench.store import Store; "
        "run_sweep(RunOptions(task='knapsack', methods=['hostile-introspect'], instances=['uncorrelated-n20-s0'], "
        "store=Path(sys.argv[1]), progress=False, extra_paths=(sys.argv[2],), jobs=1)); "
        "print(next(Store(Path(sys.argv[1])).iter_records('knapsack')).stdout_tail)"
    )
    secret = "test-secret-" + uuid.uuid4().hex
    out = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "runs"), HOSTILE],
        env={**os.environ, "BENCH_HOLDOUT_SECRET": secret}, cwd=ROOT, capture_output=True, text=True, timeout=300, check=True,
    )
    assert "HOSTILE " in out.stdout and secret not in out.stdout
    assert json.loads(out.stdout.split("HOSTILE ", 1)[1].splitlines()[0])["secret"] is None


# ----------------------------------------------------------------------------- 2. introspection


@needs_landlock
def test_introspection_finds_nothing_private(battery):
    rec = battery[0]["hostile-introspect"]
    assert rec.status == "ok" and rec.metrics["value"] == 0.0
    found = _report(rec)
    assert found["private_objects"] == 0 and found["frame_private"] == 0
    probes = found["probes"]
    assert probes, "the method saw no ancestor"
    for name, outcome in probes.items():
        if name.endswith(("/environ", "/mem", "/cwd")):
            assert outcome.startswith("blocked"), (name, outcome)
    assert "landlock" in rec.environment["confinement"]


# ----------------------------------------------------------------------------- 3. writes


@needs_landlock
def test_writes_outside_the_job_are_refused(battery):
    recs, store, targets, *_ = battery
    rec = recs["hostile-write"]
    assert rec.status == "ok" and rec.metrics["value"] == 0.0
    for d, outcome in _report(rec)["writes"].items():
        assert outcome.startswith("blocked"), (d, outcome)
    for d in targets:
        assert not (d / "FORGED-by-hostile-write.json").exists(), d
    assert {r.method for r in Store(store).iter_records("knapsack")} == set(recs)
    assert len(list(Store(store).iter_records("knapsack"))) == len(recs)


@needs_landlock
def test_reads_of_runs_results_and_secrets_are_refused(battery):
    rec, files = battery[0]["hostile-read"], battery[4]
    assert rec.status == "ok" and rec.metrics["value"] == 0.0
    reads = _report(rec)["reads"]
    for what in ("store", "results", "secret"):
        assert reads[str(files[what])].startswith("blocked"), (what, reads)
    assert reads[str(files["code"])].startswith("open"), reads  # the code stays readable
    assert "PRIVATE KEY" not in rec.stdout_tail


# ----------------------------------------------------------------------------- 4. network


@needs_netns
def test_no_socket_reaches_outside_the_job(battery):
    rec = battery[0]["hostile-socket"]
    tcp, udp, unix = battery[3]
    assert rec.status == "ok" and rec.metrics["value"] == 0.0
    found = _report(rec)
    for what in ("tcp_local", "udp_local", "tcp_out", "unix_abstract"):
        assert found[what].startswith("blocked"), (what, found[what])
    for s in (tcp, udp, unix):
        s.setblocking(False)
    with pytest.raises(BlockingIOError):
        tcp.accept()
    with pytest.raises(BlockingIOError):
        udp.recv(64)
    with pytest.raises(BlockingIOError):
        unix.accept()


# ----------------------------------------------------------------------------- 5-6. processes and resources


def test_a_fork_storm_and_an_escaping_child_do_not_outlive_the_job(battery):
    rec = battery[0]["hostile-forkstorm"]
    assert rec.status == "ok" and rec.metrics["value"] == 0.0
    assert _report(rec)["started"] == 40
    deadline = time.monotonic() + 10
    while job_processes_alive() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert job_processes_alive() == []


@pytest.mark.skipif("nproc" not in LAYERS, reason=f"no per-job process limit here ({LAYERS}): RLIMIT_NPROC does not bind root; see README, Security")
def test_a_fork_storm_is_capped_where_the_kernel_counts_the_jobs_processes(store):
    rec = _run(store, "knapsack", ["hostile-forkstorm"], KNAPSACK, params={"n": 400})["hostile-forkstorm"]
    assert rec.status == "ok" and rec.metrics["value"] == 0.0
    assert _report(rec)["started"] < 256


def test_ignoring_sigterm_spinning_and_allocating_past_the_cap_are_stopped(store):
    recs = _run(store, "knapsack", ["chaos-ignore-term", "chaos-alloc"], KNAPSACK, budget=1.0, memory_mb=300.0)
    assert recs["chaos-ignore-term"].status == "timeout" and 1.0 < recs["chaos-ignore-term"].wall_s < 4.0
    assert recs["chaos-alloc"].status == "killed" and "memory" in recs["chaos-alloc"].reason


# ----------------------------------------------------------------------------- 7. lies


def test_monkeypatching_and_forged_messages_change_nothing_on_the_trusted_side(battery):
    recs = battery[0]
    patched = recs["hostile-monkeypatch"]
    assert patched.status == "invalid" and "capacity" in patched.reason, patched.reason
    for name in ("hostile-forge", "hostile-forge-baseline"):
        assert recs[name].status == "error" and "protocol error" in recs[name].reason, (name, recs[name].reason)
        assert recs[name].metrics == {}


# ----------------------------------------------------------------------------- 8. output


def test_extra_fields_are_refused(store):
    extra = _run(store, "iv-bounds", ["hostile-extra-fields"], ["mono-z20-n600-s0"])["hostile-extra-fields"]
    assert extra.status == "invalid" and "'lower' and 'upper'" in extra.reason


def test_huge_output_and_control_characters(battery):
    recs = battery[0]
    huge = recs["hostile-huge"]
    assert huge.status == "invalid" and "got 6553600" in huge.reason, huge.reason
    assert huge.solution_file is None  # a huge invalid solution is not kept in the store
    assert len(huge.stdout_tail) <= 4001 and huge.stdout_tail.rstrip().endswith("END")
    cc = recs["hostile-control-chars"]
    assert cc.status == "error" and "RuntimeError" in cc.reason
    for field in (cc.reason, cc.traceback, cc.stdout_tail, cc.error_type):
        assert not any(ord(ch) < 32 and ch not in "\n\t" for ch in field), repr(field)
        assert "\u202e" not in field and "\x1b" not in field
    assert "\\x1b[2J" in cc.reason and "\\u202e" in cc.reason  # kept, but as visible text
