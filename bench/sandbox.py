"""Process isolation for method code: a pre-warmed zygote that forks one child per job.

Who runs what::

    evaluator (trusted: task, oracle, verifier)
      └─ zygote     python -m bench.sandbox; imports numpy/torch and every method once
           └─ child one per job: own session and process group, rlimits, a clean
                    working directory, dies with the zygote (PR_SET_PDEATHSIG)

The evaluator talks to the child over a socket pair, in :mod:`bench.wire`
messages (data only, never pickle). The zygote reports each child's exit status
and resource usage from ``wait4``; the evaluator enforces the wall-clock limit
by killing the child's whole process group.

The zygote is a *child subreaper* (``PR_SET_CHILD_SUBREAPER``): a process a
job leaves behind, even one that escaped its group with ``setsid`` and a
double fork, is re-parented to the zygote when its parent dies. After each job
(and when the evaluator dies: EOF on the control socket) the zygote kills every
child it has that is not a running job, until none is left. A killed runner
thus leaves no orphans: its workers die with it (``PR_SET_PDEATHSIG``), their
zygotes see EOF and sweep, and job children die with their zygote.

Before any method code runs, the child confines itself (:mod:`bench.confine`:
no network, writes only beneath its working directory, no ptrace or signals
outside the job, no capabilities). What that leaves open on a plain machine,
and what needs a container, is in the README's "Security" section.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import resource
import select
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from typing import Any

from bench import confine, holdout, wire

__all__ = ["Zygote", "ChildExit", "send_msg", "recv_msg", "ChannelClosed", "kill_group", "checkpoint", "truncated"]

THREAD_ENV = (
    "OMP_NUM_THREADS",
    "MKL_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "NUMEXPR_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
    "BLIS_NUM_THREADS",
)
_LEN = struct.Struct("<Q")


class ChannelClosed(EOFError):
    """The other end of a socket closed."""


class MessageTooLarge(ValueError):
    """A peer announced a message above the size limit."""


class SetupFailed(RuntimeError):
    """A method's one-off ``setup`` raised in the zygote; the job cannot run."""


# ----------------------------------------------------------------------------- framing


def send_msg(sock: socket.socket, obj: Any) -> None:
    payload = wire.encode(obj)
    sock.sendall(_LEN.pack(len(payload)) + payload)


def _recv_exact(sock: socket.socket, n: int, deadline: float | None) -> bytes:
    buf = bytearray(n)
    view = memoryview(buf)
    got = 0
    while got < n:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            r, _, _ = select.select([sock], [], [], left)
            if not r:
                raise TimeoutError
        k = sock.recv_into(view[got:], n - got)
        if k == 0:
            raise ChannelClosed
        got += k
    return bytes(buf)


def recv_msg(sock: socket.socket, deadline: float | None = None, max_bytes: int = 2**31) -> Any:
    """Receive one message; ``TimeoutError`` past ``deadline`` (monotonic seconds)."""
    (n,) = _LEN.unpack(_recv_exact(sock, _LEN.size, deadline))
    if n > max_bytes:
        raise MessageTooLarge(f"message of {n} bytes exceeds the limit of {max_bytes}")
    return wire.decode(_recv_exact(sock, n, deadline))


# ----------------------------------------------------------------------------- process helpers

_libc = ctypes.CDLL(None, use_errno=True)
_PR_SET_PDEATHSIG = 1


def set_pdeathsig(sig: int = signal.SIGKILL) -> None:
    """Ask the kernel to send ``sig`` to this process when its parent thread dies."""
    _libc.prctl(_PR_SET_PDEATHSIG, int(sig), 0, 0, 0)


def _read_status_kb(pid: int | str, field_name: str) -> int:
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith(field_name + ":"):
                    return int(line.split()[1])
    except (FileNotFoundError, ProcessLookupError, ValueError):
        pass
    return 0


