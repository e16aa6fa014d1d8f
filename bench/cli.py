"""``python -m bench``: list, run, show, validate, new-method, verify, publish, export, claims, leaderboard.

Bad arguments and unknown names get one line on stderr and exit code 2; no
traceback (set ``BENCH_DEBUG=1`` to see one).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

__all__ = ["main", "build_parser"]

EXIT_USAGE = 2


class _Usage(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2 (argparse prints usage too)
        raise _Usage(f"{self.prog}: {message} (see `{self.prog} --help`)")


def _kv(text: str) -> tuple[str, Any]:
    if "=" not in text:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    k, v = text.split("=", 1)
    try:
        return k, json.loads(v)
    except json.JSONDecodeError:
        return k, v


def _positive_int(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return v


def _positive_float(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}") from None
    if not v > 0:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}")
    return v


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="bench", description="Verified benchmarks for ICML 2025 methods.")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True

    s = sub.add_parser("list", help="list tasks, methods, instances or the store's sweeps")
    s.add_argument("what", nargs="?", default="tasks", choices=["tasks", "methods", "instances", "sweeps"])
    s.add_argument("--task", help="task whose methods, instances or sweeps to list")
    s.add_argument("--store", help="run store whose sweeps to list (default .bench/runs or $BENCH_STORE)")
    s.add_argument("--format", choices=["table", "json"], default="table", help="json: one object per row, every field")
    s.add_argument(
        "--tier",
        default=None,
        help="smoke, standard or full (instances); holdout: the standard tier's shapes with secret seeds "
        "(needs BENCH_HOLDOUT_SECRET, held by the maintainers)",
    )
    s.add_argument("--plugin", action="append", default=[], help="extra method file or directory")

    s = sub.add_parser("run", help="run a sweep (task x instances x methods x seeds)")
    s.add_argument("--task", required=True, help="a task name (`bench list tasks`), or `all`: one sweep per task, in turn")
    s.add_argument("--method", action="extend", nargs="+", dest="methods", help="methods to run (default: all that solve the task)")
    s.add_argument("--kind", action="append", choices=["method", "baseline"], help="only methods of this kind")
    s.add_argument("--instances", action="extend", nargs="+", help="instance ids (default: the tier's)")
    s.add_argument(
        "--tier",
        default=None,
        help="smoke (CI), standard (leaderboard) or full (paper scale); default smoke, or with --instances the first tier that holds them all",
    )
    s.add_argument("--seeds", type=_positive_int, default=1, help="repetitions per instance")
    s.add_argument("--seed", type=int, default=0, help="master seed; job seeds derive from it")
    s.add_argument("--jobs", type=_positive_int, default=1, help="parallel workers (local) or per-worker slots")
    s.add_argument("--budget", type=_positive_float, help="seconds per job (default: method/task tier budget)")
    s.add_argument("--threads", type=_positive_int, default=1, help="math threads per job (OMP, MKL, torch)")
    s.add_argument("--memory-mb", type=_positive_float, default=4096.0, help="memory limit per job")
    s.add_argument("--backend", default="local", help="local or dask")
    s.add_argument("--scheduler", help="Dask scheduler address (with --backend dask)")
    s.add_argument("--store", help="run store directory (default .bench/runs or $BENCH_STORE)")
    s.add_argument("--force", action="store_true", help="rerun jobs that already have a finished record")
    s.add_argument("--param", action="append", type=_kv, default=[], help="override a method parameter, KEY=VALUE (JSON)")
    s.add_argument("--grid", action="store_true", help="expand the methods' parameter grids")
    s.add_argument("--plugin", action="append", default=[], help="extra method file or directory")
    s.add_argument("--no-progress", action="store_true")
    s.add_argument(
        "--dry-run",
        action="store_true",
        help="print the plan (jobs per method, instances, jobs the store already holds, estimated time) and run nothing",
    )

    s = sub.add_parser("show", help="the result table of a task")
    s.add_argument("--task", required=True)
    s.add_argument("--format", choices=["table", "csv", "json"], default="table")
    s.add_argument("--store", help="run store (default .bench/runs)")
    s.add_argument("--results", help="read published bundles from this directory instead of the store")
    s.add_argument(
        "--against",
        default="results",
        metavar="DIR",
        help="reading the store: add the published runs under DIR of every method the store has no run of, so a "
        "new method is ranked against them (default results; `--against none`: the store alone)",
    )
    s.add_argument("--tier", help="only this tier")
    s.add_argument("--method", action="extend", nargs="+", dest="methods")

    s = sub.add_parser("validate", help="conformance suite for a method file or name")
    s.add_argument("target", metavar="NAME_OR_PATH")
    s.add_argument("--jobs", type=_positive_int, default=1)

    s = sub.add_parser("new-method", help="write a method file that passes validate")
    s.add_argument("--task", required=True)
    s.add_argument("--name", required=True)
    s.add_argument("--kind", choices=["method", "baseline"], default="method")
    s.add_argument("--output", help="file to write (default methods/<family>/<name>.py)")

    s = sub.add_parser("new-task", help="write a task family skeleton that passes validate and its tests")
    s.add_argument("--family", required=True, help="package name, e.g. graph_coloring (task: graph-coloring)")
    s.add_argument("--method", help="name of the skeleton's method (default <task>-method)")
    s.add_argument("--baseline", help="name of the skeleton's baseline (default <task>-baseline)")
    s.add_argument("--paper", default="Author et al., Title (ICML 2025)", help="the paper, as cited in the files")
    s.add_argument("--area", default="(replace: research area)", help="research area the leaderboard groups by")
    s.add_argument("--root", help="directory holding tasks/, methods/, baselines/, tests/ (default: the repository)")

    s = sub.add_parser("verify", help="re-score stored or published solutions")
    s.add_argument("--task")
    s.add_argument("--store")
    s.add_argument("--results", help="verify published bundles under this directory")
    s.add_argument(
        "--sample",
        type=_positive_int,
        metavar="N",
        help="spot-check: re-score N records per method and task, drawn with a fixed seed (default: all)",
    )
    s.add_argument(
        "--per",
        choices=("task", "instance"),
        default="task",
        help="with --sample: draw N records per method and task (default), or per method and instance, "
        "which re-scores every instance's data and references at least once",
    )

    s = sub.add_parser("publish", help="write a result bundle of whole sweeps to results/")
    s.add_argument("--task", required=True)
    s.add_argument("--sweep", action="append", help="sweep id (default: the latest finished sweep of the task)")
    s.add_argument("--store")
    s.add_argument("--results", default="results", help="the folder the bundle goes to, as RESULTS/<task>/<bundle-id>/ (default results; a submission: a folder of its own)")
    s.add_argument(
        "--origin", choices=["maintainers", "submitted"], default=None,
        help="who produced the runs (default: submitted; publish prints the origin it used)",
    )
    s.add_argument("--author")
    s.add_argument(
        "--plugin",
        action="append",
        help="a method file the sweep ran with --plugin, if it has moved since (default: the sweep's own paths)",
    )
    s.add_argument(
        "--supersedes",
        action="append",
        metavar="BUNDLE",
        help="an earlier bundle of the task that this one replaces (e.g. a quiet rerun); repeatable",
    )
    s.add_argument(
        "--max-solution-mb",
        type=float,
        metavar="MB",
        default=1.0,
        help="leave out solution files larger than MB (default 1; their records keep the hash; verify calls them "
        "unverifiable); the largest further ones are left out until the bundle fits 5 MB",
    )
    s.add_argument(
        "--claims-only",
        action="store_true",
        help="refresh the task's claims snapshot from claims.toml and paper_results.csv without a rerun "
        "(a small claims-only bundle; no --sweep)",
    )
    s.add_argument(
        "--replace-methods",
        action="store_true",
        help="with --supersedes: replace every record of the superseded bundles whose method this bundle "
        "holds, not only those with the same job key (a rerun after a method's version or parameters changed)",
    )
    s.add_argument(
        "--replace-instances",
        action="store_true",
        help="with --supersedes: replace every record of the superseded bundles whose instance and method this "
        "bundle both holds (a rerun of some instances after their data or references changed)",
    )
    s.add_argument(
        "--refresh-digest",
        action="store_true",
        help="only rewrite the task's leaderboard digest (results/_digests/TASK.json) from its published bundles; "
        "every publish does this for the task it touched",
    )

    s = sub.add_parser("export", help="write a bundle, solutions included, as a Hugging Face datasets folder")
    s.add_argument("bundle", metavar="BUNDLE", help="a bundle directory, or its name (with --task, or searched under --results)")
    s.add_argument("--output", required=True, metavar="DIR", help="the folder to write (new or empty)")
    s.add_argument("--task", help="the bundle's task, when BUNDLE is a name")
    s.add_argument("--results", default="results", help="where to look BUNDLE up by name (default results)")
    s.add_argument("--store", help="run store to read left-out solutions from (default .bench/runs or $BENCH_STORE)")

    s = sub.add_parser("claims", help="verdicts on the paper's claims")
    s.add_argument("--task", required=True)
    s.add_argument("--results", default="results", help="the published bundles to judge the claims from (default results)")
    s.add_argument("--store", help="judge from the local store instead of published bundles")
    s.add_argument("--format", choices=["table", "markdown", "json"], default="table")
    s.add_argument(
        "--update",
        metavar="FILE",
        help="rewrite the block between '<!-- BEGIN GENERATED: python -m bench claims --task TASK ...' and '<!-- END GENERATED -->' in FILE with the markdown table",
    )
    s.add_argument(
        "--versus-paper",
        metavar="METHOD",
        help="instead of the claims: our METHOD beside the paper's per-instance numbers, with one-sided bounds over seeds",
    )
    s.add_argument("--paper-method", metavar="NAME", help="the paper's name for METHOD (default: the same)")
    s.add_argument("--metric", help="metric to compare with --versus-paper (default: the task's primary)")

    s = sub.add_parser("leaderboard", help="launch the Streamlit leaderboard")
    s.add_argument("--results", default="results", help="the published bundles to show (default results)")
    s.add_argument("--store")
    s.add_argument("--port", type=int, default=8501)
    return p


# ----------------------------------------------------------------------------- commands


def _console(stderr: bool = False) -> Any:
    from rich.console import Console

    stream = sys.stderr if stderr else sys.stdout
    # Piped output (CI logs, tests) gets a wide console so names are never cut.
    width = None if stream.isatty() else int(os.environ.get("COLUMNS", "0") or 0) or 200
    return Console(stderr=stderr, soft_wrap=False, width=width)


def cmd_list(a: argparse.Namespace) -> int:
    from rich.markup import escape
    from rich.table import Table

    from bench.registry import DISCOVERY_ERRORS, discover_tasks, get_task
    from bench.task import TIERS

    con = _console()
    if a.what == "sweeps":
        return _list_sweeps(a, con)
    if a.what == "tasks":
        reg = discover_tasks()
        rows = []
        for name in reg.names():
            task = get_task(name)
            m = task.meta
            rows.append({
                "name": name, "version": m.version, "family": m.family, "area": m.area,
                "paper": m.paper.title if m.paper else None, "primary": m.primary,
                "direction": m.metric(m.primary).direction, "interactive": m.interactive,
                **{tier: len(task.instances(tier)) for tier in TIERS},
            })  # fmt: skip
        if a.format == "json":
            return _print_json(rows)
        narrow = con.width < 130  # names are what one types: never cut them, leave the paper out instead
        from rich import box

        t = Table(title="tasks" + (" (papers: widen the terminal, or --format json)" if narrow else ""))
        cols: tuple[str, ...] = ("name", "version", "family", "paper", "primary", *TIERS)
        if narrow:
            t = Table(title=t.title, box=box.SIMPLE_HEAD, pad_edge=False, padding=(0, 1))
            cols = ("name", "version", "primary", *TIERS)
        short = {"version": "v", "standard": "std"} if narrow else {}
        for c in cols:
            t.add_column(short.get(c, c), no_wrap=c != "paper", justify="right" if c in TIERS else "left")
        for r in rows:
            cells = {**r, "paper": r["paper"] or "–", "primary": f"{r['primary']} ({r['direction']})"}
            t.add_row(*(escape(str(cells[c])) for c in cols))
        con.print(t)
    elif a.what == "instances":
        if not a.task:
            raise _Usage("list instances needs --task")
        task = get_task(a.task)
        tiers = [a.tier] if a.tier else list(TIERS)
        t = Table(title=f"instances of {a.task}")
        rows_i: list[dict[str, Any]] = []
        for c in ("tier", "id", "params", "tags"):
            t.add_column(c, no_wrap=c == "id")
        for tier in tiers:
            if tier == "holdout":
                from bench.holdout import HoldoutUnavailable

                try:
                    specs = task.holdout_instances()
                except HoldoutUnavailable as exc:
                    raise _Usage(str(exc)) from None
            elif tier not in TIERS:
                from bench.registry import unknown_message

                raise _Usage(unknown_message("tier", tier, (*TIERS, "holdout")))
            else:
                specs = task.instances(tier)
            for spec in specs:
                rows_i.append({"tier": tier, "id": spec.id, "params": spec.params, "tags": list(spec.tags)})
        if a.format == "json":
            return _print_json(rows_i)
        for r in rows_i:
            t.add_row(r["tier"], r["id"], escape(json.dumps(r["params"])), ",".join(r["tags"]))
        con.print(t)
    else:
        from bench.evaluator import probe_catalog

        catalog, errors = probe_catalog(tuple(a.plugin))
        if a.task:
            get_task(a.task)
        chosen = [m for m in sorted(catalog, key=lambda m: (m["kind"] != "method", m["name"])) if not a.task or a.task in m["tasks"]]
        if a.format == "json":
            keep = ("name", "kind", "tasks", "version", "deterministic", "reference", "description", "params", "source")
            return _print_json([{k: m.get(k) for k in keep} for m in chosen])
        t = Table(title="methods" + (f" for {a.task}" if a.task else ""))
        for c in ("name", "kind", "tasks", "version", "deterministic", "reference"):
            t.add_column(c, no_wrap=c in ("name", "kind"))
        for m in chosen:
            t.add_row(escape(m["name"]), m["kind"], escape(",".join(m["tasks"])), escape(str(m["version"])), "yes" if m["deterministic"] else "no", escape(m["reference"]))
        con.print(t)
        family = get_task(a.task).meta.family if a.task else None
        for e in _relevant_errors([*errors, *map(str, DISCOVERY_ERRORS)], family):
            con.print(f"[yellow]warning: could not import {escape(e)}[/]")
        return 0
    for e in _relevant_errors([str(e) for e in DISCOVERY_ERRORS], None):
        con.print(f"[yellow]warning: could not import {escape(e)}[/]")
    return 0


def _print_json(rows: list[dict[str, Any]]) -> int:
    sys.stdout.write(json.dumps(rows, indent=1, default=str) + "\n")
    return 0


def _list_sweeps(a: argparse.Namespace, con: Any) -> int:
    """The store's sweeps, oldest first: the ids ``publish --sweep`` takes, with what each ran."""
    import datetime as dt

    from rich.markup import escape
    from rich.table import Table

    from bench.registry import get_task
    from bench.store import Store

    if a.task:
        get_task(a.task)
    store = Store(a.store)
    sweeps = store.sweeps(a.task)
    if not sweeps:
        con.print(f"no sweeps in {store.root}" + (f" for {a.task}" if a.task else "") + "; `python -m bench run --task TASK` makes one")
        return 0
    t = Table(title=f"sweeps in {store.root}" + (f" for {a.task}" if a.task else ""))
    for c in ("sweep", "task", "tier", "started (UTC)", "done", "jobs", "statuses", "methods"):
        t.add_column(c, no_wrap=c in ("sweep", "task"))
    for m in sweeps:
        recs = [r for k in m.keys if (r := store.get(m.task, k)) is not None]
        counts: dict[str, int] = {}
        for r in recs:
            counts[r.status] = counts.get(r.status, 0) + 1
        methods = sorted({r.method for r in recs})
        when = dt.datetime.fromtimestamp(m.started_at, dt.UTC).strftime("%Y-%m-%d %H:%M")
        t.add_row(
            m.sweep, m.task, str((m.args or {}).get("tier") or "?"), when, "yes" if m.finished_at else "no",
            str(len(m.keys)), " ".join(f"{k}:{v}" for k, v in sorted(counts.items())) or "–",
            escape(", ".join(methods)) or "–",
        )
    con.print(t)
    return 0


