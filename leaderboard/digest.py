"""The Overview's table, its search and area filter, a task's headline and the provenance table, from per-task digests.

A :class:`bench.digest.TaskDigest` holds one task's standing on its
preferred tier (the ranking, the roles and their normalised scores, the
claims' verdicts, the status counts and the unfiltered per-instance tables),
computed by :func:`bench.digest.task_digest` with the functions ``bench
show`` and ``bench claims`` use (they live in ``bench``, so that ``bench
publish`` writes the same digests to ``results/_digests/<task>.json``).
:func:`site_from_results` takes each task's digest from that file when it
still describes the task's bundles (same content fingerprint and digest
version) and computes only the others, reading the records only then. The
app also caches the :class:`Site` on disk keyed by :func:`fingerprint`
(every bundle and digest file's size and mtime, and the code that computes
them). The other functions here turn digests into the Overview's table, its
search and area filter, a task's three-line headline and the table of
bundles (superseded ones included) of the provenance page. All are pure:
plain data in, plain data out.
"""

from __future__ import annotations

import hashlib
import math
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from bench.digest import (
    DIGEST_DIR,
    TaskDigest,
    TaskTables,
    best_label,
    digest_tasks,
    filter_options,
    iparam_options,
    param_text,
    read_task_digest,
    status_counts,
    tag_options,
    task_area,
    task_digest,
    task_tables,
    verdict_rows,
)
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
    "filter_options",
    "tag_options",
    "iparam_options",
    "param_text",
    "overview_table",
    "verdict_marks",
    "VERDICT_MARKS",
    "filter_overview",
    "headline",
    "bundles_table",
    "fingerprint",
    "OVERVIEW_COLUMNS",
]

#: Files whose size and mtime identify a bundle's content (solutions are covered by records.parquet's hashes);
#: the digest files ``_digests/<task>.json`` are counted too.
_BUNDLE_FILES = ("manifest.json", "records.parquet", "task.json", "claims.json", "methods.json")
#: The code whose output a digest is: a change to any of it invalidates the disk cache.
_CODE = tuple(Path(__file__).resolve().parent.parent / p for p in ("bench/report.py", "bench/claims.py", "bench/stats.py", "bench/bundle.py", "bench/store.py", "bench/digest.py", "leaderboard/digest.py", "leaderboard/data.py"))  # fmt: skip


def _score(s: tuple[float, float, float] | None, digits: int = 3) -> str:
    """``0.657 [0.601, 0.712]``, or ``0.657 (no CI)`` when :func:`bench.stats.score_ci` gave no interval
    (one instance whose runs all agree, or one run): never a zero-width bracket."""
    if s is None or not math.isfinite(s[0]):
        return "–"
    if not (math.isfinite(s[1]) and math.isfinite(s[2])):
        return f"{s[0]:.{digits}f} (no CI)"
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


def _holdout(d: TaskDigest) -> str:
    """The holdout tier's paper method against best baseline, as :func:`_versus` writes it; or why there is none."""
    if not d.holdout:
        return "no holdout runs"
    (paper, ours), (base, theirs) = d.holdout.get("paper's method", (None, None)), d.holdout.get("best baseline", (None, None))
    if paper is None:
        return f"no paper method; best baseline {_score(theirs, 2)} ({base})" if base else "no paper method"
    if base is None:
        return f"{_score(ours, 2)} (no baseline)"
    return f"{_score(ours, 2)} vs {_score(theirs, 2)} ({base})"


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
OVERVIEW_COLUMNS = ["task", "paper", "paper's method", "its rank", "best (mean rank)", "paper's method vs best baseline", "holdout", "verdicts"]


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
            "best (mean rank)": d.best, "paper's method vs best baseline": _versus(d), "holdout": _holdout(d), "verdicts": verdict_marks(d.verdict_counts),
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
    methods.json}``) and digest file (``_digests/*.json``); for a store: of every file under it. Either way the
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
        paths = [p for p in paths if p.name in _BUNDLE_FILES] + sorted(root.glob(f"{DIGEST_DIR}/*.json"))
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


def site_from_results(results: str | Path, load: Callable[[], Data]) -> Site:
    """The :class:`Site` of the published bundles under ``results``, from their digest files where they hold.

    Each task directory's ``_digests/<task>.json`` is used when
    :func:`bench.digest.read_task_digest` accepts it (same digest version,
    same content fingerprint of the task's bundles, the same bundles failing
    their hash check); then no record is read. When any task has no usable
    file, ``load()`` reads every bundle and the tasks without one are
    computed by :func:`task_digest`, as :func:`site_digest` does (their
    warnings then come from that read). The result is the same either way:
    ``tests/test_leaderboard_logic.py`` compares the two.
    """
    source = f"published bundles in {results}"
    got: dict[str, TaskDigest | None] = {}
    messages: list[str] = []
    tasks = digest_tasks(results)
    for t in tasks:
        read = read_task_digest(results, t)
        if read is not None:
            got[t], w = read
            messages += w
    if tasks and len(got) == len(tasks):
        digests = {t: d for t, d in got.items() if d is not None}
        return Site(source=source, warnings=messages, digests=digests, empty=not digests)
    data = load()
    if data.records.empty:
        return Site(source=data.source, warnings=list(data.warnings), digests={}, empty=True)
    digests = {t: got.get(t) or task_digest(data, t) for t in sorted(data.tasks)}
    return Site(source=data.source, warnings=list(data.warnings), digests=digests, empty=not data.tasks)


__all__ += ["Site", "site_digest", "site_from_results"]
