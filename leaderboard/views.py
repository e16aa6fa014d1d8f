"""The leaderboard's pages. Numbers come from :mod:`bench.report`, :mod:`bench.stats`
and :mod:`bench.claims` (the functions ``bench show`` and ``bench claims`` use).

Every value read from a bundle is shown as text: in tables, in ``st.text`` /
``st.code``, or in markdown only after :func:`esc`. Nothing is rendered as HTML.
"""

from __future__ import annotations

import io
import json
import math
import re
from typing import Any

import pandas as pd
import streamlit as st

from bench.claims import Claim, registered_records, verdict
from bench.report import (
    ROLES,
    anytime_table,
    hardware_label,
    paper_table,
    pareto_table,
    preferred_tier,
    profile_table,
    role_aggregate,
    speed_note,
    speed_probe_values,
    summary_table,
    task_ranking,
    task_roles,
    with_labels,
)
from bench.store import STATUSES
from leaderboard import charts
from leaderboard.data import Data

__all__ = ["esc", "overview", "task_page", "claims_page", "method_page", "submit_page", "PAGES"]

PAGES = ("Overview", "Task", "Claims", "Method", "Submit")
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()<>#+\-.!|~$:])")


def esc(text: Any) -> str:
    """Text safe to put inside markdown: every markup character is backslash-escaped."""
    return _MD_SPECIAL.sub(r"\\\1", str(text))


def _link(view: str, **params: str) -> str:
    from urllib.parse import urlencode

    return "./?" + urlencode({"view": view, **params})


def _param_index(options: list[str], key: str, default: int = 0) -> int:
    want = st.query_params.get(key)
    return options.index(want) if want in options else default


# ----------------------------------------------------------------------------- cached computations
# Arguments starting with "_" are not hashed by st.cache_data; ``key`` identifies the data source.


@st.cache_data(show_spinner=False, max_entries=64)
def _verdicts(_data: Data, key: str, task: str) -> pd.DataFrame:
    rows = []
    records = _data.task_records(task)
    for raw in _data.claims.get(task, []):
        try:
            c = Claim.model_validate(raw)
        except ValueError as exc:
            rid = str(raw.get("id", "?")) if isinstance(raw, dict) else "?"
            rows.append({"task": task, "claim": rid, "verdict": "unreadable claim", "reason": str(exc).splitlines()[0], "evidence": []})
            continue
        v = verdict(c, records, methods=_data.methods.get(task))
        rows.append({"task": task, "claim": c.id, "statement": c.statement, "source": c.source, "paper": c.paper,
                     "test": c.comparison.describe(), "tier": c.tier, "note": c.note, **v.as_row(), "evidence": v.evidence})  # fmt: skip
    return pd.DataFrame(rows)


def _best(res: Any) -> str:
    """The method with the best mean rank, or every method tied for it (never a tie broken by name)."""
    if not res.methods:
        return "–"
    top = [m for m, r in zip(res.methods, res.mean_ranks, strict=True) if math.isclose(r, res.mean_ranks[0])]
    return top[0] if len(top) == 1 else f"tie: {', '.join(top)}"


@st.cache_data(show_spinner=False, max_entries=64)
def _overview_row(_data: Data, key: str, task: str) -> dict[str, Any]:
    info = _data.tasks[task]
    meta = info["meta"]
    tier = preferred_tier(_data.task_records(task))
    df = _data.task_records(task, tier)
    kinds = df.groupby("method")["kind"].first() if not df.empty else pd.Series(dtype=str)  # methods, not grid points
    reg = registered_records(df, _data.methods.get(task))  # one entry per method in ranks and roles
    res = task_ranking(reg, meta)
    roles = task_roles(reg, meta, _data.claims.get(task), _data.methods.get(task))
    paper = roles["paper's method"]
    rank = f"{res.methods.index(paper) + 1} of {len(res.methods)}" if paper in res.methods else ("not ranked" if paper else "no method")
    v = _verdicts(_data, key, task)
    counts = v["verdict"].value_counts().to_dict() if not v.empty else {}
    hw = sorted(set(hardware_label(df))) if not df.empty else []
    return {
        "task": task,
        "paper": (meta.get("paper") or {}).get("title", "–"),
        "family": meta.get("family", ""),
        "tier": tier or "–",
        "methods": int((kinds == "method").sum()),
        "baselines": int((kinds == "baseline").sum()),
        "instances": int(df["instance"].nunique()) if not df.empty else 0,
        "best (mean rank)": _best(res),
        "paper's method": paper or "–",
        "its rank": rank,
        "verdicts": ", ".join(f"{n} {k}" for k, n in sorted(counts.items())) or "no claims",
        "machines": len(hw),
        "page": _link("Task", task=task),
    }


