"""The runner: expand a sweep into jobs, run them on a backend, write the store.

Data flows one way: the runner asks the task for instances, the backend's
trusted workers run and verify each job, and the runner writes one record per
job. It is the only writer of the store. It never imports a method: their
metadata (the catalog) arrives as data from a worker.

Resume: a job whose key already has a finished record (``ok``, ``invalid``,
``skipped``) is not run again unless ``force``; failed jobs (``error``,
``timeout``, ``killed``) are retried, and a crash is never cached as done.
"""

from __future__ import annotations

import json
import secrets
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench import environment, holdout
from bench.backends import make_backend
from bench.jobs import Job, derive_seed, expand_grid
from bench.registry import get_task, unknown_message
from bench.store import DONE_STATUSES, RunRecord, Store, SweepManifest
from bench.task import TIERS, Task

__all__ = ["RunOptions", "SweepResult", "SweepPlan", "plan", "plan_sweep", "run_sweep", "UsageError", "select_methods"]


class UsageError(ValueError):
    """Bad arguments or unknown names (the CLI turns it into exit code 2)."""


@dataclass
class RunOptions:
    """Everything ``bench run`` can be asked (mirrors the CLI options)."""

    task: str
    methods: list[str] | None = None
    instances: list[str] | None = None
    tier: str = "smoke"
    seeds: int = 1
    master_seed: int = 0
    jobs: int = 1
    budget: float | None = None
    threads: int = 1
    memory_mb: float = 4096.0
    backend: str = "local"
    scheduler: str | None = None
    store: Path | None = None
    force: bool = False
    params: dict[str, Any] = field(default_factory=dict)
    grid: bool = False
    kinds: list[str] | None = None
    extra_paths: tuple[str, ...] = ()
    progress: bool = True
    command: str = ""
    origin: str = "local"


@dataclass
class SweepResult:
    sweep: str
    keys: list[str]
    counts: Counter
    cached: int
    discovery_errors: list[str]
    store: Store


def select_methods(
    task: str,
    catalog: list[dict[str, Any]],
    names: list[str] | None,
    kinds: list[str] | None = None,
    errors: list[str] | tuple[str, ...] = (),
) -> list[dict[str, Any]]:
    """Catalog entries that solve ``task``, filtered by name and kind.

    An unknown name is a :class:`UsageError`; when some module or plugin file
    failed to import (``errors``, from discovery), the message names them, since
    the method may be defined there.
    """
    by_name = {m["name"]: m for m in catalog}
    for n in names or []:
        if n not in by_name:
            why = "; ".join(f"could not import {e}" for e in errors)
            raise UsageError(unknown_message("method", n, by_name) + (f" ({why})" if why else ""))
        if task not in by_name[n]["tasks"]:
            raise UsageError(f"method {n!r} does not solve task {task!r} (it solves {', '.join(by_name[n]['tasks']) or 'nothing'})")
    chosen = [m for m in catalog if task in m["tasks"] and (not names or m["name"] in names)]
    if kinds:
        chosen = [m for m in chosen if m["kind"] in kinds]
    return sorted(chosen, key=lambda m: (m["kind"] != "method", m["name"]))


def plan(task: Task, methods: list[dict[str, Any]], opts: RunOptions) -> list[Job]:
    """Expand task x instance x method x params x seed into jobs, in a stable order."""
    held_out = opts.tier == holdout.TIER
    if opts.tier not in TIERS and not held_out:
        raise UsageError(unknown_message("tier", opts.tier, (*TIERS, holdout.TIER)))
    if opts.seeds < 1:
        raise UsageError("--seeds must be at least 1")
    try:
        specs = task.holdout_instances() if held_out else task.instances(opts.tier)
    except holdout.HoldoutUnavailable as exc:
        raise UsageError(str(exc)) from None
    # a holdout job takes its base tier's method budgets and parameters
    param_tier = getattr(task, "holdout_base", "standard") if held_out else opts.tier
    if opts.instances:
        known = {s.id: s for s in specs} if held_out else task.all_instances()
        for iid in opts.instances:
            if iid not in known:
                raise UsageError(unknown_message(f"instance of task {task.meta.name}", iid, known))
        specs = [known[i] for i in opts.instances]
    known_params = set().union(*(m["params"] for m in methods)) if methods else set()
    unknown = set(opts.params) - known_params
    if unknown:
        raise UsageError(
            f"no selected method has a parameter {sorted(unknown)[0]!r}; parameters: {', '.join(sorted(known_params)) or 'none'}"
        )
    jobs: list[Job] = []
    digests = {s.id: task.instance_digest(s.id) for s in specs}
    for spec in specs:
        for m in methods:
            tier_defaults = (m.get("tier_params") or {}).get(param_tier, {})
            for params in expand_grid({**m["params"], **tier_defaults}, m["grid"] if opts.grid else None):
                p = {**params, **{k: v for k, v in opts.params.items() if k in m["params"]}}
                budget = opts.budget
                if budget is None:
                    budget = m["budgets"].get(param_tier) or task.budget(opts.tier, spec)
                for rep in range(opts.seeds):
                    jobs.append(
                        Job(
                            task=task.meta.name,
                            task_version=task.meta.version,
                            instance=spec.id,
                            instance_digest=digests[spec.id],
                            method=m["name"],
                            method_version=str(m["version"]),
                            kind=m["kind"],
                            params=dict(sorted(p.items())),
                            seed=derive_seed(opts.master_seed, task.meta.name, spec.id, rep),
                            rep=rep,
                            master_seed=opts.master_seed,
                            budget=float(budget),
                            threads=opts.threads,
                            tier=opts.tier,
                            memory_mb=opts.memory_mb,
                        )
                    )
    return jobs


