"""Where jobs run: local worker processes, or a Dask distributed cluster.

Both backends run the same function, :func:`bench.evaluator.run_job`, in
trusted worker processes that each keep an :class:`~bench.evaluator.Evaluator`
(with its pre-warmed zygote) alive across jobs. Verification happens there, in
parallel, never in the runner. The runner only submits job dicts, collects
result dicts and writes the store.

Choose one with :func:`make_backend`; the runner never branches on the name.
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import os
import signal
import time
from collections import deque
from multiprocessing.connection import Connection, wait
from typing import Any, Protocol

__all__ = ["Backend", "LocalBackend", "DaskBackend", "make_backend", "BACKENDS"]


class Backend(Protocol):
    """What the runner needs from a place that runs jobs."""

    slots: int

    def start(self) -> tuple[list[dict[str, Any]], list[str]]:
        """Start workers; return the method catalog and discovery errors."""

    def submit(self, job: dict[str, Any]) -> None:
        """Run one job (the caller keeps at most ``slots`` in flight)."""

    def poll(self, timeout: float) -> list[dict[str, Any]]:
        """Results finished since the last call (may be empty)."""

    def close(self) -> None:
        """Stop every worker and everything they started."""


def _failed(job: dict[str, Any], reason: str, error_type: str) -> dict[str, Any]:
    from bench import environment
    from bench.jobs import Job

    t = time.time()
    return {
        "key": Job.from_dict(job).key,
        "job": job,
        "result": {
            "status": "error",
            "reason": reason,
            "error_type": error_type,
            "started_at": t,
            "finished_at": t,
            "environment": environment.capture(),
        },
    }


# ----------------------------------------------------------------------------- local


def _worker_main(conn: Connection, extra_paths: tuple[str, ...], families: tuple[str, ...] | None = None) -> None:
    """A trusted local worker: runs jobs in its evaluator until told to stop."""
    from bench import sandbox
    from bench.evaluator import get_evaluator, probe_catalog, run_job

    sandbox.set_pdeathsig(signal.SIGKILL)  # dies with the runner; its zygote then cleans up
    signal.signal(signal.SIGINT, signal.SIG_IGN)

    def on_term(*_a: Any) -> None:
        get_evaluator(extra_paths, families).kill_current()
        os._exit(0)

    signal.signal(signal.SIGTERM, on_term)
    try:
        catalog, errors = probe_catalog(extra_paths, families=families)
        conn.send(("ready", catalog, errors))
    except Exception as exc:
        conn.send(("failed", f"{type(exc).__name__}: {exc}", []))
        return
    while True:
        try:
            msg = conn.recv()
        except EOFError:
            break
        if msg is None:
            break
        conn.send(("result", run_job(msg, extra_paths, families)))
    get_evaluator(extra_paths, families).close()


class LocalBackend:
    """``--jobs N`` trusted worker processes on this machine.

    Workers are started with ``spawn`` from the runner's main thread, so
    ``PR_SET_PDEATHSIG`` reliably kills them if the runner dies.
    """

    def __init__(self, jobs: int = 1, extra_paths: tuple[str, ...] = (), families: tuple[str, ...] | None = None) -> None:
        self.slots = max(1, int(jobs))
        self.extra_paths = tuple(extra_paths)
        self.families = families
        self._ctx = mp.get_context("spawn")
        self._workers: list[tuple[mp.process.BaseProcess, Connection]] = []
        self._busy: dict[int, dict[str, Any]] = {}
        self._queue: deque[dict[str, Any]] = deque()

    def _spawn(self) -> tuple[mp.process.BaseProcess, Connection]:
        parent, child = self._ctx.Pipe()
        proc = self._ctx.Process(target=_worker_main, args=(child, self.extra_paths, self.families), daemon=True)
        proc.start()
        child.close()
        return proc, parent

    def start(self) -> tuple[list[dict[str, Any]], list[str]]:
        self._workers = [self._spawn() for _ in range(self.slots)]
        catalog: list[dict[str, Any]] = []
        errors: list[str] = []
        for i, (proc, conn) in enumerate(self._workers):
            msg = self._first_message(proc, conn)
            if msg[0] != "ready":
                self.close()
                raise RuntimeError(f"worker {i} failed to start: {msg[1]}")
            catalog, errors = msg[1], msg[2]
        return catalog, errors

    @staticmethod
    def _first_message(proc: mp.process.BaseProcess, conn: Connection) -> tuple[Any, ...]:
        while True:
            if conn.poll(0.2):
                try:
                    return conn.recv()
                except EOFError:
                    return ("failed", "worker exited during start-up", [])
            if not proc.is_alive():
                return ("failed", f"worker exited with code {proc.exitcode} during start-up", [])

    def submit(self, job: dict[str, Any]) -> None:
        self._queue.append(job)
        self._dispatch()

    def _dispatch(self) -> None:
        for i, (_proc, conn) in enumerate(self._workers):
            if not self._queue:
                return
            if i not in self._busy:
                job = self._queue.popleft()
                self._busy[i] = job
                conn.send(job)

    def poll(self, timeout: float) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        if not self._busy:
            return out
        handles: dict[Any, int] = {}
        for i in self._busy:
            proc, conn = self._workers[i]
            handles[conn] = i
            handles[proc.sentinel] = i
        for h in wait(list(handles), timeout):
            i = handles[h]
            if i not in self._busy:
                continue
            proc, conn = self._workers[i]
            try:
                if conn.poll():
                    kind, payload = conn.recv()
                    out.append(payload)
                    del self._busy[i]
                    continue
            except (EOFError, OSError):
                pass
            if not proc.is_alive():
                job = self._busy.pop(i)
                out.append(_failed(job, f"the worker process died (exit code {proc.exitcode}) while running this job", "WorkerDied"))
                with contextlib.suppress(Exception):
                    conn.close()
                self._workers[i] = self._spawn()
                msg = self._first_message(*self._workers[i])
                if msg[0] != "ready":
                    raise RuntimeError(f"worker {i} failed to restart: {msg[1]}")
        self._dispatch()
        return out

    def close(self) -> None:
        for _proc, conn in self._workers:
            with contextlib.suppress(Exception):
                conn.send(None)
        deadline = time.monotonic() + 3
        for proc, _conn in self._workers:
            proc.join(max(0.0, deadline - time.monotonic()))
            if proc.is_alive():
                proc.terminate()  # SIGTERM: the worker kills its job first
                proc.join(2)
            if proc.is_alive():
                proc.kill()
                proc.join()
        self._workers = []
        self._busy.clear()


# ----------------------------------------------------------------------------- dask


class DaskBackend:
    """The same jobs on a Dask distributed cluster; the runner stays the only writer.

    With ``scheduler=None`` a ``LocalCluster`` of ``jobs`` single-threaded
    worker processes is started (useful for tests). For Slurm, start the
    cluster with dask-jobqueue and pass its scheduler address (see README).
    """

    def __init__(
        self,
        jobs: int = 1,
        extra_paths: tuple[str, ...] = (),
        scheduler: str | None = None,
        families: tuple[str, ...] | None = None,
    ) -> None:
        self.extra_paths = tuple(extra_paths)
        self.families = families
        self.scheduler = scheduler
        self._jobs = max(1, int(jobs))
        self.slots = self._jobs
        self._client: Any = None
        self._cluster: Any = None
        self._futures: dict[Any, dict[str, Any]] = {}

    def start(self) -> tuple[list[dict[str, Any]], list[str]]:
        try:
            from distributed import Client, LocalCluster
        except ImportError as exc:  # pragma: no cover - dask is a dependency
            raise RuntimeError("the dask backend needs `pip install dask[distributed]`") from exc
        if self.scheduler:
            self._client = Client(self.scheduler, timeout="30s")
        else:
            self._cluster = LocalCluster(
                n_workers=self._jobs, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=40
            )
            self._client = Client(self._cluster)
        n = len(self._client.scheduler_info()["workers"])
        # two jobs in flight per worker thread keeps workers busy without hoarding locks
        nthreads = sum(self._client.nthreads().values()) or n or 1
        self.slots = max(1, 2 * nthreads)
        from bench.evaluator import probe_catalog

        catalog, errors = self._client.submit(probe_catalog, self.extra_paths, 1, self.families, pure=False).result()
        return catalog, errors

    def submit(self, job: dict[str, Any]) -> None:
        from bench.evaluator import run_job

        fut = self._client.submit(run_job, job, self.extra_paths, self.families, pure=False)
        self._futures[fut] = job

    def poll(self, timeout: float) -> list[dict[str, Any]]:
        from distributed import wait as dwait

        if not self._futures:
            return []
        with contextlib.suppress(TimeoutError):
            dwait(list(self._futures), timeout=timeout, return_when="FIRST_COMPLETED")
        out = []
        for fut in [f for f in self._futures if f.done()]:
            job = self._futures.pop(fut)
            try:
                out.append(fut.result())
            except Exception as exc:
                out.append(_failed(job, f"dask: {type(exc).__name__}: {exc}", "WorkerDied"))
        return out

    def close(self) -> None:
        for fut in list(self._futures):
            fut.cancel()
        self._futures.clear()
        if self._client is not None:
            with contextlib.suppress(Exception):
                self._client.close()
        if self._cluster is not None:
            with contextlib.suppress(Exception):
                self._cluster.close()


BACKENDS = {"local": LocalBackend, "dask": DaskBackend}


def make_backend(
    name: str,
    jobs: int,
    extra_paths: tuple[str, ...] = (),
    scheduler: str | None = None,
    families: tuple[str, ...] | None = None,
) -> Backend:
    """The backend called ``name`` (``local`` or ``dask``).

    ``families``: the task families whose method packages the workers import
    (``None``: all of them).
    """
    if name == "dask":
        return DaskBackend(jobs, extra_paths, scheduler, families)
    if name == "local":
        if scheduler:
            raise ValueError("--scheduler needs --backend dask")
        return LocalBackend(jobs, extra_paths, families)
    from bench.registry import unknown_message

    raise ValueError(unknown_message("backend", name, BACKENDS))