_OVERVIEW_ORDER = ["task", "page", "paper", "family", "tier", "methods", "baselines", "instances", "best (mean rank)",
                   "paper's method", "its rank", "verdicts", "machines"]  # fmt: skip


@st.cache_data(show_spinner=False, max_entries=16)
def _aggregate(_data: Data, key: str, tasks: tuple[str, ...]) -> pd.DataFrame:
    inputs = {}
    for t in tasks:
        tier = preferred_tier(_data.task_records(t))
        reg = registered_records(_data.task_records(t, tier), _data.methods.get(t))
        inputs[t] = (reg, _data.tasks[t]["meta"], _data.claims.get(t, []), _data.methods.get(t))
    return role_aggregate(inputs, seed=0)


@st.cache_data(show_spinner=False, max_entries=64)
def _summary(_data: Data, key: str, task: str, tier: str, keys: tuple[str, ...]) -> pd.DataFrame:
    df = _data.task_records(task, tier)
    return summary_table(df[df["key"].isin(keys)], _data.tasks[task]["meta"])


# ----------------------------------------------------------------------------- pages


def empty_state(data: Data) -> None:
    st.info(
        f"No results to show from {data.source}. Produce some with "
        "`python -m bench run --task knapsack` and publish them with "
        "`python -m bench publish --task knapsack` (or point the app at a run store with `--store DIR`)."
    )


def overview(data: Data, key: str) -> None:
    st.header("Overview")
    rows = [_overview_row(data, key, t) for t in sorted(data.tasks)]
    st.dataframe(
        pd.DataFrame(rows, columns=_OVERVIEW_ORDER),
        hide_index=True,
        column_config={"page": st.column_config.LinkColumn("page", display_text="open")},
    )
    st.caption(
        "Best = lowest mean rank on the primary metric, instances as blocks (task page). "
        "Each task is shown on its standard tier when it has one (else full, else smoke)."
    )
    st.subheader("Across tasks, by role")
    chosen = st.multiselect("tasks in the aggregate", sorted(data.tasks), default=sorted(data.tasks), key="agg_tasks")
    if not chosen:
        st.info("Pick at least one task.")
        return
    agg = _aggregate(data, key, tuple(sorted(chosen)))
    st.markdown(
        "Interquartile mean (IQM) of normalised task scores, each task scored on its own declared rule, "
        "with 95% stratified-bootstrap intervals (runs resampled within tasks; 2,000 resamples, seed 0). "
        "Roles per task: the paper's method, the best baseline and the weakest baseline. "
        "**When a role is missing on one of the chosen tasks, its aggregate is empty**, never a partial mean."
    )
    if agg["iqm"].notna().any():
        st.altair_chart(charts.role_chart(agg), width="stretch")
    st.dataframe(agg, hide_index=True)


def _filters(data: Data, task: str, df: pd.DataFrame) -> pd.DataFrame:
    """Sidebar filters on instance tags and parameters, method kind and methods."""
    with st.sidebar:
        kinds = sorted(df["kind"].unique())
        pick = st.multiselect("method kind", kinds, default=kinds, key=f"kind_{task}")
        df = df[df["kind"].isin(pick)]
        tags = sorted({t for s in df["instance_tags"].fillna("") for t in str(s).split(",") if t})
        if tags:
            want = st.multiselect("instance tags (any of)", tags, default=[], key=f"tags_{task}")
            if want:
                df = df[df["instance_tags"].fillna("").map(lambda s: bool(set(str(s).split(",")) & set(want)))]
        for col in sorted(c for c in df.columns if c.startswith("iparam.")):
            vals = sorted({str(v) for v in df[col].dropna()})
            if 1 < len(vals) <= 50:
                want = st.multiselect(f"instance {col[7:]}", vals, default=[], key=f"{col}_{task}")
                if want:
                    df = df[df[col].astype(str).isin(want)]
        methods = sorted(df["method"].unique())
        want = st.multiselect("methods", methods, default=methods, key=f"methods_{task}")
        df = df[df["method"].isin(want)]
    return df


