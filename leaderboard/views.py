"""The leaderboard's pages. Numbers come from :mod:`bench.report`, :mod:`bench.stats`
and :mod:`bench.claims` (the functions ``bench show`` and ``bench claims`` use).

Every value read from a bundle is shown as text: in tables, in ``st.text`` /
``st.code``, or in markdown only after :func:`esc`. Nothing is rendered as HTML.
"""

from __future__ import annotations

import io
import json
import math
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from bench.report import (
    ROLES,
    aggregate_roles,
    anytime_table,
    hardware_label,
    paper_table,
    speed_note,
    speed_probe_values,
    summary_table,
)
from bench.store import STATUSES
from leaderboard import charts
from leaderboard.data import Data, read_paper_results
from leaderboard.digest import (
    OVERVIEW_COLUMNS,
    VERDICT_MARKS,
    Site,
    TaskTables,
    bundles_table,
    filter_overview,
    headline,
    iparam_options,
    overview_table,
    param_text,
    site_digest,
    site_from_results,
    tag_options,
    task_tables,
)
from leaderboard.index import PAGES, esc

__all__ = ["esc", "Ctx", "site", "shared_site", "overview", "task_page", "claims_page", "method_page", "provenance_page", "submit_page", "PAGES"]

#: The task page's plots, one shown at a time (``?plot=`` in the URL picks one).
PLOTS = ("quality vs time", "Pareto: time vs quality", "performance profiles")
def _link(view: str, **params: str) -> str:
    from urllib.parse import urlencode

    return "./?" + urlencode({"view": view, **params})


def _param_index(options: list[str], key: str, default: int = 0) -> int:
    want = st.query_params.get(key)
    return options.index(want) if want in options else default


# ----------------------------------------------------------------------------- cached computations
# Arguments starting with "_" are not hashed by st.cache_data; ``key`` is the data's fingerprint
# (leaderboard.digest.fingerprint), so a cached value lives exactly as long as the files it came from.


class Ctx:
    """What a page gets: the site's digests, the fingerprint ``key``, and the records on first use.

    ``data`` calls the app's loader (a shared ``st.cache_resource``) only when
    a page reads it, so an Overview, or a task page's default view, served
    from the digests never reads a Parquet file. ``results``: the published
    results folder (None for a store).
    """

    def __init__(self, site: Site, key: str, load: Any, results: str | None = None) -> None:
        self.site, self.key, self._load, self.results = site, key, load, results
        self._data: Data | None = None

    @property
    def data(self) -> Data:
        if self._data is None:
            self._data = self._load()
        return self._data

    @property
    def loaded(self) -> Data | None:
        """The records if a page has read them in this run, else None."""
        return self._data


@st.cache_data(show_spinner="summarising the tasks…", max_entries=4, persist="disk")
def site(_load: Any, key: str, results: str | None = None) -> Site:
    """Every task's digest, once per fingerprint, kept on disk across restarts.

    For published ``results``, from the digest files ``bench publish`` keeps
    in ``results/_digests/`` where they still describe the bundles
    (:func:`leaderboard.digest.site_from_results`: then no record is read);
    computed from the records otherwise, and for a store.
    """
    return site_from_results(results, _load) if results is not None else site_digest(_load())


@st.cache_resource(show_spinner=False, max_entries=2)
def shared_site(_load: Any, key: str, results: str | None = None) -> Site:
    """:func:`site`, unpickled once per server process and shared by every session (pages only read it)."""
    return site(_load, key, results)


@st.cache_data(show_spinner=False, max_entries=32, persist="disk")
def _aggregate(_site: Site, key: str, tasks: tuple[str, ...]) -> pd.DataFrame:
    return aggregate_roles({t: _site.digests[t].roles for t in tasks}, seed=0)


