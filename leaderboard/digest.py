"""Per-task digests: every number the Overview and a task's headline show, computed once per results folder.

A :class:`TaskDigest` holds one task's standing on its preferred tier (the
ranking, the roles and their normalised scores, the claims' verdicts, the
status counts and the unfiltered per-instance table), computed by the same
functions ``bench show`` and ``bench claims`` use. The app caches the digests
on disk keyed by :func:`fingerprint` (every bundle file's size and mtime, and
the code that computes them), so a page never recomputes them while the
results folder stays the same. The other functions here turn digests into the
Overview's table, its search and area filter, a task's three-line headline and
the table of bundles (superseded ones included) of the provenance page. All
are pure: plain data in, plain data out.
"""

from __future__ import annotations

import hashlib
import math
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from bench.claims import Claim, registered_records, verdict
from bench.report import (
    ROLES,
    anytime_table,
    hardware_label,
    pareto_table,
    preferred_tier,
    profile_table,
    role_strata,
    summary_table,
    task_ranking,
    task_roles,
    with_labels,
)
from bench.stats import RankingResult, bootstrap_ci
from leaderboard.data import Data

__all__ = [
    "TaskDigest",
    "TaskTables",
    "task_tables",
    "task_area",
    "status_counts",
    "best_label",
    "task_digest",
    "verdict_rows",
    "overview_table",
    "verdict_marks",
    "VERDICT_MARKS",
    "filter_overview",
    "headline",
    "bundles_table",
    "fingerprint",
    "OVERVIEW_COLUMNS",
]

#: Files whose size and mtime identify a bundle's content (solutions are covered by records.parquet's hashes).
_BUNDLE_FILES = ("manifest.json", "records.parquet", "task.json", "claims.json", "methods.json")
#: The code whose output a digest is: a change to any of it invalidates the disk cache.
_CODE = tuple(Path(__file__).resolve().parent.parent / p for p in ("bench/report.py", "bench/claims.py", "bench/stats.py", "bench/bundle.py", "bench/store.py", "leaderboard/digest.py", "leaderboard/data.py"))  # fmt: skip


@dataclass
class TaskTables:
    """The tables a task page draws from one selection of records (one tier, after its filters).

    ``summary`` is :func:`bench.report.summary_table` of every run; the rest
    compare each method in its registered parameters (``registered`` runs of
    ``runs``): the ranking, ``kinds`` (label -> method/baseline), the anytime
    traces, the Pareto points and both Dolan-Moré profiles.
    """

    summary: pd.DataFrame
    runs: int
    registered: int
    ranking: RankingResult
    kinds: dict[str, str]
    anytime: pd.DataFrame
    pareto: pd.DataFrame
    profile_quality: pd.DataFrame
    profile_time: pd.DataFrame


def task_tables(
    records: pd.DataFrame, meta: dict[str, Any], methods: dict[str, dict[str, Any]] | None, registered: pd.DataFrame | None = None
) -> TaskTables:
    """Every table of a task page for ``records`` (one task and tier), from the functions ``bench show`` uses.

    ``registered``: ``registered_records(records, methods)``, when the caller has it already.
    """
    reg = registered_records(records, methods) if registered is None else registered
    return TaskTables(
        summary=summary_table(records, meta), runs=len(records), registered=len(reg), ranking=task_ranking(reg, meta),
        kinds={str(k): str(v) for k, v in with_labels(reg).groupby("label")["kind"].first().items()} if not reg.empty else {},
        anytime=anytime_table(records, meta), pareto=pareto_table(reg, meta),
        profile_quality=profile_table(reg, meta, measure="quality"), profile_time=profile_table(reg, meta, measure="time"),
    )  # fmt: skip