def _relevant_errors(errors: list[str], family: str | None) -> list[str]:
    """Import errors once each; with ``family``, only that family's modules, plugin files and entry points."""
    out: list[str] = []
    for e in errors:
        module = e.split(": ", 1)[0]
        top, _, rest = module.partition(".")
        if family and top in ("tasks", "methods", "baselines", "common") and rest.split(".")[0] != family:
            continue
        if e not in out:
            out.append(e)
    return out


def _run_tier(task_name: str, tier: str | None, instances: list[str] | None) -> str:
    """The tier a run's records are labelled with.

    Without ``--tier``: ``smoke``, or, when ``--instances`` names instances, the
    first tier that holds them all (a standard-tier instance run alone is a
    standard-tier record). Tier instances outside the chosen tier get a warning
    on stderr: their records carry that tier's label all the same. Instances in
    no tier (well-formed ids a task accepts beyond its lists) are labelled
    ``smoke`` unless ``--tier`` says otherwise.
    """
    from bench.registry import get_task
    from bench.task import TIERS

    if tier is not None and tier not in TIERS:
        return tier  # the runner's usage error names the known tiers
    if not instances:
        return tier or "smoke"
    task = get_task(task_name)
    members = {t: {s.id for s in task.instances(t)} for t in TIERS}
    if tier is None:
        tier = next((t for t in TIERS if set(instances) <= members[t]), "smoke")
    listed = set().union(*members.values())
    outside = [i for i in instances if i in listed and i not in members[tier]]
    if outside:
        print(f"warning: {', '.join(outside)} not in the {tier} tier; the records are labelled {tier!r} (choose with --tier)", file=sys.stderr)
    return tier