@st.cache_data(show_spinner=False, max_entries=64)
def _tables(_data: Data, key: str, task: str, tier: str, keys: tuple[str, ...]) -> TaskTables:
    df = _data.task_records(task, tier)
    return task_tables(df[df["key"].isin(keys)], _data.tasks[task]["meta"], _data.methods.get(task))


@st.cache_resource(show_spinner=False, max_entries=64)
def _paper_results(results: str, task: str, bundle: str, key: str) -> list[dict[str, Any]] | None:
    """The paper's numbers from ``claims.json`` of the bundle a digest names, shared and read-only; None if it fails its hash."""
    return read_paper_results(results, task, bundle)


@st.cache_data(show_spinner=False, max_entries=64)
def _anytime(_data: Data, key: str, task: str, tier: str, keys: tuple[str, ...]) -> pd.DataFrame:
    df = _data.task_records(task, tier)
    return anytime_table(df[df["key"].isin(keys)], _data.tasks[task]["meta"])


# ----------------------------------------------------------------------------- pages


def empty_state(data: Data | Site) -> None:
    st.info(
        f"No results to show from {esc(data.source)}. Produce some with "
        "`python -m bench run --task knapsack` and publish them with "
        "`python -m bench publish --task knapsack` (or point the app at a run store with `--store DIR`)."
    )


#: Column widths (px) of the Overview's table: 900 px in all, so it fits beside the open sidebar at 1,400 px
#: (tests/test_browser.py checks that it does not scroll sideways); longer values are cut with an ellipsis.
_OVERVIEW_WIDTHS = {"task": 100, "paper": 110, "paper's method": 100, "its rank": 55, "best (mean rank)": 100,
                    "paper's method vs best baseline": 220, "holdout": 105, "verdicts": 110}  # fmt: skip


def overview(ctx: Ctx) -> None:
    st.header("Overview")
    table = overview_table(ctx.site.digests.values(), link=lambda t: _link("Task", task=t))
    areas = sorted(set(table["area"]))
    c1, c2 = st.columns([3, 2])
    query = c1.text_input("search (task, paper, method, area)", key="ov_search", placeholder="e.g. maxcut or ros")
    pick = c2.multiselect("areas", areas, default=[], key="ov_areas", placeholder="all areas")
    shown = filter_overview(table, query, pick)
    st.caption(
        f"{len(shown)} of {len(table)} tasks. Best = lowest mean rank on the primary metric, instances as blocks (task page). "
        "Scores are the mean normalised task score with a 95% bootstrap CI over instances (each with its mean over "
        "repetitions; over repetitions on a one-instance task; \"no CI\" when nothing varies, as on one instance with a "
        "deterministic method), each method in its registered parameters. Verdicts of the task's claims: "
        + ", ".join(f"{m} {v}" for v, m in VERDICT_MARKS.items())
        + ". Each task is shown on its standard tier when it has one (else full, else smoke). \"holdout\": the same "
        "comparison on the holdout tier (the standard shapes with seeds from the maintainers' secret, so public ids "
        "cannot be replayed), where such runs are published."
    )
    if shown.empty:
        st.info("No task matches this search.")
    config = {c: st.column_config.Column(c, width=w) for c, w in _OVERVIEW_WIDTHS.items()}
    config["task"] = st.column_config.LinkColumn("task", display_text=r"task=([^&]+)", width=_OVERVIEW_WIDTHS["task"])
    for area, rows in shown.groupby("area", sort=True):
        st.subheader(f"{esc(area)} ({len(rows)})")
        view = rows.assign(task=rows["page"])[OVERVIEW_COLUMNS]
        st.dataframe(view, hide_index=True, column_config=config, key=f"ov_{area}")
    st.subheader("Across tasks, by role")
    names = sorted(ctx.site.digests)
    chosen = st.multiselect("tasks in the aggregate", names, default=names, key="agg_tasks")
    if not chosen:
        st.info("Pick at least one task.")
        return
    agg = _aggregate(ctx.site, ctx.key, tuple(sorted(chosen)))
    st.markdown(
        "Interquartile mean (IQM) of normalised task scores, each task scored on its own declared rule, "
        "with 95% stratified-bootstrap intervals (runs resampled within tasks; 2,000 resamples, seed 0). "
        "Roles per task: the paper's method, the best baseline and the weakest baseline. "
        "**When a role is missing on one of the chosen tasks, its aggregate is empty**, never a partial mean."
    )
    if agg["iqm"].notna().any():
        st.altair_chart(charts.role_chart(agg), width="stretch")
    st.dataframe(agg, hide_index=True, key="agg_table")


