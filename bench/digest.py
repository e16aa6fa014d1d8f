"""Per-task digests: every number the leaderboard's Overview and a task's headline show, as plain data and as a file.

A :class:`TaskDigest` holds one task's standing on its preferred tier (the
ranking, the roles and their normalised scores, the claims' verdicts, the
status counts and the unfiltered per-instance tables), computed by the same
functions ``bench show`` and ``bench claims`` use (:mod:`bench.report`,
:mod:`bench.claims`). The computation is pure: plain data in, plain data out.

Digest files. A digest is derived data of a task's published bundles, so
``bench publish`` (and ``--claims-only``, and ``--refresh-digest``) writes it
beside them, to ``results/_digests/<task>.json`` (:func:`write_task_digest`),
and the leaderboard reads it instead of the records when it still describes
them (:func:`read_task_digest`). The file records what it was computed from:

- ``digest_version``: :data:`DIGEST_VERSION`, bumped whenever the
  computation or the file format changes;
- ``fingerprint``: :func:`bundles_fingerprint`, the sha256 of every bundle
  directory name of the task and the sha256 of its ``manifest.json`` (which
  lists the sha256 of the bundle's files), so it follows the content and
  not mtimes, which a clone changes;
- ``unreadable``: the bundles that failed their manifest's hash check when it
  was computed (skipped then, with a warning); a reader checks the hashes
  again (a few ms) and trusts the file only when the same bundles fail.

It is JSON as Python writes it (``NaN`` for a missing number); tables are
columns with their dtypes. The anytime traces and the paper's numbers are
left out (they are most of the size): the task page computes the first from
the records when that plot is picked, and reads the second from the
``claims.json`` of the bundle the digest names (``claims_source``). ``tests/test_digest_files.py`` fails when a
committed digest is missing, stale or differs from a fresh computation.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections.abc import Iterable
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import pandas as pd

from bench import holdout
from bench.claims import Claim, registered_records, verdict
from bench.report import (
    ROLES,
    anytime_table,
    hardware_label,
    pareto_table,
    preferred_tier,
    profile_table,
    role_score,
    role_strata,
    speed_note,
    summary_table,
    task_ranking,
    task_roles,
    with_labels,
)
from bench.stats import RankingResult

__all__ = [
    "TaskData",
    "TaskTables",
    "TaskDigest",
    "task_tables",
    "TIERS",
    "param_text",
    "tag_options",
    "iparam_options",
    "filter_options",
    "task_area",
    "status_counts",
    "best_label",
    "verdict_rows",
    "task_digest",
    "holdout_standing",
    "DIGEST_VERSION",
    "DIGEST_DIR",
    "digest_path",
    "bundles_fingerprint",
    "unreadable_bundles",
    "compute_task_digest",
    "write_task_digest",
    "read_task_digest",
    "digest_problem",
    "encode_digest",
    "decode_digest",
]

#: Bump when :func:`task_digest` (or a function it calls) computes something else, or the file format changes.
#: 2: the task page's default view (metadata, tiers, machines, speed note, filter options, claims' bundle).
#: 3: scores' intervals over instances (bench.stats.score_ci; none for one instance whose runs agree).
DIGEST_VERSION = 3
#: Where the digest files live, under the results folder: ``results/_digests/<task>.json`` (not a task, not a bundle).
DIGEST_DIR = "_digests"


class TaskData(Protocol):
    """What :func:`task_digest` reads: ``leaderboard.data.Data``, or :class:`_BundleData` of one task's bundles."""

    tasks: dict[str, dict[str, Any]]
    claims: dict[str, list[dict[str, Any]]]
    methods: dict[str, dict[str, dict[str, Any]]]
    paper_results: dict[str, list[dict[str, Any]]]
    #: task -> the bundle its claims and paper results come from (published results; empty for a store)
    claims_source: dict[str, str]

    def task_records(self, task: str, tier: str | None = None) -> pd.DataFrame: ...