def _run_options(a: argparse.Namespace, task: str) -> Any:
    from bench.runner import RunOptions

    return RunOptions(
        task=task,
        methods=a.methods,
        kinds=a.kind,
        instances=a.instances,
        tier=a.tier,
        seeds=a.seeds,
        master_seed=a.seed,
        jobs=a.jobs,
        budget=a.budget,
        threads=a.threads,
        memory_mb=a.memory_mb,
        backend=a.backend,
        scheduler=a.scheduler,
        store=Path(a.store) if a.store else None,
        force=a.force,
        params=dict(a.param),
        grid=a.grid,
        extra_paths=tuple(str(Path(p).resolve()) for p in a.plugin),
        progress=not a.no_progress,
        command="python -m bench " + " ".join(shlex.quote(x) for x in _argv_for(a.argv, task)),
    )


def _argv_for(argv: list[str], task: str) -> list[str]:
    """``argv`` with ``--task all`` read as ``--task TASK``: each sweep records the command that reruns it."""
    out = list(argv)
    for i, x in enumerate(out):
        if x == "--task" and i + 1 < len(out):
            out[i + 1] = task
        elif x.startswith("--task="):
            out[i] = f"--task={task}"
    return out


def cmd_run(a: argparse.Namespace) -> int:
    if a.task == "all":
        return _run_all(a)
    a.tier = _run_tier(a.task, a.tier, a.instances)
    if a.dry_run:
        return _dry_run(a, a.task, _console())
    return _run_one(a, a.task)