def new_sweep_id() -> str:
    return time.strftime("%Y%m%dT%H%M%S", time.gmtime()) + "-" + secrets.token_hex(3)


def _record(job: Job, sweep: str, result: dict[str, Any], previous: RunRecord | None, origin: str) -> RunRecord:
    res = {k: v for k, v in result.items() if k not in ("solution_npz",)}
    res.setdefault("environment", environment.capture())
    res.setdefault("started_at", time.time())
    res.setdefault("finished_at", time.time())
    sol_sha = res.pop("solution_sha256", None)
    return RunRecord(
        key=job.key,
        sweep=sweep,
        attempt=(previous.attempt + 1) if previous else 1,
        previous_statuses=[*previous.previous_statuses, previous.status] if previous else [],
        origin=origin,
        solution_sha256=sol_sha,
        **job.to_dict(),
        **res,
    )


class _Progress:
    """A rich progress bar with counts by status and an ETA (or nothing)."""

    def __init__(self, total: int, enabled: bool, title: str) -> None:
        self.counts: Counter = Counter()
        self._p = None
        if enabled and total:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            self._p = Progress(
                TextColumn("[bold]{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[counts]}"),
                TimeElapsedColumn(),
                TextColumn("eta"),
                TimeRemainingColumn(),
                console=Console(stderr=True),
                transient=False,
            )
            self._p.start()
            self._t = self._p.add_task(title, total=total, counts="")

    def advance(self, status: str) -> None:
        self.counts[status] += 1
        if self._p is not None:
            colors = {"ok": "green", "invalid": "yellow", "error": "red", "truncated": "magenta", "timeout": "magenta", "killed": "red", "skipped": "dim", "cached": "cyan"}
            text = " ".join(f"[{colors.get(s, 'white')}]{s} {n}[/]" for s, n in sorted(self.counts.items()))
            self._p.update(self._t, advance=1, counts=text)

    def close(self) -> None:
        if self._p is not None:
            self._p.stop()


def run_sweep(opts: RunOptions) -> SweepResult:
    """Run a sweep to completion; returns its id, job keys and status counts.

    Ctrl-C stops the workers (and every job process) and raises
    ``KeyboardInterrupt``; finished records are kept and a rerun resumes.
    """
    _check_task(opts.task)
    task = get_task(opts.task)
    store = Store(opts.store)
    # workers import only this task's family of methods and baselines (plus plugins)
    backend = make_backend(opts.backend, opts.jobs, opts.extra_paths, opts.scheduler, (task.meta.family,))
    started = time.time()
    try:
        catalog, errors = backend.start()
        methods = select_methods(opts.task, catalog, opts.methods, opts.kinds, errors)
        if not methods:
            raise UsageError(f"no registered method solves task {opts.task!r}" + (f" (discovery errors: {'; '.join(errors)})" if errors else ""))
        jobs = plan(task, methods, opts)
        sweep = new_sweep_id()
        manifest = SweepManifest(
            sweep=sweep,
            task=opts.task,
            command=opts.command or " ".join(sys.argv),
            args=_args_dict(opts),
            keys=[j.key for j in jobs],
            started_at=started,
            environment=environment.capture(),
        )
        store.put_sweep(manifest)

        progress = _Progress(len(jobs), opts.progress, f"{opts.task} [{opts.tier}]")
        todo: list[Job] = []
        cached = 0
        for job in jobs:
            rec = store.get(job.task, job.key)
            if rec is not None and rec.status in DONE_STATUSES and not opts.force:
                cached += 1
                progress.advance("cached")
            else:
                todo.append(job)
        try:
            _drive(backend, todo, store, sweep, opts, progress)
        finally:
            progress.close()
        manifest.finished_at = time.time()
        store.put_sweep(manifest)
        counts = Counter()
        for job in jobs:
            rec = store.get(job.task, job.key)
            counts[rec.status if rec else "missing"] += 1
        return SweepResult(sweep, manifest.keys, counts, cached, errors, store)
    finally:
        backend.close()