def current_records(records: pd.DataFrame, tasks: dict[str, dict[str, Any]], task: str, tier: str | None = None) -> pd.DataFrame:
    """The records of ``task``'s current version (``tasks[task]['meta']['version']``), and of one tier if given."""
    if records.empty or task not in tasks:
        return records.iloc[0:0]
    version = tasks[task]["meta"]["version"]
    df = records[(records["task"] == task) & (records["task_version"].astype(str) == str(version))]
    if tier is not None:
        df = df[df["tier"] == tier]
    return df


@dataclass
class TaskTables:
    """The tables a task page draws from one selection of records (one tier, after its filters).

    ``summary`` is :func:`bench.report.summary_table` of every run; the rest
    compare each method in its registered parameters (``registered`` runs of
    ``runs``): the ranking, ``kinds`` (label -> method/baseline), the anytime
    traces (None in a digest read from a file: they are most of its size, and
    the task page computes them from the records when that plot is picked), the Pareto points and both Dolan-Moré profiles.
    """

    summary: pd.DataFrame
    runs: int
    registered: int
    ranking: RankingResult
    kinds: dict[str, str]
    anytime: pd.DataFrame | None
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


#: The tiers a task page offers, in this order (holdout: the standard tier's shapes with secret seeds, bench.holdout).
TIERS = ("smoke", "standard", "holdout", "full")


def param_text(v: Any) -> str:
    """An instance parameter as a task page's filter shows and matches it: ``800`` whether read as 800 or 800.0.

    Records of several tasks read together hold an integer parameter as a
    float (a task without it fills NaN), one task's records as an integer:
    both read the same here, so the options do not depend on what was read.
    """
    if isinstance(v, (float, np.floating)) and math.isfinite(v) and float(v).is_integer():
        return str(int(v))
    return str(v)


def tag_options(records: pd.DataFrame) -> list[str]:
    """The instance tags (comma-separated ``instance_tags``) of ``records``, sorted: a task page's tag filter."""
    return sorted({t for s in records["instance_tags"].fillna("") for t in str(s).split(",") if t}) if "instance_tags" in records else []


def iparam_options(records: pd.DataFrame) -> dict[str, list[str]]:
    """``iparam.<name> -> values`` (:func:`param_text`) for each instance parameter with 2 to 50 values: a task page's filters."""
    out = {}
    for col in sorted(c for c in records.columns if c.startswith("iparam.")):
        vals = sorted({param_text(v) for v in records[col].dropna()})
        if 1 < len(vals) <= 50:
            out[col] = vals
    return out


def filter_options(records: pd.DataFrame) -> dict[str, Any]:
    """A task page's filter options for ``records`` (one tier, unfiltered): method kinds, tags, instance parameters, methods."""
    return {"kinds": sorted(str(k) for k in records["kind"].unique()), "tags": tag_options(records),
            "iparams": iparam_options(records), "methods": sorted(str(m) for m in records["method"].unique())}  # fmt: skip


