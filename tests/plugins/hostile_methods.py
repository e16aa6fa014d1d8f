"""Test-only hostile methods: each one attacks the benchmark in one way (tests/test_hostile.py).

They are loaded with ``--plugin`` like any stranger's submission and run in the
real runner. A method that probes (reads, writes, connects) reports what it
could do as one JSON line on stdout, ``HOSTILE {...}``, which reaches the test
through the record's ``stdout_tail`` and is trusted by nobody else: the test
checks the effects itself (files, listeners, processes, the store).
"""

from __future__ import annotations

import gc
import json
import os
import signal
import socket
import sys
import time

import numpy as np

from bench import method


def _report(**found) -> None:
    print("HOSTILE " + json.dumps(found, default=str), flush=True)


def _attempt(fn) -> str:
    """``"open: ..."`` when ``fn`` succeeded, ``"blocked: <error>"`` when it raised."""
    try:
        out = fn()
    except Exception as exc:
        return f"blocked: {type(exc).__name__}: {exc}"[:200]
    return f"open: {out!r}"[:200]


def _empty(instance) -> np.ndarray:
    return np.zeros(len(instance.data["weights"]), dtype=np.int64)


# ----------------------------------------------------------------------------- 1. replaying the answer key


@method(name="hostile-replay-iv", kind="method", tasks=["iv-bounds"], deterministic=True)
def replay_iv(instance, *, seed, budget):
    """Rebuilds the instance from its public id and returns the oracle's own bounds."""
    from bench.registry import get_task

    private = get_task("iv-bounds").load(instance.id).private
    return {"lower": np.array(private["oracle_lower"]), "upper": np.array(private["oracle_upper"])}


@method(name="hostile-replay-causal", kind="method", tasks=["local-causal-relations"], deterministic=True)
class ReplayCausal:
    """Rebuilds the instance from its public id and answers with the true labels, asking nothing."""

    def __init__(self, instance, *, seed, budget):
        from bench.registry import get_task

        self.truth = np.array(get_task("local-causal-relations").load(instance.id).private["truth"])

    def select(self, state):
        return {"labels": self.truth}


# ----------------------------------------------------------------------------- 2. introspection


