"""Re-score stored or published solutions with the task's verifier.

``bench verify`` loads each kept solution, checks its hash, recomputes every
metric with the task (the trusted side) and compares with the record. A result
that does not re-score to the same numbers is reported and the command fails.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from bench import wire
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


def _close(a: float, b: float, rtol: float) -> bool:
    if math.isnan(a) and math.isnan(b):
        return True
    return math.isclose(a, b, rel_tol=rtol, abs_tol=1e-12)


def verify_frame(
    records: pd.DataFrame, root: Path, *, rtol: float = 1e-9, manifests: dict[str, dict[str, Any]] | None = None
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
    rows = records[records["status"].isin(["ok", "truncated", "invalid"])] if not records.empty else records
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
            chk.detail = f"task is now version {task.meta.version}; the record is for {r['task_version']}"
            continue
        inst = task.load(r["instance"])
        if inst.digest != r.get("instance_digest", inst.digest):
            chk.outcome, chk.detail = "mismatch", "instance data differs from the run's (digest)"
            continue
        try:
            metrics = {k: float(v) for k, v in task.evaluate(inst, solution).items()}
        except InvalidSolution as exc:
            if r["status"] == "invalid":
                chk.outcome, chk.detail = "match", f"still invalid: {exc}"
            else:
                chk.outcome, chk.detail = "mismatch", f"recorded ok, now invalid: {exc}"
            continue
        if r["status"] == "invalid":
            chk.outcome, chk.detail = "mismatch", "recorded invalid, now accepted"
            continue
        bad = []
        for name, value in metrics.items():
            rec = r.get(f"metric.{name}")
            if rec is None or (isinstance(rec, float) and math.isnan(rec) and not math.isnan(value)):
                bad.append(f"{name}: missing in record")
            elif not _close(float(rec), value, rtol):
                bad.append(f"{name}: recorded {rec!r}, recomputed {value!r}")
        chk.outcome = "mismatch" if bad else "match"
        chk.detail = "; ".join(bad) or f"{len(metrics)} metrics re-scored"
    return out
