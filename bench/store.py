"""The local run store: one record per job, written atomically, never duplicated.

Layout (``.bench/runs`` by default; ``--store DIR`` or ``BENCH_STORE`` overrides)::

    <store>/<task>/<key[:2]>/<key>.json    the record (schema: RunRecord)
    <store>/<task>/<key[:2]>/<key>.npz     the solution, compressed, no pickle
    <store>/<task>/<key[:2]>/<key>.lock    held (flock) while the job runs
    <store>/_sweeps/<sweep-id>.json        one manifest per `bench run`

Every file is written to a temporary name, fsynced and renamed, so a kill -9
at any moment leaves either the old file or the new one, never half of one.
Locks are ``flock`` locks: the kernel drops them when their holder dies, so a
killed runner never blocks the next one, and two runners never run one job.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, ValidationError

__all__ = [
    "SCHEMA_VERSION",
    "RunRecord",
    "SweepManifest",
    "Store",
    "default_store",
    "atomic_write",
    "records_frame",
    "DONE_STATUSES",
    "STATUSES",
]

SCHEMA_VERSION = 1
#: Statuses that count as finished: a rerun skips them. Other statuses are retried.
DONE_STATUSES = frozenset({"ok", "invalid", "skipped"})

# ``truncated`` came after schema version 1's first records; adding a value keeps every old
# record loadable, so the schema version stays 1.
Status = Literal["ok", "truncated", "invalid", "error", "timeout", "killed", "skipped"]
#: Every status a job can end with, in display order. ``truncated``: the method said the clock
#: cut it short (:func:`bench.truncated`); its solution is verified and kept, but it is never
#: ranked or compared as a finished run, and a rerun retries it, as a ``timeout``.
STATUSES: tuple[str, ...] = ("ok", "truncated", "invalid", "error", "timeout", "killed", "skipped")


class TracePoint(BaseModel):
    """One verified checkpoint: runner-measured method time and the task's metrics."""

    model_config = ConfigDict(extra="forbid", ser_json_inf_nan="constants")
    t: float
    metrics: dict[str, float] | None = None
    invalid: str | None = None


class RunRecord(BaseModel):
    """One job's record. The single place the record schema is defined.

    Times are seconds; ``wall_s`` is the method's time as the runner measured it
    (from the start message to the last answer), ``job_s`` the whole job
    including loading and verification. ``peak_rss_mb`` excludes the memory the
    job inherited from its pre-warmed parent.
    """

    # NaN and infinite metrics are legitimate values: keep them (JSON NaN/Infinity), never null
    model_config = ConfigDict(extra="forbid", ser_json_inf_nan="constants")

    schema_version: int = SCHEMA_VERSION
    key: str = Field(pattern=r"^[0-9a-f]{64}$")
    sweep: str
    attempt: int = 1
    # -- what made the job (all of it is in the key except tier, kind, memory)
    task: str
    task_version: str
    instance: str
    instance_digest: str
    method: str
    method_version: str
    kind: Literal["method", "baseline"]
    params: dict[str, Any]
    seed: int
    rep: int
    master_seed: int
    budget: float
    threads: int
    tier: str
    memory_mb: float
    grace: float = -1.0
    # -- the instance, as data for filters and gaps (no task import needed)
    instance_params: dict[str, Any] = Field(default_factory=dict)
    instance_tags: list[str] = Field(default_factory=list)
    references: dict[str, float] = Field(default_factory=dict)
    # -- outcome
    status: Status
    reason: str = ""
    error_type: str = ""
    traceback: str = ""
    metrics: dict[str, float] = Field(default_factory=dict)
    trace: list[TracePoint] = Field(default_factory=list)
    # -- measurements (runner's, not the method's)
    wall_s: float | None = None
    cpu_s: float | None = None
    peak_rss_mb: float | None = None
    verify_s: float | None = None
    job_s: float | None = None
    #: one-off method setup (e.g. pre-training) paid before this job, if any; not in wall_s
    setup_s: float | None = None
    started_at: float
    finished_at: float
    stdout_tail: str = ""
    stderr_tail: str = ""
    # -- provenance
    environment: dict[str, Any]
    origin: Literal["local", "maintainers", "submitted"] = "local"
    solution_file: str | None = None
    solution_sha256: str | None = None
    previous_statuses: list[str] = Field(default_factory=list)


class SweepManifest(BaseModel):
    """What one ``bench run`` asked for: the command and every job key."""

    model_config = ConfigDict(extra="forbid")
    schema_version: int = SCHEMA_VERSION
    sweep: str
    task: str
    command: str
    args: dict[str, Any]
    keys: list[str]
    started_at: float
    finished_at: float | None = None
    environment: dict[str, Any]


def default_store() -> Path:
    return Path(os.environ.get("BENCH_STORE") or ".bench/runs")


