"""The trusted side of a job: load the instance, drive the method, verify.

An :class:`Evaluator` lives in a trusted worker process (a local worker of the
runner, or a Dask worker). For each job it forks a child from its pre-warmed
zygote (:mod:`bench.sandbox`), sends the child the *public* instance, runs the
task's protocol (one ``select`` for one-shot tasks), enforces the time limit,
and scores the solution with the task's own ``evaluate``. The method never
reaches this process's memory, and its self-reported numbers are ignored.

The result is plain data (:func:`run_job` returns a dict); the runner is the
only process that writes the store.
"""

from __future__ import annotations

import atexit
import contextlib
import io
import os
import re
import shutil
import signal
import tempfile
import threading
import time
from collections import OrderedDict
from typing import Any

from bench import environment, wire
from bench.jobs import Job
from bench.registry import get_task
from bench.sandbox import (
    ChannelClosed,
    ChildExit,
    Limits,
    MessageTooLarge,
    SetupFailed,
    Zygote,
    kill_group,
    recv_msg,
    send_msg,
)
from bench.store import STATUSES
from bench.task import Instance, InvalidSolution

__all__ = ["Evaluator", "run_job", "STATUSES"]

_TAIL = 4000
#: Largest message a method may send (a solution, a checkpoint).
MAX_MESSAGE_BYTES = 1 << 30
#: Largest invalid solution kept in the store (its file); bigger ones keep only their sha256.
MAX_KEPT_INVALID_BYTES = 8 << 20


class _Outcome(Exception):
    """Ends a job early with a status (raised inside :meth:`Evaluator.run`)."""

    def __init__(self, status: str, reason: str, error_type: str = "", tb: str = "") -> None:
        super().__init__(reason)
        self.status, self.reason, self.error_type, self.tb = status, reason, error_type, tb


#: Record fields whose text the method controls (its messages, output, exception type and skip reason).
_METHOD_TEXT = ("reason", "error_type", "traceback", "stdout_tail", "stderr_tail")
_TEXT_LIMIT = {"error_type": 200, "reason": _TAIL + 400}
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069]")


def clean_text(text: str, limit: int = _TAIL) -> str:
    """``text`` safe to print and to store: control characters (ANSI escapes, carriage
    returns, bidirectional overrides) written as ``\\xNN``/``\\uNNNN``, and at most
    ``limit`` characters (the tail kept, marked with ``…``)."""
    out = _CONTROL.sub(lambda m: f"\\x{ord(m[0]):02x}" if ord(m[0]) < 0x100 else f"\\u{ord(m[0]):04x}", text)
    return out if len(out) <= limit else "…" + out[-(limit - 1):]


def _tail(path: str, n: int = _TAIL) -> str:
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            fh.seek(max(size - n, 0))
            data = fh.read()
    except OSError:
        return ""
    text = data.decode("utf-8", "replace")
    return ("…" if size > n else "") + text


def _signal_name(sig: int) -> str:
    try:
        return signal.Signals(sig).name
    except ValueError:
        return f"signal {sig}"