def _filters(task: str, options: dict[str, Any] | None, records: Any) -> pd.DataFrame | None:
    """Sidebar filters on method kind, instance tags and parameters, and methods.

    Returns the filtered records, or None while every filter is at its
    default and ``options`` (the digest's :func:`bench.digest.filter_options`)
    gave the choices: then nothing was read, and the digest's unfiltered
    tables are the page's. ``records()`` reads the tier's records (the first
    filter that is not at its default, or ``options`` None, calls it).
    """
    df: pd.DataFrame | None = None if options is not None else records()

    def narrow(keep: Any) -> None:
        nonlocal df
        base = records() if df is None else df
        df = base[keep(base)]

    with st.sidebar:
        kinds = options["kinds"] if df is None else sorted(df["kind"].unique())
        pick = st.multiselect("method kind", kinds, default=kinds, key=f"kind_{task}")
        if df is not None or set(pick) != set(kinds):
            narrow(lambda d: d["kind"].isin(pick))
        tags = options["tags"] if df is None else tag_options(df)
        if tags:
            want = st.multiselect("instance tags (any of)", tags, default=[], key=f"tags_{task}")
            if want:
                narrow(lambda d: d["instance_tags"].fillna("").map(lambda s: bool(set(str(s).split(",")) & set(want))))
        for col, vals in (options["iparams"] if df is None else iparam_options(df)).items():
            want = st.multiselect(f"instance {esc(col[7:])}", vals, default=[], key=f"{col}_{task}")
            if want:
                narrow(lambda d, col=col, want=want: d[col].map(param_text).isin(want))
        methods = options["methods"] if df is None else sorted(df["method"].unique())
        want = st.multiselect("methods", methods, default=methods, key=f"methods_{task}")
        if df is not None or set(want) != set(methods):
            narrow(lambda d: d["method"].isin(want))
    return df


#: Number formats of the per-instance table (the browser formats them: no per-cell work on the server).
_NUMBER_FORMATS = {**{c: "%.0f" for c in ("runs", *STATUSES)},
                   **{c: "%.4g" for c in ("mean", "ci_low", "ci_high", "reference", "gap_pct", "wall_s", "peak_rss_mb")}}  # fmt: skip


def _style_rows(table: pd.DataFrame) -> Any:
    """The per-instance table with its method cells marked: the paper's methods bold on red, the paper's rows grey italic.

    Only the ``method`` column is styled (one CSS rule per row, not per cell),
    so a table of hundreds of rows stays cheap to draw.
    """
    paper = (table["row"] == "reported by the paper").to_numpy() if "row" in table else np.zeros(len(table), bool)
    ours = (table["kind"] == "method").to_numpy() if "kind" in table else np.zeros(len(table), bool)
    css = np.where(paper, "font-style: italic; color: #6b6b6b; background-color: #f4f4f4",
                   np.where(ours, "font-weight: bold; background-color: #fde8e8", ""))  # fmt: skip
    return table.style.apply(lambda _: css, subset=["method"], axis=0)


def _records(ctx: Ctx, task: str, tier: str | None = None) -> pd.DataFrame:
    """The task's records (of one tier), read on first use with a spinner: a filter or a plot the digest lacks needs them."""
    if ctx.loaded is None:
        with st.spinner("reading the records…"):
            return ctx.data.task_records(task, tier)
    return ctx.data.task_records(task, tier)