@dataclass
class TaskDigest:
    """One task's standing on its preferred tier, as plain data (picklable, cached on disk).

    ``ranking`` is ``[(label, mean rank)]``, best first, over ``n_blocks``
    complete instances; ``roles`` maps each of :data:`bench.report.ROLES` to
    ``(label, per-repetition normalised task scores)`` (``(None, None)``
    when nobody takes it, scores None when the holder does not cover the
    task); ``scores`` maps a role to ``(mean, ci_low, ci_high)`` of its
    task score (:func:`bench.report.role_score`: a 95% bootstrap over
    instances, or over repetitions on a one-instance task; NaN bounds when
    there is nothing to resample). ``verdicts`` are the rows of
    the Claims page (all tiers of the task's current version), ``statuses``
    counts every status found, unknown ones included, and ``tables`` are the
    task page's tables of the tier's records, unfiltered (:func:`task_tables`).

    The rest is what the task page's default view (that tier, no filter)
    shows beside them, so that it needs no record: ``meta`` (task.json's),
    ``tiers`` (those with runs of the current version), ``hardware`` (the
    machine labels of the tier's runs), ``speed_note``
    (:func:`bench.report.speed_note`), ``filters`` (:func:`filter_options`),
    ``claims_source`` (the bundle whose ``claims.json`` gives the claims and
    the paper's numbers; None for a store) and ``paper_results`` (the
    paper's numbers; None in a digest read from a file, which leaves them in
    that ``claims.json``).
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
    meta: dict[str, Any] = field(default_factory=dict)
    tiers: list[str] = field(default_factory=list)
    hardware: list[str] = field(default_factory=list)
    speed_note: str | None = None
    filters: dict[str, Any] = field(default_factory=dict)
    claims_source: str | None = None
    paper_results: list[dict[str, Any]] | None = None
    #: declared and audited privacy (:func:`privacy_rows`); empty for a task whose methods declare none
    privacy: list[dict[str, Any]] = field(default_factory=list)
    #: The holdout tier's standing (:mod:`bench.holdout`: the standard shapes with secret seeds), beside
    #: the preferred tier's: ``role -> (label, (mean, ci_low, ci_high))`` for the paper's method and the
    #: best baseline, chosen on the holdout runs themselves; empty when no holdout run is published.
    holdout: dict[str, tuple[str | None, tuple[float, float, float]]] = field(default_factory=dict)

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


def verdict_rows(data: TaskData, task: str) -> list[dict[str, Any]]:
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


def privacy_rows(records: pd.DataFrame) -> list[dict[str, Any]]:
    """Declared and audited privacy, one row per method (and audit instance), from ``ok`` records.

    A task whose methods declare privacy records the metrics ``declared_epsilon``
    and ``declared_delta`` on every run and the registered parameters
    ``mechanism`` and ``accountant``; its audit instances add ``eps_lb`` (an
    empirical lower bound on epsilon), ``privacy_violation`` (1 when
    ``eps_lb`` exceeds the declared epsilon) and ``audit_max_detectable`` (the
    largest bound the audit could give). Rows: the method's declarations over
    the task's other instances (``instance = "(all)"``), then one row per audit
    instance. ``status`` reads ``violates its declared epsilon`` on any
    violation, ``non-private reference`` for an infinite declaration, else
    ``no violation found`` (which an audit can never turn into a proof).
    """
    if records.empty or "metric.declared_epsilon" not in records.columns:
        return []
    ok = records[records["status"] == "ok"]

    def col(g: pd.DataFrame, name: str) -> pd.Series:
        return pd.to_numeric(g[f"metric.{name}"], errors="coerce") if f"metric.{name}" in g else pd.Series(np.nan, index=g.index)

    out: list[dict[str, Any]] = []
    for method, g in ok.groupby("method", sort=True):
        params = json.loads(str(g["params"].iloc[0])) if "params" in g else {}
        eps, delta, audit = col(g, "declared_epsilon"), col(g, "declared_delta"), col(g, "eps_lb").notna()
        base = {"method": str(method), "kind": str(g["kind"].iloc[0]), "mechanism": str(params.get("mechanism", "–")),
                "accountant": str(params.get("accountant", "–"))}  # fmt: skip
        if (~audit).any():
            e = eps[~audit]
            out.append({**base, "instance": "(all)", "runs": int((~audit).sum()),
                        "declared_epsilon": f"{e.min():g}" if e.min() == e.max() else f"{e.min():g}-{e.max():g}",
                        "declared_delta": float(delta[~audit].max()), "eps_lb": math.nan, "max_detectable": math.nan,
                        "violations": 0, "status": "non-private reference" if np.isinf(e).all() else "declared"})  # fmt: skip
        for inst, a in g[audit].groupby("instance", sort=True):
            ea = col(a, "declared_epsilon")
            viol = int((col(a, "privacy_violation") == 1).sum())
            status = ("violates its declared epsilon" if viol else
                      "non-private reference" if np.isinf(ea).all() else "no violation found")  # fmt: skip
            out.append({**base, "instance": str(inst), "runs": len(a), "declared_epsilon": f"{ea.max():g}",
                        "declared_delta": float(col(a, "declared_delta").max()), "eps_lb": float(col(a, "eps_lb").max()),
                        "max_detectable": float(col(a, "audit_max_detectable").max()), "violations": viol, "status": status})  # fmt: skip
    return out


def task_digest(data: TaskData, task: str, *, seed: int = 0) -> TaskDigest:
    """Everything the Overview row and the headline of ``task`` need, on its preferred tier.

    Ranks, roles and scores compare each method in its registered parameters
    (:func:`bench.claims.registered_records`), as the task page does.
    """
    info = data.tasks[task]
    meta = info["meta"]
    all_df = data.task_records(task)
    tier = preferred_tier(all_df)
    d = TaskDigest(task=task, area=task_area(info), family=str(meta.get("family", "")), version=str(meta.get("version", "")),
                   paper=str((meta.get("paper") or {}).get("title") or "–"), tier=tier, verdicts=verdict_rows(data, task),
                   meta=meta, tiers=[t for t in TIERS if t in set(all_df["tier"])] if not all_df.empty else [],
                   claims_source=data.claims_source.get(task), paper_results=list(data.paper_results.get(task, [])))  # fmt: skip
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
    d.hardware = sorted(set(hardware_label(df)))
    d.machines = len(d.hardware)
    d.speed_note = speed_note(df)
    d.filters = filter_options(df)
    d.statuses = status_counts(df)
    d.privacy = privacy_rows(df)
    d.ranking = [(m, float(r)) for m, r in zip(res.methods, res.mean_ranks, strict=True)]
    d.n_blocks = int(res.n_blocks)
    d.best = best_label(list(res.methods), res.mean_ranks)
    for role in ROLES:
        label = roles[role]
        strata = role_strata(reg, meta, label) if label else None
        d.roles[role] = (label, strata)
        d.scores[role] = role_score(reg, meta, label, seed=seed)
    if tier != holdout.TIER and holdout.TIER in d.tiers:
        d.holdout = holdout_standing(data, task, seed=seed)
    return d


def holdout_standing(data: TaskData, task: str, *, seed: int = 0) -> dict[str, tuple[str | None, tuple[float, float, float]]]:
    """The paper's method and the best baseline on ``task``'s holdout runs: ``role -> (label, score)``.

    The roles are chosen on the holdout records, as :func:`task_digest` chooses
    them on the preferred tier's; the score is :func:`bench.report.role_score`.
    """
    info = data.tasks[task]
    df = data.task_records(task, holdout.TIER)
    if df.empty:
        return {}
    reg = registered_records(df, data.methods.get(task))
    roles = task_roles(reg, info["meta"], data.claims.get(task), data.methods.get(task))
    out = {}
    for role in ("paper's method", "best baseline"):
        label = roles.get(role)
        out[role] = (label, role_score(reg, info["meta"], label, seed=seed))
    return out




# ----------------------------------------------------------------------------- digest files


@dataclass
class _BundleData:
    """One task's bundles (:func:`bench.bundle.load_bundles` with ``task=``), as :class:`TaskData`."""

    records: pd.DataFrame
    tasks: dict[str, dict[str, Any]]
    claims: dict[str, list[dict[str, Any]]]
    methods: dict[str, dict[str, dict[str, Any]]]
    paper_results: dict[str, list[dict[str, Any]]]
    claims_source: dict[str, str]

    def task_records(self, task: str, tier: str | None = None) -> pd.DataFrame:
        return current_records(self.records, self.tasks, task, tier)