def _run_all(a: argparse.Namespace) -> int:
    """``--task all``: one sweep per registered task, in name order; the exit code is the worst."""
    from bench.registry import discover_tasks

    given = [f for f, v in (("--method", a.methods), ("--instances", a.instances), ("--param", a.param)) if v]
    if given:
        raise _Usage(f"--task all takes no {', '.join(given)}: those name one task's methods, instances or parameters")
    names = discover_tasks().names()
    a.tier = a.tier or "smoke"
    con = _console()
    if a.dry_run:
        totals = [0.0, 0.0, 0]
        for name in names:
            con.rule(f"{name} [{a.tier}]")
            _dry_run(a, name, con, totals)
        con.print(f"all {len(names)} tasks: {totals[2]} jobs to run, estimated {totals[0]:.0f} s of job time, "
                  f"at most {totals[1]:.0f} s by the budgets")  # fmt: skip
        return 0
    codes = {}
    for name in names:
        con.rule(f"{name} [{a.tier}]")
        codes[name] = _run_one(a, name)
    bad = [n for n, c in codes.items() if c]
    con.print(f"{len(names)} tasks run; " + (f"some method failed every job on: {', '.join(bad)}" if bad else "every selected method succeeded somewhere"))
    return max(codes.values(), default=0)


def _dry_run(a: argparse.Namespace, task: str, con: Any, totals: list[Any] | None = None) -> int:
    from rich.markup import escape
    from rich.table import Table

    from bench.runner import plan_sweep

    p = plan_sweep(_run_options(a, task))
    t = Table(title=escape(f"plan: {task} [{p.tier}] (nothing is run)"))
    for c in ("method", "kind", "instances", "jobs"):
        t.add_column(c, justify="left" if c in ("method", "kind") else "right", no_wrap=c == "method")
    for r in p.per_method():
        t.add_row(r["method"], r["kind"], str(r["instances"]), str(r["jobs"]))
    con.print(t)
    todo = len(p.jobs) - p.reused
    slots = max(1, min(a.jobs, todo))
    if totals is not None:
        totals[0] += p.estimate_s
        totals[1] += p.bound_s
        totals[2] += todo
    con.print(
        f"{len(p.jobs)} jobs on {len({j.instance for j in p.jobs})} instances x {a.seeds} seed(s); "
        f"{p.reused} already in the store (reused), {todo} to run"
    )
    if todo:
        con.print(
            f"estimated {p.estimate_s:.0f} s of job time ({p.timed} of {todo} jobs timed by earlier runs in the store "
            f"or results/, the rest at their budget), about {p.estimate_s / slots:.0f} s on {slots} parallel job(s); "
            f"at most {p.bound_s:.0f} s of job time by the budgets"
        )
    for e in p.discovery_errors:
        con.print(f"[yellow]warning: could not import {e}[/]")
    return 0


def _run_one(a: argparse.Namespace, task: str) -> int:
    from bench.registry import get_task
    from bench.report import render_table, speed_note, summary_table
    from bench.runner import run_sweep
    from bench.store import records_frame

    a.task = task
    opts = _run_options(a, task)
    res = run_sweep(opts)
    con = _console()
    recs = [r for k in res.keys if (r := res.store.get(a.task, k)) is not None]
    meta = get_task(a.task).meta.model_dump(mode="json")
    frame = records_frame(recs)
    table = summary_table(frame, meta)
    render_table(table, meta, con, title=f"{a.task} [{a.tier}] sweep {res.sweep}")
    _print_failures(table, con, a.task)
    if note := speed_note(frame):
        con.print(f"[yellow]note: {note}[/]")
    counts = ", ".join(f"{s} {n}" for s, n in sorted(res.counts.items()))
    con.print(f"{len(res.keys)} jobs ({res.cached} reused from the store): {counts}. Store: {res.store.root}")
    for e in res.discovery_errors:
        con.print(f"[yellow]warning: could not import {e}[/]")
    failed = _methods_without_success(frame)
    if failed:
        print(f"bench: no job of {', '.join(failed)} succeeded (reasons above)", file=sys.stderr)
        return 1
    return 0


#: At most this many failure lines are printed; the rest are counted (``show --format csv`` has them all).
MAX_FAILURE_LINES = 20


def _print_failures(table: Any, con: Any, task: str) -> None:
    """One line per (method, instance) with a failed run: the first failure's status and reason."""
    from rich.markup import escape

    bad = table[table["reason"] != ""] if "reason" in table else table.iloc[:0]
    for r in bad.head(MAX_FAILURE_LINES).itertuples(index=False):
        con.print(f"[red]{escape(str(r.method))}[/] on {escape(str(r.instance))}: {escape(str(r.reason))}", soft_wrap=True)
    if len(bad) > MAX_FAILURE_LINES:
        con.print(f"... and {len(bad) - MAX_FAILURE_LINES} more; all of them: `python -m bench show --task {task} --format csv`")


def _methods_without_success(frame: Any) -> list[str]:
    """Methods of a sweep none of whose jobs ended ``ok`` or ``truncated``, leaving out methods that only skipped."""
    if frame.empty:
        return []
    out = []
    for name, g in frame.groupby("method", sort=True):
        st = set(g["status"])
        if not st & {"ok", "truncated"} and st != {"skipped"}:
            out.append(str(name))
    return out


def _frame_for(a: argparse.Namespace) -> tuple[Any, dict[str, Any]]:
    """Records (current task version only) and task metadata for show/claims/verify."""
    from bench.bundle import load_bundles
    from bench.registry import get_task
    from bench.store import Store

    if getattr(a, "results", None) and not getattr(a, "store", None):
        b = load_bundles(a.results, a.task)
        if a.task not in b.tasks:
            raise _Usage(f"no published bundle for task {a.task!r} under {a.results}")
        meta = b.tasks[a.task]["meta"]
        df = b.records
        a.registered = b.methods.get(a.task, {})  # the bundles' methods.json, for ranks and claims
    else:
        meta = get_task(a.task).meta.model_dump(mode="json")
        df = Store(a.store).frame(a.task)
    if not df.empty:
        df = df[df["task_version"] == meta["version"]]
    return df, meta