class Evaluator:
    """Runs jobs in one trusted process. Keeps zygotes and loaded instances warm.

    Parameters
    ----------
    extra_paths
        Method files or directories imported by the zygotes in addition to
        the registered packages (``validate`` and tests use this).
    families
        Task families whose method packages the zygotes import (``None``:
        all); a sweep passes its task's family.
    workroot
        Where per-job working directories are made (a fresh one per job).
    """

    def __init__(
        self,
        extra_paths: tuple[str, ...] = (),
        workroot: str | None = None,
        cache_size: int = 8,
        families: tuple[str, ...] | None = None,
    ) -> None:
        self.extra_paths = tuple(extra_paths)
        self.families = None if families is None else tuple(families)
        self.workroot = workroot or tempfile.mkdtemp(prefix="bench-jobs-")
        self._zygotes: dict[int, Zygote] = {}
        self._instances: OrderedDict[tuple[str, str], Instance] = OrderedDict()
        self._cache_size = cache_size
        self._current: int | None = None  # pid (= process group) of the job in flight

    # -- resources --------------------------------------------------------------
    def zygote(self, threads: int = 1) -> Zygote:
        z = self._zygotes.get(threads)
        if z is None or not z.alive:
            if z is not None:
                z.close()
            z = Zygote(threads=threads, extra_paths=self.extra_paths, families=self.families).start()
            self._zygotes[threads] = z
        return z

    def instance(self, task_name: str, instance_id: str) -> Instance:
        key = (task_name, instance_id)
        if key in self._instances:
            self._instances.move_to_end(key)
            return self._instances[key]
        inst = get_task(task_name).load(instance_id)
        self._instances[key] = inst
        while len(self._instances) > self._cache_size:
            self._instances.popitem(last=False)
        return inst

    def kill_current(self) -> None:
        """Kill the job in flight (called from signal handlers)."""
        if self._current is not None:
            kill_group(self._current)

    def close(self) -> None:
        self.kill_current()
        for z in self._zygotes.values():
            z.close()
        self._zygotes.clear()
        shutil.rmtree(self.workroot, ignore_errors=True)

    # -- one job ----------------------------------------------------------------
    def run(self, job: Job) -> dict[str, Any]:
        """Run ``job`` end to end; returns the record fields the evaluator owns.

        Never raises for anything the method does: every outcome is a status.
        """
        t_job = time.monotonic()
        started_at = time.time()
        res: dict[str, Any] = {
            "status": "error",
            "reason": "",
            "error_type": "",
            "traceback": "",
            "metrics": {},
            "trace": [],
            "wall_s": None,
            "cpu_s": None,
            "peak_rss_mb": None,
            "verify_s": None,
            "stdout_tail": "",
            "stderr_tail": "",
            "solution_npz": None,
            "solution_sha256": None,
            "started_at": started_at,
            "environment": {
                **environment.capture(),
                "load_1m_start": environment.load_average(),
                "speed_probe_ms": environment.speed_probe(),
            },
        }
        try:
            task = get_task(job.task)
            if task.meta.version != job.task_version:
                raise _Outcome("error", f"task {job.task} is now version {task.meta.version}, job was made for {job.task_version}")
            inst = self.instance(job.task, job.instance)
            if inst.digest != job.instance_digest:
                # Regenerated here, the instance's float data came out last-bit different from the
                # planner's (another CPU's SIMD paths or BLAS kernels: a mixed Dask cluster). The job
                # runs on this machine's bytes and the record says which (bench verify reads it).
                res["environment"]["instance_digest"] = inst.digest
        except _Outcome as out:
            res.update(status=out.status, reason=out.reason)
            return self._finish(res, t_job)
        except Exception as exc:
            res.update(status="error", reason=f"loading {job.task}/{job.instance}: {type(exc).__name__}: {exc}", error_type="LoadError")
            return self._finish(res, t_job)

        session = task.session(inst, job.seed)
        workdir = tempfile.mkdtemp(prefix=job.key[:12] + "-", dir=self.workroot)
        limits = Limits(memory_mb=job.memory_mb, threads=job.threads)
        context = {**job.params, "rep": job.rep, "master_seed": job.master_seed}
        try:
            try:
                zyg = self.zygote(job.threads)
                pid, sock, res["setup_s"] = zyg.fork(workdir, limits, job.method, dict(inst.params), context)
            except (ChannelClosed, OSError, TimeoutError, wire.WireError):
                # the zygote died between jobs (a previous method may have killed it): once more
                self._zygotes.pop(job.threads).close()
                zyg = self.zygote(job.threads)
                pid, sock, res["setup_s"] = zyg.fork(workdir, limits, job.method, dict(inst.params), context)
        except SetupFailed as exc:
            shutil.rmtree(workdir, ignore_errors=True)
            res.update(status="error", reason=f"setup of {job.method} failed: {exc}", error_type="SetupFailed")
            return self._finish(res, t_job)
        self._current = pid
        res["environment"]["confinement"] = ",".join(zyg.confinement) or "none"
        method_time = 0.0
        checkpoints: list[tuple[float, Any]] = []
        truncations: list[str] = []  # bench.truncated() reasons: the clock cut the method short
        exit_info: ChildExit | None = None
        baseline_kb = 0
        solution: Any = None
        try:
            try:
                deadline = time.monotonic() + job.hard_limit

                def ask(msg: dict[str, Any]) -> dict[str, Any]:
                    nonlocal method_time
                    t0 = time.monotonic()
                    send_msg(sock, msg)
                    try:
                        while True:
                            reply = recv_msg(sock, deadline, MAX_MESSAGE_BYTES)
                            if reply.get("op") == "checkpoint":
                                checkpoints.append((method_time + time.monotonic() - t0, reply.get("solution")))
                                continue
                            if reply.get("op") == "truncated":
                                truncations.append(str(reply.get("reason", "")).strip() or "the method gave no reason")
                                continue
                            return reply
                    finally:
                        method_time += time.monotonic() - t0

                reply = ask(
                    {
                        "op": "start",
                        "method": job.method,
                        "instance": inst.public(),
                        "seed": job.seed,
                        "budget": job.budget,
                        "params": job.params,
                    }
                )
                # the child reports what it inherited; it cannot have inherited more than the zygote held
                baseline_kb = min(max(int(reply.get("baseline_kb") or 0), 0), int(zyg.last_rss_kb * 1.1) + 1024)
                self._check_reply(reply, expect="ready")
                while (state := session.state()) is not None:
                    reply = ask({"op": "select", "state": state})
                    self._check_reply(reply, expect="action")
                    try:
                        session.apply(reply.get("action"))
                    except InvalidSolution as exc:
                        raise _Outcome("invalid", str(exc), "InvalidSolution") from None
                solution = session.solution()
                with contextlib.suppress(OSError):
                    send_msg(sock, {"op": "stop"})
                res["status"] = "ok"
            except TimeoutError:
                raise _Outcome("timeout", f"no answer within {job.hard_limit:.1f} s (budget {job.budget:g} s + grace); process group killed") from None
            except MessageTooLarge as exc:
                raise _Outcome("invalid", f"solution too large: {exc}", "MessageTooLarge") from None
            except wire.WireError as exc:
                raise _Outcome("invalid", f"malformed message from the method: {exc}", "WireError") from None
            except (ChannelClosed, ConnectionError):
                exit_info = zyg.wait_exit(pid, 5.0)
                if exit_info is None and not zyg.alive:
                    raise _Outcome("error", "the method's worker process died during the job (did the method kill its parent?)", "WorkerDied") from None
                raise _Outcome(*self._death_reason(exit_info)) from None
        except _Outcome as out:
            res.update(status=out.status, reason=out.reason, error_type=out.error_type, traceback=out.tb)
        finally:
            sock.close()
            if exit_info is None and res["status"] != "timeout":
                exit_info = zyg.wait_exit(pid, 2.0 if res["status"] == "ok" else 0.5)
            kill_group(pid)
            if exit_info is None:
                exit_info = zyg.wait_exit(pid, 10.0)
            zyg.release(pid)
            self._current = None
            res["stdout_tail"] = _tail(os.path.join(workdir, "stdout.txt"))
            res["stderr_tail"] = _tail(os.path.join(workdir, "stderr.txt"))
            shutil.rmtree(workdir, ignore_errors=True)

        res["wall_s"] = method_time
        res["instance_params"] = dict(inst.params)
        res["instance_tags"] = list(inst.tags)
        res["references"] = {k: float(r.value) for k, r in inst.references.items()}
        if exit_info is not None:
            res["cpu_s"] = exit_info.cpu_s
            # the high-water mark includes what the child inherited; report the job's own use
            res["peak_rss_mb"] = max(exit_info.maxrss_kb - baseline_kb, 0) / 1024.0

        t_verify = time.monotonic()
        if res["status"] == "ok":
            try:
                res["metrics"] = self._evaluate(task, inst, solution)
            except InvalidSolution as exc:
                res.update(status="invalid", reason=str(exc), error_type="InvalidSolution")
            except Exception as exc:
                res.update(status="error", reason=f"verifier failed: {type(exc).__name__}: {exc}", error_type="VerifierError")
            if solution is not None:
                try:
                    buf = io.BytesIO()
                    wire.save_npz(buf, solution)
                    res["solution_sha256"] = wire.digest(solution)
                    # an invalid solution is kept to diagnose it, unless it is big (a disk-filling answer)
                    if res["status"] == "ok" or buf.tell() <= MAX_KEPT_INVALID_BYTES:
                        res["solution_npz"] = buf.getvalue()
                except wire.WireError:
                    pass
        if res["status"] == "ok" and truncations:
            # verified and kept, but never ranked as a finished run (bench.truncated)
            res.update(status="truncated", reason="cut short by the clock: " + "; ".join(truncations))
        res["trace"] = self._score_trace(task, inst, checkpoints)
        res["verify_s"] = time.monotonic() - t_verify
        return self._finish(res, t_job)

    # -- helpers ------------------------------------------------------------------
    @staticmethod
    def _evaluate(task: Any, inst: Instance, solution: Any) -> dict[str, float]:
        metrics = task.evaluate(inst, solution)
        if not isinstance(metrics, dict):
            raise TypeError(f"{task.meta.name}.evaluate returned {type(metrics).__name__}, not a dict")
        return {str(k): float(v) for k, v in metrics.items()}

    def _score_trace(self, task: Any, inst: Instance, checkpoints: list[tuple[float, Any]]) -> list[dict[str, Any]]:
        out = []
        for t, sol in checkpoints:
            entry: dict[str, Any] = {"t": t}
            try:
                entry["metrics"] = self._evaluate(task, inst, sol)
            except InvalidSolution as exc:
                entry["invalid"] = str(exc)
            except Exception as exc:
                entry["invalid"] = f"verifier failed: {exc}"
            out.append(entry)
        return out

    @staticmethod
    def _check_reply(reply: dict[str, Any], expect: str) -> None:
        op = reply.get("op")
        if op == expect:
            return
        if op == "skip":
            raise _Outcome("skipped", str(reply.get("reason", "")))
        if op == "unsendable":
            raise _Outcome("invalid", f"the solution cannot be sent as data: {reply.get('message')}", "WireError")
        if op == "error":
            etype, msg = str(reply.get("type", "")), str(reply.get("message", ""))
            if etype == "MemoryError":
                raise _Outcome("killed", f"memory limit reached (MemoryError): {msg}".strip(), etype, str(reply.get("traceback", "")))
            raise _Outcome("error", f"{etype}: {msg}", etype, str(reply.get("traceback", "")))
        raise _Outcome("error", f"protocol error: expected {expect!r}, got {op!r}", "ProtocolError")

    @staticmethod
    def _death_reason(ex: ChildExit | None) -> tuple[str, str, str]:
        if ex is None:
            return "error", "the method process closed its channel and did not exit", "ProtocolError"
        if ex.signal is not None:
            name = _signal_name(ex.signal)
            why = {
                "SIGKILL": "killed by SIGKILL (out of memory, or killed from outside)",
                "SIGXFSZ": "output limit reached (SIGXFSZ)",
                "SIGSEGV": "crashed with a segmentation fault (SIGSEGV)",
                "SIGABRT": "aborted (SIGABRT)",
            }.get(name, f"killed by {name}")
            return "killed", why, name
        return "error", f"the method process exited with code {ex.exitcode} before answering", "Exit"

    @staticmethod
    def _finish(res: dict[str, Any], t_job: float) -> dict[str, Any]:
        for name in _METHOD_TEXT:  # strings the method controls: no terminal escapes, bounded
            if isinstance(res.get(name), str):
                res[name] = clean_text(res[name], _TEXT_LIMIT.get(name, _TAIL))
        res["job_s"] = time.monotonic() - t_job
        res["finished_at"] = time.time()
        res["environment"]["load_1m_end"] = environment.load_average()
        return res