@dataclass
class TaskDigest:
    """One task's standing on its preferred tier, as plain data (picklable, cached on disk).

    ``ranking`` is ``[(label, mean rank)]``, best first, over ``n_blocks``
    complete instances; ``roles`` maps each of :data:`bench.report.ROLES` to
    ``(label, per-repetition normalised task scores)`` (``(None, None)``
    when nobody takes it, scores None when the holder does not cover the
    task); ``scores`` maps a role to ``(mean, ci_low, ci_high)`` of those
    scores (95% bootstrap over repetitions). ``verdicts`` are the rows of
    the Claims page (all tiers of the task's current version), ``statuses``
    counts every status found, unknown ones included, and ``tables`` are the
    task page's tables of the tier's records, unfiltered (:func:`task_tables`).
    """

    task: str
    area: str
    family: str
    paper: str
    version: str
    tier: str | None
    methods: int = 0
    baselines: int = 0
    instances: int = 0
    runs: int = 0
    machines: int = 0
    statuses: dict[str, int] = field(default_factory=dict)
    ranking: list[tuple[str, float]] = field(default_factory=list)
    n_blocks: int = 0
    best: str = "–"
    roles: dict[str, tuple[str | None, np.ndarray | None]] = field(default_factory=dict)
    scores: dict[str, tuple[float, float, float]] = field(default_factory=dict)
    verdicts: list[dict[str, Any]] = field(default_factory=list)
    tables: TaskTables | None = None

    @property
    def paper_method(self) -> str | None:
        """The label of the paper's method, or None when no ``method``-kind entry covers the task."""
        return (self.roles.get("paper's method") or (None, None))[0]

    @property
    def paper_rank(self) -> str:
        """``"2 of 5"``, ``"not ranked"`` (left out of the ranking) or ``"no method"``."""
        paper = self.paper_method
        names = [m for m, _ in self.ranking]
        if paper in names:
            return f"{names.index(paper) + 1} of {len(names)}"
        return "not ranked" if paper else "no method"

    @property
    def verdict_counts(self) -> dict[str, int]:
        """How many claims got each verdict."""
        out: dict[str, int] = {}
        for v in self.verdicts:
            out[v["verdict"]] = out.get(v["verdict"], 0) + 1
        return dict(sorted(out.items()))


def task_area(info: dict[str, Any]) -> str:
    """A task's research area: ``meta.area`` (the optional ``area`` of task.json), else its family name."""
    meta = info.get("meta") or {}
    area = meta.get("area") or info.get("area") or meta.get("family") or meta.get("name") or "other"
    return str(area)


def status_counts(records: pd.DataFrame) -> dict[str, int]:
    """Runs per status, every status found counted (a status this code does not know, too)."""
    if records.empty or "status" not in records:
        return {}
    return {str(k): int(v) for k, v in records["status"].astype(str).value_counts().sort_index().items()}


def best_label(methods: list[str], mean_ranks: Iterable[float]) -> str:
    """The method with the best mean rank, or every method tied for it (never a tie broken by name)."""
    ranks = list(mean_ranks)
    if not methods:
        return "–"
    top = [m for m, r in zip(methods, ranks, strict=True) if math.isclose(r, ranks[0])]
    return top[0] if len(top) == 1 else f"tie: {', '.join(top)}"


def verdict_rows(data: Data, task: str) -> list[dict[str, Any]]:
    """One row per claim of ``task`` with its verdict on the current version's records (all tiers).

    A claim the schema cannot read is a row with verdict ``unreadable claim``,
    never an error.
    """
    rows = []
    records = data.task_records(task)
    for raw in data.claims.get(task, []):
        try:
            c = Claim.model_validate(raw)
        except ValueError as exc:
            rid = str(raw.get("id", "?")) if isinstance(raw, dict) else "?"
            rows.append({"task": task, "claim": rid, "verdict": "unreadable claim", "reason": str(exc).splitlines()[0], "evidence": []})
            continue
        v = verdict(c, records, methods=data.methods.get(task))
        rows.append({"task": task, "claim": c.id, "statement": c.statement, "source": c.source, "paper": c.paper,
                     "test": c.comparison.describe(), "tier": c.tier, "note": c.note, **v.as_row(), "evidence": v.evidence})  # fmt: skip
    return rows


def _mean_ci(x: np.ndarray | None, seed: int) -> tuple[float, float, float]:
    if x is None or len(x) == 0:
        return (math.nan, math.nan, math.nan)
    lo, hi = bootstrap_ci(x, seed=seed)
    return (float(np.mean(x)), float(lo), float(hi))


def task_digest(data: Data, task: str, *, seed: int = 0) -> TaskDigest:
    """Everything the Overview row and the headline of ``task`` need, on its preferred tier.

    Ranks, roles and scores compare each method in its registered parameters
    (:func:`bench.claims.registered_records`), as the task page does.
    """
    info = data.tasks[task]
    meta = info["meta"]
    all_df = data.task_records(task)
    tier = preferred_tier(all_df)
    d = TaskDigest(task=task, area=task_area(info), family=str(meta.get("family", "")), version=str(meta.get("version", "")),
                   paper=str((meta.get("paper") or {}).get("title") or "–"), tier=tier, verdicts=verdict_rows(data, task))  # fmt: skip
    if tier is None:
        return d
    df = data.task_records(task, tier)
    kinds = df.groupby("method")["kind"].first()  # methods, not grid points
    reg = registered_records(df, data.methods.get(task))
    d.tables = task_tables(df, meta, data.methods.get(task), reg)
    res = d.tables.ranking
    roles = task_roles(reg, meta, data.claims.get(task), data.methods.get(task))
    d.methods, d.baselines = int((kinds == "method").sum()), int((kinds == "baseline").sum())
    d.instances, d.runs = int(df["instance"].nunique()), len(df)
    d.machines = len(set(hardware_label(df)))
    d.statuses = status_counts(df)
    d.ranking = [(m, float(r)) for m, r in zip(res.methods, res.mean_ranks, strict=True)]
    d.n_blocks = int(res.n_blocks)
    d.best = best_label(list(res.methods), res.mean_ranks)
    for role in ROLES:
        label = roles[role]
        strata = role_strata(reg, meta, label) if label else None
        d.roles[role] = (label, strata)
        d.scores[role] = _mean_ci(strata, seed)
    return d