def _paper_results(a: argparse.Namespace) -> list[dict[str, Any]]:
    """The paper's reported numbers, from the bundles (``--results``) or the task."""
    if getattr(a, "results", None) and not getattr(a, "store", None):
        from bench.bundle import load_bundles

        return load_bundles(a.results, a.task).paper_results.get(a.task, [])
    from bench.registry import get_task

    return [p.model_dump(mode="json") for p in get_task(a.task).paper_results()]


def cmd_show(a: argparse.Namespace) -> int:
    """The leaderboard's task page in the terminal: same functions, same numbers."""
    from rich.markup import escape

    from bench.claims import registered_records
    from bench.report import (
        paper_table,
        render_ranking,
        render_table,
        speed_note,
        summary_table,
        task_ranking,
    )

    df, meta = _frame_for(a)
    borrowed = _published_beside(a, df, meta)
    if borrowed is not None:
        df, names = borrowed
    if not df.empty and a.tier:
        df = df[df["tier"] == a.tier]
    if not df.empty and a.methods:
        df = df[df["method"].isin(a.methods)]
    table = summary_table(df, meta)
    if a.format == "csv":
        sys.stdout.write(table.to_csv(index=False))
    elif a.format == "json":
        sys.stdout.write(table.to_json(orient="records", indent=1) + "\n")
    else:
        if table.empty:
            _console().print(f"no results for {a.task}; run `python -m bench run --task {a.task}` first")
            return 0
        con = _console()
        render_table(table, meta, con)
        if borrowed is not None:
            shown = sorted(set(names) & set(df["method"]))
            if shown:
                con.print(f"[dim]from the published bundles under {escape(a.against)} (not this store): {escape(', '.join(shown))}[/]")
        _print_failures(table, con, a.task)
        if note := speed_note(df):
            con.print(f"[yellow]note: {note}[/]")
        reg = registered_records(df, getattr(a, "registered", None))  # published: one entry per method
        for tier in sorted(df["tier"].unique()):
            render_ranking(task_ranking(reg[reg["tier"] == tier], meta), con, title=f"ranking on the {tier} tier ({meta['primary']}, instances as blocks)")
        pt = paper_table(_paper_results(a))
        pt = pt[pt["instance"].isin(set(table["instance"]))]
        if not pt.empty:
            from rich.markup import escape
            from rich.table import Table

            t = Table(title="reported by the paper (not run here; never mixed into the numbers above)")
            for c in ("instance", "method", "metric", "value", "source"):
                t.add_column(c)
            for r in pt.itertuples(index=False):
                t.add_row(*(escape(str(v)) for v in (r.instance, r.method, r.metric, f"{float(r.value):.6g}", r.source)))
            con.print(t)
    return 0


def _published_beside(a: argparse.Namespace, df: Any, meta: dict[str, Any]) -> tuple[Any, list[str]] | None:
    """Store records plus the published records (``--against DIR``) of the methods the store lacks.

    ``None`` when ``show`` reads bundles (``--results``), ``--against none`` or
    nothing is published for the task. Published rows of a method the store
    has any run of are left out, so a local rerun always replaces them.
    """
    import pandas as pd

    from bench.bundle import load_bundles

    if getattr(a, "results", None) or a.against == "none" or not Path(a.against).is_dir():
        return None
    b = load_bundles(a.against, a.task)
    if a.task not in b.tasks or b.records.empty:
        return None
    pub = b.records[b.records["task_version"] == meta["version"]]
    have = set(df["method"]) if not df.empty else set()
    pub = pub[~pub["method"].isin(have)]
    if pub.empty:
        return None
    a.registered = b.methods.get(a.task, {})
    out = pub if df.empty else pd.concat([df, pub], ignore_index=True)
    return out, sorted(set(pub["method"]))


def cmd_validate(a: argparse.Namespace) -> int:
    from rich.table import Table

    from bench.conformance import validate

    rep = validate(a.target, jobs=a.jobs)
    con = _console()
    t = Table(title=f"bench validate {a.target}")
    for c in ("method", "check", "result", "detail"):
        t.add_column(c)
    for c in rep.checks:
        t.add_row(c.method, c.check, "[green]PASS[/]" if c.passed else "[red]FAIL[/]", c.detail)
    con.print(t)
    for c in rep.checks:  # full text, unwrapped, for logs and copy-paste
        if not c.passed:
            print(f"FAIL {c.method}: {c.check}: {c.detail}")
    for w in rep.warnings:
        print(f"warning: {w}")
    print("PASSED" if rep.passed else "FAILED")
    return 0 if rep.passed else 1


def cmd_new_method(a: argparse.Namespace) -> int:
    from bench.registry import get_task
    from bench.scaffold import new_method_path, write_method

    task = get_task(a.task)
    source = task.scaffold(a.name, a.kind)
    path = Path(a.output) if a.output else new_method_path(task.meta.family, a.name, a.kind)
    write_method(path, source)
    print(f"wrote {path}\nnext: edit it, then `python -m bench validate {path}`")
    return 0


def cmd_new_task(a: argparse.Namespace) -> int:
    from bench.registry import discover_tasks
    from bench.scaffold import write_family

    task = a.family.replace("_", "-")
    if a.root is None and task in discover_tasks():
        raise _Usage(f"task {task!r} is already registered; pick another --family")
    try:
        paths = write_family(a.family, root=a.root, method=a.method, baseline=a.baseline, paper=a.paper, area=a.area)
    except (ValueError, FileExistsError) as exc:
        raise _Usage(str(exc)) from None
    for p in paths:
        print(f"wrote {p}")
    method = Path([p for p in paths if p.parts[-3] == "methods" and p.name != "__init__.py"][0])
    print(
        f"next: `python -m bench validate {method}`, `python -m pytest {paths[-1]}`, then replace the "
        f"skeleton's problem part by part (tasks/knapsack is the worked example)"
    )
    return 0