def task_page(ctx: Ctx) -> None:
    """A task's page. Its default view (preferred tier, no filter, a plot the digest holds) comes from the digest alone;
    another tier, a filter or the anytime plot reads the records (once, shared)."""
    key = ctx.key
    names = sorted(ctx.site.digests)
    task = st.sidebar.selectbox("task", names, index=_param_index(names, "task"), key="task")
    st.query_params["task"] = task
    digest = ctx.site.digests[task]
    meta, tiers = digest.meta, digest.tiers
    if not tiers:
        st.header(esc(task))
        empty_state(ctx.site)
        return
    tier = st.sidebar.selectbox("tier", tiers, index=tiers.index(digest.tier), key=f"tier_{task}")
    st.header(f"{esc(task)} (v{esc(meta['version'])}), {esc(tier)} tier")
    with st.container(border=True, key="headline"):
        st.markdown("  \n".join(esc(line) for line in headline(digest)))
    st.text(meta.get("description", ""))
    paper = meta.get("paper") or {}
    if paper:
        st.text(f"Paper: {paper.get('title', '')} ({paper.get('venue', '')}) arXiv {paper.get('arxiv') or '–'}")
    norm = meta.get("normalization", {})
    st.caption(esc(f"Primary metric: {meta['primary']}. Normalised score: {norm.get('kind', '')} from {norm.get('zero')} (0) to {norm.get('one')} (1). {norm.get('description', '')}"))
    default = tier == digest.tier and digest.tables is not None
    df = _filters(task, digest.filters if default else None, lambda: _records(ctx, task, tier))
    if df is not None and df.empty:
        st.info("No runs match these filters.")
        return
    if df is None:  # the digest's view: every number below was computed from these records, unfiltered
        runs, n_methods, n_instances, hw, note = digest.runs, len(digest.filters["methods"]), digest.instances, digest.hardware, digest.speed_note
    else:
        runs, n_methods, n_instances = len(df), df["method"].nunique(), df["instance"].nunique()
        hw, note = sorted(set(hardware_label(df))), speed_note(df)
    if digest.privacy and tier == digest.tier:
        privacy_table(digest.privacy)
    st.caption(f"{runs} runs, {n_methods} methods, {n_instances} instances after filters")
    if len(hw) > 1:
        st.warning(
            f"These rows were run on {len(hw)} different machines ({esc('; '.join(hw))}): compare times only between rows "
            "of the same machine (see the hardware column)."
        )
    if note:
        st.warning(esc(note[0].upper() + note[1:] + "."))  # it names methods
    tables = digest.tables if default and (df is None or len(df) == digest.runs) else None
    if tables is None:  # a filter or another tier: computed once per selection
        tables = _tables(ctx.data, key, task, tier, tuple(sorted(df["key"])))
    table = tables.summary.copy()
    table.insert(0, "row", "measured here")
    primary = meta["primary"]
    pt = paper_table(_task_paper_results(ctx, task, digest))
    shown = set(table["instance"])
    pr = pt[(pt["metric"] == primary) & pt["instance"].isin(shown)]
    paper_rows = pd.DataFrame({"row": pr["row"], "method": pr["method"], "kind": "paper-reported", "instance": pr["instance"],
                               "mean": pd.to_numeric(pr["value"], errors="coerce"), "command": "source: " + pr["source"].astype(str)})  # fmt: skip
    full = pd.concat([table, paper_rows], ignore_index=True, sort=False).sort_values(["instance", "row"], kind="stable").reset_index(drop=True)
    st.subheader(f"Per instance: {esc(primary)}, mean over seeds with 95% bootstrap CI")
    st.caption(
        "Bold on red: the paper's method(s); plain: baselines; grey italic: numbers the paper reports "
        "(not run here, never used in any statistic). The CI is over seeds, blank when the runs all agree (a "
        "deterministic method) or there is one. gap_pct is to the task's reference; times are the runner's medians."
    )
    config = {c: st.column_config.NumberColumn(c, format=f) for c, f in _NUMBER_FORMATS.items() if c in full}
    st.dataframe(_style_rows(full), hide_index=True, column_config=config)
    c1, c2 = st.columns(2)
    c1.download_button("download CSV", table.to_csv(index=False).encode(), file_name=f"{task}-{tier}.csv", mime="text/csv")
    buf = io.BytesIO()
    table.to_parquet(buf, index=False)
    c2.download_button("download Parquet", buf.getvalue(), file_name=f"{task}-{tier}.parquet", mime="application/octet-stream")

    kinds = tables.kinds
    st.subheader("Ranking within the task")
    if tables.registered < tables.runs:
        st.caption(
            f"Ranks, the Pareto front and the profiles compare each method in its registered parameters; "
            f"{tables.runs - tables.registered} runs of other parameter sets (grids, side-by-sides) are in the table above only."
        )
    res = tables.ranking
    if len(res.methods) >= 2 and res.n_blocks >= 1:
        fr = "not applicable (fewer than 3 methods)" if math.isnan(res.friedman_p) else f"chi2 = {res.friedman_stat:.3g}, p = {res.friedman_p:.3g}"
        st.text(f"{res.n_blocks} instances as blocks. Friedman test: {fr}. Bars join methods whose Holm-corrected "
                f"pairwise Wilcoxon signed-rank test is not significant at {res.alpha} (Benavoli et al. 2016; not Nemenyi).")  # fmt: skip
        st.altair_chart(charts.cd_diagram(res, kinds), width="stretch")
        pw = pd.DataFrame(res.p_holm, index=res.methods, columns=res.methods)
        with st.expander("pairwise p-values (Holm-corrected)"):
            st.dataframe(pw)
    else:
        st.text("Not enough methods or complete instances to rank.")
    for k, v in res.excluded.items():
        st.text(f"left out of the ranking: {k}: {v}")

    st.subheader("Plots")
    # one plot at a time: the browser draws one chart, not four, on every visit of the page
    plot = st.radio("plot", PLOTS, index=_param_index(list(PLOTS), "plot", 1), horizontal=True, key=f"plot_{task}", label_visibility="collapsed")
    if plot == "quality vs time":
        # a digest read from its file has no anytime traces (most of its size): computed once per selection
        if tables.anytime is None:
            sel = _records(ctx, task, tier) if df is None else df
            tr = _anytime(ctx.data, key, task, tier, tuple(sorted(sel["key"])))
        else:
            tr = tables.anytime
        if tr.empty:
            st.text("No run of this selection recorded checkpoints (anytime traces).")
        else:
            insts = sorted(tr["instance"].unique())
            inst = st.selectbox("instance", insts, key=f"anytime_{task}")
            tr = tr[tr["instance"] == inst]
            st.text("Each line is one run (method and seed); points are checkpoints the task verified, the last one the final answer.")
            st.altair_chart(charts.anytime_chart(tr, next(m["direction"] for m in meta["metrics"] if m["name"] == primary), primary), width="stretch")
    elif plot == "Pareto: time vs quality":
        pts = tables.pareto
        if pts.dropna(subset=["wall_s", "score"]).empty:
            st.text("No method has both a time and a normalised score here.")
        else:
            st.altair_chart(charts.pareto_chart(pts), width="stretch")
            partial = pts[pts["score"].isna() & pts["wall_s"].notna()]
            if not partial.empty:
                st.text("Not plotted (no valid run on every instance, so no comparable mean): "
                        + "; ".join(f"{r.label} ({r.instances})" for r in partial.itertuples()))
            if len(hw) > 1:
                st.text("Caution: the points come from different machines (hover for the hardware).")
    else:
        st.altair_chart(charts.profile_chart(tables.profile_quality, kinds, f"Dolan-Moré profile of {primary}"), width="stretch")
        st.altair_chart(charts.profile_chart(tables.profile_time, kinds, "Dolan-Moré profile of method time"), width="stretch")
    if not pt.empty:
        with st.expander(f"every number the paper reports ({len(pt)} rows, not ours)"):
            st.dataframe(pt, hide_index=True)