def kill_group(pgid: int, passes: int = 50) -> None:
    """SIGKILL a job's process group, again until it is empty.

    A member may fork while the group is being killed; repeating until the
    group is gone (``ESRCH``) catches those children too.
    """
    for _ in range(passes):
        try:
            os.killpg(pgid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            return
        time.sleep(0.001)


def _my_children() -> list[int]:
    """PIDs whose parent is this process."""
    me = os.getpid()
    try:  # fast path (CONFIG_PROC_CHILDREN)
        with open(f"/proc/{me}/task/{me}/children") as fh:
            return [int(p) for p in fh.read().split()]
    except OSError:
        pass
    out = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                with open(f"/proc/{entry.name}/stat", "rb") as fh:
                    if int(fh.read().rsplit(b")", 1)[1].split()[1]) == me:
                        out.append(int(entry.name))
            except (OSError, ValueError, IndexError):
                continue
    return out


def sweep_orphans(keep: set[int], rounds: int = 200) -> int:
    """Kill and reap every child of this (subreaper) process not in ``keep``.

    Killing one leftover re-parents its own children to us, so repeat until
    nothing is left. Returns how many processes were killed.
    """
    killed = 0
    for _ in range(rounds):
        kids = [p for p in _my_children() if p not in keep]
        if not kids:
            break
        for pid in kids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        for pid in kids:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)
        killed += len(kids)
    return killed


# ----------------------------------------------------------------------------- evaluator side


@dataclass
class ChildExit:
    """How a job's child process ended, as ``wait4`` saw it.

    ``maxrss_kb`` is the raw high-water mark; subtract the child's baseline
    (sent in its first message) to get what the job itself used.
    """

    exitcode: int | None
    signal: int | None
    cpu_s: float
    maxrss_kb: int

    @property
    def clean(self) -> bool:
        return self.exitcode == 0


@dataclass
class Limits:
    """Resource limits for one job's child process."""

    memory_mb: float = 4096.0
    output_mb: float = 256.0
    threads: int = 1


@dataclass
class Zygote:
    """Handle on a zygote process. Created and used by a trusted evaluator."""

    threads: int = 1
    extra_paths: tuple[str, ...] = ()
    #: task families whose method packages the zygote imports (None: all; see discover_methods)
    families: tuple[str, ...] | None = None
    proc: subprocess.Popen | None = None
    ctrl: socket.socket | None = None
    catalog: list[dict[str, Any]] = field(default_factory=list)
    discovery_errors: list[str] = field(default_factory=list)
    #: the layers of :mod:`bench.confine` each job child gets on this machine (probed at start)
    confinement: list[str] = field(default_factory=list)
    #: the zygote's resident memory when it forked the last job (an upper bound on what the job inherited)
    last_rss_kb: int = 0
    _pending_exit: dict[int, ChildExit] = field(default_factory=dict)

    def start(self, timeout: float = 300.0) -> Zygote:
        parent, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        env = holdout.scrub(dict(os.environ))  # method code never sees the holdout secret
        for k in THREAD_ENV:
            env[k] = str(self.threads)
        env["BENCH_THREADS"] = str(self.threads)
        env["PYTHONUNBUFFERED"] = "1"
        if self.extra_paths:
            env["BENCH_EXTRA_PATHS"] = os.pathsep.join(self.extra_paths)
        env.pop("BENCH_DISCOVER_FAMILIES", None)
        if self.families is not None:
            env["BENCH_DISCOVER_FAMILIES"] = ",".join(self.families)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "bench._zygote", str(child.fileno())],
            pass_fds=[child.fileno()],
            env=env,
            stdin=subprocess.DEVNULL,
            close_fds=True,
        )
        child.close()
        self.ctrl = parent
        try:
            hello = recv_msg(parent, time.monotonic() + timeout)
        except (ChannelClosed, TimeoutError) as exc:
            self.close()
            raise RuntimeError("the method worker (zygote) failed to start; run `python -m bench list methods` to see why") from exc
        self.catalog = hello["catalog"]
        self.discovery_errors = hello["errors"]
        self.confinement = list(hello.get("confinement", []))
        return self

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def fork(
        self,
        workdir: str,
        limits: Limits,
        method: str = "",
        instance_params: dict[str, Any] | None = None,
        context: dict[str, Any] | None = None,
    ) -> tuple[int, socket.socket, float]:
        """Fork a child for one job.

        Before the first job of ``method`` (per setup key), the zygote runs the
        method's one-off ``setup`` (e.g. pre-training), so every later child
        inherits its result. ``context`` (the job's ``rep``, ``master_seed``
        and method parameters) goes to ``setup`` and ``setup_key``. Returns
        the child's pid, the evaluator's end of its socket, and the seconds
        this call spent in setup (0 if none).

        Raises
        ------
        SetupFailed
            If the method's setup raised.
        """
        assert self.ctrl is not None
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            send_msg(
                self.ctrl,
                {
                    "op": "fork",
                    "workdir": workdir,
                    "memory_mb": float(limits.memory_mb),
                    "output_mb": float(limits.output_mb),
                    "threads": int(limits.threads),
                    "method": method,
                    "instance_params": instance_params or {},
                    "context": context or {},
                },
            )
            socket.send_fds(self.ctrl, [b"F"], [theirs.fileno()])
        finally:
            theirs.close()
        while True:
            msg = recv_msg(self.ctrl, time.monotonic() + SETUP_TIMEOUT_S)
            if msg["op"] == "forked":
                self.last_rss_kb = int(msg.get("rss_kb", 0))
                return int(msg["pid"]), mine, float(msg.get("setup_s", 0.0))
            if msg["op"] == "setup_failed":
                mine.close()
                raise SetupFailed(str(msg.get("error", "")))
            if msg["op"] == "exited":  # a late report from an earlier child
                self._pending_exit[int(msg["pid"])] = _exit_from(msg)

    def wait_exit(self, pid: int, timeout: float) -> ChildExit | None:
        """Wait for the zygote's report that ``pid`` exited (None: no report)."""
        if self.ctrl is None:
            return None
        if pid in self._pending_exit:
            return self._pending_exit.pop(pid)
        deadline = time.monotonic() + timeout
        while True:
            try:
                msg = recv_msg(self.ctrl, deadline)
            except TimeoutError:
                return None
            except (ChannelClosed, OSError, wire.WireError):
                self.close()  # the zygote died (a method may have killed it); start afresh next job
                return None
            if msg["op"] == "exited":
                ex = _exit_from(msg)
                if int(msg["pid"]) == pid:
                    return ex
                self._pending_exit[int(msg["pid"])] = ex

    def release(self, pid: int) -> None:
        """Tell the zygote that job ``pid`` is over: it kills whatever the job left behind."""
        if self.ctrl is not None:
            with contextlib.suppress(OSError):
                send_msg(self.ctrl, {"op": "release", "pid": int(pid)})

    def close(self) -> None:
        if self.ctrl is not None:
            self.ctrl.close()
            self.ctrl = None
        if self.proc is not None:
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            self.proc = None
        self._pending_exit.clear()