def cmd_verify(a: argparse.Namespace) -> int:
    import pandas as pd

    from bench.bundle import left_out_solutions, load_bundles
    from bench.store import Store
    from bench.verify import verify_frame

    if a.per != "task" and not a.sample:
        raise _Usage("--per draws a spot-check: give --sample N too (without it every record is re-scored)")
    if a.task:
        from bench.registry import get_task

        get_task(a.task)  # an unknown name is a usage error, not "nothing to verify"
    skipped: list[str] = []
    if a.results and not a.store:
        if not Path(a.results).is_dir():
            raise _Usage(f"--results {a.results}: no such directory")
        b = load_bundles(a.results, a.task, warn=False)  # the same messages are in b.warnings, printed below
        df, root = b.records, Path(a.results)
        skipped = [w for w in b.warnings if "bundle skipped" in w]
        for w in skipped:  # a bundle whose files no longer match its manifest is itself a failed check
            print(f"not verified: {w}")
    else:
        store = Store(a.store)
        df, root = store.frame(a.task), store.root
    manifests = b.manifests if a.results and not a.store else {}
    if a.sample and not df.empty:
        df = df[df["status"].isin(["ok", "truncated", "invalid"])]
        # records whose solution the bundle kept come first, so a spot-check re-scores what it can
        left = {(p, k) for p, m in manifests.items() for k in left_out_solutions(m)}
        gone = [(str(p), k) in left for p, k in zip(df.get("bundle_path", pd.Series([None] * len(df), index=df.index)), df["key"], strict=True)]
        df = df.assign(_gone=gone).sample(frac=1.0, random_state=0).sort_values("_gone", kind="stable")
        by = ["task", "method"] + (["instance"] if a.per == "instance" else [])
        df = df.groupby(by).head(a.sample).drop(columns="_gone")
        print(f"spot-check: {len(df)} records ({a.sample} per method and {a.per}, seed 0, kept solutions first)")
    checks = verify_frame(df, root, manifests=manifests) if not df.empty else []
    counts: dict[str, int] = {}
    for c in checks:
        counts[c.outcome] = counts.get(c.outcome, 0) + 1
        if c.outcome != "match":
            print(f"{c.outcome}: {c.task}/{c.instance} {c.method} {c.key[:12]}: {c.detail}")
    print(", ".join(f"{k} {v}" for k, v in sorted(counts.items())) or "nothing to verify")
    if skipped:
        print(f"{len(skipped)} bundle(s) skipped: their files no longer match their manifests")
    return 1 if counts.get("mismatch") or skipped else 0


def cmd_publish(a: argparse.Namespace) -> int:
    from bench.bundle import publish, publish_claims
    from bench.evaluator import probe_catalog
    from bench.registry import get_task
    from bench.store import Store

    # the flags that choose which runs a bundle holds: meaningless without runs to publish
    run_flags = (("--sweep", a.sweep), ("--supersedes", a.supersedes), ("--replace-methods", a.replace_methods),
                 ("--replace-instances", a.replace_instances), ("--plugin", a.plugin))  # fmt: skip
    if a.refresh_digest:
        given = [f for f, v in (*run_flags, ("--claims-only", a.claims_only)) if v]
        if given:
            raise _Usage(f"--refresh-digest publishes nothing: drop {', '.join(given)}")
        _refresh_digest(Path(a.results), a.task)
        return 0
    task = get_task(a.task)
    if a.claims_only:
        given = [f for f, v in run_flags if v]
        if given:
            raise _Usage(f"--claims-only publishes no runs: drop {', '.join(given)}")
        written, message = publish_claims(task, Path(a.results), author=a.author)
        print(message)
        if written is not None:
            _refresh_digest(Path(a.results), a.task)
        return 0
    store = Store(a.store)
    sweeps = a.sweep
    if not sweeps:
        done = [m for m in store.sweeps(a.task) if m.finished_at]
        if not done:
            raise _Usage(f"no finished sweep of {a.task} in {store.root}; run `python -m bench run --task {a.task}` first")
        sweeps = [done[-1].sweep]
    # the methods' metadata (methods.json) comes from the same files the sweeps ran: their plugins too
    known = {m.sweep: m for m in store.sweeps(a.task)}
    recorded = [p for s in sweeps if s in known for p in (known[s].args or {}).get("extra_paths") or []]
    extra = tuple(dict.fromkeys([*(a.plugin or []), *(p for p in recorded if Path(p).exists())]))
    catalog, _ = probe_catalog(extra)
    out = publish(
        store,
        task,
        sweeps,
        Path(a.results),
        origin=a.origin or "submitted",
        author=a.author,
        catalog=catalog,
        supersedes=a.supersedes,
        replace_methods=a.replace_methods,
        replace_instances=a.replace_instances,
        max_solution_mb=a.max_solution_mb,
    )
    manifest = json.loads((out / "manifest.json").read_text())
    replaced = manifest.get("supersedes_methods") or []
    instances = manifest.get("supersedes_instances") or []
    print(
        f"published {', '.join(sweeps)} to {out}"
        + (f" (supersedes {', '.join(a.supersedes)}" if a.supersedes else "")
        + (f"; every record of {', '.join(replaced)} there" if replaced else "")
        + (f"; every record of these methods on {', '.join(instances)} there" if instances else "")
        + (")" if a.supersedes else "")
    )
    # the origin decides how the leaderboard labels every record; say which one was used, since
    # the default (``submitted``) is easy to keep by mistake for a maintainers' sweep
    print(f"origin: {manifest['origin']}" + (f", author: {manifest['author']}" if manifest.get("author") else "")
          + ("" if a.origin else " (the default; pass --origin maintainers for the maintainers' own runs)"))
    big = (manifest.get("solutions_left_out") or {}).get("bytes") or {}
    if big:
        fit = (manifest.get("solutions_left_out") or {}).get("to_fit_bundle") or []
        parts = [f"{len(big) - len(fit)} solution files over {a.max_solution_mb:g} MB"] if len(big) > len(fit) else []
        parts += [f"{len(fit)} more, largest first, to fit the bundle cap"] if fit else []
        print(f"left out {' and '.join(parts)} ({sum(big.values()) / 2**20:.1f} MB); their records keep the hash")
    left = manifest.get("left_out_already_published") or {}
    for b, n in left.items():
        print(f"left out {n} records the sweep reused from the store: already published in {b}")
    _refresh_digest(Path(a.results), a.task)
    return 0


def _refresh_digest(results: Path, task: str) -> None:
    """Rewrite ``results/_digests/<task>.json``, the leaderboard's digest of the task's bundles (bench.digest)."""
    import time

    from bench.digest import write_task_digest

    t0 = time.perf_counter()
    path = write_task_digest(results, task)
    if path is None:
        print(f"no bundle of {task} under {results}: no digest (any old one removed)")
    else:
        print(f"digest: {path} ({path.stat().st_size / 1024:.0f} KB, {time.perf_counter() - t0:.1f} s; commit it with the bundles)")