def _style_rows(table: pd.DataFrame) -> Any:
    def paint(row: pd.Series) -> list[str]:
        if row.get("row") == "reported by the paper":
            css = "font-style: italic; color: #6b6b6b; background-color: #f4f4f4"
        elif row.get("kind") == "method":
            css = "font-weight: bold; background-color: #fde8e8"
        else:
            css = ""
        return [css] * len(row)

    ints = [c for c in ("runs", *STATUSES) if c in table]
    fmt = {c: "{:.0f}" for c in ints}
    fmt.update({c: "{:.4g}" for c in ("mean", "ci_low", "ci_high", "reference", "gap_pct", "wall_s", "peak_rss_mb") if c in table})
    return table.style.apply(paint, axis=1).format(fmt, na_rep="–")


def task_page(data: Data, key: str) -> None:
    names = sorted(data.tasks)
    task = st.sidebar.selectbox("task", names, index=_param_index(names, "task"), key="task")
    st.query_params["task"] = task
    meta = data.tasks[task]["meta"]
    all_df = data.task_records(task)
    tiers = [t for t in ("smoke", "standard", "full") if t in set(all_df["tier"])]
    if not tiers:
        st.header(esc(task))
        empty_state(data)
        return
    tier = st.sidebar.selectbox("tier", tiers, index=tiers.index(preferred_tier(all_df)), key=f"tier_{task}")
    st.header(f"{esc(task)} (v{esc(meta['version'])}), {esc(tier)} tier")
    st.text(meta.get("description", ""))
    paper = meta.get("paper") or {}
    if paper:
        st.text(f"Paper: {paper.get('title', '')} ({paper.get('venue', '')}) arXiv {paper.get('arxiv') or '–'}")
    norm = meta.get("normalization", {})
    st.caption(esc(f"Primary metric: {meta['primary']}. Normalised score: {norm.get('kind', '')} from {norm.get('zero')} (0) to {norm.get('one')} (1). {norm.get('description', '')}"))
    df = _filters(data, task, data.task_records(task, tier))
    if df.empty:
        st.info("No runs match these filters.")
        return
    st.caption(f"{len(df)} runs, {df['method'].nunique()} methods, {df['instance'].nunique()} instances after filters")
    hw = sorted(set(hardware_label(df)))
    if len(hw) > 1:
        st.warning(
            f"These rows were run on {len(hw)} different machines ({'; '.join(hw)}): compare times only between rows "
            "of the same machine (see the hardware column)."
        )
    if note := speed_note(df):
        st.warning(note[0].upper() + note[1:] + ".")
    table = _summary(data, key, task, tier, tuple(sorted(df["key"])))
    table.insert(0, "row", "measured here")
    primary = meta["primary"]
    pt = paper_table(data.paper_results.get(task, []))
    shown = set(table["instance"])
    pr = pt[(pt["metric"] == primary) & pt["instance"].isin(shown)]
    paper_rows = pd.DataFrame({"row": pr["row"], "method": pr["method"], "kind": "paper-reported", "instance": pr["instance"],
                               "mean": pd.to_numeric(pr["value"], errors="coerce"), "command": "source: " + pr["source"].astype(str)})  # fmt: skip
    full = pd.concat([table, paper_rows], ignore_index=True, sort=False).sort_values(["instance", "row"], kind="stable").reset_index(drop=True)
    st.subheader(f"Per instance: {primary}, mean over seeds with 95% bootstrap CI")
    st.caption(
        "Bold rows on red: the paper's method(s); plain rows: baselines; grey italic rows: numbers the paper reports "
        "(not run here, never used in any statistic). gap_pct is to the task's reference; times are the runner's medians."
    )
    st.dataframe(_style_rows(full), hide_index=True)
    c1, c2 = st.columns(2)
    c1.download_button("download CSV", table.to_csv(index=False).encode(), file_name=f"{task}-{tier}.csv", mime="text/csv")
    buf = io.BytesIO()
    table.to_parquet(buf, index=False)
    c2.download_button("download Parquet", buf.getvalue(), file_name=f"{task}-{tier}.parquet", mime="application/octet-stream")

    reg = registered_records(df, data.methods.get(task))
    kinds = with_labels(reg).groupby("label")["kind"].first().to_dict()
    st.subheader("Ranking within the task")
    if len(reg) < len(df):
        st.caption(
            f"Ranks, the Pareto front and the profiles compare each method in its registered parameters; "
            f"{len(df) - len(reg)} runs of other parameter sets (grids, side-by-sides) are in the table above only."
        )
    res = task_ranking(reg, meta)
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
    t1, t2, t3 = st.tabs(["quality vs time", "Pareto: time vs quality", "performance profiles"])
    with t1:
        tr = anytime_table(df, meta)
        if tr.empty:
            st.text("No run of this selection recorded checkpoints (anytime traces).")
        else:
            insts = sorted(tr["instance"].unique())
            inst = st.selectbox("instance", insts, key=f"anytime_{task}")
            tr = tr[tr["instance"] == inst]
            st.text("Each line is one run (method and seed); points are checkpoints the task verified, the last one the final answer.")
            st.altair_chart(charts.anytime_chart(tr, next(m["direction"] for m in meta["metrics"] if m["name"] == primary), primary), width="stretch")
    with t2:
        pts = pareto_table(reg, meta)
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
    with t3:
        st.altair_chart(charts.profile_chart(profile_table(reg, meta, measure="quality"), kinds, f"Dolan-Moré profile of {primary}"), width="stretch")
        st.altair_chart(charts.profile_chart(profile_table(reg, meta, measure="time"), kinds, "Dolan-Moré profile of method time"), width="stretch")
    if not pt.empty:
        with st.expander(f"every number the paper reports ({len(pt)} rows, not ours)"):
            st.dataframe(pt, hide_index=True)


