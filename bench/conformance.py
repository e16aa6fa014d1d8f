"""``bench validate``: the conformance suite a submitted method must pass.

For each method found in a file (or named), it checks, in order:

1. **discovery**: the file imports in a worker without error and registers a method;
2. **metadata**: kind, tasks (all known), version, name;
3. **interface**: ``solve(instance, *, seed, budget, **params)`` (or a class with
   ``select``) accepts what the runner passes;
4. **smoke runs**: every smoke instance of every task it solves runs in the
   sandbox and ends ``ok`` (or ``skipped`` with a reason); the task's verifier
   accepts each solution;
5. **determinism**: if the method declares ``deterministic=True``, a second run
   with the same seeds ends ``ok`` again with byte-identical solutions (a rerun
   that the clock cut short, ``truncated`` or ``timeout``, fails the check: the
   smoke budget must leave room for a slower or loaded machine).

Nothing here imports the method in this process: discovery and runs happen in
workers, as in a real sweep.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.evaluator import probe_catalog
from bench.registry import UnknownNameError, find_task, unknown_message
from bench.runner import RunOptions, run_sweep
from bench.scaffold import NAME_RE

__all__ = ["CheckResult", "ValidationReport", "validate", "determinism_check"]


@dataclass
class CheckResult:
    method: str
    check: str
    passed: bool
    detail: str = ""


@dataclass
class ValidationReport:
    target: str
    checks: list[CheckResult] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return bool(self.checks) and all(c.passed for c in self.checks)

    def add(self, method: str, check: str, passed: bool, detail: str = "") -> bool:
        self.checks.append(CheckResult(method, check, passed, detail))
        return passed


def _methods_for(target: str, catalog: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], tuple[str, ...]]:
    path = Path(target)
    if path.suffix == ".py" or path.exists():
        if not path.exists():
            raise FileNotFoundError(f"{target}: no such file")
        resolved = str(path.resolve())
        return [m for m in catalog if m["source"].rsplit(":", 1)[0] == resolved], (resolved,)
    by_name = {m["name"]: m for m in catalog}
    if target not in by_name:
        raise KeyError(unknown_message("method", target, by_name))
    return [by_name[target]], ()


def validate(target: str, *, jobs: int = 1, memory_mb: float = 4096.0, progress: bool = False) -> ValidationReport:
    """Run the conformance suite on a method file or a registered method name."""
    report = ValidationReport(target)
    extra: tuple[str, ...] = ()
    if Path(target).exists() or target.endswith(".py"):
        if not Path(target).exists():
            raise FileNotFoundError(f"{target}: no such file")
        extra = (str(Path(target).resolve()),)
    # a file is probed alone (importing every family costs seconds), then beside the
    # families of the tasks it names, which is what a sweep will import: a name that
    # clashes with a registered method fails discovery here, not in the first sweep
    catalog, errors = probe_catalog(extra, families=() if extra else None)
    methods, extra = _methods_for(target, catalog)
    if extra and methods:
        families = sorted({find_task(t).meta.family for m in methods for t in m["tasks"] if _known_task(t)})
        if families:
            errors = [*errors, *probe_catalog(extra, families=tuple(families))[1]]
    file_errors = list(dict.fromkeys(e for e in errors if not extra or extra[0] in e or Path(extra[0]).stem in e))
    if file_errors or not methods:
        report.add(target, "discovery", False, "; ".join(file_errors) or "no method is registered in it (missing @method?)")
        return report
    for m in methods:
        name = m["name"]
        report.add(name, "discovery", True, m["source"])
        problems = []
        if not NAME_RE.match(name):
            problems.append(f"name {name!r} must be lower case letters, digits, '-' or '_'")
        if m["kind"] not in ("method", "baseline"):
            problems.append(f"kind {m['kind']!r} must be 'method' or 'baseline'")
        if not m["tasks"]:
            problems.append("tasks=[...] is empty")
        problems += [_unknown_task(t) for t in m["tasks"] if not _known_task(t)]
        if not str(m["version"]).strip():
            problems.append("version is empty")
        if not report.add(name, "metadata", not problems, "; ".join(problems) or "ok"):
            continue
        if not m["reference"]:
            report.warnings.append(f"{name}: reference is empty; name the paper or library it implements")
        if not m["deviations"] and m["kind"] == "method":
            report.warnings.append(f"{name}: deviations is empty; list every departure from the paper (or say 'none')")
        if not report.add(name, "interface", not m["interface_problems"], "; ".join(m["interface_problems"]) or "ok"):
            continue
        for task in m["tasks"]:
            _smoke(report, m, task, extra, jobs, memory_mb, progress)
    return report


def _known_task(name: str) -> bool:
    try:
        find_task(name)
    except UnknownNameError:
        return False
    return True


def _unknown_task(name: str) -> str:
    try:
        find_task(name)
    except UnknownNameError as exc:
        return str(exc)
    return ""


def determinism_check(first: list[Any], again: dict[str, Any]) -> tuple[bool, str]:
    """Compare a rerun with the first runs of a deterministic method: ``(passed, detail)``.

    ``first`` are the first run's records; ``again`` maps each job key to its
    rerun's record. Every first ``ok`` run must be ``ok`` again with the same
    solution sha256. A rerun that ended otherwise (``truncated``, ``timeout``)
    is not compared, but fails the check all the same, naming its status.
    """
    oks = [r for r in first if r.status == "ok"]
    lost = [f"{r.instance} ({again[r.key].status})" for r in oks if again[r.key].status != "ok"]
    diff = [r.instance for r in oks if again[r.key].status == "ok" and again[r.key].solution_sha256 != r.solution_sha256]
    problems = []
    if diff:
        problems.append(f"same seed, different solutions on {diff[:5]}")
    if lost:
        problems.append(f"the rerun did not end ok on {lost[:5]}: a clock-cut run cannot be compared")
    return not problems, "; ".join(problems) or "same seed gives identical solutions"


def _smoke(report: ValidationReport, m: dict[str, Any], task: str, extra: tuple[str, ...], jobs: int, memory_mb: float, progress: bool) -> None:
    name = m["name"]
    with tempfile.TemporaryDirectory(prefix="bench-validate-") as tmp:
        opts = RunOptions(task=task, methods=[name], tier="smoke", seeds=1, jobs=jobs, store=Path(tmp), extra_paths=extra, progress=progress, memory_mb=memory_mb, command=f"bench validate {report.target}")
        first = run_sweep(opts)
        recs = {r.key: r for r in first.store.iter_records(task)}
        bad = [r for r in recs.values() if r.status not in ("ok", "skipped")]
        oks = [r for r in recs.values() if r.status == "ok"]
        detail = "; ".join(f"{r.instance}: {r.status} ({r.reason[:160]})" for r in bad[:5])
        if not oks and not bad:
            detail = "every smoke instance was skipped: " + "; ".join(sorted({r.reason for r in recs.values()}))[:300]
        report.add(name, f"smoke runs on {task}", not bad and bool(oks), detail or f"{len(oks)} ok, {len(recs) - len(oks)} skipped")
        if bad or not oks:
            return
        no_metrics = [r.instance for r in oks if not r.metrics]
        report.add(name, f"verifier accepts output ({task})", not no_metrics, f"no metrics for {no_metrics}" if no_metrics else f"{len(oks)} solutions verified")
        if m["deterministic"]:
            opts.force = True
            run_sweep(opts)
            again = {r.key: r for r in first.store.iter_records(task)}
            report.add(name, f"determinism ({task})", *determinism_check(list(recs.values()), again))