def _exit_from(msg: dict[str, Any]) -> ChildExit:
    return ChildExit(
        exitcode=msg.get("exitcode"),
        signal=msg.get("signal"),
        cpu_s=float(msg["cpu_s"]),
        maxrss_kb=int(msg["maxrss_kb"]),
    )


# ----------------------------------------------------------------------------- zygote side

#: Where this zygote's job children may read files (bench.confine.read_roots, set at start).
_READABLE: list[str] | None = None
#: Job children of this zygote whose exit has not been reported yet: pidfd -> pid.
_running: dict[int, int] = {}
_PR_SET_CHILD_SUBREAPER = 36
#: The longest a method's one-off setup may take before its zygote is given up.
SETUP_TIMEOUT_S = 1800.0
#: (method, setup key) -> what the setup returned, for setups done in this zygote.
_setups_done: dict[tuple[str, Any], Any] = {}


def _run_setup(method: str, params: dict[str, Any], context: dict[str, Any] | None = None) -> float:
    """Run ``method``'s setup for this job once per zygote and setup key; returns seconds spent now.

    ``params`` are the instance's parameters; ``context`` the job's ``rep``,
    ``master_seed`` and method parameters. Sets what :func:`prepared`
    returns in the job forked next.
    """
    global _PREPARED
    from bench.registry import METHODS

    _PREPARED = None
    if not method or method not in METHODS:
        return 0.0
    spec = METHODS.get(method)
    if spec.setup is None:
        return 0.0
    key = (method, spec.setup_key_for(params, context))
    spent = 0.0
    if key not in _setups_done:
        t0 = time.monotonic()
        _setups_done[key] = spec.run_setup(params, context)
        spent = time.monotonic() - t0
    _PREPARED = _setups_done[key]
    return spent


def _cleanup_and_exit(*_args: Any) -> None:
    for pid in list(_running.values()):
        kill_group(pid)
    sweep_orphans(keep=set())
    os._exit(0)