def cmd_export(a: argparse.Namespace) -> int:
    from bench.export import export_bundle

    path = Path(a.bundle)
    if not path.is_dir():
        found = [Path(a.results) / a.task / a.bundle] if a.task else sorted(Path(a.results).glob(f"*/{a.bundle}"))
        found = [f for f in found if f.is_dir()]
        if len(found) != 1:
            where = f"{a.results}/{a.task or '*'}/{a.bundle}"
            raise _Usage(f"{a.bundle}: no such bundle directory (nor {where})" if not found else f"{a.bundle}: several bundles match: {', '.join(map(str, found))}")
        path = found[0]
    rep = export_bundle(path, Path(a.output), store=a.store)
    n = sum(rep.included.values()) + len(rep.missing)
    sources = ", ".join(f"{k} from the {s}" for s, k in sorted(rep.included.items())) or "none"
    print(f"wrote {rep.output}: {rep.records} records, {n - len(rep.missing)} of {n} solutions ({sources}); {len(rep.shards)} Parquet shards and README.md")
    for key, why in sorted(rep.missing.items()):
        print(f"not included: solution of {key[:12]}: {why}")
    if rep.missing:
        print(f"{len(rep.missing)} solution(s) not included (listed in {rep.output / 'README.md'}); rerun those jobs, or pass --store with the run store that holds them")
    return 0


def claims_table(task: str, results: str | None, store: str | None) -> Any:
    """The claims table of a task (verdicts from published bundles, or a store).

    ``table.attrs["bundles"]`` names the bundles the verdicts were computed
    from (empty when they come from a store).
    """
    import pandas as pd

    from bench.bundle import load_bundles
    from bench.claims import Claim, verdict
    from bench.registry import get_task
    from bench.store import Store

    t = get_task(task)
    claims = t.claims()
    bundles: list[str] = []
    registered: dict[str, Any] | None = None  # a run store has no methods.json
    if store:
        df = Store(store).frame(task)
    else:
        b = load_bundles(results or "results", task)
        df = b.records
        registered = b.methods.get(task, {})
    if not df.empty:
        df = df[df["task_version"] == t.meta.version]
        if not store:  # the bundles whose runs count: not those of an earlier task version, kept as history
            bundles = sorted(df["bundle"].unique())
    rows = []
    for c in claims:
        assert isinstance(c, Claim)
        v = verdict(c, df, methods=registered)
        rows.append({"id": c.id, "statement": c.statement, "source": c.source, "test": c.comparison.describe(), **v.as_row()})
    table = pd.DataFrame(rows)
    table.attrs["bundles"] = bundles
    return table


def _cell(v: Any) -> str:
    """A markdown table cell: numbers to 4 significant digits, NaN as a dash, pipes escaped."""
    if isinstance(v, float):
        return "–" if v != v else f"{v:.4g}"
    return str(v).replace("|", "\\|")


def claims_markdown(table: Any) -> str:
    """The claims table as GitHub markdown (one row per claim)."""
    cols = ["id", "statement", "source", "test", "verdict", "estimate", "ci_low", "ci_high", "reason"]
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for r in table[cols].itertuples(index=False):
        lines.append("| " + " | ".join(_cell(v) for v in r) + " |")
    return "\n".join(lines)


_BLOCK_BEGIN = re.compile(r"<!-- BEGIN GENERATED: python -m bench claims --task (\S+)((?: --versus-paper \S+)?)[^\n]*?-->")


def update_generated_block(path: Path, task: str, body: str, versus: str | None = None) -> bool:
    """Replace a generated block of ``task`` in the file at ``path``.

    The block starts at a line ``<!-- BEGIN GENERATED: python -m bench claims
    --task TASK ... -->`` (the claims table) or ``<!-- BEGIN GENERATED:
    python -m bench claims --task TASK --versus-paper METHOD ... -->`` (our
    method beside the paper's per-instance numbers) and ends at the next
    ``<!-- END GENERATED -->``. Returns whether the file changed; raises
    ``_Usage`` when the markers are missing.
    """
    text = path.read_text()
    want = f" --versus-paper {versus}" if versus else ""
    m = next((m for m in _BLOCK_BEGIN.finditer(text) if m.group(1) == task and m.group(2) == want), None)
    j = text.find("<!-- END GENERATED -->", m.end()) if m else -1
    if m is None or j < 0:
        begin = f"<!-- BEGIN GENERATED: python -m bench claims --task {task}{want} "
        raise _Usage(f"{path}: no '{begin}...-->' ... '<!-- END GENERATED -->' block to update")
    new = text[: m.end()] + "\n" + body.rstrip("\n") + "\n" + text[j:]
    if new == text:
        return False
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(new)
    tmp.replace(path)
    return True


def versus_paper_markdown(table: Any, method: str, paper_method: str, metric: str) -> str:
    """The per-instance comparison with the paper as GitHub markdown, with a one-line summary."""
    lines = [
        f"| instance | paper ({paper_method}) | ours ({method}, mean) | runs | one-sided 95% bounds | diff % | verdict "
        "| one run: 95% bounds | as one run |",
        "|---|---|---|---|---|---|---|---|---|",
    ]

    def num(v: float) -> str:  # cuts are integers: never 1.233e+04
        return "–" if v != v else f"{v:.0f}" if float(v).is_integer() else f"{v:.6g}"

    for r in table.itertuples(index=False):
        bounds = f"[{num(r.lo)}, {num(r.hi)}]" if r.lo == r.lo else "–"
        run = f"[{num(r.run_lo)}, {num(r.run_hi)}]" if r.run_lo == r.run_lo else "–"
        lines.append(f"| {_cell(r.instance)} | {num(r.paper)} | {num(r.ours)} | {r.runs} | {bounds} | {r.diff_pct:+.2f} "
                     f"| {r.verdict} | {run} | {r.run_verdict} |")  # fmt: skip

    def counts(col: str) -> str:
        c = table[col].value_counts()
        return ", ".join(f"{int(c[v])} {v}" for v in ("above the paper", "consistent", "below the paper", "one run") if v in c) or "none"

    mean = float(table["diff_pct"].mean()) if len(table) else float("nan")
    lines.append("")
    lines.append(
        f"{len(table)} instances, metric `{metric}`. Our mean against the paper's figure: {counts('verdict')}; "
        f"mean difference {mean:+.2f}%. The paper's figure as one of our runs: {counts('run_verdict')}. "
        "'verdict' bounds our mean (one-sided 95%); 'as one run' bounds a single further run of ours "
        "(one-sided 95% prediction bounds), the range the paper's one run would fall in if it were one of ours."
    )
    return "\n".join(lines)