def digest_path(results_dir: str | Path, task: str) -> Path:
    """``results_dir/_digests/<task>.json``."""
    return Path(results_dir) / DIGEST_DIR / f"{task}.json"


def _manifests(task_dir: Path) -> list[Path]:
    # a directory starting with "." is a publish in progress (``.<bundle>.tmp``), as load_bundles skips it
    return [m for m in sorted(task_dir.glob("*/manifest.json")) if not m.parent.name.startswith(".")]


def bundles_fingerprint(task_dir: str | Path) -> str:
    """The sha256 of every bundle of ``task_dir`` by content: each directory's name and its manifest's sha256.

    A manifest lists the sha256 of its bundle's files (records, metadata,
    solutions), so the manifests stand for the bundles; no mtime is read.
    """
    from bench.bundle import _sha256

    h = hashlib.sha256()
    for m in _manifests(Path(task_dir)):
        h.update(f"{m.parent.name}\0{_sha256(m)}\n".encode())
    return h.hexdigest()


def unreadable_bundles(task_dir: str | Path) -> list[str]:
    """The bundles of ``task_dir`` whose files no longer match their manifest's sha256 (or whose manifest is not JSON)."""
    from bench.bundle import CLAIMS_KIND, _check_hashes, _read_claims_only

    bad = []
    for m in _manifests(Path(task_dir)):
        try:
            manifest = json.loads(m.read_text())
            if not isinstance(manifest, dict):
                raise ValueError("not a table")
            if manifest.get("kind") == CLAIMS_KIND:
                _read_claims_only(m.parent, manifest)
            else:
                _check_hashes(m.parent, manifest)
        except Exception:  # any failure means load_bundles skips it
            bad.append(m.parent.name)
    return bad