def _zygote_main(ctrl_fd: int) -> None:
    ctrl = socket.socket(fileno=ctrl_fd)
    _libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    signal.signal(signal.SIGTERM, _cleanup_and_exit)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C goes to the runner, which decides
    threads = int(os.environ.get("BENCH_THREADS", "1"))
    for mod in filter(None, os.environ.get("BENCH_PRELOAD", "numpy").split(",")):
        with contextlib.suppress(ImportError):
            __import__(mod)
    _limit_threads(threads)

    from bench.registry import DISCOVERY_ERRORS, discover_methods

    extra = [p for p in os.environ.get("BENCH_EXTRA_PATHS", "").split(os.pathsep) if p]
    fam = os.environ.get("BENCH_DISCOVER_FAMILIES")
    families = None if fam is None else tuple(f for f in fam.split(",") if f)
    errors: list[str] = []
    try:
        registry = discover_methods(extra, families)
        catalog = [spec.meta() for _, spec in registry.items()]
    except Exception as exc:
        catalog, errors = [], [f"{type(exc).__name__}: {exc}"]
    errors += [str(e) for e in DISCOVERY_ERRORS]
    _limit_threads(threads)  # again: method modules may have imported torch during discovery
    global _READABLE
    task_paths = [p for p in os.environ.get("BENCH_TASK_PATHS", "").split(os.pathsep) if p]
    _READABLE = confine.read_roots([os.path.realpath(p) for p in (*extra, *task_paths)])
    send_msg(
        ctrl,
        {"op": "hello", "catalog": catalog, "errors": errors, "pid": os.getpid(), "confinement": _probe_confinement()},
    )

    poller = select.poll()
    poller.register(ctrl, select.POLLIN)
    while True:
        for fd, _ev in poller.poll():
            if fd == ctrl.fileno():
                try:
                    msg = recv_msg(ctrl)
                except (ChannelClosed, ConnectionError, wire.WireError):
                    _cleanup_and_exit()
                if msg["op"] == "fork":
                    _, fds, _, _ = socket.recv_fds(ctrl, 1, 1)
                    try:
                        setup_s = _run_setup(
                            msg.get("method", ""), msg.get("instance_params", {}), msg.get("context", {})
                        )
                    except Exception as exc:
                        os.close(fds[0])
                        send_msg(ctrl, {"op": "setup_failed", "error": f"{type(exc).__name__}: {exc}"})
                        continue
                    pid = _fork_child(ctrl, fds[0], msg)
                    pidfd = os.pidfd_open(pid)
                    _running[pidfd] = pid
                    poller.register(pidfd, select.POLLIN)
                    send_msg(ctrl, {"op": "forked", "pid": pid, "setup_s": setup_s, "rss_kb": _read_status_kb("self", "VmRSS")})
                elif msg["op"] == "release":
                    # The job is over: whatever it left (re-parented to us) goes.
                    sweep_orphans(keep=set(_running.values()))
                elif msg["op"] == "exit":
                    _cleanup_and_exit()
            else:
                pid = _running.pop(fd)
                poller.unregister(fd)
                os.close(fd)
                _, status, ru = os.wait4(pid, 0)
                send_msg(
                    ctrl,
                    {
                        "op": "exited",
                        "pid": pid,
                        "exitcode": os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else None,
                        "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
                        "cpu_s": ru.ru_utime + ru.ru_stime,
                        "maxrss_kb": ru.ru_maxrss,
                    },
                )


def _limit_threads(threads: int) -> None:
    try:
        from threadpoolctl import threadpool_limits

        threadpool_limits(threads)
    except ImportError:
        pass
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(threads)
        with contextlib.suppress(RuntimeError):
            torch.set_num_interop_threads(threads)


def _fork_child(ctrl: socket.socket, job_fd: int, msg: dict[str, Any]) -> int:
    vmsize = _read_status_kb("self", "VmSize")
    pid = os.fork()
    if pid:
        os.close(job_fd)
        return pid
    # ---- in the child: never return into the zygote's loop
    code = 1
    try:
        os.setsid()  # own session and process group: the evaluator kills the group
        set_pdeathsig(signal.SIGKILL)
        if os.getppid() == 1:
            os._exit(1)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        ctrl.close()
        _prepare_child(msg, vmsize)
        from bench import _child

        code = _child.serve(socket.socket(fileno=job_fd))
    except BaseException:
        with contextlib.suppress(Exception):
            traceback.print_exc()
        code = 1
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code)


