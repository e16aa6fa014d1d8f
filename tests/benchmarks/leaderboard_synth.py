"""A synthetic results folder for the leaderboard's speed benchmarks: 30 tasks, 100,000 records.

Every bundle is written in ``bench publish``'s exact format: each record is
validated as a :class:`bench.store.RunRecord` and flattened by
:func:`bench.store.records_frame`, the metadata goes through
:class:`bench.task.TaskMeta`, :class:`bench.claims.Claim` and
:class:`bench.task.PaperResult`, and the manifest lists the sha256 of every
file, so :func:`bench.bundle.load_bundles` reads the folder without a warning.

Shape: tasks ``synth-00`` .. ``synth-29`` in four areas (``meta.area``), each
with a paper method (``m-paper``) and four baselines, five repetitions and
133 or 134 standard-tier instances (5 x 5 x 4,000 instance slots = 100,000
counted records). Every tenth task also has a later bundle that reruns the
jobs of its first instance and supersedes the first bundle (so the
superseded bundles' view has something to show). Each task's leaderboard
digest (``_digests/<task>.json``) is written as ``bench publish`` writes it,
by :func:`bench.digest.write_task_digest`. Scores, statuses and
times are drawn from a seeded generator; a fifth of the tasks have the paper's
method ahead of every baseline.

Usage: ``python tests/benchmarks/leaderboard_synth.py DIR`` writes the folder.
"""

from __future__ import annotations

import hashlib
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench.bundle import _parquet_safe, _sha256
from bench.claims import Claim
from bench.digest import write_task_digest
from bench.store import SCHEMA_VERSION, RunRecord, records_frame
from bench.task import PaperResult, TaskMeta

__all__ = ["AREAS", "N_TASKS", "N_RECORDS", "METHODS", "make_results"]

AREAS = ("combinatorial optimisation", "scientific ML", "active learning", "generative models")
N_TASKS = 30
N_RECORDS = 100_000
REPS = 5
#: name -> (kind, mean quality on the 0-1 scale between the random and the best-known reference)
METHODS = {"m-paper": ("method", 0.80), "b-strong": ("baseline", 0.85), "b-mid": ("baseline", 0.60),
           "b-weak": ("baseline", 0.35), "b-rand": ("baseline", 0.05)}  # fmt: skip
ENV = {"bench_version": "0.1.0", "git_commit": "f" * 40, "git_dirty": False, "python": "3.11.7", "numpy": "2.4.6",
       "platform": "Linux-synthetic", "cpu_model": "Synthetic CPU @ 2.60GHz", "cpu_cores": 2, "memory_gb": 23.5,
       "hostname": "synth", "speed_probe_ms": 3.0}  # fmt: skip
T0 = 1.8e9  # a fixed clock: the folder is the same on every run


def _key(*parts: object) -> str:
    return hashlib.sha256("|".join(map(str, parts)).encode()).hexdigest()


def _meta(k: int) -> dict[str, Any]:
    meta = TaskMeta.model_validate({
        "name": f"synth-{k:02d}", "version": "1", "family": f"synth{k:02d}",
        "paper": {"title": f"A synthetic paper number {k} on a problem of {AREAS[k % len(AREAS)]}", "authors": ["A. Author"],
                  "arxiv": f"2501.{k:05d}", "venue": "ICML 2025", "code_url": None},
        "description": f"Synthetic task {k} for the leaderboard's speed benchmark.",
        "metrics": [{"name": "score", "direction": "max", "unit": "", "description": "a synthetic score"}],
        "primary": "score",
        "normalization": {"kind": "linear", "zero": "random", "one": "best_known", "description": "0 random, 1 best known"},
        "gap_reference": "best_known", "budgets": {"smoke": 10.0, "standard": 60.0, "full": 600.0},
    }).model_dump(mode="json")  # fmt: skip
    meta["area"] = AREAS[k % len(AREAS)]  # the optional field TaskMeta is to carry (issue 27, point 6)
    return meta