def _nd(a: np.ndarray) -> dict[str, Any]:
    a = np.asarray(a)
    return {"dtype": str(a.dtype), "shape": list(a.shape), "data": a.ravel().tolist()}


def _un_nd(x: dict[str, Any]) -> np.ndarray:
    return np.asarray(x["data"], dtype=x["dtype"]).reshape(x["shape"])


def _df(df: pd.DataFrame) -> dict[str, Any]:
    plain = isinstance(df.index, pd.RangeIndex) and df.index.start == 0 and df.index.step == 1 and df.index.name is None
    return {"columns": [str(c) for c in df.columns], "dtypes": [str(t) for t in df.dtypes],
            "data": [df[c].tolist() for c in df.columns], "index": None if plain else df.index.tolist()}  # fmt: skip


def _un_df(x: dict[str, Any]) -> pd.DataFrame:
    cols = {c: pd.Series(v, dtype=t) for c, t, v in zip(x["columns"], x["dtypes"], x["data"], strict=True)}
    df = pd.DataFrame(cols, columns=x["columns"])
    if x.get("index") is not None:
        df.index = x["index"]
    return df


def _ranking(r: RankingResult) -> dict[str, Any]:
    return {"methods": list(r.methods), "mean_ranks": _nd(r.mean_ranks), "n_blocks": int(r.n_blocks),
            "friedman_stat": float(r.friedman_stat), "friedman_p": float(r.friedman_p), "p_raw": _nd(r.p_raw),
            "p_holm": _nd(r.p_holm), "significant": _nd(r.significant), "cliques": [[int(i) for i in c] for c in r.cliques],
            "alpha": float(r.alpha), "excluded": dict(r.excluded)}  # fmt: skip


def _un_ranking(x: dict[str, Any]) -> RankingResult:
    arrays = {k: _un_nd(x[k]) for k in ("mean_ranks", "p_raw", "p_holm", "significant")}
    return RankingResult(**{**x, **arrays})


#: The tables a digest file keeps (not the anytime traces: TaskTables.anytime is None when read back).
_TABLE_FRAMES = ("summary", "pareto", "profile_quality", "profile_time")


