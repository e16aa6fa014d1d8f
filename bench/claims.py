"""Papers' claims as data, and the one function that gives each its verdict.

A claim is recorded in ``tasks/<family>/claims.toml``::

    [[claim]]
    id = "ros-ratio-k2"
    paper = "Max-k-Cut ROS (ICML 2025)"
    statement = "ROS reaches ... (quoted from the paper)"
    source = "Table 6"
    tier = "standard"
    instances = ["G1", "G2"]            # omit for every instance of the tier
    [claim.comparison]
    kind = "threshold"                  # or "versus", "ratio", "slope", "saving"
    method = "ros"
    metric = "ratio"                    # a task metric, or wall_s / cpu_s / peak_rss_mb
    op = ">="
    value = 0.93

Verdicts come only from :func:`verdict`, computed from results; nobody edits
them by hand. The vocabulary is fixed (:data:`VERDICTS`).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, model_validator

from bench.stats import cluster_bootstrap_ci, instance_bootstrap_ci, stratified_bootstrap_ci

__all__ = [
    "Comparison", "Claim", "Verdict", "verdict", "configuration", "registered_records", "is_registered", "registered_params",
    "canonical_params", "VERDICTS", "RUNNER_METRICS",
]

VERDICTS = ("confirmed", "contradicted", "inconclusive", "not testable here")
#: Metrics the runner measures itself (record columns), usable in claims.
RUNNER_METRICS = ("wall_s", "cpu_s", "peak_rss_mb", "job_s")


class Comparison(BaseModel):
    """What the claim compares.

    ``threshold``: the mean over instances of ``method``'s per-instance mean
    ``metric`` is ``op value``.

    ``versus``: the mean paired difference ``method - baseline`` (same instance,
    same seed) is ``op margin`` (``margin`` defaults to 0, i.e. "method ≥
    baseline").

    ``saving``: for learning curves (metrics ``<metric>00, <metric>01, ...`` at
    label counts ``<x_metric>00, ...``), the mean over instances of the label
    saving of ``method`` against ``baseline`` (:func:`bench.stats.label_saving`,
    paired bootstrap over seeds) is ``op value``. ``baseline = "best-other"``
    takes, per instance, the other method with the highest final mean value.

    ``ratio``: the geometric mean of the paired ratios ``method / baseline``
    (same instance, same seed) is ``op value``: a speed-up "at least 10x
    faster" is ``metric = "wall_s"``, ``op = "<="``, ``value = 0.1``. The CI is
    that of the mean log ratio, exponentiated; every value must be positive.

    ``slope``: the least-squares slope of ``log(metric)`` on ``log(x_metric)``
    over ``method``'s runs is ``op value``, or, with ``op = "in"``, lies in
    the band ``[value, upper]`` (a rate read two-sidedly: confirmed when the
    CI is inside the band, contradicted when it misses it) (a scaling exponent: time against
    a size, regret against a horizon). ``x_metric`` is a task metric, a runner
    metric, or an instance parameter ``iparam.<name>``; it needs at least two
    distinct positive values. Every run counts once, and each instance's runs
    are weighted equally (a run of an instance with ``k`` runs weighs ``1/k``).

    ``resample`` (``threshold``, ``versus``, ``ratio`` and ``slope``): what the 95% CI resamples. ``runs``
    (default): seeds within each instance, the instance set fixed;
    ``repetitions``: whole repetitions, for runs that share a random draw across
    instances; ``instances``: whole instances, for instances that are random draws
    (generated data) on which the methods are deterministic, so that every seed
    gives the same value and a within-instance interval would have zero width.
    For ``slope``, ``instances`` resamples whole instances among those with the
    same ``x_metric`` value (and stratum), so every size stays in each resample.

    A ``slope`` comparison may also set:

    - ``strata``: instance parameters (``iparam.<name>``) that split the runs
      into groups with one intercept each (a fixed-effects fit: the slope
      within groups, pooled), e.g. one rate over several densities whose
      errors differ by a constant factor. ``resample = "strata"`` then draws
      whole groups, each copy with its own intercept: the interval for a
      rate that is deterministic within each group (a method whose runs
      agree at every seed) and varies between groups.
    - ``x_scale = "loglog"``: fit on ``log(log(x_metric))`` (a rate in
      ``log d``: rounds growing as ``log^p d``); ``x_metric`` must exceed 1.
    - ``aggregate = "mean"``: one point per (stratum, ``x_metric`` value) cell,
      the log of the mean of every value in it, rather than one point per run
      (the log of a mean error is the usual reading of "error ~ n^p"; the mean
      of logs estimates a different exponent when the spread changes with
      ``n``). ``resample = "runs"`` then redraws the values within each cell.
      ``metric = "name*"`` reads the replicate columns ``name0, name1, ...`` of
      each record (a run that holds several independent samples) as the values.

    ``censored_at`` (``versus`` only): values at or above it were stopped by a
    budget cap (a training time at the cap says only "at least this long").
    A pair in which *both* values are censored says nothing about which is
    smaller and is left out; an instance with no pair left is left out, and a
    claim with no instance left is ``not testable here``. A pair with one
    value censored stays: the difference then understates the true one in
    size, so a verdict is conservative.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)
    kind: Literal["threshold", "versus", "ratio", "slope", "saving"]
    method: str
    metric: str
    op: Literal[">=", ">", "<=", "<", "in"]
    value: float | None = None
    upper: float | None = None
    baseline: str | None = None
    margin: float = 0.0
    x_metric: str | None = None
    censored_at: float | None = None
    resample: Literal["runs", "repetitions", "instances", "strata"] = "runs"
    strata: tuple[str, ...] = ()
    x_scale: Literal["log", "loglog"] = "log"
    aggregate: Literal["runs", "mean"] = "runs"

    @model_validator(mode="after")
    def _complete(self) -> Comparison:
        if self.kind in ("threshold", "saving", "ratio", "slope") and self.value is None:
            raise ValueError(f"a {self.kind} comparison needs `value`")
        if self.kind == "saving" and (not self.baseline or not self.x_metric):
            raise ValueError("a saving comparison needs `baseline` and `x_metric`")
        if self.kind in ("versus", "ratio") and not self.baseline:
            raise ValueError(f"a {self.kind} comparison needs `baseline`")
        if self.kind == "ratio" and not (self.value is not None and self.value > 0):
            raise ValueError("a ratio comparison needs a positive `value`")
        if self.kind == "slope" and not self.x_metric:
            raise ValueError("a slope comparison needs `x_metric` (a metric or iparam.<name>)")
        if self.kind != "saving" and self.kind != "slope" and self.x_metric is not None:
            raise ValueError("`x_metric` applies to saving and slope comparisons only")
        if self.kind != "versus" and self.margin:
            raise ValueError("`margin` applies to versus comparisons only")
        if self.censored_at is not None and self.kind != "versus":
            raise ValueError("`censored_at` applies to versus comparisons only")
        if self.resample != "runs" and self.kind == "saving":
            raise ValueError("`resample` applies to threshold and versus comparisons only")
        if self.kind != "slope" and (self.strata or self.x_scale != "log" or self.aggregate != "runs" or self.metric.endswith("*")):
            raise ValueError("`strata`, `x_scale`, `aggregate` and a replicate metric (`name*`) apply to slope comparisons only")
        if self.resample == "strata" and not self.strata:
            raise ValueError("`resample = \"strata\"` needs `strata`")
        if self.resample == "repetitions" and self.kind == "slope":
            raise ValueError("a slope comparison resamples runs, instances or strata, not repetitions")
        if self.metric.endswith("*") and self.aggregate != "mean":
            raise ValueError("a replicate metric (`name*`) needs `aggregate = \"mean\"`")
        if (self.op == "in") != (self.upper is not None):
            raise ValueError("`op = \"in\"` (a band [value, upper]) and `upper` go together")
        if self.op == "in" and (self.kind != "slope" or self.value is None or not self.value < self.upper):  # type: ignore[operator]
            raise ValueError("`op = \"in\"` applies to slope comparisons, with `value` < `upper`")
        bad = [c for c in self.strata if not c.startswith("iparam.")]
        if bad:
            raise ValueError(f"`strata` are instance parameters (iparam.<name>), got {bad}")
        return self

    def describe(self) -> str:
        if self.kind == "saving":
            return f"label saving of {self.method} vs {self.baseline} on {self.metric}* curves {self.op} {self.value:g}"
        r = f"; CI resamples {self.resample}" if self.resample != "runs" else ""
        if self.kind == "threshold":
            return f"mean {self.metric} of {self.method} {self.op} {self.value:g}" + (f" ({r[2:]})" if r else "")
        if self.kind == "ratio":
            return f"{self.metric}: {self.method} / {self.baseline} {self.op} {self.value:g} (geometric mean of paired ratios{r})"
        if self.kind == "slope":
            y = f"log mean {self.metric}" if self.aggregate == "mean" else f"log {self.metric}"
            x = f"log log {self.x_metric}" if self.x_scale == "loglog" else f"log {self.x_metric}"
            within = f"; within {', '.join(c.removeprefix('iparam.') for c in self.strata)}" if self.strata else ""
            band = f"in [{self.value:g}, {self.upper:g}]" if self.op == "in" else f"{self.op} {self.value:g}"
            return f"slope of {y} on {x}, {self.method}, {band}" + (f" ({r[2:]}{within})" if r else f" ({within[2:]})" if within else "")
        m = f" + {self.margin:g}" if self.margin else ""
        c = f"; pairs both >= {self.censored_at:g} (capped) left out" if self.censored_at is not None else ""
        return f"{self.metric}: {self.method} {self.op} {self.baseline}{m} (paired{c}{r})"