def privacy_table(rows: list[dict[str, Any]]) -> None:
    """Declared (epsilon, delta), mechanism and accountant of each method, and what the task's audit found."""
    st.subheader("Privacy: declared, and audited")
    table = pd.DataFrame(rows)
    bad = sorted(set(table.loc[table["violations"] > 0, "method"]))
    if bad:
        st.error(f"Audit violation: {esc(', '.join(bad))} gave an empirical epsilon lower bound above the epsilon it declares.")
    st.caption(
        "Each method declares its mechanism, accountant and (epsilon, delta); no run can prove them. On the audit instances "
        "the task runs the method on neighbouring inputs and derives a 95% lower bound on epsilon (eps_lb); a bound above "
        "the declared epsilon is a violation. 'No violation found' never means 'private': the audit cannot detect more than "
        "max_detectable. All runs of this tier, unfiltered."
    )

    def style(row: pd.Series) -> list[str]:
        return ["background-color: #f8d0d0; font-weight: bold" if row["violations"] > 0 else ""] * len(row)

    st.dataframe(table.style.apply(style, axis=1), hide_index=True)


def _task_paper_results(ctx: Ctx, task: str, digest: Any) -> list[dict[str, Any]]:
    """The paper's numbers for ``task``: the digest's, else its claims bundle's ``claims.json``, else the records' metadata."""
    if digest.paper_results is not None:
        return digest.paper_results
    if ctx.results is not None and digest.claims_source:
        got = _paper_results(ctx.results, task, digest.claims_source, ctx.key)
        if got is not None:
            return got
    return ctx.data.paper_results.get(task, [])