def encode_digest(d: TaskDigest) -> dict[str, Any]:
    """``d`` as JSON-ready data (arrays and tables with their dtypes); :func:`decode_digest` inverts it, less the anytime
    traces and the paper's numbers (the ``claims.json`` of ``d.claims_source`` holds them)."""
    skip = ("roles", "scores", "ranking", "tables", "paper_results", "privacy")
    out: dict[str, Any] = {f.name: getattr(d, f.name) for f in fields(d) if f.name not in skip}
    if d.privacy:  # only where methods declare privacy, so that other tasks' files stay as they were
        out["privacy"] = d.privacy
    out.pop("holdout", None)
    if d.holdout:  # only where holdout runs are published, for the same reason
        out["holdout"] = {k: [label, [float(v) for v in s]] for k, (label, s) in d.holdout.items()}
    out["ranking"] = [[m, float(r)] for m, r in d.ranking]
    out["roles"] = {k: [label, None if s is None else _nd(s)] for k, (label, s) in d.roles.items()}
    out["scores"] = {k: [float(v) for v in s] for k, s in d.scores.items()}
    t = d.tables
    out["tables"] = None if t is None else {
        **{k: _df(getattr(t, k)) for k in _TABLE_FRAMES}, "runs": int(t.runs), "registered": int(t.registered),
        "ranking": _ranking(t.ranking), "kinds": dict(t.kinds),
    }  # fmt: skip
    return out


def decode_digest(x: dict[str, Any]) -> TaskDigest:
    """The :class:`TaskDigest` that :func:`encode_digest` wrote (after a JSON round trip)."""
    x = dict(x)
    t = x.pop("tables")
    d = TaskDigest(**{k: v for k, v in x.items() if k not in ("roles", "scores", "ranking", "holdout")})
    d.holdout = {k: (label, (float(s[0]), float(s[1]), float(s[2]))) for k, (label, s) in x.get("holdout", {}).items()}
    d.ranking = [(str(m), float(r)) for m, r in x["ranking"]]
    d.roles = {k: (label, None if s is None else _un_nd(s)) for k, (label, s) in x["roles"].items()}
    d.scores = {k: (float(s[0]), float(s[1]), float(s[2])) for k, s in x["scores"].items()}
    if t is not None:
        d.tables = TaskTables(**{k: _un_df(t[k]) for k in _TABLE_FRAMES}, anytime=None, runs=int(t["runs"]), registered=int(t["registered"]),
                              ranking=_un_ranking(t["ranking"]), kinds=dict(t["kinds"]))  # fmt: skip
    return d


def _json_default(x: Any) -> Any:
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, np.ndarray):
        return x.tolist()
    if isinstance(x, (set, frozenset)):
        return sorted(x)
    raise TypeError(f"{type(x).__name__} is not JSON-serialisable in a digest")


_RESULTS = "<results>"


def compute_task_digest(results_dir: str | Path, task: str, *, seed: int = 0) -> dict[str, Any]:
    """The content of ``task``'s digest file, computed from its bundles under ``results_dir``.

    ``digest`` is :func:`encode_digest` of :func:`task_digest` (None when no
    bundle of the task counts), ``warnings`` those of reading the task's
    bundles (with ``<results>`` for the folder), ``other_tasks`` any task other
    than ``task`` that the directory's manifests name (the leaderboard then
    computes instead of trusting the file).
    """
    from bench.bundle import load_bundles

    root = Path(results_dir)
    task_dir = root / task
    b = load_bundles(root, task=task, warn=False)  # the same messages are kept in b.warnings
    data = _BundleData(records=b.records, tasks=b.tasks, claims=b.claims, methods=b.methods, paper_results=b.paper_results,
                       claims_source=b.claims_source)  # fmt: skip
    d = task_digest(data, task, seed=seed) if task in b.tasks and not b.records.empty else None
    return {
        "digest_version": DIGEST_VERSION, "task": task, "fingerprint": bundles_fingerprint(task_dir),
        "unreadable": unreadable_bundles(task_dir), "other_tasks": sorted(set(b.tasks) - {task}),
        "warnings": [w.replace(str(root), _RESULTS) for w in b.warnings], "digest": None if d is None else encode_digest(d),
    }  # fmt: skip


def _text(payload: dict[str, Any]) -> str:
    # insertion order kept (not sorted): the order of roles and of a verdict row's fields is what the pages show
    return json.dumps(payload, separators=(",", ":"), default=_json_default) + "\n"