def _cmd_versus_paper(a: argparse.Namespace) -> int:
    from bench.report import versus_paper

    df, meta = _frame_for(a)
    paper_method = a.paper_method or a.versus_paper
    metric = a.metric or meta["primary"]
    registered = getattr(a, "registered", None)  # set by _frame_for from the bundles; a run store has none
    table = versus_paper(df, _paper_results(a), meta, a.versus_paper, paper_method=paper_method, metric=metric, methods=registered)
    if table.empty:
        raise _Usage(
            f"no instance has both ok runs of {a.versus_paper!r} and a paper value of {paper_method!r} for metric {metric!r}"
        )
    md = versus_paper_markdown(table, a.versus_paper, paper_method, metric)
    if a.update:
        cmd = f"python -m bench claims --task {a.task} --versus-paper {a.versus_paper}"
        if a.paper_method:
            cmd += f" --paper-method {a.paper_method}"
        if a.metric:
            cmd += f" --metric {a.metric}"
        _update_file(a, sorted(df["bundle"].unique()) if "bundle" in df else [], cmd, md, a.versus_paper)
    elif a.format == "json":
        sys.stdout.write(table.to_json(orient="records", indent=1) + "\n")
    else:
        print(md)
    return 0


def _update_file(a: argparse.Namespace, bundles: list[str], cmd: str, markdown: str, versus: str | None = None) -> None:
    """Write ``markdown`` into the generated block of ``a.update`` named by ``a.task`` (and ``versus``)."""
    if a.store:
        raise _Usage("--update writes published results only: drop --store")
    path = Path(a.update)
    if not path.is_file():
        raise _Usage(f"{path}: no such file")
    src = ", ".join(bundles) or "none"
    body = f"*Generated from the published bundles ({src}) by `{cmd} --update <this file>`; do not edit by hand.*\n\n" + markdown
    changed = update_generated_block(path, a.task, body, versus)
    print(f"{path}: {'updated' if changed else 'already up to date'}")


def cmd_claims(a: argparse.Namespace) -> int:
    if a.versus_paper:
        return _cmd_versus_paper(a)
    table = claims_table(a.task, a.results, a.store)
    if table.empty:
        print(f"task {a.task} records no claims")
        return 0
    if a.update:
        _update_file(a, list(table.attrs["bundles"]), f"python -m bench claims --task {a.task}", claims_markdown(table))
        return 0
    if a.format == "json":
        sys.stdout.write(table.to_json(orient="records", indent=1) + "\n")
    elif a.format == "markdown":
        print(claims_markdown(table))
    else:
        from rich.table import Table

        tt = Table(title=f"claims of {a.task}")
        for c in ("id", "source", "test", "verdict", "estimate", "95% CI", "reason"):
            tt.add_column(c)
        for r in table.itertuples(index=False):
            ci = f"[{_cell(r.ci_low)}, {_cell(r.ci_high)}]" if r.ci_low == r.ci_low else "–"
            tt.add_row(r.id, r.source, r.test, r.verdict, _cell(r.estimate), ci, r.reason)
        _console().print(tt)
    return 0


def export_store_meta(store: str) -> list[str]:
    """Write ``<store>/_tasks/<task>.json`` (metadata, claims, paper numbers, methods) per task.

    The leaderboard reads data only; this trusted step gives a local store
    the same task metadata a published bundle carries. Returns the tasks
    written; tasks that are no longer registered are left out.
    """
    from bench.bundle import task_export
    from bench.evaluator import probe_catalog
    from bench.registry import RegistryError, get_task
    from bench.store import Store, atomic_write

    root = Store(store).root
    names = sorted(p.name for p in root.glob("*") if p.is_dir() and not p.name.startswith("_"))
    if not names:
        return []
    catalog, _ = probe_catalog()
    done = []
    for name in names:
        try:
            task = get_task(name)
        except RegistryError:
            continue
        data = {
            "task": task_export(task),
            "claims": [c.model_dump(mode="json") for c in task.claims()],
            "paper_results": [p.model_dump(mode="json") for p in task.paper_results()],
            "methods": [m for m in catalog if name in m["tasks"]],
        }
        atomic_write(root / "_tasks" / f"{name}.json", json.dumps(data, indent=1, default=str).encode())
        done.append(name)
    return done


def cmd_leaderboard(a: argparse.Namespace) -> int:
    from bench.environment import repo_root

    app = repo_root() / "leaderboard" / "app.py"
    if not app.exists():
        raise _Usage(f"{app} not found; the leaderboard ships with a checkout of the repository")
    if a.store:
        export_store_meta(a.store)
    cmd = [sys.executable, "-m", "streamlit", "run", str(app), "--server.port", str(a.port), "--server.headless", "true", "--", "--results", a.results]
    if a.store:
        cmd += ["--store", a.store]
    return subprocess.call(cmd)


COMMANDS = {
    "list": cmd_list,
    "run": cmd_run,
    "show": cmd_show,
    "validate": cmd_validate,
    "new-method": cmd_new_method,
    "new-task": cmd_new_task,
    "verify": cmd_verify,
    "publish": cmd_publish,
    "export": cmd_export,
    "claims": cmd_claims,
    "leaderboard": cmd_leaderboard,
}


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the exit code (0 ok, 1 failed check, 2 usage error)."""
    from bench.bundle import PublishError
    from bench.registry import RegistryError
    from bench.runner import UsageError

    debug = bool(os.environ.get("BENCH_DEBUG"))
    try:
        argv = sys.argv[1:] if argv is None else list(argv)
        a = build_parser().parse_args(argv)
        a.argv = argv
        with warnings.catch_warnings():
            if not debug:
                warnings.simplefilter("default")
            return COMMANDS[a.command](a)
    except SystemExit as exc:  # --help
        return int(exc.code or 0)
    except (_Usage, UsageError, RegistryError, PublishError, FileNotFoundError, FileExistsError, KeyError, ValueError) as exc:
        if debug:
            raise
        msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else str(exc)
        print(f"bench: error: {msg}".splitlines()[0], file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("bench: interrupted; finished jobs are stored, rerun the same command to resume", file=sys.stderr)
        return 130
    except Exception as exc:
        if debug:
            raise
        print(f"bench: internal error: {type(exc).__name__}: {exc} (set BENCH_DEBUG=1 for the traceback)".splitlines()[0], file=sys.stderr)
        return 1