# ----------------------------------------------------------------------------- process-global use

_LOCAL = threading.local()


def get_evaluator(extra_paths: tuple[str, ...] = (), families: tuple[str, ...] | None = None) -> Evaluator:
    """The evaluator of this thread (one per worker thread, made on first use)."""
    ev = getattr(_LOCAL, "evaluator", None)
    families = None if families is None else tuple(families)
    if ev is None or ev.extra_paths != tuple(extra_paths) or ev.families != families:
        if ev is not None:
            ev.close()
        ev = _LOCAL.evaluator = Evaluator(extra_paths=tuple(extra_paths), families=families)
        atexit.register(ev.close)
    return ev


def run_job(
    job: dict[str, Any], extra_paths: tuple[str, ...] = (), families: tuple[str, ...] | None = None
) -> dict[str, Any]:
    """Run one job (as a dict) in this process's evaluator. Used by every backend."""
    j = Job.from_dict(job)
    return {"key": j.key, "job": job, "result": get_evaluator(extra_paths, families).run(j)}


def probe_catalog(
    extra_paths: tuple[str, ...] = (), threads: int = 1, families: tuple[str, ...] | None = None
) -> tuple[list[dict[str, Any]], list[str]]:
    """Method metadata, discovered in a zygote (the caller never imports methods)."""
    ev = get_evaluator(extra_paths, families)
    z = ev.zygote(threads)
    return z.catalog, z.discovery_errors