def write_task_digest(results_dir: str | Path, task: str) -> Path | None:
    """Compute ``task``'s digest and write it to :func:`digest_path` (atomically); None, and no file, when the task has no bundle."""
    path = digest_path(results_dir, task)
    if not _manifests(Path(results_dir) / task):
        path.unlink(missing_ok=True)
        return None
    text = _text(compute_task_digest(results_dir, task))
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)
    return path


def _read(path: Path) -> dict[str, Any] | None:
    try:
        x = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return x if isinstance(x, dict) else None


def digest_problem(results_dir: str | Path, task: str, *, recompute: bool = False) -> str | None:
    """Why ``task``'s digest file cannot be used as it is (missing, another version, stale, ...), or None when it can.

    With ``recompute``, the file must also agree with a fresh
    :func:`compute_task_digest` (numbers to a relative 1e-9): what CI checks,
    so a hand-edited digest cannot pass.
    """
    path = digest_path(results_dir, task)
    x = _read(path)
    if x is None:
        return f"{path} is missing or not JSON"
    if x.get("digest_version") != DIGEST_VERSION:
        return f"{path} was computed by digest version {x.get('digest_version')}, this code is version {DIGEST_VERSION}"
    task_dir = Path(results_dir) / task
    if x.get("task") != task or x.get("fingerprint") != bundles_fingerprint(task_dir):
        return f"{path} is stale: the bundles of {task} changed since it was computed"
    if x.get("unreadable") != unreadable_bundles(task_dir):
        return f"{path} is stale: which bundles of {task} match their manifests changed since it was computed"
    if x.get("other_tasks"):
        return f"{path}: the manifests under {task_dir} name other tasks too ({', '.join(x['other_tasks'])})"
    if recompute:
        fresh = json.loads(_text(compute_task_digest(results_dir, task)))
        where = _difference(x, fresh)
        if where is not None:
            return f"{path} differs from a fresh computation at {where}"
    return None


def _difference(a: Any, b: Any, at: str = "") -> str | None:
    """The first path where ``a`` and ``b`` differ (floats to a relative 1e-9, NaN equal to NaN), or None."""
    if isinstance(a, float) or isinstance(b, float):
        if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool) and not isinstance(b, bool):
            if (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12):
                return None
        return at or "(top)"
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                return f"{at}.{k}"
            if (w := _difference(a[k], b[k], f"{at}.{k}")) is not None:
                return w
        return None
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return f"{at} (length {len(a)} vs {len(b)})"
        for i, (u, v) in enumerate(zip(a, b, strict=True)):
            if (w := _difference(u, v, f"{at}[{i}]")) is not None:
                return w
        return None
    return None if a == b else (at or "(top)")


def read_task_digest(results_dir: str | Path, task: str) -> tuple[TaskDigest | None, list[str]] | None:
    """``task``'s digest and the warnings of reading its bundles, from its digest file; None when the file cannot be used.

    The file is used only when :func:`digest_problem` finds nothing: same
    :data:`DIGEST_VERSION`, same :func:`bundles_fingerprint`, the same
    bundles failing their hash check. The digest is None when no bundle of
    the task counts.
    """
    if digest_problem(results_dir, task) is not None:
        return None
    x = _read(digest_path(results_dir, task))
    if x is None:
        return None
    try:
        d = None if x["digest"] is None else decode_digest(x["digest"])
    except (KeyError, TypeError, ValueError):
        return None
    return d, [str(w).replace(_RESULTS, str(results_dir)) for w in x.get("warnings", [])]


def digest_tasks(results_dir: str | Path) -> list[str]:
    """The task directories of ``results_dir`` that hold a bundle (the ones a digest file is kept for)."""
    root = Path(results_dir)
    return sorted(p.name for p in root.iterdir() if p.is_dir() and not p.name.startswith((".", "_")) and _manifests(p)) if root.is_dir() else []


__all__ += ["current_records", "digest_tasks"]
