"""Result tables shared by ``bench run``, ``bench show`` and the leaderboard.

Everything here works on a records frame (:func:`bench.store.records_frame`)
and the task's metadata as a plain dict, never on task or method code, so the
terminal and the web compute the same numbers.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd

from bench.stats import (
    RankingResult,
    iqm,
    pareto_front,
    performance_profile,
    quality_costs,
    rank_methods,
    score_ci,
    stratified_bootstrap_aggregate,
    t_bounds,
    t_prediction_bounds,
)
from bench.store import STATUSES

__all__ = [
    "summary_table",
    "failure_reason",
    "render_table",
    "method_label",
    "with_labels",
    "hardware_label",
    "speed_probe_values",
    "speed_probes",
    "speed_note",
    "reproduce_command",
    "normalised_scores",
    "instance_means",
    "task_ranking",
    "role_strata",
    "role_grid",
    "role_score",
    "task_roles",
    "role_aggregate",
    "aggregate_roles",
    "ROLES",
    "paper_table",
    "versus_paper",
    "profile_table",
    "pareto_table",
    "anytime_table",
    "preferred_tier",
    "render_ranking",
    "FAILED_STATUSES",
]

#: Statuses of a run that was tried and gave no valid finished solution (a ``truncated`` run's
#: solution is verified, but the clock cut it short: it scores as a ``timeout`` does).
FAILED_STATUSES = ("truncated", "invalid", "error", "timeout", "killed")
#: Cross-task roles, in display order.
ROLES = ("paper's method", "best baseline", "weak baseline")


def method_label(method: str, params_json: str, multi: bool, keys: Iterable[str] | None = None) -> str:
    """``tabu`` or, when one method ran with several parameter sets, ``tabu[iters=10]``.

    ``keys`` limits the bracket to those parameters (:func:`with_labels` passes
    the ones whose values differ between the method's parameter sets).
    """
    if not multi:
        return method
    params = json.loads(params_json) if params_json else {}
    if keys is not None:
        params = {k: params.get(k, "unset") for k in keys}
    inner = ",".join(f"{k}={v}" for k, v in sorted(params.items()))
    return f"{method}[{inner}]"


def _varying_keys(params_jsons: Iterable[str]) -> set[str]:
    """Parameter names whose value (or presence) differs between these parameter sets."""
    sets = [json.loads(p) if p else {} for p in set(params_jsons)]
    names = set().union(*sets) if sets else set()
    return {k for k in names if len({json.dumps(ps.get(k, "<unset>"), sort_keys=True) for ps in sets}) > 1}


def _gap_pct(mean: float, ref: float, direction: str) -> float:
    if ref is None or not math.isfinite(ref) or ref == 0 or not math.isfinite(mean):
        return math.nan
    diff = ref - mean if direction == "max" else mean - ref
    return 100.0 * diff / abs(ref)


def summary_table(records: pd.DataFrame, meta: dict[str, Any], *, seed: int = 0) -> pd.DataFrame:
    """One row per method (and parameter set) and instance.

    Columns: ``method, kind, instance, tier, runs, mean, ci_low, ci_high`` of the
    primary metric over valid seeds (95% percentile bootstrap over the seeds,
    :func:`bench.stats.score_ci` on one instance: NaN, "no CI", when the runs
    all agree, as a deterministic method's do, or there is one; a tier is its own
    row, since its budgets differ), ``reference``
    and ``gap_pct`` to the task's gap reference, median ``wall_s`` and
    ``peak_rss_mb``, one count column per status, ``reason`` (the first
    failed run's status and reason, e.g. ``error: ValueError: ...``; empty when
    every run is ``ok``), ``hardware`` (the machines
    the runs come from) and ``command`` (a ``bench run`` that reruns the row).
    Grouping and medians are vectorised; only the bootstrap runs per row.
    """
    primary = meta["primary"]
    direction = next(m["direction"] for m in meta["metrics"] if m["name"] == primary)
    ref_name = meta.get("gap_reference")
    cols = ["method", "kind", "instance", "tier", "runs", "mean", "ci_low", "ci_high", "reference", "gap_pct", "wall_s", "peak_rss_mb", *STATUSES, "reason", "hardware", "command"]
    if records.empty:
        return pd.DataFrame(columns=cols)
    df = with_labels(records).reset_index(drop=True)
    col = f"metric.{primary}"
    df["_v"] = pd.to_numeric(df[col], errors="coerce") if col in df else np.nan
    ok = df["status"] == "ok"
    df["_v"] = df["_v"].where(ok)
    df["_wall"] = pd.to_numeric(df["wall_s"], errors="coerce").where(ok)
    df["_rss"] = pd.to_numeric(df["peak_rss_mb"], errors="coerce").where(ok)
    ref_col = f"ref.{ref_name}" if ref_name else None
    df["_ref"] = pd.to_numeric(df[ref_col], errors="coerce") if ref_col and ref_col in df else np.nan
    df["_hw"] = hardware_label(df)
    if "tier" not in df:
        df["tier"] = ""
    # one row per tier too: the same instance and seed in two tiers ran with two budgets
    keys = ["method", "params", "instance", "tier"]
    grouped = df.groupby(keys, sort=True)
    agg = grouped.agg(label=("label", "first"), kind=("kind", "first"), mean=("_v", "mean"), runs=("_v", "count"),
                      wall_s=("_wall", "median"), peak_rss_mb=("_rss", "median"), reference=("_ref", "first"))  # fmt: skip
    counts = pd.crosstab([df[k] for k in keys], df["status"]).reindex(columns=list(STATUSES), fill_value=0)
    agg = agg.join(counts).fillna({s: 0 for s in STATUSES})
    vals = df["_v"].to_numpy(dtype=float)
    hw = np.asarray(df["_hw"], dtype=object)
    reps = pd.to_numeric(df["rep"], errors="coerce").to_numpy(dtype=float)
    narrow = {c: df[c].to_numpy(dtype=object) for c in _COMMAND_FIELDS if c in df}
    status = df["status"].to_numpy(dtype=object)
    why = df["reason"].fillna("").astype(str).to_numpy(dtype=object) if "reason" in df else np.full(len(df), "", dtype=object)
    cis, hws, cmds, reasons = [], [], [], []
    for idx in grouped.indices.values():
        v = vals[idx]
        cis.append(score_ci([v], seed=seed)[1:])
        hws.append("; ".join(sorted(set(hw[idx]))))
        bad = [i for i in idx if status[i] != "ok"]
        reasons.append(failure_reason(status[bad[0]], why[bad[0]]) if bad else "")
        first = {c: a[idx[0]] for c, a in narrow.items()}
        cmds.append(_command(first, int(np.nanmax(reps[idx])) + 1))
    agg["ci_low"] = [c[0] for c in cis]
    agg["ci_high"] = [c[1] for c in cis]
    agg["hardware"] = hws
    agg["command"] = cmds
    agg["reason"] = reasons
    agg["gap_pct"] = [_gap_pct(m, r, direction) for m, r in zip(agg["mean"], agg["reference"], strict=True)]
    out = agg.reset_index(drop=False)
    out["method"] = out["label"]
    out["runs"] = out["runs"].astype(int)
    for st_ in STATUSES:
        out[st_] = out[st_].astype(int)
    out = out[cols]
    kind_order = {"method": 0, "baseline": 1}
    tier_order = {"smoke": 0, "standard": 1, "full": 2}
    order = {"kind": kind_order, "tier": tier_order}
    return out.sort_values(["instance", "tier", "kind", "method"], key=lambda s: s.map(order[s.name]).fillna(9) if s.name in order else s).reset_index(drop=True)


def failure_reason(status: str, reason: str, width: int = 160) -> str:
    """``status: reason`` on one line (control characters and runs of blanks folded), at most ``width`` characters."""
    text = " ".join("".join(c if c.isprintable() else " " for c in str(reason or "")).split())
    line = f"{status}: {text}" if text else str(status)
    return line if len(line) <= width else line[: width - 1] + "…"


def _fmt(v: Any, digits: int = 4) -> str:
    if isinstance(v, float):
        if math.isnan(v):
            return "–"
        return f"{v:.{digits}g}"
    return str(v)


def render_table(table: pd.DataFrame, meta: dict[str, Any], console: Any = None, title: str | None = None) -> None:
    """Print ``summary_table`` output with rich; methods and baselines look different."""
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    console = console or Console()
    primary = meta["primary"]
    t = Table(title=escape(title or f"{meta['name']} v{meta['version']}: {primary} (mean over seeds, 95% bootstrap CI)"))
    tiers = "tier" in table and table["tier"].nunique() > 1
    if console.width < NARROW:
        _render_narrow(table, primary, console, t.title, tiers)
    else:
        for c in ("instance", *(("tier",) if tiers else ()), "method", "runs", primary, "95% CI", "ref", "gap %", "time s", "mem MB", "status"):
            t.add_column(c, justify="left" if c in ("instance", "tier", "method", "status") else "right", no_wrap=c != "status")
        for r in table.itertuples(index=False):
            name = f"[bold cyan]{escape(r.method)}[/]" if r.kind == "method" else escape(r.method)
            t.add_row(escape(str(r.instance)), *((escape(str(r.tier)),) if tiers else ()), name, str(r.runs), _fmt(r.mean, 6), _ci(r), _fmt(r.reference, 6), _fmt(r.gap_pct, 3), _fmt(r.wall_s, 3), _fmt(r.peak_rss_mb, 3), _status(r))
        console.print(t)
    console.print("[dim]bold cyan = the paper's method; plain = baseline. Times are the runner's measurements.[/]")


#: Below this many columns, tables take the narrow layout: no ids or numbers are ever cut.
NARROW = 130


def _ci(r: Any) -> str:
    return f"[{_fmt(r.ci_low, 6)}, {_fmt(r.ci_high, 6)}]" if not math.isnan(r.ci_low) else "–"  # as many digits as the mean


def _status(r: Any) -> str:
    return " ".join(f"{s}:{getattr(r, s)}" for s in STATUSES if getattr(r, s))


def _render_narrow(table: pd.DataFrame, primary: str, console: Any, title: Any, tiers: bool) -> None:
    """The result table for a narrow terminal: one block per instance, no borders, ``ref`` and memory left out.

    Ids and numbers are never cut: an instance id heads its block on a line of
    its own, and a row too long for the terminal wraps onto the next line.
    """
    from rich import box
    from rich.markup import escape
    from rich.table import Table

    console.print(title)
    for (inst, tier), g in table.groupby(["instance", "tier"], sort=False):
        head = f"[bold]{escape(str(inst))}[/]" + (f" [{escape(str(tier))}]" if tiers else "")
        t = Table(box=box.SIMPLE_HEAD, title=head, title_justify="left", pad_edge=False, padding=(0, 1))
        for c in ("method", "runs", primary, "95% CI", "gap %", "time s", "status"):
            t.add_column(c, justify="left" if c in ("method", "status") else "right", no_wrap=c not in ("status", "95% CI"))
        for r in g.itertuples(index=False):
            name = f"[bold cyan]{escape(r.method)}[/]" if r.kind == "method" else escape(r.method)
            t.add_row(name, str(r.runs), _fmt(r.mean, 6), _ci(r), _fmt(r.gap_pct, 3), _fmt(r.wall_s, 3), _status(r))
        console.print(t)


# ----------------------------------------------------------------------------- shared helpers


def _direction(meta: dict[str, Any], metric: str | None = None) -> str:
    name = metric or meta["primary"]
    return next(m["direction"] for m in meta["metrics"] if m["name"] == name)


def hardware_label(df: pd.DataFrame) -> list[str]:
    """One machine label per row (``cpu model xcores``), from the ``env.*`` columns."""
    from bench.environment import hardware_id

    model = df["env.cpu_model"] if "env.cpu_model" in df else pd.Series("?", index=df.index)
    cores = df["env.cpu_cores"] if "env.cpu_cores" in df else pd.Series("?", index=df.index)
    return [hardware_id({"cpu_model": m, "cpu_cores": c if c == c else "?"}) for m, c in zip(model, cores, strict=True)]


#: Above this ratio between the slowest and the fastest method's median speed probe, times are flagged.
SPEED_SPREAD = 1.3


def speed_probe_values(records: pd.DataFrame) -> pd.Series:
    """``env.speed_probe_ms`` of each run as floats; runs recorded before the probe existed are dropped."""
    if "env.speed_probe_ms" not in records:
        return pd.Series(dtype=float)
    return pd.to_numeric(records["env.speed_probe_ms"], errors="coerce").dropna()


def speed_probes(records: pd.DataFrame) -> pd.DataFrame:
    """Each method's machine-speed probe over its runs (see :func:`bench.environment.speed_probe`).

    Returns one row per method label that has probes: ``method, runs, median_ms``,
    fastest machine first. Runs recorded before the probe existed are left out.
    """
    values = speed_probe_values(records.reset_index(drop=True))
    if values.empty:
        return pd.DataFrame(columns=["method", "runs", "median_ms"])
    g = values.groupby(with_labels(records.reset_index(drop=True)).loc[values.index, "label"])
    out = pd.DataFrame({"runs": g.count(), "median_ms": g.median()})
    return out.reset_index(names="method").sort_values("median_ms", kind="stable").reset_index(drop=True)


def speed_note(records: pd.DataFrame, spread: float = SPEED_SPREAD, min_runs: int = 3) -> str | None:
    """A one-line warning when the methods in ``records`` ran at different machine speeds, else ``None``.

    Wall-clock budgets and times are comparable only between runs that got the
    same speed. The median speed probe of each method with at least
    ``min_runs`` probed runs is compared (fewer are too noisy to tell); when
    the slowest is more than ``spread`` times the fastest, the line names both.
    """
    probes = speed_probes(records)
    probes = probes[probes["runs"] >= min_runs].reset_index(drop=True)
    if len(probes) < 2:
        return None
    fast, slow = probes.iloc[0], probes.iloc[-1]
    if not fast["median_ms"] > 0 or slow["median_ms"] <= spread * fast["median_ms"]:
        return None
    ratio = slow["median_ms"] / fast["median_ms"]
    one_sweep = "sweep" in records and records["sweep"].nunique() == 1
    advice = (
        "the machine's speed changed during this sweep (other load?): rerun on a quiet machine"
        if one_sweep
        else "rerun them in one sweep on a quiet machine"
    )
    return (
        f"machine speed differed: {slow['method']}'s runs got a median speed probe of {slow['median_ms']:.2f} ms, "
        f"{fast['method']}'s {fast['median_ms']:.2f} ms ({ratio:.1f}x slower); their times and wall-clock budgets "
        f"are not directly comparable ({advice})"
    )


def with_labels(records: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``records`` with a ``label`` column, as :func:`summary_table` names methods."""
    df = records.copy()
    if df.empty:
        df["label"] = pd.Series(dtype=str)
        return df
    varying = {m: _varying_keys(g) for m, g in df.groupby("method")["params"]}
    df["label"] = [method_label(m, p, bool(varying.get(m)), varying.get(m)) for m, p in zip(df["method"], df["params"], strict=True)]
    return df


_COMMAND_FIELDS = ("task", "tier", "method", "instance", "params", "master_seed", "budget", "threads", "memory_mb")


def reproduce_command(rows: pd.DataFrame) -> str:
    """The ``bench run`` command that reruns these jobs (one method, one instance).

    Seeds derive from the master seed, the task, the instance and the
    repetition, so asking for the same master seed, repetitions, budget,
    threads and parameters gives the same job keys (and the store reuses
    finished ones).
    """
    first = {c: rows[c].iloc[0] for c in _COMMAND_FIELDS if c in rows}
    return _command(first, int(pd.to_numeric(rows["rep"]).max()) + 1)


def _command(r: dict[str, Any], reps: int) -> str:
    import shlex

    def num(k: str) -> float | None:
        v = r.get(k)
        try:
            f = float(v)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            return None
        return f if f == f else None

    params = json.loads(r["params"]) if isinstance(r.get("params"), str) and r["params"] else {}
    parts = ["python -m bench run", f"--task {r['task']}", f"--tier {r['tier']}", f"--method {r['method']}",
             f"--instances {r['instance']}", f"--seeds {reps}"]  # fmt: skip
    if (v := num("master_seed")) is not None:
        parts.append(f"--seed {int(v)}")
    if (v := num("budget")) is not None:
        parts.append(f"--budget {v:g}")
    if (v := num("threads")) is not None and int(v) != 1:
        parts.append(f"--threads {int(v)}")
    if (v := num("memory_mb")) is not None and v != 4096.0:
        parts.append(f"--memory-mb {v:g}")
    for k, val in sorted(params.items()):
        parts.append("--param " + shlex.quote(f"{k}={json.dumps(val)}"))
    return " ".join(parts)


def preferred_tier(records: pd.DataFrame) -> str | None:
    """The tier a task's overview uses: standard if present, else full, else smoke."""
    have = set(records["tier"]) if not records.empty else set()
    return next((t for t in ("standard", "full", "smoke") if t in have), None)


def normalised_scores(records: pd.DataFrame, meta: dict[str, Any]) -> pd.Series:
    """Each run's primary metric on the task's declared 0-1 scale (index of ``records``).

    The rule is the task's ``normalization`` (:class:`bench.task.Normalization`:
    linear between two references or numbers, or log10 for errors spanning
    decades), read from the metadata and the ``ref.*`` columns, never from task
    code; vectorised, and equal to ``Normalization.apply`` run by run. NaN for
    runs that are not ``ok`` or whose instance lacks a reference the rule needs.
    """
    rule = meta["normalization"]
    n = len(records)
    col = f"metric.{meta['primary']}"
    v = pd.to_numeric(records[col], errors="coerce").to_numpy(dtype=float) if col in records else np.full(n, np.nan)

    def end(x: Any) -> np.ndarray:
        if isinstance(x, str):
            c = f"ref.{x}"
            return pd.to_numeric(records[c], errors="coerce").to_numpy(dtype=float) if c in records else np.full(n, np.nan)
        return np.full(n, float(x))

    lo, hi = end(rule["zero"]), end(rule["one"])
    with np.errstate(divide="ignore", invalid="ignore"):
        if rule.get("kind", "linear") == "log":
            good = (v > 0) & (lo > 0) & (hi > 0) & (lo != hi)
            out = np.where(good, (np.log10(np.where(good, lo, 1.0)) - np.log10(np.where(good, v, 1.0)))
                           / (np.log10(np.where(good, lo, 1.0)) - np.log10(np.where(good, hi, 10.0))), np.nan)  # fmt: skip
        else:
            out = np.where(hi != lo, (v - lo) / (hi - lo), np.nan)
    out = np.where(np.isfinite(v) & (records["status"].to_numpy() == "ok"), out, np.nan)
    return pd.Series(out, index=records.index, dtype=float)


def _scored(records: pd.DataFrame, meta: dict[str, Any]) -> pd.DataFrame:
    """``records`` with ``label`` and ``_s`` (normalised score) columns."""
    df = with_labels(records)
    df["_s"] = normalised_scores(df, meta) if not df.empty else pd.Series(dtype=float)
    return df


def instance_means(records: pd.DataFrame, meta: dict[str, Any], metric: str | None = None) -> pd.DataFrame:
    """Shape ``(n_instances, n_methods)``: mean of ``metric`` (default primary) over ``ok`` runs.

    Columns are method labels; NaN where a method has no valid run.
    """
    df = with_labels(records)
    col = f"metric.{metric or meta['primary']}" if (metric or meta["primary"]) not in ("wall_s", "cpu_s", "peak_rss_mb") else metric
    if df.empty or col not in df:
        return pd.DataFrame()
    ok = df[df["status"] == "ok"].assign(_v=lambda d: pd.to_numeric(d[col], errors="coerce"))
    table = ok.pivot_table(index="instance", columns="label", values="_v", aggfunc="mean")
    instances = sorted(df["instance"].unique())
    labels = sorted(df["label"].unique())
    return table.reindex(index=instances, columns=labels)


def task_ranking(records: pd.DataFrame, meta: dict[str, Any], *, min_coverage: float = 0.5, alpha: float = 0.05) -> RankingResult:
    """Rank the methods of one task and tier on the primary metric, instances as blocks.

    Methods with a valid result on fewer than ``min_coverage`` of the
    instances are left out (they would empty the set of complete blocks);
    then only instances where every remaining method has a valid result are
    blocks. Both exclusions are reported in ``excluded`` (method -> reason)
    and ``n_blocks``.
    """
    m = instance_means(records, meta)
    excluded: dict[str, str] = {}
    if m.empty:
        res = rank_methods(np.zeros((0, 0)), [], alpha=alpha)
        return res
    cover = m.notna().mean(axis=0)
    keep = [c for c in m.columns if cover[c] >= min_coverage]
    for c in m.columns:
        if c not in keep:
            excluded[c] = f"valid results on {int(m[c].notna().sum())} of {len(m)} instances"
    sub = m[keep].dropna(axis=0, how="any")
    res = rank_methods(sub.to_numpy(), keep, higher_is_better=_direction(meta) == "max", alpha=alpha)
    dropped = len(m) - len(sub)
    if dropped:
        excluded["(instances)"] = f"{dropped} of {len(m)} instances left out: some method has no valid result there"
    res.excluded = excluded
    return res


def role_strata(records: pd.DataFrame, meta: dict[str, Any], label: str) -> np.ndarray | None:
    """Per-repetition task scores of one method: shape ``(n_reps,)``, or None if it does not cover the task.

    A task score of repetition ``r`` is the mean over the task's scorable
    instances (those where the normalisation is defined) of the run's
    normalised score; a failed run (truncated, invalid, error, timeout, killed) scores 0,
    the level of the task's trivial answer. A method that has no run, or only
    skipped ones, on some scorable instance does not cover the task (None):
    no partial means. Only repetitions present on every instance count; a
    repetition is a (master seed, rep) pair.
    """
    grid = role_grid(records, meta, label)
    return None if grid is None else grid.mean(axis=1).to_numpy(dtype=float)


def role_grid(records: pd.DataFrame, meta: dict[str, Any], label: str) -> pd.DataFrame | None:
    """One method's normalised scores, repetitions by instances, as :func:`role_strata` averages them.

    Shape ``(n_reps, n_scorable_instances)``: the index is the repetition
    (``master_seed, rep``), the columns the scorable instances, failed runs
    score 0, and only repetitions complete on every instance are kept. None
    when the method does not cover the task.
    """
    df = records if "_s" in records else _scored(records, meta)
    if df.empty:
        return None
    scorable = sorted(set(df.loc[df["_s"].notna(), "instance"]))
    if not scorable:
        return None
    mine = df[(df["label"] == label) & df["instance"].isin(scorable) & (df["status"] != "skipped")]
    if set(mine["instance"]) != set(scorable):
        return None
    mine = mine.assign(_s=np.where(mine["status"].isin(FAILED_STATUSES), 0.0, mine["_s"]))
    # a repetition is (master seed, rep): rep 0 of two master seeds are two repetitions, not one
    index = ["master_seed", "rep"] if "master_seed" in mine and mine["master_seed"].notna().all() else ["rep"]
    grid = mine.pivot_table(index=index, columns="instance", values="_s", aggfunc="mean").reindex(columns=scorable)
    grid = grid.dropna(axis=0, how="any")
    return None if grid.empty else grid


def role_score(records: pd.DataFrame, meta: dict[str, Any], label: str | None, *, seed: int = 0) -> tuple[float, float, float]:
    """``(mean, ci_low, ci_high)`` of one method's normalised task score, as the Overview and a task's headline show it.

    The mean is that of :func:`role_strata`; the 95% interval is
    :func:`bench.stats.score_ci` of :func:`role_grid`'s columns: over
    instances (each with its mean over repetitions) when the task has
    several, over repetitions when it has one, and none (NaN) when that
    leaves fewer than two distinct values, as one deterministic instance
    does. All NaN when ``label`` is None or does not cover the task.
    """
    grid = role_grid(records, meta, label) if label else None
    if grid is None:
        return (math.nan, math.nan, math.nan)
    return score_ci([grid[c].to_numpy(dtype=float) for c in grid.columns], seed=seed)


def task_roles(
    records: pd.DataFrame,
    meta: dict[str, Any],
    claims: list[dict[str, Any]] | None = None,
    methods: dict[str, dict[str, Any]] | None = None,
) -> dict[str, str | None]:
    """Which method plays each role on a task (None when nobody does).

    - *paper's method*: among ``kind == "method"`` entries, the one the task's
      claims name most often; among that method's parameter sets (a grid, a
      side-by-side), the registered one when ``methods`` (a bundle's
      ``methods.json``, by name) says which, so the role never goes to the
      best-scoring variant of a grid (ties and no claims: the best task score);
    - *best baseline*: the baseline with the highest mean task score;
    - *weak baseline*: the baseline with the lowest mean task score (the same
      as the best when there is one baseline).

    Only methods that cover the task (:func:`role_strata`) can take a role.
    """
    df = _scored(records, meta)
    out: dict[str, str | None] = dict.fromkeys(ROLES)
    if df.empty:
        return out
    from bench.claims import is_registered

    def registered(g: pd.DataFrame) -> bool:
        meta_m = (methods or {}).get(str(g["method"].iloc[0]))
        if meta_m is None or "params" not in g.columns:
            return False
        tier = str(g["tier"].iloc[0]) if "tier" in g.columns else ""
        version = g["method_version"].iloc[0] if "method_version" in g.columns else None
        return is_registered(g["params"].iloc[0], version, meta_m, tier)

    scores = {}
    for label, g in df.groupby("label"):
        st_ = role_strata(df, meta, str(label))
        if st_ is not None:
            scores[str(label)] = (g["kind"].iloc[0], g["method"].iloc[0], float(np.mean(st_)), registered(g))
    named: dict[str, int] = {}
    for c in claims or []:
        cmp_ = c.get("comparison", {}) or {}
        if cmp_.get("method"):
            named[cmp_["method"]] = named.get(cmp_["method"], 0) + 1
    candidates = [(lab, v) for lab, v in scores.items() if v[0] == "method"]
    if candidates:
        out["paper's method"] = max(candidates, key=lambda kv: (named.get(kv[1][1], 0), kv[1][3], kv[1][2]))[0]
    bases = [(lab, v) for lab, v in scores.items() if v[0] == "baseline"]
    if bases:
        out["best baseline"] = max(bases, key=lambda kv: kv[1][2])[0]
        out["weak baseline"] = min(bases, key=lambda kv: kv[1][2])[0]
    return out


def role_aggregate(
    tasks: dict[str, tuple[Any, ...]],
    *,
    seed: int = 0,
    n_boot: int = 2000,
) -> pd.DataFrame:
    """IQM of normalised task scores per role across tasks, with a stratified bootstrap CI.

    Parameters
    ----------
    tasks
        ``{task: (records of one tier, meta, claims)}``, or with a fourth entry,
        the task's method metadata by name (:func:`task_roles`).

    Returns
    -------
    DataFrame
        One row per role: ``role, iqm, ci_low, ci_high, tasks, runs, methods,
        missing``. When the role has no method on some task, ``iqm`` and the CI
        are NaN and ``missing`` names those tasks: never a partial aggregate.
    """
    prepared = {name: (_scored(t[0], t[1]), t[1], t[2]) for name, t in tasks.items()}
    registered = {name: (t[3] if len(t) > 3 else None) for name, t in tasks.items()}
    roles = {name: task_roles(r, m, c, registered[name]) for name, (r, m, c) in prepared.items()}
    per_task = {
        name: {role: (label, role_strata(records, meta, label) if label else None) for role, label in roles[name].items()}
        for name, (records, meta, _) in prepared.items()
    }
    return aggregate_roles(per_task, seed=seed, n_boot=n_boot)


def aggregate_roles(
    per_task: dict[str, dict[str, tuple[str | None, np.ndarray | None]]],
    *,
    seed: int = 0,
    n_boot: int = 2000,
) -> pd.DataFrame:
    """The body of :func:`role_aggregate`, from each task's role holders and their strata.

    ``per_task[task][role]`` is ``(label, strata)`` as :func:`task_roles` and
    :func:`role_strata` give them (``strata`` None: the role is missing on that
    task). The leaderboard keeps these per task, so any choice of tasks is
    aggregated without rereading the records. Returns :func:`role_aggregate`'s table.
    """
    rows = []
    for role in ROLES:
        strata, who, missing = [], [], []
        for name, roles_ in sorted(per_task.items()):
            label, st_ = roles_.get(role, (None, None))
            if st_ is None:
                missing.append(name)
            else:
                strata.append(st_)
                who.append(f"{name}: {label}")
        if missing or not strata:
            est = lo = hi = math.nan
        else:
            est, lo, hi = stratified_bootstrap_aggregate(strata, iqm, seed=seed, n_boot=n_boot)
        rows.append({"role": role, "iqm": est, "ci_low": lo, "ci_high": hi, "tasks": len(strata),
                     "runs": int(sum(len(s) for s in strata)), "methods": "; ".join(who), "missing": ", ".join(missing)})  # fmt: skip
    return pd.DataFrame(rows)


def paper_table(paper_results: list[dict[str, Any]]) -> pd.DataFrame:
    """The paper's reported numbers as their own labelled rows (never merged into ours)."""
    cols = ["row", "instance", "method", "metric", "value", "source", "note"]
    if not paper_results:
        return pd.DataFrame(columns=cols)
    df = pd.DataFrame(paper_results)
    df["row"] = "reported by the paper"
    for c in cols:
        if c not in df:
            df[c] = ""
    return df[cols]


def _side(ref: float, lo: float, hi: float, n: int) -> str:
    """Where our bounds ``[lo, hi]`` lie against a reference value (the paper's)."""
    if n < 2:
        return "one run"
    if lo > ref:
        return "above the paper"
    if hi < ref:
        return "below the paper"
    return "consistent"


def versus_paper(
    records: pd.DataFrame,
    paper_results: list[dict[str, Any]],
    meta: dict[str, Any],
    method: str,
    *,
    paper_method: str | None = None,
    metric: str | None = None,
    alpha: float = 0.05,
    methods: dict[str, dict[str, Any]] | None = None,
) -> pd.DataFrame:
    """Our runs of ``method`` beside the paper's reported value, instance by instance.

    A paper's per-instance figure is one run. Two questions, two verdicts:

    - ``verdict``: is our *mean* above or below the paper's figure? One-sided
      Student-t bounds on our mean over seeds (:func:`bench.stats.t_bounds`,
      each at ``1 - alpha``): ``above the paper`` when our lower bound exceeds
      the paper's value, ``below the paper`` when our upper bound is under it,
      ``consistent`` otherwise. With many seeds these bounds are tight, so a
      single run of the very same method would usually land outside them.
    - ``run_verdict``: could the paper's figure be *one of our runs*?
      One-sided prediction bounds for a single new run
      (:func:`bench.stats.t_prediction_bounds`), with the same wording.

    Both are ``one run`` with fewer than two valid runs.

    Parameters
    ----------
    records : DataFrame
        Records of one task (any tiers; only ``ok`` runs of ``method`` count, and
        of each instance only those of one tier: the one with the most valid runs).
    paper_results : list of dict
        The task's ``paper_results`` entries (instance, method, metric, value, source).
    meta : dict
        The task's exported ``meta`` (its ``primary`` metric is the default).
    method : str
        Our method's name.
    paper_method : str, optional
        The paper's name for it (default ``method``).
    metric : str, optional
        A metric both sides report (default the task's primary metric).
    alpha : float
        One-sided error rate of each bound.
    methods : dict, optional
        Method metadata by name (a bundle's ``methods.json``): only runs with
        ``method``'s registered parameters count, as in a claim
        (:func:`bench.claims.configuration`, tier by tier).

    Returns
    -------
    DataFrame
        Columns ``instance, paper, ours, runs, lo, hi, diff_pct, verdict,
        run_lo, run_hi, run_verdict, source``, one row per instance that both
        sides have; instances sorted as the records list them.
    """
    metric = metric or meta["primary"]
    cols = ["instance", "paper", "ours", "runs", "lo", "hi", "diff_pct", "verdict", "run_lo", "run_hi", "run_verdict", "source"]
    paper = [p for p in paper_results if p.get("method") == (paper_method or method) and p.get("metric") == metric]
    col = f"metric.{metric}"
    if records.empty or not paper or col not in records:
        return pd.DataFrame(columns=cols)
    from bench.claims import configuration

    mine = records[records["method"] == method]
    if "tier" in mine.columns:
        mine = pd.concat([configuration(g, method, str(t), methods)[0] for t, g in mine.groupby("tier", sort=True)] or [mine])
    ok = mine[mine["status"] == "ok"]
    if "tier" in ok.columns and not ok.empty:
        # one tier per instance (a seed run in two tiers ran with two budgets): the most valid runs,
        # ties to standard, then full, then smoke
        pref = {"standard": 0, "full": 1, "smoke": 2}
        n = ok.groupby(["instance", "tier"]).size().reset_index(name="n")
        n["_p"] = n["tier"].map(pref).fillna(3)
        best = n.sort_values(["instance", "n", "_p"], ascending=[True, False, True]).drop_duplicates("instance")
        ok = ok.merge(best[["instance", "tier"]], on=["instance", "tier"])
    values = {i: pd.to_numeric(g[col], errors="coerce").dropna().to_numpy() for i, g in ok.groupby("instance", sort=False)}
    rows = []
    for p in paper:
        x = values.get(p["instance"])
        if x is None or x.size == 0:
            continue
        ref = float(p["value"])
        lo, hi = t_bounds(x, alpha)
        run_lo, run_hi = t_prediction_bounds(x, alpha)
        mean = float(x.mean())
        rows.append({"instance": p["instance"], "paper": ref, "ours": mean, "runs": int(x.size), "lo": lo, "hi": hi,
                     "diff_pct": 100.0 * (mean - ref) / abs(ref) if ref else math.nan,
                     "verdict": _side(ref, lo, hi, x.size), "run_lo": run_lo, "run_hi": run_hi,
                     "run_verdict": _side(ref, run_lo, run_hi, x.size), "source": str(p.get("source", ""))})  # fmt: skip
    order = {i: k for k, i in enumerate(records["instance"].unique())}
    out = pd.DataFrame(rows, columns=cols)
    return out.sort_values("instance", key=lambda s: s.map(order), kind="stable").reset_index(drop=True)


def profile_table(records: pd.DataFrame, meta: dict[str, Any], *, measure: str = "quality", taus: np.ndarray | None = None) -> pd.DataFrame:
    """Dolan-Moré profiles across instances, long format: ``label, tau, fraction``.

    ``measure="quality"`` uses the primary metric (ratio ``best / value`` for a
    maximised metric, ``value / best`` for a minimised one); ``"time"`` uses the
    median ``wall_s`` of valid runs. A method without a valid run on an
    instance counts as failing there.
    """
    m = instance_means(records, meta, None if measure == "quality" else "wall_s")
    if m.empty:
        return pd.DataFrame(columns=["label", "tau", "fraction"])
    if measure == "quality":
        costs = quality_costs(m.to_numpy(), _direction(meta))
    else:
        costs = np.where(np.isnan(m.to_numpy()), np.inf, m.to_numpy())
    if taus is None:
        with np.errstate(divide="ignore", invalid="ignore"):
            best = np.min(costs, axis=1, keepdims=True)
            r = np.where(best > 0, costs / best, 1.0)
        top = np.nanmax(np.where(np.isfinite(r), r, np.nan)) if np.isfinite(r).any() else 2.0
        top = max(float(top) * 1.05, 1.01)
        taus = np.unique(np.concatenate([[1.0], np.geomspace(1.0, top, 60)]))
    rho = performance_profile(costs, taus)
    return pd.DataFrame([{"label": lab, "tau": float(t), "fraction": float(rho[i, j])}
                         for j, lab in enumerate(m.columns) for i, t in enumerate(taus)])  # fmt: skip


def pareto_table(records: pd.DataFrame, meta: dict[str, Any]) -> pd.DataFrame:
    """One point per method: median ``wall_s`` against mean normalised score; ``pareto`` marks the front.

    Columns: ``label, kind, wall_s, score, instances, hardware, pareto``.
    ``score`` is the mean over instances of the mean normalised score
    (instances with a defined normalisation only); ``instances`` says on how
    many of the records' instances the method has a valid run. A method
    without a valid run on every instance gets no score (a mean over fewer
    instances is not comparable; :func:`role_strata` refuses it too), so it
    is neither plotted nor on the front.
    """
    df = _scored(records, meta)
    cols = ["label", "kind", "wall_s", "score", "instances", "hardware", "pareto"]
    if df.empty:
        return pd.DataFrame(columns=cols)
    df["_hw"] = hardware_label(df)
    n_inst = df["instance"].nunique()
    rows = []
    for label, g in df.groupby("label"):
        ok = g[g["status"] == "ok"]
        per_inst = ok.groupby("instance")["_s"].mean()
        full = ok["instance"].nunique() == n_inst
        rows.append({"label": label, "kind": g["kind"].iloc[0],
                     "wall_s": float(pd.to_numeric(ok["wall_s"], errors="coerce").median()) if len(ok) else math.nan,
                     "score": float(per_inst.mean()) if full and per_inst.notna().any() else math.nan,
                     "instances": f"{ok['instance'].nunique()} of {n_inst}",
                     "hardware": "; ".join(sorted(set(g["_hw"])))})  # fmt: skip
    out = pd.DataFrame(rows, columns=cols[:-1])
    out["pareto"] = pareto_front(out["wall_s"].to_numpy(), out["score"].to_numpy())
    return out


def anytime_table(records: pd.DataFrame, meta: dict[str, Any]) -> pd.DataFrame:
    """Verified checkpoints of anytime runs, long format.

    Columns: ``label, instance, rep, t, value`` where ``value`` is the primary
    metric the task computed at each checkpoint (invalid checkpoints are left
    out) and ``t`` the runner-measured method time in seconds. Each run's
    final result is appended at ``wall_s``. Empty when no run has a trace.
    """
    df = with_labels(records)
    cols = ["label", "instance", "rep", "t", "value"]
    if df.empty or "trace" not in df or "n_checkpoints" not in df:
        return pd.DataFrame(columns=cols)
    df = df[pd.to_numeric(df["n_checkpoints"], errors="coerce").fillna(0) > 0]
    primary = meta["primary"]
    rows = []
    for r in df.to_dict("records"):
        try:
            trace = json.loads(r["trace"]) if isinstance(r["trace"], str) else []
        except json.JSONDecodeError:
            continue
        for p in trace:
            v = (p.get("metrics") or {}).get(primary)
            if p.get("invalid") is None and v is not None:
                rows.append({"label": r["label"], "instance": r["instance"], "rep": r["rep"], "t": float(p["t"]), "value": float(v)})
        final = r.get(f"metric.{primary}")
        if r["status"] == "ok" and final is not None and final == final:
            rows.append({"label": r["label"], "instance": r["instance"], "rep": r["rep"], "t": float(r["wall_s"]), "value": float(final)})
    return pd.DataFrame(rows, columns=cols)


def render_ranking(res: RankingResult, console: Any = None, title: str = "ranking") -> None:
    """Print a :class:`RankingResult` with rich (the terminal twin of the CD diagram)."""
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    console = console or Console()
    t = Table(title=escape(title))
    for c in ("rank", "method", "mean rank", "same group as"):
        t.add_column(c)
    for i, (name, r) in enumerate(zip(res.methods, res.mean_ranks, strict=True)):
        peers = sorted({res.methods[j] for cl in res.cliques if i in cl for j in cl if j != i})
        t.add_row(str(i + 1), escape(name), _fmt(float(r), 3), escape(", ".join(peers)) or "–")
    console.print(t)
    fr = "–" if math.isnan(res.friedman_p) else f"chi2 = {res.friedman_stat:.3g}, p = {res.friedman_p:.3g}"
    console.print(escape(f"{res.n_blocks} instances as blocks; Friedman: {fr}; pairwise Wilcoxon signed-rank, Holm-corrected, alpha {res.alpha}"))
    for k, v in res.excluded.items():
        console.print(escape(f"left out: {k}: {v}"))