def _claims(task: str) -> list[dict[str, Any]]:
    raw = [
        {"id": "beats-strong", "statement": "m-paper beats the strong baseline", "source": "Table 1",
         "comparison": {"kind": "versus", "method": "m-paper", "metric": "score", "op": ">", "baseline": "b-strong"}},
        {"id": "beats-mid", "statement": "m-paper beats the middle baseline", "source": "Table 1",
         "comparison": {"kind": "versus", "method": "m-paper", "metric": "score", "op": ">", "baseline": "b-mid"}},
        {"id": "fast", "statement": "m-paper runs in under 2 s", "source": "Sec. 4",
         "comparison": {"kind": "threshold", "method": "m-paper", "metric": "wall_s", "op": "<=", "value": 2.0}},
        {"id": "gpu", "statement": "m-paper is fast on a GPU", "source": "Sec. 5", "not_testable": "needs a GPU",
         "comparison": {"kind": "threshold", "method": "m-paper", "metric": "wall_s", "op": "<=", "value": 1.0}},
    ]  # fmt: skip
    return [Claim.model_validate({**c, "task": task, "paper": "Synthetic (ICML 2025)"}).model_dump(mode="json") for c in raw]


def _records(k: int, task: str, instances: list[str], rng: np.random.Generator, sweep: str, attempt: int = 1) -> list[dict[str, Any]]:
    """Every job of ``instances`` x METHODS x REPS, as validated records (flattened later)."""
    lift = 0.1 if k % 5 == 0 else 0.0  # on every fifth task the paper's method leads
    out = []
    for inst in instances:
        n = int(inst.split("-n")[1])
        rand, best = float(n), float(2 * n)
        for method, (kind, q) in METHODS.items():
            anytime = method == "b-mid"
            for rep in range(REPS):
                u = rng.random()
                status = "invalid" if u < 0.02 else "timeout" if u < 0.03 else "ok"
                quality = float(np.clip(q + (lift if method == "m-paper" else 0.0) + rng.normal(0, 0.05), 0, 1))
                score = rand + (best - rand) * quality
                wall = float(rng.exponential(1.5 if kind == "method" else 3.0))
                trace = [{"t": wall * f, "metrics": {"score": rand + (score - rand) * f}} for f in (0.25, 0.5, 0.75)] if anytime and status == "ok" else []
                out.append(RunRecord.model_validate({
                    "key": _key(task, inst, method, rep), "sweep": sweep, "attempt": attempt, "task": task, "task_version": "1",
                    "instance": inst, "instance_digest": _key("digest", task, inst), "method": method, "method_version": "1",
                    "kind": kind, "params": {"iters": 100}, "seed": int(rng.integers(0, 2**31)), "rep": rep, "master_seed": 0,
                    "budget": 60.0, "threads": 1, "tier": "standard", "memory_mb": 4096.0,
                    "instance_params": {"n": n}, "instance_tags": ["synthetic", "large" if n >= 300 else "small"],
                    "references": {"random": rand, "best_known": best}, "status": status,
                    "reason": "" if status == "ok" else f"synthetic {status}",
                    "metrics": {"score": score} if status == "ok" else {}, "trace": trace,
                    "wall_s": wall, "cpu_s": wall, "peak_rss_mb": float(rng.uniform(50, 500)), "verify_s": 0.001,
                    "job_s": wall + 0.2, "started_at": T0, "finished_at": T0 + wall, "environment": ENV, "origin": "maintainers",
                }))  # fmt: skip
    return out