class Claim(BaseModel):
    """One claim of a paper, with where it comes from and what tests it."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    id: str
    task: str
    paper: str
    statement: str
    source: str
    comparison: Comparison
    tier: Literal["smoke", "standard", "full"] = "standard"
    instances: list[str] | None = None
    not_testable: str | None = None
    note: str = ""


@dataclass
class Verdict:
    """The outcome of :func:`verdict` for one claim."""

    claim: str
    verdict: str
    estimate: float = math.nan
    ci_low: float = math.nan
    ci_high: float = math.nan
    n_instances: int = 0
    n_runs: int = 0
    reason: str = ""
    evidence: list[str] = field(default_factory=list)

    def as_row(self) -> dict[str, Any]:
        return {
            "claim": self.claim,
            "verdict": self.verdict,
            "estimate": self.estimate,
            "ci_low": self.ci_low,
            "ci_high": self.ci_high,
            "instances": self.n_instances,
            "runs": self.n_runs,
            "reason": self.reason,
        }


def _values(df: pd.DataFrame, metric: str) -> pd.Series:
    col = metric if metric in RUNNER_METRICS else f"metric.{metric}"
    if col not in df.columns:
        return pd.Series(np.nan, index=df.index)
    return pd.to_numeric(df[col], errors="coerce")


def canonical_params(params: Any) -> str:
    """A parameter set as sorted JSON (records hold it as a JSON string, ``methods.json`` as a dict)."""
    if isinstance(params, str):
        params = json.loads(params) if params else {}
    return json.dumps(params if isinstance(params, dict) else {}, sort_keys=True, default=str)


def _pair_key(df: pd.DataFrame) -> str:
    """The column that pairs runs of two methods: the job ``seed`` (same master seed, instance and
    repetition), or ``rep`` in frames without seeds."""
    return "seed" if "seed" in df.columns else "rep"


def _repetitions(df: pd.DataFrame) -> list[tuple[int, int]]:
    """Each run's repetition, ``(master_seed, rep)``; records without a master seed count as 0."""
    ms = pd.to_numeric(df["master_seed"], errors="coerce") if "master_seed" in df.columns else pd.Series(0, index=df.index)
    rep = pd.to_numeric(df["rep"], errors="coerce")
    return [(int(m) if not math.isnan(m) else 0, int(r)) for m, r in zip(ms.astype(float), rep.astype(float), strict=True)]


