"""Re-score stored or published solutions with the task's verifier.

``bench verify`` loads each kept solution, checks its hash, recomputes every
metric with the task (the trusted side) and compares with the record. A result
that does not re-score to the same numbers is reported and the command fails.

The instance is regenerated here and its digest compared with the record's.
Generated floating-point data can come out last-bit different on another CPU
(numpy's SIMD paths for ``exp``/``log``/..., the BLAS kernels OpenBLAS picks),
so a different digest alone does not fail a record: the re-scored metrics
decide (within ``rtol``, or a metric's own wider ``Metric.rtol``; metrics
marked ``Metric.timed`` are not compared), and the detail says that the bytes differ and on
which CPUs (``env.cpu_simd``, recorded since digest-tolerant verification).
A generator that really changed gives other metrics, and a mismatch.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from bench import environment, wire
from bench.bundle import left_out_solutions
from bench.registry import get_task
from bench.task import InvalidSolution

__all__ = ["Check", "verify_frame"]


@dataclass
class Check:
    key: str
    task: str
    instance: str
    method: str
    outcome: str  # "match", "mismatch", "unverifiable"
    detail: str = ""


def _text(value: Any) -> str:
    return value if isinstance(value, str) and value else ""


def _close(a: float, b: float, rtol: float) -> bool:
    if math.isnan(a) and math.isnan(b):
        return True
    return math.isclose(a, b, rel_tol=rtol, abs_tol=1e-12)


def verify_frame(
    records: pd.DataFrame,
    root: Path,
    *,
    rtol: float = 1e-9,
    manifests: dict[str, dict[str, Any]] | None = None,
) -> list[Check]:
    """Re-score every ``ok``, ``truncated`` and ``invalid`` row of ``records`` whose solution was kept.

    ``root`` is the directory that ``solution_file`` paths are relative to
    (the store, or a bundle directory; a ``bundle_path`` column overrides it).
    ``manifests`` (bundle path -> manifest, as :class:`bench.bundle.Bundles`
    holds them) names the solutions each bundle left out to keep its size
    (``solutions_left_out``): those are unverifiable, not mismatches, even
    where the record still names the file (a bundle trimmed after publishing).
    """
    out: list[Check] = []
    rows = (
        records[records["status"].isin(["ok", "truncated", "invalid"])]
        if not records.empty
        else records
    )
    for r in rows.to_dict("records"):
        chk = Check(r["key"], r["task"], r["instance"], r["method"], "unverifiable")
        out.append(chk)
        sol_file = r.get("solution_file")
        base = Path(r["bundle_path"]) if isinstance(r.get("bundle_path"), str) else Path(root)
        size = left_out_solutions((manifests or {}).get(str(base), {})).get(r["key"])
        if size is not None:
            chk.detail = f"solution left out of the bundle ({size / 2**20:.2f} MB; see the manifest's solutions_left_out): `bench export` reads it from the run store or the git commit that held it"
            continue
        if not isinstance(sol_file, str) or not sol_file:
            chk.detail = "no solution was kept"
            continue
        path = base / sol_file
        try:
            solution = wire.load_npz(str(path))
        except (OSError, ValueError) as exc:
            chk.outcome, chk.detail = "mismatch", f"{path}: unreadable solution ({exc})"
            continue
        want = r.get("solution_sha256")
        if isinstance(want, str) and want and wire.digest(solution) != want:
            chk.outcome, chk.detail = "mismatch", f"{path}: solution hash differs from the record"
            continue
        try:
            task = get_task(r["task"])
        except KeyError as exc:
            chk.detail = str(exc)
            continue
        if task.meta.version != r["task_version"]:
            chk.detail = (
                f"task is now version {task.meta.version}; the record is for {r['task_version']}"
            )
            continue
        try:
            inst = task.load(r["instance"])
        except KeyError as exc:  # a holdout id without the secret, or an instance the task no longer lists
            chk.detail = str(exc.args[0]) if exc.args else str(exc)
            continue
        # the bytes the job ran on: the worker's where they differed from the planner's (bench.evaluator)
        recorded_digest = (
            r.get("env.instance_digest")
            if _text(r.get("env.instance_digest"))
            else r.get("instance_digest")
        )
        # Generated float data can differ in its last bits from one CPU to another (numpy's SIMD
        # paths for exp/log/..., OpenBLAS's kernels): the digest then differs although the
        # instance is the same one. The re-scored metrics decide; the detail says the bytes differ.
        note = ""  # "; instance bytes differ ...", appended to whatever the re-score says
        if isinstance(recorded_digest, str) and recorded_digest and inst.digest != recorded_digest:
            ran_on = _text(r.get("env.cpu_simd")) or f"{r.get('env.cpu_model', '?')}, SIMD not recorded"
            note = (
                f"; instance bytes differ from the run's (digest {recorded_digest[:12]}, here {inst.digest[:12]};"
                f" the run's CPU: {ran_on}, this one: {environment.cpu_simd() or '?'})"
            )
        try:
            metrics = {k: float(v) for k, v in task.evaluate(inst, solution).items()}
        except InvalidSolution as exc:
            if r["status"] == "invalid":
                chk.outcome, chk.detail = "match", f"still invalid: {exc}"
            else:
                chk.outcome, chk.detail = "mismatch", f"recorded ok, now invalid: {exc}"
            chk.detail += note
            continue
        if r["status"] == "invalid":
            chk.outcome, chk.detail = "mismatch", "recorded invalid, now accepted" + note
            continue
        bad, timed = [], []
        specs = {m.name: m for m in task.meta.metrics}
        for name, value in metrics.items():
            rec = r.get(f"metric.{name}")
            spec = specs.get(name)
            if spec is not None and spec.timed:
                timed.append(name)  # a time measured on the run's machine: not comparable here
                continue
            tol = max(rtol, spec.rtol) if spec is not None and spec.rtol is not None else rtol
            if rec is None or (
                isinstance(rec, float) and math.isnan(rec) and not math.isnan(value)
            ):
                bad.append(f"{name}: missing in record")
            elif not _close(float(rec), value, tol):
                bad.append(f"{name}: recorded {rec!r}, recomputed {value!r}")
        chk.outcome = "mismatch" if bad else "match"
        chk.detail = "; ".join(bad) or f"{len(metrics) - len(timed)} metrics re-scored"
        if timed:
            chk.detail += (
                f" ({len(timed)} timed on the run's machine not compared: {', '.join(timed)})"
            )
        if note:
            chk.detail += note + ("" if bad else ", and every compared metric agrees")
    return out