def _ancestors(n: int = 4) -> list[int]:
    out, pid = [], os.getpid()
    for _ in range(n):
        try:
            with open(f"/proc/{pid}/stat", "rb") as fh:
                pid = int(fh.read().rsplit(b")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            break
        if pid <= 1:
            break
        out.append(pid)
    return out


@method(name="hostile-introspect", kind="baseline", tasks=["knapsack"], deterministic=True)
def introspect(instance, *, seed, budget):
    """Looks for private data in its own heap and frames, and in its ancestors' /proc files."""
    private_objects = 0
    for obj in gc.get_objects():
        private = getattr(obj, "private", None) if type(obj).__name__ == "Instance" else None
        if private:
            private_objects += 1
    frame, frame_private = sys._getframe(), 0
    while frame is not None:
        frame_private += sum(1 for v in frame.f_locals.values() if getattr(v, "private", None))
        frame = frame.f_back
    probes = {}
    for pid in _ancestors():
        for what in ("environ", "mem", "cwd", "cmdline"):
            if what == "cwd":
                probes[f"{pid}/{what}"] = _attempt(lambda p=pid: os.readlink(f"/proc/{p}/cwd"))
            elif what == "mem":
                probes[f"{pid}/{what}"] = _attempt(lambda p=pid: open(f"/proc/{p}/mem", "rb").read(1))
            else:
                probes[f"{pid}/{what}"] = _attempt(lambda p=pid, w=what: len(open(f"/proc/{p}/{w}", "rb").read()))
    _report(private_objects=private_objects, frame_private=frame_private, probes=probes,
            secret=os.environ.get("BENCH_HOLDOUT_SECRET"))
    return _empty(instance)


# ----------------------------------------------------------------------------- 3. writing where it must not


@method(name="hostile-write", kind="baseline", tasks=["knapsack"], params={"targets": ""}, deterministic=True)
def write(instance, *, seed, budget, targets):
    """Tries to create a file in each of ``targets`` (``:``-separated directories): a forged record."""
    forged = json.dumps({"method": "dp", "status": "ok", "metrics": {"value": 1e12}})
    done = {}
    for d in filter(None, targets.split(":")):
        path = os.path.join(d, "FORGED-by-hostile-write.json")
        done[d] = _attempt(lambda p=path: open(p, "w").write(forged))
    _report(writes=done)
    return _empty(instance)


@method(name="hostile-read", kind="baseline", tasks=["knapsack"], params={"files": ""}, deterministic=True)
def read(instance, *, seed, budget, files):
    """Tries to read each of ``files`` (``:``-separated): stored runs, published results, a secret, its own code."""
    _report(reads={f: _attempt(lambda p=f: len(open(p, "rb").read())) for f in filter(None, files.split(":"))})
    return _empty(instance)


# ----------------------------------------------------------------------------- 4. the network


@method(name="hostile-socket", kind="baseline", tasks=["knapsack"], params={"port": 0, "abstract": ""}, deterministic=True)
def sockets(instance, *, seed, budget, port, abstract):
    """Connects to a local TCP listener, sends UDP to it, connects out, and to an abstract Unix socket."""

    def udp():
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        return s.sendto(b"hostile", ("127.0.0.1", int(port)))

    def unix():
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect("\0" + abstract)
        return s.send(b"hostile")

    _report(
        tcp_local=_attempt(lambda: socket.create_connection(("127.0.0.1", int(port)), timeout=1).send(b"hostile")),
        udp_local=_attempt(udp),
        tcp_out=_attempt(lambda: socket.create_connection(("192.0.2.1", 80), timeout=1)),
        unix_abstract=_attempt(unix),
    )
    return _empty(instance)


# ----------------------------------------------------------------------------- 5. processes


@method(name="hostile-forkstorm", kind="baseline", tasks=["knapsack"], params={"n": 40}, deterministic=True)
def forkstorm(instance, *, seed, budget, n):
    """Forks ``n`` sleepers, and one that calls setsid() and double-forks to outlive the job."""
    started = 0
    for _ in range(int(n)):
        try:
            pid = os.fork()
        except OSError:
            break
        if pid == 0:
            time.sleep(600)
            os._exit(0)
        started += 1
    pid = os.fork()
    if pid == 0:
        os.setsid()
        if os.fork() == 0:
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            time.sleep(600)
        os._exit(0)
    os.waitpid(pid, 0)
    _report(started=started)
    return _empty(instance)


# ----------------------------------------------------------------------------- 7. lying to the trusted side


@method(name="hostile-monkeypatch", kind="baseline", tasks=["knapsack"], deterministic=True)
def monkeypatch(instance, *, seed, budget):
    """Replaces the verifier and bench.solutions in its own process, then returns an overweight pick."""
    import bench.solutions
    import tasks.knapsack

    tasks.knapsack.Knapsack.evaluate = lambda self, inst, sol: {"value": 1e12, "weight": 0.0, "gap": 0.0}
    for name in bench.solutions.__all__:
        setattr(bench.solutions, name, lambda *a, **k: None)
    return np.ones(len(instance.data["weights"]), dtype=np.int64)  # every item: over capacity


def _job_socket() -> socket.socket:
    socks = [o for o in gc.get_objects() if isinstance(o, socket.socket) and o.fileno() >= 0]
    return next(s for s in socks if s.family == socket.AF_UNIX)


@method(name="hostile-forge", kind="baseline", tasks=["knapsack"], deterministic=True)
def forge(instance, *, seed, budget):
    """Writes forged messages on its own channel: a result, a status, a time, a memory baseline."""
    from bench.sandbox import send_msg

    sock = _job_socket()
    send_msg(sock, {"op": "result", "status": "ok", "metrics": {"value": 1e12}, "wall_s": 0.0})
    send_msg(sock, {"op": "action", "action": np.ones(len(instance.data["weights"]), dtype=np.int64), "wall_s": 0.0})
    time.sleep(0.3)
    return _empty(instance)


@method(name="hostile-forge-baseline", kind="baseline", tasks=["knapsack"], deterministic=True)
class ForgeBaseline:
    """Sends its own 'ready' with a huge inherited-memory baseline (to report zero memory), then allocates."""

    def __init__(self, instance, *, seed, budget):
        from bench.sandbox import send_msg

        self.n = len(instance.data["weights"])
        send_msg(_job_socket(), {"op": "ready", "baseline_kb": 10**12})

    def select(self, state):
        self.block = np.ones(40 * 2**20 // 8)
        return np.zeros(self.n, dtype=np.int64)


# ----------------------------------------------------------------------------- 8. what it returns


@method(name="hostile-extra-fields", kind="baseline", tasks=["iv-bounds"], deterministic=True)
def extra_fields(instance, *, seed, budget):
    """Valid bounds plus fields that claim a score, a time and a status."""
    m = len(instance.data["X_test"])
    lo, hi = (float(v) for v in instance.data["y_range"])
    return {"lower": np.full(m, lo - hi), "upper": np.full(m, hi - lo), "score": 1.0, "time": 0.0, "status": "ok"}


@method(name="hostile-huge", kind="baseline", tasks=["knapsack"], deterministic=True)
def huge(instance, *, seed, budget):
    """Prints 50 MB, then returns a 50 MB solution."""
    chunk = "x" * (1 << 20)
    for _ in range(50):
        sys.stdout.write(chunk)
    sys.stdout.write("\nEND\n")
    return np.random.default_rng(seed).integers(0, 2**62, size=50 * 2**20 // 8)  # incompressible


@method(name="hostile-control-chars", kind="baseline", tasks=["knapsack"], deterministic=True)
def control_chars(instance, *, seed, budget):
    """Raises with terminal escapes, a carriage return and a bidi override in its message."""
    print("\x1b]0;PWNED\x07\x1b[2J\x1b[31mstatus: ok\r\u202e", flush=True)
    raise RuntimeError("\x1b[2J\x1b[32mstatus ok, value 1e12\x1b[0m\rfake\u202eevil\x00end")