def registered_params(meta: dict[str, Any], tier: str) -> dict[str, Any]:
    """A method's default job parameters on ``tier``: its ``params`` updated with ``tier_params[tier]``,
    as ``bench run`` builds them."""
    return {**(meta.get("params") or {}), **((meta.get("tier_params") or {}).get(tier) or {})}


def is_registered(params: Any, version: Any, meta: dict[str, Any], tier: str) -> bool:
    """Whether a run with ``params`` (JSON or dict) of method ``version`` is ``meta``'s registered configuration.

    The version must be the registered one (when both are known); every parameter the run holds
    must be registered with the same value, and a registered parameter the run does not hold
    counts as at its registered value: a parameter added later defaults to the behaviour that
    came before it, the convention every method here follows (a version bump marks the rest).
    """
    if meta.get("version") is not None and version is not None and str(version) != str(meta["version"]):
        return False
    run = json.loads(params) if isinstance(params, str) and params else params if isinstance(params, dict) else {}
    want = registered_params(meta, tier)
    if set(run) - set(want):
        return False
    return canonical_params({**want, **run}) == canonical_params(want)


def configuration(df: pd.DataFrame, method: str, tier: str, methods: dict[str, dict[str, Any]] | None) -> tuple[pd.DataFrame, str]:
    """The runs of ``method`` a claim is judged on, and why none are (empty string when some are).

    A claim is about a method as registered. When the results hold runs of ``method`` with several
    parameter sets (a grid, an ablation, a side-by-side with overridden parameters), only those
    of the registered configuration count (:func:`is_registered`, from ``methods[method]``, the
    bundle's ``methods.json`` entry). Without that metadata (a run store has none), the most-run
    set counts, and the verdict's reason says so. Several runs of one configuration on one
    instance and seed (a rerun in a newer bundle under another job key) count once: the last
    finished.
    """
    sub = df[df["method"] == method]
    note = ""
    if "params" in sub.columns and not sub.empty:
        sets = sub["params"].map(canonical_params)
        meta = (methods or {}).get(method)
        if meta is not None:
            versions = sub["method_version"] if "method_version" in sub.columns else pd.Series(None, index=sub.index)
            keep = [is_registered(p, v, meta, tier) for p, v in zip(sub["params"], versions, strict=True)]
            sub = sub[keep]
            if sub.empty:
                n = sets.nunique()
                return sub, f"no {tier}-tier run of {method!r} with its registered version and parameters ({n} other set{'s' * (n > 1)})"
        elif sets.nunique() > 1:
            top = sets.value_counts().sort_index(kind="stable").idxmax()
            sub = sub[sets == top]
            note = f"{method!r}: its most-run of {sets.nunique()} parameter sets"
    key = ["instance", _pair_key(sub)]
    if set(key) <= set(sub.columns) and sub.duplicated(key).any():
        order = sub.sort_values("finished_at", kind="stable") if "finished_at" in sub.columns else sub
        sub = order[~order.duplicated(key, keep="last")]
    return sub, note