def atomic_write(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` so that readers see all of it or none of it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    dfd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)


class Store:
    """A directory of run records. Safe for several runners at once."""

    def __init__(self, root: str | os.PathLike[str] | None = None) -> None:
        self.root = Path(root) if root is not None else default_store()

    # -- paths ------------------------------------------------------------------
    def _dir(self, task: str, key: str) -> Path:
        return self.root / task / key[:2]

    def record_path(self, task: str, key: str) -> Path:
        return self._dir(task, key) / f"{key}.json"

    def solution_path(self, task: str, key: str) -> Path:
        return self._dir(task, key) / f"{key}.npz"

    # -- locking ----------------------------------------------------------------
    def try_lock(self, task: str, key: str) -> int | None:
        """Take the job's lock without waiting; returns an fd to pass to ``unlock``, or None."""
        path = self._dir(task, key) / f"{key}.lock"
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return None
        return fd

    def wait_lock(self, task: str, key: str) -> int:
        """Take the job's lock, waiting for another runner to finish it."""
        path = self._dir(task, key) / f"{key}.lock"
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        fcntl.flock(fd, fcntl.LOCK_EX)
        return fd

    @staticmethod
    def unlock(fd: int) -> None:
        with contextlib.suppress(OSError):
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)

    # -- records ----------------------------------------------------------------
    def get(self, task: str, key: str) -> RunRecord | None:
        """The record for ``key``, or None if there is none (or it is unreadable)."""
        path = self.record_path(task, key)
        try:
            rec = RunRecord.model_validate_json(path.read_bytes())
            if rec.schema_version != SCHEMA_VERSION:
                raise ValueError(f"schema version {rec.schema_version}, expected {SCHEMA_VERSION}")
            return rec
        except FileNotFoundError:
            return None
        except (ValidationError, ValueError) as exc:
            warnings.warn(f"{path}: unreadable record ignored ({_first_error(exc)})", stacklevel=2)
            return None

    def put(self, record: RunRecord, solution_npz: bytes | None = None) -> RunRecord:
        """Write a record (and its solution first, so a record never points at nothing)."""
        if solution_npz is not None:
            sol = self.solution_path(record.task, record.key)
            atomic_write(sol, solution_npz)
            record.solution_file = str(sol.relative_to(self.root))
        atomic_write(self.record_path(record.task, record.key), record.model_dump_json(indent=1).encode())
        return record

    def iter_records(self, task: str | None = None, skipped: list[str] | None = None) -> Iterator[RunRecord]:
        """Every readable record; corrupted or foreign files are skipped with a warning naming them.

        With a ``skipped`` list, the messages are appended to it instead of
        being emitted as Python warnings (thread-safe, unlike catching them).
        """
        roots = [self.root / task] if task else [p for p in sorted(self.root.glob("*")) if p.is_dir() and not p.name.startswith("_")]
        for root in roots:
            for path in sorted(root.glob("*/*.json")):
                try:
                    raw = json.loads(path.read_bytes())
                    if not isinstance(raw, dict) or raw.get("schema_version") != SCHEMA_VERSION:
                        raise ValueError(f"not a bench run record of schema version {SCHEMA_VERSION}")
                    yield RunRecord.model_validate(raw)
                except (ValidationError, ValueError, OSError, UnicodeDecodeError) as exc:
                    msg = f"{path}: skipped ({_first_error(exc)})"
                    if skipped is None:
                        warnings.warn(msg, stacklevel=2)
                    else:
                        skipped.append(msg)

    def frame(self, task: str | None = None, skipped: list[str] | None = None) -> pd.DataFrame:
        """All records as a long DataFrame (one row per job); see :func:`records_frame`.

        ``skipped``, if given, collects the messages of unreadable files (see :meth:`iter_records`).
        """
        return records_frame(list(self.iter_records(task, skipped)))

    # -- sweeps -----------------------------------------------------------------
    def sweep_path(self, sweep: str) -> Path:
        return self.root / "_sweeps" / f"{sweep}.json"

    def put_sweep(self, manifest: SweepManifest) -> None:
        atomic_write(self.sweep_path(manifest.sweep), manifest.model_dump_json(indent=1).encode())

    def sweeps(self, task: str | None = None) -> list[SweepManifest]:
        out = []
        for path in sorted((self.root / "_sweeps").glob("*.json")):
            try:
                m = SweepManifest.model_validate_json(path.read_bytes())
            except (ValidationError, ValueError, OSError) as exc:
                warnings.warn(f"{path}: skipped ({_first_error(exc)})", stacklevel=2)
                continue
            if task is None or m.task == task:
                out.append(m)
        return sorted(out, key=lambda m: m.started_at)


def _first_error(exc: BaseException) -> str:
    if isinstance(exc, ValidationError):
        e = exc.errors()[0]
        loc = ".".join(str(x) for x in e.get("loc", ()))
        return f"field {loc or '?'}: {e.get('msg')}"
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def records_frame(records: list[RunRecord] | list[dict[str, Any]]) -> pd.DataFrame:
    """Flatten records into one row per job.

    Metrics become ``metric.<name>`` columns, environment fields ``env.<name>``;
    ``params`` is kept as canonical JSON text so rows group cleanly.
    """
    rows = []
    for rec in records:
        d = rec.model_dump() if isinstance(rec, RunRecord) else dict(rec)
        metrics = d.pop("metrics", {}) or {}
        env = d.pop("environment", {}) or {}
        trace = d.pop("trace", []) or []
        d["params"] = json.dumps(d.get("params", {}), sort_keys=True)
        for k, v in (d.pop("instance_params", None) or {}).items():
            d[f"iparam.{k}"] = v
        d["instance_tags"] = ",".join(d.get("instance_tags", []) or [])
        for k, v in (d.pop("references", None) or {}).items():
            d[f"ref.{k}"] = v
        d["previous_statuses"] = ",".join(d.get("previous_statuses", []) or [])
        d["n_checkpoints"] = len(trace)
        d["trace"] = json.dumps(trace)
        for k, v in metrics.items():
            d[f"metric.{k}"] = v
        for k, v in env.items():
            d[f"env.{k}"] = v
        rows.append(d)
    df = pd.DataFrame(rows)
    if df.empty:
        df = pd.DataFrame(columns=[*RunRecord.model_fields.keys()])
    return df


def now() -> float:
    return time.time()