def claims_page(data: Data, key: str) -> None:
    st.header("Claims")
    st.caption(
        "Each verdict comes from bench.claims.verdict on the results shown here: 95% stratified-bootstrap CI over seeds "
        "within instances (over whole repetitions where the claim's test says so); confirmed / contradicted only when the whole interval is on one side."
    )
    names = sorted(data.tasks)
    pick = st.multiselect("tasks", names, default=names, key="claims_tasks")
    frames = [_verdicts(data, key, t) for t in pick]
    frames = [f for f in frames if not f.empty]
    if not frames:
        st.info("The chosen tasks record no claims.")
        return
    v = pd.concat(frames, ignore_index=True)
    verdicts = sorted(v["verdict"].unique())
    want = st.multiselect("verdicts", verdicts, default=verdicts, key="claims_verdicts")
    v = v[v["verdict"].isin(want)]
    st.dataframe(v.drop(columns=["evidence"]), hide_index=True)
    sources = {t: data.claims_source[t] for t in sorted(set(v["task"])) if t in data.claims_source}
    if sources:
        st.caption(
            "Claims as recorded at publish time, in each task's newest bundle: "
            + "; ".join(f"{esc(t)}: {esc(b)}" for t, b in sources.items())
            + ". The repository's claims.toml may be newer; it reaches this page with the task's next bundle."
        )
    for r in v.to_dict("records"):
        with st.expander(f"{esc(r['task'])} / {esc(r['claim'])}: {esc(r['verdict'])}"):
            st.text(f"“{r.get('statement', '')}”\nsource: {r.get('source', '')}\npaper: {r.get('paper', '')}\ntest: {r.get('test', '')}")
            if r.get("note"):
                st.text(f"note: {r['note']}")
            est = r.get("estimate")
            if est is not None and est == est:
                st.text(f"ours: {est:.4g}  95% CI [{r['ci_low']:.4g}, {r['ci_high']:.4g}] over {r['instances']} instances, {r['runs']} runs")
            st.text(f"verdict: {r['verdict']} ({r.get('reason', '')})")
            ev = r.get("evidence") or []
            if ev:
                rows = data.task_records(r["task"])
                rows = rows[rows["key"].isin(ev)]
                cols = [c for c in ["key", "instance", "method", "rep", "status", f"metric.{data.tasks[r['task']]['meta']['primary']}", "wall_s", "bundle"] if c in rows]
                st.text(f"evidence: {len(rows)} runs")
                st.dataframe(rows[cols], hide_index=True)
            st.markdown(f"[open the task page]({_link('Task', task=r['task'])})")


def method_page(data: Data, key: str) -> None:
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
        st.warning(f"{name}'s runs come from {prov_df['hardware'].nunique()} machines; its times are not comparable across them.")
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


def submit_page(data: Data, key: str) -> None:
    st.header("Submit")
    st.markdown(SUBMIT_TEXT)


RENDER = {"Overview": overview, "Task": task_page, "Claims": claims_page, "Method": method_page, "Submit": submit_page}
__all__ += ["RENDER", "ROLES"]