def registered_records(records: pd.DataFrame, methods: dict[str, dict[str, Any]] | None) -> pd.DataFrame:
    """``records`` cut to each method's registered configuration, tier by tier (:func:`configuration`).

    What rankings, profiles, Pareto fronts and roles compare: one entry per method, not one per
    grid point. A method whose runs hold no registered configuration keeps its most-run
    parameter set. ``methods=None`` (no metadata) returns ``records`` unchanged, so a local
    grid can still be ranked point by point.
    """
    if methods is None or records.empty or "params" not in records.columns:
        return records
    parts = []
    for (tier, method), g in records.groupby(["tier", "method"], sort=False):
        rows, _ = configuration(g, str(method), str(tier), methods)
        parts.append(rows if not rows.empty else configuration(g, str(method), str(tier), None)[0])
    return pd.concat(parts).sort_index() if parts else records.iloc[:0]


def _decide(op: str, thr: float, lo: float, hi: float, upper: float | None = None) -> str:
    if op == "in":  # a band [thr, upper]: confirmed inside it, contradicted when the CI misses it
        assert upper is not None
        return "confirmed" if thr <= lo and hi <= upper else "contradicted" if hi < thr or lo > upper else "inconclusive"
    if op in (">=", ">"):
        ok = lo >= thr if op == ">=" else lo > thr
        bad = hi < thr if op == ">=" else hi <= thr
    else:
        ok = hi <= thr if op == "<=" else hi < thr
        bad = lo > thr if op == "<=" else lo >= thr
    return "confirmed" if ok else "contradicted" if bad else "inconclusive"