def claims_page(ctx: Ctx) -> None:
    st.header("Claims")
    st.caption(
        "Each verdict comes from bench.claims.verdict on the results shown here: 95% stratified-bootstrap CI over seeds "
        "within instances (over whole repetitions where the claim's test says so); confirmed / contradicted only when the whole interval is on one side."
    )
    names = sorted(ctx.site.digests)
    pick = st.multiselect("tasks", names, default=names, key="claims_tasks")
    rows = [r for t in pick for r in ctx.site.digests[t].verdicts]
    if not rows:
        st.info("The chosen tasks record no claims.")
        return
    v = pd.DataFrame(rows)
    verdicts = sorted(v["verdict"].unique())
    want = st.multiselect("verdicts", verdicts, default=verdicts, key="claims_verdicts")
    v = v[v["verdict"].isin(want)].reset_index(drop=True)
    st.dataframe(v.drop(columns=["evidence"]), hide_index=True)
    sources = {t: ctx.data.claims_source[t] for t in sorted(set(v["task"])) if t in ctx.data.claims_source}
    if sources:
        st.caption(
            "Claims as recorded at publish time, in each task's newest bundle: "
            + "; ".join(f"{esc(t)}: {esc(b)}" for t, b in sources.items())
            + ". The repository's claims.toml may be newer; it reaches this page with the task's next bundle."
        )
    if v.empty:
        return
    # one claim's details and evidence at a time: all of them at once would render every evidence run
    labels = [f"{r['task']} / {r['claim']}: {r['verdict']}" for r in v.to_dict("records")]
    choice = st.selectbox("details of", labels, index=_param_index(labels, "claim"), key="claims_detail")
    r = v.iloc[labels.index(choice)].to_dict()
    st.text(f"“{r.get('statement', '')}”\nsource: {r.get('source', '')}\npaper: {r.get('paper', '')}\ntest: {r.get('test', '')}")
    if isinstance(r.get("note"), str) and r["note"]:
        st.text(f"note: {r['note']}")
    est = r.get("estimate")
    if est is not None and est == est:
        st.text(f"ours: {est:.4g}  95% CI [{r['ci_low']:.4g}, {r['ci_high']:.4g}] over {r['instances']} instances, {r['runs']} runs")
    st.text(f"verdict: {r['verdict']} ({r.get('reason', '')})")
    ev = r.get("evidence")
    if isinstance(ev, list) and ev:
        rows_ = ctx.data.task_records(r["task"])
        rows_ = rows_[rows_["key"].isin(ev)]
        cols = [c for c in ["key", "instance", "method", "rep", "status", f"metric.{ctx.data.tasks[r['task']]['meta']['primary']}", "wall_s", "bundle"] if c in rows_]
        st.text(f"evidence: {len(rows_)} runs")
        st.dataframe(rows_[cols], hide_index=True)
    st.markdown(f"[open the task page]({_link('Task', task=r['task'])})")