@dataclass
class SweepPlan:
    """What ``bench run --dry-run`` reports: the jobs a sweep would run, and how long they should take.

    ``estimate_s`` sums, over the jobs to run, a past ``job_s`` median of the
    same method, instance and tier: from the store's earlier records, else from
    the published bundles under ``results/``; else the job's budget (``timed``
    counts the jobs with a past timing). ``bound_s`` sums the budgets: no job
    runs longer (plus the kill grace).
    """

    task: str
    tier: str
    jobs: list[Job]
    reused: int
    timed: int
    estimate_s: float
    bound_s: float
    discovery_errors: list[str]

    def per_method(self) -> list[dict[str, Any]]:
        """One row per method: kind, instances, jobs."""
        rows: dict[str, dict[str, Any]] = {}
        for j in self.jobs:
            r = rows.setdefault(j.method, {"method": j.method, "kind": j.kind, "instances": set(), "jobs": 0})
            r["instances"].add(j.instance)
            r["jobs"] += 1
        return [{**r, "instances": len(r["instances"])} for r in rows.values()]


def plan_sweep(opts: RunOptions, published: str | Path = "results") -> SweepPlan:
    """Plan ``opts`` without running anything or writing the store (``bench run --dry-run``).

    The methods' metadata comes from a worker, as in a run (no method is
    imported here); only the task's family and the plugins are imported there.
    """
    from bench.evaluator import probe_catalog

    _check_task(opts.task)
    task = get_task(opts.task)
    catalog, errors = probe_catalog(tuple(opts.extra_paths), families=(task.meta.family,))
    methods = select_methods(opts.task, catalog, opts.methods, opts.kinds, errors)
    if not methods:
        raise UsageError(f"no registered method solves task {opts.task!r}")
    jobs = plan(task, methods, opts)
    store = Store(opts.store)
    past: dict[tuple[str, str, str], float] = {}
    frames = [store.frame(opts.task)]
    if Path(published).is_dir():
        from bench.bundle import load_bundles

        frames.append(load_bundles(published, opts.task).records)
    for df in reversed(frames):  # the store's own timings win
        if not df.empty and "job_s" in df:
            ok = df[df["status"] == "ok"]
            past.update(ok.groupby(["method", "instance", "tier"])["job_s"].median().to_dict())
    reused = timed = 0
    estimate = bound = 0.0
    for job in jobs:
        rec = store.get(job.task, job.key)
        if rec is not None and rec.status in DONE_STATUSES and not opts.force:
            reused += 1
            continue
        t = past.get((job.method, job.instance, job.tier))
        timed += t is not None
        estimate += float(t) if t is not None else job.budget
        bound += job.budget
    return SweepPlan(opts.task, opts.tier, jobs, reused, timed, estimate, bound, list(errors))


def _check_task(name: str) -> None:
    from bench.registry import UnknownNameError, find_task

    try:
        find_task(name)
    except UnknownNameError as exc:
        raise UsageError(str(exc)) from None


def _args_dict(opts: RunOptions) -> dict[str, Any]:
    d = {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(opts).items() if k not in ("progress",)}
    return json.loads(json.dumps(d, default=str))


def _drive(backend: Any, todo: list[Job], store: Store, sweep: str, opts: RunOptions, progress: _Progress) -> None:
    """Claim, submit, collect and record; then wait for jobs other runners hold."""
    pending = list(reversed(todo))
    inflight: dict[str, tuple[Job, int]] = {}
    held_elsewhere: list[Job] = []

    def record(job: Job, result: dict[str, Any]) -> None:
        previous = store.get(job.task, job.key)
        rec = _record(job, sweep, result, previous, opts.origin)
        store.put(rec, result.get("solution_npz"))
        progress.advance(rec.status)

    while pending or inflight:
        while pending and len(inflight) < backend.slots:
            job = pending.pop()
            fd = store.try_lock(job.task, job.key)
            if fd is None:
                held_elsewhere.append(job)
                continue
            rec = store.get(job.task, job.key)
            if rec is not None and rec.status in DONE_STATUSES and not opts.force:
                store.unlock(fd)  # finished by another runner since we looked
                progress.advance("cached")
                continue
            inflight[job.key] = (job, fd)
            backend.submit(job.to_dict())
        for out in backend.poll(0.5):
            job, fd = inflight.pop(out["key"])
            try:
                record(job, out["result"])
            finally:
                store.unlock(fd)

    for job in held_elsewhere:
        fd = store.wait_lock(job.task, job.key)  # another runner is on it: wait, then read
        try:
            rec = store.get(job.task, job.key)
            if rec is not None and rec.status in DONE_STATUSES:
                progress.advance("cached")
                continue
            # the other runner died or failed it: run it ourselves
            backend.submit(job.to_dict())
            while True:
                outs = backend.poll(0.5)
                if outs:
                    record(job, outs[0]["result"])
                    break
        finally:
            store.unlock(fd)