def verdict(
    claim: Claim, records: pd.DataFrame, *, seed: int = 0, n_boot: int = 5000, methods: dict[str, dict[str, Any]] | None = None
) -> Verdict:
    """The verdict on ``claim`` from ``records`` (a records frame, any statuses).

    Rules
    -----
    - ``not testable here`` when the claim says so, or when the results hold no
      run of the claim's method (and baseline) on its tier and instances.
    - ``inconclusive`` when some instance has no valid (``ok``) run, when any
      instance has fewer than 2 seeds (no CI; with ``resample = "instances"``: fewer
      than 2 instances), or when the 95% CI straddles the threshold.
    - ``confirmed`` / ``contradicted`` when the whole CI is on one side.

    Intervals are stratified bootstraps over seeds within instances
    (:func:`bench.stats.stratified_bootstrap_ci`), or over whole repetitions when the
    comparison says ``resample = "repetitions"`` (:func:`bench.stats.cluster_bootstrap_ci`),
    or over whole instances with ``resample = "instances"``
    (:func:`bench.stats.instance_bootstrap_ci`: for instances that are random draws, on which
    deterministic methods give the same value at every seed). Each method's runs are those of its
    registered configuration (:func:`configuration`; ``methods`` maps a method's name to its
    metadata, as a bundle's ``methods.json`` holds it), and ``versus`` pairs runs with the same
    job seed.
    """
    cmp_ = claim.comparison
    if claim.not_testable:
        return Verdict(claim.id, "not testable here", reason=claim.not_testable)
    df = records
    if df.empty or "task" not in df.columns:
        return Verdict(claim.id, "not testable here", reason="no results")
    df = df[(df["task"] == claim.task) & (df["tier"] == claim.tier)]
    if claim.instances:
        df = df[df["instance"].isin(claim.instances)]
    if cmp_.kind == "saving":
        return _saving_verdict(claim, df, seed=seed, n_boot=min(n_boot, 2000), methods=methods)
    names = [cmp_.method] + ([cmp_.baseline] if cmp_.kind in ("versus", "ratio") else [])
    for m in names:
        if not (df["method"] == m).any():
            return Verdict(claim.id, "not testable here", reason=f"no {claim.tier}-tier results for {m!r}")
    parts, notes = [], []
    for m in names:
        rows, why = configuration(df, m, claim.tier, methods)
        if rows.empty:
            return Verdict(claim.id, "not testable here", reason=why)
        parts.append(rows)
        notes += [why] if why else []
    df = pd.concat(parts)
    want = set(claim.instances or df["instance"].unique())
    have = {m: set(df.loc[df["method"] == m, "instance"]) for m in names}
    for m in names:
        missing = sorted(want - have[m])
        if missing:
            return Verdict(claim.id, "not testable here", reason=f"{m!r} was not run on {', '.join(missing[:5])}")

    ok = df[df["status"] == "ok"].copy()
    ok["_v"] = _values(ok, cmp_.metric)
    failed = sorted(i for i in want if not ((ok["method"] == cmp_.method) & (ok["instance"] == i)).any())
    if cmp_.kind in ("versus", "ratio"):
        failed += sorted(i for i in want if not ((ok["method"] == cmp_.baseline) & (ok["instance"] == i)).any())
    if failed:
        return Verdict(claim.id, "inconclusive", reason=f"no valid run on {', '.join(sorted(set(failed))[:5])}")

    if cmp_.kind == "slope":
        return _slope_verdict(claim, ok, seed=seed, n_boot=min(n_boot, 2000), notes=notes)
    if cmp_.kind == "ratio":
        if not (ok.loc[ok["method"].isin(names), "_v"] > 0).all():
            return Verdict(claim.id, "inconclusive", reason=f"a ratio needs positive values of {cmp_.metric!r}")
        ok["_v"] = np.log(ok["_v"].astype(float))
    dropped = ""
    if cmp_.kind == "threshold":
        # in (instance, seed) order, so that the bootstrap does not depend on the order of the records
        sub = ok[ok["method"] == cmp_.method].sort_values(["instance", _pair_key(ok)], kind="stable")
        strata = [g["_v"].to_numpy() for _, g in sub.groupby("instance", sort=True)]
        runs = (sub["_v"].to_numpy(), list(sub["instance"]), _repetitions(sub))
        evidence = list(sub["key"])
        thr = float(cmp_.value)  # type: ignore[arg-type]
    else:
        pair = ["instance", _pair_key(ok)]
        a = ok[ok["method"] == cmp_.method].set_index(pair)["_v"]
        b = ok[ok["method"] == cmp_.baseline].set_index(pair)["_v"]
        # sorted by (instance, seed): the pairs, and so the bootstrap, do not depend on the order of
        # the records (an unpaired record of one method, e.g. a baseline's extra seeds, used to move it)
        diff = (a - b).dropna().sort_index()
        thr = math.log(float(cmp_.value)) if cmp_.kind == "ratio" else float(cmp_.margin)  # type: ignore[arg-type]
        paired = set(diff.index.get_level_values("instance"))
        if len(paired) < len(want):
            return Verdict(claim.id, "inconclusive", reason="some instances have no run with the same seed for both methods")
        if cmp_.censored_at is not None:
            cap = float(cmp_.censored_at)
            both = (a.reindex(diff.index) >= cap) & (b.reindex(diff.index) >= cap)
            gone = sorted(paired - set(diff[~both].index.get_level_values("instance")))
            diff = diff[~both]
            if diff.empty:
                return Verdict(
                    claim.id, "not testable here",
                    reason=f"both methods reached the {cap:g} cap of {cmp_.metric} in every pair (censored): "
                    "the results cannot say which is smaller",
                )  # fmt: skip
            dropped = f"; {int(both.sum())} pairs with both at the {cap:g} cap left out" + (
                f" (no pair left on {', '.join(gone)})" if gone else ""
            )
        strata = [g.to_numpy() for _, g in diff.groupby(level="instance", sort=True)]
        mine = ok[ok["method"] == cmp_.method]
        reps = pd.Series(_repetitions(mine), index=pd.MultiIndex.from_frame(mine[pair])).groupby(level=[0, 1]).first()
        runs = (diff.to_numpy(), list(diff.index.get_level_values("instance")), list(reps.reindex(diff.index)))
        evidence = list(ok.loc[ok["method"].isin(names), "key"])
    n_runs = int(sum(len(s) for s in strata))
    if cmp_.resample == "repetitions":
        est, lo, hi = cluster_bootstrap_ci(*runs, seed=seed, n_boot=n_boot)
    elif cmp_.resample == "instances":
        est, lo, hi = instance_bootstrap_ci(strata, seed=seed, n_boot=n_boot)
    else:
        est, lo, hi = stratified_bootstrap_ci(strata, seed=seed, n_boot=n_boot)
    if cmp_.kind == "ratio":  # the CI of the mean log ratio, on the ratio scale
        est, lo, hi, thr = math.exp(est), math.exp(lo), math.exp(hi), float(cmp_.value)  # type: ignore[arg-type]
    out = Verdict(claim.id, "inconclusive", est, lo, hi, len(strata), n_runs, evidence=evidence)
    if any(np.isnan(s).all() for s in strata):
        out.reason = f"metric {cmp_.metric!r} missing from the results"
        return out
    if math.isnan(lo):
        if cmp_.resample == "instances":
            out.reason = "needs at least 2 instances for a confidence interval"
        else:
            unit = "repetitions" if cmp_.resample == "repetitions" else "seeds"
            out.reason = f"needs at least 2 {unit} per instance for a confidence interval"
        return out
    out.verdict = _decide(cmp_.op, thr, lo, hi)
    if out.verdict == "confirmed":
        out.reason = f"95% CI [{lo:.4g}, {hi:.4g}] is {cmp_.op} {thr:g}"
    elif out.verdict == "contradicted":
        out.reason = f"95% CI [{lo:.4g}, {hi:.4g}] lies on the wrong side of {thr:g}"
    else:
        out.reason = f"95% CI [{lo:.4g}, {hi:.4g}] contains {thr:g}"
    if cmp_.kind == "versus" and cmp_.censored_at is not None:
        out.reason += dropped
    if notes:
        out.reason += "; judged on " + "; ".join(notes)
    return out