def _write_bundle(task_dir: Path, date: str, records: list[RunRecord], meta: dict[str, Any], instances: list[str],
                  supersedes: list[str]) -> Path:  # fmt: skip
    """One bundle directory in ``bench publish``'s layout, hashes in the manifest."""
    task = meta["name"]
    bundle = f"{date}-maintainers-{_key(task, date, len(records))[:10]}"
    d = task_dir / bundle
    (d / "solutions").mkdir(parents=True)
    _parquet_safe(records_frame(records)).to_parquet(d / "records.parquet", index=False)
    ids = sorted(set(instances))
    export = {"meta": meta, "tiers": {"smoke": ids[:2], "standard": ids, "full": []},
              "instances": {i: {"params": {"n": int(i.split("-n")[1])}, "tags": ["synthetic"]} for i in ids}}  # fmt: skip
    (d / "task.json").write_text(json.dumps(export, indent=1))
    paper = [PaperResult(instance=ids[0], method="m-paper", metric="score", value=1.5 * int(ids[0].split("-n")[1]), source="Table 1")]
    (d / "claims.json").write_text(json.dumps({"claims": _claims(task), "paper_results": [p.model_dump(mode="json") for p in paper]}, indent=1))
    catalog = [{"name": m, "kind": kind, "version": "1", "tasks": [task], "params": {"iters": 100}, "grid": None, "budgets": {},
                "reference": f"synthetic {m}", "description": f"synthetic {kind} {m}", "deviations": "", "deterministic": True,
                "development_seeds": []} for m, (kind, _) in METHODS.items()]  # fmt: skip
    (d / "methods.json").write_text(json.dumps(catalog, indent=1))
    files = {n: _sha256(d / n) for n in ("records.parquet", "task.json", "claims.json", "methods.json")}
    counts: dict[str, int] = {}
    for r in records:
        counts[r.status] = counts.get(r.status, 0) + 1
    manifest = {
        "schema_version": SCHEMA_VERSION, "bundle": bundle, "task": task, "task_version": "1", "origin": "maintainers",
        "author": "bench maintainers", "created_at": f"{date[:4]}-{date[4:6]}-{date[6:]}T00:00:00Z",
        "sweeps": [{"sweep": records[0].sweep, "command": f"python -m bench run --task {task} --tier standard --seeds {REPS}",
                    "args": {"task": task}, "started_at": T0, "finished_at": T0 + 3600}],
        "hardware": [ENV["cpu_model"]], "environment": ENV, "git_commits": [ENV["git_commit"]], "records": len(records),
        "status_counts": counts, "supersedes": supersedes, "supersedes_methods": [], "left_out_already_published": {},
        "solutions_left_out": {}, "files": files,
    }  # fmt: skip
    (d / "manifest.json").write_text(json.dumps(manifest, indent=1))
    return d


def make_results(root: str | Path, n_tasks: int = N_TASKS, n_records: int = N_RECORDS, seed: int = 0, *, digests: bool = True) -> Path:
    """Write the synthetic results folder under ``root`` and return it.

    Parameters
    ----------
    root
        An empty (or absent) directory.
    n_tasks, n_records
        Tasks and counted records (after superseding); ``n_records`` must be a
        multiple of ``len(METHODS) * REPS``.
    seed
        Seed of the generator: the same arguments give the same folder.
    digests
        Write each task's leaderboard digest (``_digests/<task>.json``) with
        :func:`bench.digest.write_task_digest`, as ``bench publish`` does
        after every bundle (about 1 s a task).
    """
    root = Path(root)
    per_slot = len(METHODS) * REPS
    if n_records % per_slot:
        raise ValueError(f"n_records must be a multiple of {per_slot} (methods x repetitions), got {n_records}")
    slots = n_records // per_slot
    rng = np.random.default_rng(seed)
    for k in range(n_tasks):
        meta = _meta(k)
        task = meta["name"]
        n_inst = slots // n_tasks + (1 if k < slots % n_tasks else 0)
        instances = [f"i{i:03d}-n{100 + 5 * i}" for i in range(n_inst)]
        first = _write_bundle(root / task, "20270101", _records(k, task, instances, rng, f"s{k}a"), meta, instances, [])
        if k % 10 == 0:  # a quiet rerun of the first instance's jobs replaces those records
            rerun = _records(k, task, instances[:1], rng, f"s{k}b", attempt=2)
            _write_bundle(root / task, "20270102", rerun, meta, instances, [first.name])
        if digests:  # what `bench publish` writes after each bundle, with the same function
            write_task_digest(root, task)
    return root


if __name__ == "__main__":
    t = time.perf_counter()
    out = make_results(sys.argv[1] if len(sys.argv) > 1 else "synthetic-results")
    print(f"wrote {out} in {time.perf_counter() - t:.1f} s")