def method_page(ctx: Ctx) -> None:
    data = ctx.data
    st.header("Method")
    names = sorted(data.tasks)
    task = st.sidebar.selectbox("task", names, index=_param_index(names, "task"), key="m_task")
    df = data.task_records(task)
    methods = sorted(df["method"].unique()) if not df.empty else []
    if not methods:
        empty_state(data)
        return
    name = st.sidebar.selectbox("method", methods, index=_param_index(methods, "method"), key="m_method")
    st.query_params["method"] = name
    mine = df[df["method"] == name]
    info = data.methods.get(task, {}).get(name, {})
    st.subheader(f"{esc(name)} on {esc(task)}")
    kind = str(mine["kind"].iloc[0])
    st.text(f"kind: {kind}{' (a paper method)' if kind == 'method' else ' (a baseline)'}")
    st.text(f"reference: {info.get('reference', '–')}\nversion: {', '.join(sorted(set(mine['method_version'].astype(str))))}")
    if info.get("description"):
        st.text(f"description: {info['description']}")
    st.markdown("**Deviations from the paper / official code**")
    st.text(info.get("deviations") or "none recorded")
    st.markdown("**Parameters**")
    st.code(json.dumps({"defaults": info.get("params", {}), "grid": info.get("grid"), "run with": sorted(set(mine["params"]))}, indent=1, default=str), language="json")
    if info.get("development_seeds"):
        st.text("development runs (settings chosen there; never published for this version): " + "; ".join(
            f"master seed {d['master_seed']}" + (f" on {', '.join(d['instances'])}" if d.get("instances") else ", every instance")
            for d in info["development_seeds"]
        ))  # fmt: skip

    st.markdown("**Provenance**")
    prov = []
    mine_hw = mine.assign(hardware=hardware_label(mine))
    for (bundle, origin, hw), g in mine_hw.groupby(["bundle", "origin", "hardware"], dropna=False):
        fin = pd.to_numeric(g["finished_at"], errors="coerce")
        manifest = data.provenance.get(str(g["bundle_path"].iloc[0]), {}) if "bundle_path" in g else data.provenance.get("store", {})
        prov.append({
            "bundle": bundle, "origin": ("rerun by the maintainers" if origin == "maintainers" else "submitted" if origin == "submitted" else str(origin)),
            "author": manifest.get("author", "–"), "hardware": hw,
            "from": pd.to_datetime(fin.min(), unit="s").strftime("%Y-%m-%d %H:%M") if fin.notna().any() else "–",
            "to": pd.to_datetime(fin.max(), unit="s").strftime("%Y-%m-%d %H:%M") if fin.notna().any() else "–",
            "git commit": ", ".join(sorted({str(c)[:12] for c in g.get("env.git_commit", pd.Series(["?"])).dropna()})),
            "bench": ", ".join(sorted({str(c) for c in g.get("env.bench_version", pd.Series(["?"])).dropna()})),
            "python": ", ".join(sorted({str(c) for c in g.get("env.python", pd.Series(["?"])).dropna()})),
            "speed probe ms (median)": _median_probe(g),
            "runs": len(g),
        })  # fmt: skip
    prov_df = pd.DataFrame(prov)
    st.dataframe(prov_df, hide_index=True)
    if prov_df["hardware"].nunique() > 1:
        st.warning(f"{esc(name)}'s runs come from {prov_df['hardware'].nunique()} machines; its times are not comparable across them.")
    st.markdown("**Commands that reproduce each row**")
    table = summary_table(mine, data.tasks[task]["meta"])
    st.dataframe(table[["instance", "tier", "method", "runs", "mean", *STATUSES, "hardware", "command"]], hide_index=True)
    st.markdown("**Sweeps that produced these runs**")
    sweeps = set(mine["sweep"].astype(str)) if "sweep" in mine else set()
    for p in data.provenance.values():
        for s in p.get("sweeps", []) or []:
            if str(s.get("sweep")) in sweeps:
                st.text(f"sweep {s.get('sweep', '')}: {s.get('command', '')}")