def _slope_fit(x: np.ndarray, y: np.ndarray, w: np.ndarray, strata: np.ndarray) -> float:
    """Weighted least-squares slope of ``y`` on ``x`` with one intercept per stratum code."""
    tot = np.bincount(strata, w)
    tot[tot == 0] = 1.0
    dx = x - (np.bincount(strata, w * x) / tot)[strata]
    dy = y - (np.bincount(strata, w * y) / tot)[strata]
    sxx = float(np.sum(w * dx * dx))
    return float(np.sum(w * dx * dy) / sxx) if sxx > 1e-300 else math.nan


@dataclass
class _SlopeData:
    """The runs (or replicate values) of a slope claim, one row each, with their instance, cell and stratum.

    A cell is one ``(stratum, x)`` pair; cells are numbered in (stratum, x)
    order and instances in (cell, name) order, which fixes the order in which
    the bootstrap draws from them.
    """

    x: np.ndarray  # the transformed x of each row
    v: np.ndarray  # the positive metric value of each row
    cell_of_inst: np.ndarray  # cell code of each instance
    stratum_of_cell: np.ndarray  # stratum code of each cell
    rows_of_inst: list[np.ndarray]

    def points(self, rows: list[np.ndarray], aggregate: str, strata_map: np.ndarray, cell_map: np.ndarray) -> float:
        """The slope of resampled rows: ``rows[k]`` is the ``k``-th drawn block of rows (an instance's runs,
        or a cell's values), and ``strata_map[k]`` / ``cell_map[k]`` its (possibly renumbered) stratum and cell."""
        if aggregate == "runs":
            idx = np.concatenate(rows)
            w = np.concatenate([np.full(len(r), 1.0 / len(r)) for r in rows])
            s = np.concatenate([np.full(len(r), strata_map[k]) for k, r in enumerate(rows)])
            return _slope_fit(self.x[idx], np.log(self.v[idx]), w, s)
        cells = np.concatenate([np.full(len(r), cell_map[k]) for k, r in enumerate(rows)])
        idx = np.concatenate(rows)
        n_cells = int(cells.max()) + 1
        count = np.bincount(cells, minlength=n_cells)
        mean = np.bincount(cells, self.v[idx], minlength=n_cells)
        xc = np.bincount(cells, self.x[idx], minlength=n_cells)
        keep = count > 0
        sc = np.zeros(n_cells, dtype=np.int64)
        sc[cells] = np.concatenate([np.full(len(r), strata_map[k]) for k, r in enumerate(rows)])
        return _slope_fit((xc / np.maximum(count, 1))[keep], np.log(mean[keep] / count[keep]), np.ones(int(keep.sum())), sc[keep])


def _slope_ci(data: _SlopeData, *, aggregate: str, resample: str, seed: int, n_boot: int) -> tuple[float, float, float]:
    """The slope of ``data`` and its 95% bootstrap CI (see :class:`Comparison` for what each ``resample`` draws)."""
    strata_of_inst = data.stratum_of_cell[data.cell_of_inst]
    est = data.points(data.rows_of_inst, aggregate, strata_of_inst, data.cell_of_inst)
    cells = [np.flatnonzero(data.cell_of_inst == c) for c in range(len(data.stratum_of_cell))]
    strata = [np.flatnonzero(data.stratum_of_cell == g) for g in range(int(data.stratum_of_cell.max()) + 1)]
    rng = np.random.default_rng(seed)
    boots = []
    for _ in range(n_boot):
        if resample == "instances":  # instances within each cell
            pick = [i for c in cells for i in rng.choice(c, size=len(c))]
            rows = [data.rows_of_inst[i] for i in pick]
            boots.append(data.points(rows, aggregate, strata_of_inst[pick], data.cell_of_inst[pick]))
        elif resample == "strata":  # whole strata, each copy with its own intercept
            chosen = rng.integers(0, len(strata), len(strata))
            pick, smap, cmap = [], [], []
            for copy, g in enumerate(chosen):
                for c in strata[g]:
                    for i in cells[c]:
                        pick.append(i)
                        smap.append(copy)
                        cmap.append(copy * len(cells) + c)
            rows = [data.rows_of_inst[i] for i in pick]
            boots.append(data.points(rows, aggregate, np.asarray(smap), np.asarray(cmap)))
        elif aggregate == "mean":  # the values within each cell, whatever their instance
            rows, cmap = [], []
            for c, members in enumerate(cells):
                vals = np.concatenate([data.rows_of_inst[i] for i in members])
                rows.append(vals[rng.integers(0, len(vals), len(vals))])
                cmap.append(c)
            smap = data.stratum_of_cell[np.asarray(cmap)]
            boots.append(data.points(rows, aggregate, smap, np.asarray(cmap)))
        else:  # runs within each instance
            rows = [g[rng.integers(0, len(g), len(g))] for g in data.rows_of_inst]
            boots.append(data.points(rows, aggregate, strata_of_inst, data.cell_of_inst))
    b = np.asarray(boots)
    b = b[np.isfinite(b)]
    if len(b) < n_boot // 2:
        return est, math.nan, math.nan
    return est, float(np.quantile(b, 0.025)), float(np.quantile(b, 0.975))