def _score(s: tuple[float, float, float] | None, digits: int = 3) -> str:
    if s is None or not math.isfinite(s[0]):
        return "–"
    if not math.isfinite(s[1]):
        return f"{s[0]:.{digits}f}"
    return f"{s[0]:.{digits}f} [{s[1]:.{digits}f}, {s[2]:.{digits}f}]"


def _versus(d: TaskDigest) -> str:
    """``0.77 [0.76, 0.78] vs 0.82 [0.81, 0.83] (b-strong)``: the paper's method's normalised score against the best baseline's."""
    paper, base = d.roles.get("paper's method", (None, None)), d.roles.get("best baseline", (None, None))
    if paper[0] is None:
        return "no paper method"
    ours = _score(d.scores.get("paper's method"), 2) if paper[1] is not None else "does not cover the task"
    if base[0] is None:
        return f"{ours} (no baseline)"
    return f"{ours} vs {_score(d.scores.get('best baseline'), 2)} ({base[0]})"


def _verdict_text(counts: dict[str, int]) -> str:
    return ", ".join(f"{n} {k}" for k, n in counts.items()) or "no claims"


#: The Overview's short marks for verdicts (its caption spells them out), in display order.
VERDICT_MARKS = {"confirmed": "✓", "contradicted": "✗", "inconclusive": "?", "not testable here": "–", "unreadable claim": "!"}


def verdict_marks(counts: dict[str, int]) -> str:
    """``✓11 ✗3 –2``: the counts of :attr:`TaskDigest.verdict_counts` in :data:`VERDICT_MARKS`; a verdict without a mark is spelled out."""
    known = [f"{VERDICT_MARKS[k]}{counts[k]}" for k in VERDICT_MARKS if counts.get(k)]
    other = [f"{n} {k}" for k, n in counts.items() if k not in VERDICT_MARKS]
    return " ".join(known + other) or "no claims"


#: The Overview's columns, in order (``area`` groups the rows and is not shown as a column).
OVERVIEW_COLUMNS = ["task", "paper", "paper's method", "its rank", "best (mean rank)", "paper's method vs best baseline", "verdicts"]


def overview_table(digests: Iterable[TaskDigest], link: Any = None) -> pd.DataFrame:
    """One row per task, sorted by area then task.

    Columns: ``area``, :data:`OVERVIEW_COLUMNS`, then ``page`` (``link(task)``,
    the task page's address, when ``link`` is given) and ``search`` (the
    lower-cased text that :func:`filter_overview` matches: task, area,
    family, paper and method names).
    """
    rows = []
    for d in digests:
        names = [m for m, _ in d.ranking] + [str(label) for label, _ in d.roles.values() if label]
        rows.append({
            "area": d.area, "task": d.task, "paper": d.paper, "paper's method": d.paper_method or "–", "its rank": d.paper_rank,
            "best (mean rank)": d.best, "paper's method vs best baseline": _versus(d), "verdicts": verdict_marks(d.verdict_counts),
            "page": link(d.task) if link else "",
            "search": " ".join([d.task, d.area, d.family, d.paper, *names]).lower(),
        })  # fmt: skip
    cols = ["area", *OVERVIEW_COLUMNS, "page", "search"]
    return pd.DataFrame(rows, columns=cols).sort_values(["area", "task"], kind="stable").reset_index(drop=True)


def filter_overview(table: pd.DataFrame, query: str = "", areas: Iterable[str] | None = None) -> pd.DataFrame:
    """The rows of :func:`overview_table` in one of ``areas`` (all when empty or None) whose text holds every word of ``query``.

    Matching is case-insensitive and by substring, word by word: ``"max ros"``
    keeps a row that mentions both ``maxcut`` and ``ros``.
    """
    keep = pd.Series(True, index=table.index)
    areas = list(areas or [])
    if areas:
        keep &= table["area"].isin(areas)
    for word in query.lower().split():
        keep &= table["search"].str.contains(word, regex=False)
    return table[keep]


