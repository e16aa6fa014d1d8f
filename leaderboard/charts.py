"""Altair charts of the leaderboard. Each takes a table from :mod:`bench.report`.

Vega renders every label as text (SVG/canvas), so names from bundles never
become markup.
"""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd

from bench.stats import RankingResult

__all__ = ["role_chart", "cd_diagram", "profile_chart", "pareto_chart", "anytime_chart", "KIND_COLORS"]

#: Methods and baselines differ in colour and shape everywhere.
KIND_COLORS = alt.Scale(domain=["method", "baseline"], range=["#d62728", "#1f77b4"])
KIND_SHAPES = alt.Scale(domain=["method", "baseline"], range=["diamond", "circle"])


def role_chart(agg: pd.DataFrame) -> alt.Chart:
    """IQM of normalised scores per role with 95% stratified-bootstrap CIs (rliable style)."""
    df = agg.dropna(subset=["iqm"])
    base = alt.Chart(df).encode(y=alt.Y("role:N", sort=list(agg["role"]), title=None))
    bars = base.mark_rule(strokeWidth=6, opacity=0.5).encode(
        x=alt.X("ci_low:Q", title="IQM of normalised score (95% CI)", scale=alt.Scale(zero=False)), x2="ci_high:Q"
    )
    pts = base.mark_tick(thickness=3, size=22, color="black").encode(
        x="iqm:Q", tooltip=["role", alt.Tooltip("iqm:Q", format=".3f"), alt.Tooltip("ci_low:Q", format=".3f"), alt.Tooltip("ci_high:Q", format=".3f"), "tasks", "runs"]
    )
    return (bars + pts).properties(height=alt.Step(44))


def cd_diagram(res: RankingResult, kinds: dict[str, str]) -> alt.LayerChart:
    """Critical-difference diagram: mean ranks on an axis; a bar joins methods not significantly different.

    Significance is the Holm-corrected pairwise Wilcoxon signed-rank test
    (after a Friedman test), not Nemenyi's critical difference.
    """
    n = len(res.methods)
    pts = pd.DataFrame({"method": res.methods, "rank": res.mean_ranks, "kind": [kinds.get(m, "baseline") for m in res.methods]})
    pts["y"] = -np.arange(1, n + 1, dtype=float)
    rank_scale = alt.Scale(domain=[1, max(n, 2)], reverse=False)
    stems = alt.Chart(pts).mark_rule(color="gray").encode(x=alt.X("rank:Q", scale=rank_scale, title="mean rank (1 = best)"), y=alt.Y("y:Q", axis=None), y2=alt.datum(0))
    dots = alt.Chart(pts).mark_point(size=90, filled=True).encode(
        x=alt.X("rank:Q", scale=rank_scale),
        y="y:Q",
        color=alt.Color("kind:N", scale=KIND_COLORS),
        shape=alt.Shape("kind:N", scale=KIND_SHAPES),
        tooltip=["method", alt.Tooltip("rank:Q", format=".2f"), "kind"],
    )
    labels = alt.Chart(pts).mark_text(align="left", dx=8, fontSize=12).encode(x=alt.X("rank:Q", scale=rank_scale), y="y:Q", text="method:N")
    bars = pd.DataFrame(
        [{"lo": float(min(res.mean_ranks[i] for i in c)), "hi": float(max(res.mean_ranks[i] for i in c)), "y": 0.35 + 0.3 * k} for k, c in enumerate(res.cliques)],
        columns=["lo", "hi", "y"],
    )
    cl = alt.Chart(bars).mark_rule(strokeWidth=5, color="black").encode(x=alt.X("lo:Q", scale=rank_scale), x2="hi:Q", y="y:Q")
    return (stems + dots + labels + cl).properties(height=30 * n + 60)


def profile_chart(prof: pd.DataFrame, kinds: dict[str, str], title: str) -> alt.Chart:
    """Dolan-Moré profiles as step lines: fraction of instances within a factor tau of the best."""
    df = prof.assign(kind=prof["label"].map(lambda m: kinds.get(m, "baseline")))
    return (
        alt.Chart(df, title=title)
        .mark_line(interpolate="step-after")
        .encode(
            x=alt.X("tau:Q", scale=alt.Scale(type="log"), title="tau (ratio to the best on the instance)"),
            y=alt.Y("fraction:Q", scale=alt.Scale(domain=[0, 1]), title="fraction of instances"),
            color=alt.Color("label:N", title="method"),
            strokeDash=alt.StrokeDash("kind:N", scale=alt.Scale(domain=["method", "baseline"], range=[[1, 0], [5, 3]])),
            tooltip=["label", "kind", alt.Tooltip("tau:Q", format=".3g"), alt.Tooltip("fraction:Q", format=".2f")],
        )
        .properties(height=300)
    )


def pareto_chart(points: pd.DataFrame) -> alt.LayerChart:
    """Median time against mean normalised score; the Pareto front is joined by a line."""
    df = points.dropna(subset=["wall_s", "score"])
    base = alt.Chart(df).encode(
        x=alt.X("wall_s:Q", scale=alt.Scale(type="log"), title="median method time, s (log)"),
        y=alt.Y("score:Q", title="mean normalised score"),
    )
    dots = base.mark_point(size=120, filled=True).encode(
        color=alt.Color("kind:N", scale=KIND_COLORS),
        shape=alt.Shape("kind:N", scale=KIND_SHAPES),
        tooltip=["label", "kind", alt.Tooltip("wall_s:Q", format=".3g"), alt.Tooltip("score:Q", format=".3f"), "hardware", "pareto"],
    )
    text = base.mark_text(align="left", dx=9, dy=-6).encode(text="label:N")
    front = alt.Chart(df[df["pareto"]].sort_values("wall_s")).mark_line(color="gray", strokeDash=[4, 3]).encode(x="wall_s:Q", y="score:Q", order="wall_s:Q")
    return (front + dots + text).properties(height=320)


def anytime_chart(trace: pd.DataFrame, direction: str, metric: str) -> alt.Chart:
    """Quality against time from verified checkpoints (one line per run)."""
    df = trace.assign(run=trace["label"].astype(str) + " / " + trace["instance"].astype(str) + " / seed " + trace["rep"].astype(str))
    return (
        alt.Chart(df)
        .mark_line(point=True, interpolate="step-after")
        .encode(
            x=alt.X("t:Q", title="method time, s"),
            y=alt.Y("value:Q", title=f"{metric} ({'higher' if direction == 'max' else 'lower'} is better)", scale=alt.Scale(zero=False)),
            color=alt.Color("label:N", title="method"),
            detail="run:N",
            tooltip=["run", alt.Tooltip("t:Q", format=".3g"), alt.Tooltip("value:Q", format=".6g")],
        )
        .properties(height=300)
    )