def _slope_verdict(claim: Claim, ok: pd.DataFrame, *, seed: int, n_boot: int, notes: list[str]) -> Verdict:
    """Verdict of a ``slope`` comparison (see :class:`Comparison`); ``ok`` has ``_v``."""
    cmp_ = claim.comparison
    sub = ok[ok["method"] == cmp_.method].sort_values(["instance", _pair_key(ok)], kind="stable")
    xcol = str(cmp_.x_metric)
    for col in [xcol, *cmp_.strata]:
        if col.startswith("iparam.") and col not in sub.columns:
            return Verdict(claim.id, "not testable here", reason=f"no instance parameter {col!r} in the results")
    xs = pd.to_numeric(sub[xcol] if xcol.startswith("iparam.") else _values(sub, xcol), errors="coerce").to_numpy(float)
    if cmp_.metric.endswith("*"):  # replicate columns: every one is a value of the run
        stem = f"metric.{cmp_.metric[:-1]}"
        cols = sorted(c for c in sub.columns if c.startswith(stem) and c[len(stem):].isdigit())
        if not cols:
            return Verdict(claim.id, "not testable here", reason=f"no columns {cmp_.metric!r} in the results")
        ys = sub[cols].apply(pd.to_numeric, errors="coerce").to_numpy(float)
    else:
        ys = pd.to_numeric(sub["_v"], errors="coerce").to_numpy(float)[:, None]
    floor = 1.0 if cmp_.x_scale == "loglog" else 0.0
    if not ((xs > floor).all() and (ys > 0).all()):
        what = f"{xcol!r} above 1" if floor else f"{xcol!r}"
        return Verdict(claim.id, "inconclusive", reason=f"a slope needs positive {cmp_.metric!r} and {what} on every run")
    x = np.log(xs) if cmp_.x_scale == "log" else np.log(np.log(xs))
    keys = [tuple(str(v) for v in t) for t in sub[list(cmp_.strata)].itertuples(index=False)] if cmp_.strata else [()] * len(sub)
    inst = sub["instance"].to_numpy()
    names = sorted(set(inst))
    by_inst = {n: np.flatnonzero(inst == n) for n in names}
    xval = {n: round(float(np.mean(x[g])), 12) for n, g in by_inst.items()}
    skey = {n: keys[int(g[0])] for n, g in by_inst.items()}
    strata_keys = sorted(set(skey.values()))
    cell_keys = sorted({(skey[n], xval[n]) for n in names})
    if not any(len({xv for sk, xv in cell_keys if sk == k}) >= 2 for k in strata_keys):
        where = " within any stratum" if cmp_.strata else ""
        return Verdict(claim.id, "not testable here", reason=f"{xcol!r} takes a single value on these runs{where}")
    order = names  # name order: the bootstrap draws instances in it
    reps = ys.shape[1]
    flat_x = np.repeat(x, reps)
    flat_v = ys.reshape(-1)
    rows_of_inst = [np.concatenate([np.arange(r * reps, (r + 1) * reps) for r in by_inst[n]]) for n in order]
    data = _SlopeData(
        x=flat_x, v=flat_v,
        cell_of_inst=np.asarray([cell_keys.index((skey[n], xval[n])) for n in order], dtype=np.int64),
        stratum_of_cell=np.asarray([strata_keys.index(sk) for sk, _ in cell_keys], dtype=np.int64),
        rows_of_inst=rows_of_inst,
    )  # fmt: skip
    est, lo, hi = _slope_ci(data, aggregate=cmp_.aggregate, resample=cmp_.resample, seed=seed, n_boot=n_boot)
    out = Verdict(claim.id, "inconclusive", est, lo, hi, len(names), len(sub), evidence=list(sub["key"]))
    if math.isnan(lo):
        out.reason = "too few runs or sizes for a confidence interval"
        return out
    thr = float(cmp_.value)  # type: ignore[arg-type]
    out.verdict = _decide(cmp_.op, thr, lo, hi, cmp_.upper)
    if cmp_.op == "in":
        band = f"[{thr:g}, {cmp_.upper:g}]"
        side = {"confirmed": f"lies in {band}", "contradicted": f"misses {band}", "inconclusive": f"straddles an end of {band}"}[out.verdict]
    else:
        side = {"confirmed": f"is {cmp_.op} {thr:g}", "contradicted": f"lies on the wrong side of {thr:g}", "inconclusive": f"contains {thr:g}"}[out.verdict]
    n_x = len({xv for _, xv in cell_keys})
    out.reason = f"95% CI [{lo:.4g}, {hi:.4g}] {side} ({n_x} values of {xcol}"
    out.reason += f" in {len(strata_keys)} strata)" if cmp_.strata else ")"
    if notes:
        out.reason += "; judged on " + "; ".join(notes)
    return out