def _prepare_child(msg: dict[str, Any], vmsize_kb: int) -> None:
    workdir = msg["workdir"]
    os.makedirs(workdir, exist_ok=True)
    os.chdir(workdir)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    for fd, name in ((1, "stdout.txt"), (2, "stderr.txt")):
        out = os.open(os.path.join(workdir, name), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(out, fd)
        os.close(out)
    mem = int(msg["memory_mb"] * 2**20)
    if mem > 0:
        # Address space = what the child inherits + the job's allowance.
        limit = vmsize_kb * 1024 + mem
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    out_limit = int(msg["output_mb"] * 2**20)
    resource.setrlimit(resource.RLIMIT_FSIZE, (out_limit, out_limit))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    _limit_threads(int(msg["threads"]))
    # Temporary files go to the job's own directory: the only place it may write (bench.confine).
    for var in ("TMPDIR", "TEMP", "TMP"):
        os.environ[var] = workdir
    os.environ.setdefault("MPLCONFIGDIR", os.path.join(workdir, ".matplotlib"))
    tempfile.tempdir = workdir
    # Peak RSS is measured from here: reset the high-water mark (Linux >= 4.0)
    # and remember what the child holds before any method code runs. The
    # kernel does not count every page a forked child shares with its parent,
    # so the baseline must be read in the child, not in the zygote.
    global BASELINE_RSS_KB
    with contextlib.suppress(OSError):
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
    BASELINE_RSS_KB = _read_status_kb("self", "VmRSS")
    # Last, before any method code: the layers of bench.confine (network, reads, writes, ptrace, signals).
    confine.confine(workdir, readable=_READABLE)


def _probe_confinement() -> list[str]:
    """The layers :func:`bench.confine.confine` applies on this machine, from a throwaway child."""
    workdir = tempfile.mkdtemp(prefix="bench-confine-probe-")
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            os.write(w, ",".join(confine.confine(workdir, readable=_READABLE)).encode())
        finally:
            os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as fh:
        out = fh.read().decode()
    os.waitpid(pid, 0)
    os.rmdir(workdir)
    return [x for x in out.split(",") if x]


# ----------------------------------------------------------------------------- methods' side API

_CHECKPOINT_HOOK: Any = None
_TRUNCATED_HOOK: Any = None


#: monotonic time at which the job's budget runs out (set in the child at start)
_DEADLINE: float | None = None

#: What the method's setup returned for the job forked next (inherited by the child).
_PREPARED: Any = None


def prepared() -> Any:
    """What the method's ``setup`` returned for this job's setup key (``None`` without one).

    The worker runs ``setup`` once per key (see :func:`bench.method`) and
    every job with that key inherits the result through the fork, so a
    pre-trained model costs its training once per worker. Outside a bench
    job this returns ``None``: a method called directly prepares itself.
    """
    return _PREPARED


def time_left() -> float:
    """Seconds left of this job's budget (``inf`` outside a bench job).

    The runner kills a job at budget + grace; a method that stops when this
    reaches zero (minus its own wrap-up time) always returns in time. A
    method whose result should depend only on its work (iterations, epochs)
    and that stops early here must say so with :func:`truncated`, so that
    the run is never compared as a finished one.
    """
    if _DEADLINE is None:
        return float("inf")
    return max(0.0, _DEADLINE - time.monotonic())


def checkpoint(solution: Any) -> None:
    """Report an intermediate solution from inside ``solve`` (anytime curves).

    The runner timestamps it on receipt and the task verifies it like a final
    solution. Outside a bench job this does nothing.
    """
    if _CHECKPOINT_HOOK is not None:
        _CHECKPOINT_HOOK(solution)


def truncated(reason: str) -> None:
    """Declare that the clock cut this run short (the job then ends ``truncated``, not ``ok``).

    Call it from inside ``solve`` (or ``select``) when the method stopped
    its work early because :func:`time_left` ran low, rather than at its own
    work-based stop (iterations, epochs, patience). The runner still
    verifies and keeps the solution, but the record's status is
    ``truncated``: rankings, claims and statistics, which use ``ok`` runs
    only, never count it, and a resumed sweep retries it. A method whose
    *protocol* is a time budget (an anytime search run until the budget)
    does not call this. ``reason`` (one line) becomes the record's reason;
    later calls in the same job add theirs. Outside a bench job this does
    nothing.
    """
    if _TRUNCATED_HOOK is not None:
        _TRUNCATED_HOOK(str(reason))