def _median_probe(g: pd.DataFrame) -> str:
    """The median speed probe of some runs, or "–" for runs recorded before the probe existed."""
    v = speed_probe_values(g)
    return f"{v.median():.2f}" if len(v) else "–"


SUBMIT_TEXT = """
**How to submit a method.** This page only explains; the leaderboard never runs uploaded code.
Maintainers rerun submissions on their own hardware before marking them *rerun by the maintainers*.

1. Scaffold a method file that already passes the checks:
   `python -m bench new-method --task maxcut --name my-method`
2. Implement it: the method returns a solution; the task recomputes every metric and rejects invalid solutions.
   Record every departure from the paper in `deviations=` of `@method`.
3. Validate (conformance suite: interface, determinism, budget, invalid output handling):
   `python -m bench validate methods/maxcut/my_method.py`
4. Run the standard tier with several seeds:
   `python -m bench run --task maxcut --tier standard --seeds 3 --method my-method`
5. Look at it locally: `python -m bench show --task maxcut` or `python -m bench leaderboard --store .bench/runs`
6. Publish a bundle (whole sweeps, failures included) and check it re-scores:
   `python -m bench publish --task maxcut --origin submitted` then `python -m bench verify --results results`
7. Open a pull request with the method file and the new directory under `results/`.
"""


def submit_page(ctx: Ctx) -> None:
    st.header("Submit")
    st.markdown(SUBMIT_TEXT)


def provenance_page(ctx: Ctx) -> None:
    """Every bundle read, superseded ones included, and the warnings about bundles that were skipped."""
    st.header("Provenance")
    table = bundles_table(ctx.data)
    names = sorted(set(table["task"]))
    pick = st.multiselect("tasks", names, default=[], key="prov_tasks", placeholder="all tasks")
    if pick:
        table = table[table["task"].isin(pick)]
    st.dataframe(table, hide_index=True, key="prov_bundles")
    old = table[table["state"] != "counted"]
    st.caption(
        f"{len(table)} bundles, {len(old)} of them superseded. A newer bundle of the same task may supersede an older one "
        "(`bench publish --supersedes`, e.g. a quiet rerun of jobs first run on a loaded machine): for every job the two "
        "share, the newer record counts; the older bundle stays in the repository as provenance, and its other "
        "records still count. Records: how many of the bundle's records count."
    )
    for w in ctx.site.warnings:
        st.text(f"skipped or dropped: {w}")


RENDER = {"Overview": overview, "Task": task_page, "Claims": claims_page, "Method": method_page,
          "Provenance": provenance_page, "Submit": submit_page}  # fmt: skip
__all__ += ["RENDER", "ROLES"]