def _curves(df: pd.DataFrame, prefix: str) -> np.ndarray:
    """``(n_rows, n_rounds)`` values of the columns ``metric.<prefix>00, 01, ...``."""
    cols = sorted(c for c in df.columns if c.startswith(f"metric.{prefix}") and c[len(f"metric.{prefix}"):].isdigit())
    return df[cols].apply(pd.to_numeric, errors="coerce").to_numpy(dtype=float)


def _saving_verdict(claim: Claim, df: pd.DataFrame, *, seed: int, n_boot: int, methods: dict[str, dict[str, Any]] | None = None) -> Verdict:
    """Verdict of a ``saving`` comparison (see :class:`Comparison`)."""
    from bench.stats import stratified_saving_ci

    cmp_ = claim.comparison
    if not (df["method"] == cmp_.method).any():
        return Verdict(claim.id, "not testable here", reason=f"no {claim.tier}-tier results for {cmp_.method!r}")
    parts, notes = [], []
    for m in sorted(set(df["method"])):
        rows, why = configuration(df, m, claim.tier, methods)
        if rows.empty and m == cmp_.method:
            return Verdict(claim.id, "not testable here", reason=why)
        parts.append(rows)
        notes += [why] if why and m in (cmp_.method, cmp_.baseline) else []
    df = pd.concat(parts)
    pair = _pair_key(df)
    ok = df[df["status"] == "ok"]
    want = sorted(set(claim.instances or df.loc[df["method"] == cmp_.method, "instance"]))
    strata, evidence, chosen = [], [], []
    for inst in want:
        sub = ok[ok["instance"] == inst]
        a = sub[sub["method"] == cmp_.method].set_index(pair).sort_index()
        if a.empty:
            return Verdict(claim.id, "inconclusive", reason=f"no valid run of {cmp_.method!r} on {inst}")
        if cmp_.baseline == "best-other":
            finals = {
                m: float(np.nanmean(_curves(g, cmp_.metric)[:, -1]))
                for m, g in sub.groupby("method")
                if m != cmp_.method
            }
            if not finals:
                return Verdict(claim.id, "not testable here", reason=f"no other method was run on {inst}")
            base = max(sorted(finals), key=lambda m: finals[m])
        else:
            base = str(cmp_.baseline)
        b = sub[sub["method"] == base].set_index(pair).sort_index()
        reps = a.index.intersection(b.index)
        if len(reps) == 0:
            if not (df["method"] == base).any():
                return Verdict(claim.id, "not testable here", reason=f"no {claim.tier}-tier results for {base!r}")
            return Verdict(claim.id, "inconclusive", reason=f"no seed with valid runs of both methods on {inst}")
        A, B = _curves(a.loc[reps], cmp_.metric), _curves(b.loc[reps], cmp_.metric)
        x = _curves(a.loc[reps], str(cmp_.x_metric))[0]
        if A.size == 0 or A.shape != B.shape or x.shape[0] != A.shape[1] or np.isnan(A).any() or np.isnan(B).any():
            return Verdict(claim.id, "inconclusive", reason=f"curve metric {cmp_.metric!r} missing or incomplete on {inst}")
        strata.append((x, A, B))
        chosen.append(f"{inst}: vs {base}")
        evidence += list(a.loc[reps, "key"]) + list(b.loc[reps, "key"])
    est, lo, hi = stratified_saving_ci(strata, seed=seed, n_boot=n_boot)
    n_runs = int(sum(A.shape[0] for _, A, _ in strata))
    out = Verdict(claim.id, "inconclusive", est, lo, hi, len(strata), n_runs, evidence=evidence)
    detail = f" (baselines: {'; '.join(chosen)})" if cmp_.baseline == "best-other" else ""
    detail += "; judged on " + "; ".join(notes) if notes else ""
    if math.isnan(lo):
        out.reason = "needs at least 2 seeds per instance for a confidence interval" + detail
        return out
    thr = float(cmp_.value)  # type: ignore[arg-type]
    out.verdict = _decide(cmp_.op, thr, lo, hi)
    side = {"confirmed": "is", "contradicted": "lies on the wrong side of", "inconclusive": "contains"}[out.verdict]
    out.reason = f"95% CI [{lo:.4g}, {hi:.4g}] {side} {cmp_.op if out.verdict == 'confirmed' else ''} {thr:g}".replace("  ", " ") + detail
    return out