def headline(d: TaskDigest) -> tuple[str, str, str]:
    """Three lines for the top of a task page: who wins, where the paper's method stands, what its claims came to."""
    tier = f"on the {d.tier} tier" if d.tier else "with no runs"
    if not d.ranking:
        win = f"Who wins: no ranking {tier} (fewer than two methods with complete instances)."
    else:
        rank = dict(d.ranking)
        who = d.best if d.best.startswith("tie") else f"{d.best} (mean rank {rank[d.best]:.2f} of {len(d.ranking)} methods)"
        win = f"Who wins {tier}: {who}, over {d.n_blocks} complete instances."
    paper = d.paper_method
    if paper is None:
        stand = "The paper's method: none of the results is a paper method (baselines only)."
    else:
        base = d.roles.get("best baseline", (None, None))[0]
        vs = f", against the best baseline {base}'s {_score(d.scores.get('best baseline'))}" if base else ""
        score = _score(d.scores.get("paper's method")) if d.roles["paper's method"][1] is not None else "no task score (it does not cover every instance)"
        stand = f"The paper's method {paper}: rank {d.paper_rank}; normalised score {score}{vs}."
    counts = d.verdict_counts
    claims = f"Its claims: {_verdict_text(counts)} (of {sum(counts.values())})." if counts else "Its claims: none recorded."
    return win, stand, claims


def bundles_table(data: Data) -> pd.DataFrame:
    """Every bundle read, superseded ones included: ``task, bundle, origin, author, created, records, superseded by, state``.

    ``records`` counts the bundle's records that still count; ``state`` is
    ``counted``, ``partly superseded`` (some of its jobs were rerun by a
    newer bundle) or ``superseded (provenance only)``.
    """
    counted = data.records["bundle"].astype(str).value_counts().to_dict() if not data.records.empty and "bundle" in data.records else {}
    manifests = {str(m.get("bundle", Path(p).name)): m for p, m in data.provenance.items()}
    manifests.update({b: m for b, m in data.superseded_manifests.items() if b not in manifests})
    rows = []
    for name, m in manifests.items():
        by = data.superseded.get(name, [])
        n = int(counted.get(name, 0))
        state = "counted" if not by else ("partly superseded" if n else "superseded (provenance only)")
        rows.append({"task": str(m.get("task", "")), "bundle": name, "origin": str(m.get("origin", "?")), "author": str(m.get("author", "–")),
                     "created": str(m.get("created_at", "")), "records": n, "superseded by": ", ".join(by), "state": state})  # fmt: skip
    cols = ["task", "bundle", "origin", "author", "created", "records", "superseded by", "state"]
    return pd.DataFrame(rows, columns=cols).sort_values(["task", "created", "bundle"], kind="stable").reset_index(drop=True)


def fingerprint(results: str | Path | None = None, store: str | Path | None = None) -> str:
    """A short hash that changes whenever the data the app shows, or the code that digests it, changes.

    For published results: the relative path, size and mtime of every bundle
    file (``*/*/{manifest.json, records.parquet, task.json, claims.json,
    methods.json}``); for a store: of every file under it. Either way the
    source files of :mod:`bench.report`, :mod:`bench.claims`,
    :mod:`bench.stats`, :mod:`bench.bundle`, :mod:`bench.store` and this
    module are hashed in too. Only ``stat`` calls: no file is read.
    """
    h = hashlib.sha256()
    for p in _CODE:
        h.update(p.read_bytes() if p.exists() else b"")
    if store:
        root = Path(store)
        paths: Iterable[Path] = sorted(p for p in root.rglob("*") if p.is_file())
    else:
        root = Path(results or "results")
        paths = sorted(root.glob("*/*/*"))
        paths = [p for p in paths if p.name in _BUNDLE_FILES]
    h.update(str(root.resolve()).encode())
    for p in paths:
        try:
            s = os.stat(p)
        except OSError:
            continue
        h.update(f"{p.relative_to(root)}|{s.st_size}|{s.st_mtime_ns}\n".encode())
    return h.hexdigest()[:20]


@dataclass
class Site:
    """What every page shows before it needs the records: the source, its warnings and each task's digest."""

    source: str
    warnings: list[str]
    digests: dict[str, TaskDigest]
    #: the records frame is empty or no task has metadata: the app shows its empty state
    empty: bool


def site_digest(data: Data, *, seed: int = 0) -> Site:
    """The :class:`Site` of ``data``: one :func:`task_digest` per task with metadata."""
    digests = {t: task_digest(data, t, seed=seed) for t in sorted(data.tasks)} if not data.records.empty else {}
    return Site(source=data.source, warnings=list(data.warnings), digests=digests, empty=data.records.empty or not data.tasks)


__all__ += ["Site", "site_digest"]
