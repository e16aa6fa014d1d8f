"""Result tables shared by ``bench run``, ``bench show`` and the leaderboard.

Everything here works on a records frame (:func:`bench.store.records_frame`)
and the task's metadata as a plain dict, never on task or method code, so the
terminal and the web compute the same numbers.
"""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
import pandas as pd

from bench.stats import bootstrap_ci
from bench.store import STATUSES

__all__ = ["summary_table", "render_table", "method_label"]


def method_label(method: str, params_json: str, multi: bool) -> str:
    """``tabu`` or, when one method ran with several parameter sets, ``tabu[iters=10]``."""
    if not multi:
        return method
    params = json.loads(params_json) if params_json else {}
    inner = ",".join(f"{k}={v}" for k, v in sorted(params.items()))
    return f"{method}[{inner}]"


def _gap_pct(mean: float, ref: float, direction: str) -> float:
    if ref is None or not math.isfinite(ref) or ref == 0 or not math.isfinite(mean):
        return math.nan
    diff = ref - mean if direction == "max" else mean - ref
    return 100.0 * diff / abs(ref)


def summary_table(records: pd.DataFrame, meta: dict[str, Any], *, seed: int = 0) -> pd.DataFrame:
    """One row per method (and parameter set) and instance.

    Columns: ``method, kind, instance, runs, mean, ci_low, ci_high`` of the
    primary metric over valid seeds (95% percentile bootstrap), ``reference``
    and ``gap_pct`` to the task's gap reference, median ``wall_s`` and
    ``peak_rss_mb``, and one count column per status.
    """
    primary = meta["primary"]
    direction = next(m["direction"] for m in meta["metrics"] if m["name"] == primary)
    ref_name = meta.get("gap_reference")
    cols = ["method", "kind", "instance", "runs", "mean", "ci_low", "ci_high", "reference", "gap_pct", "wall_s", "peak_rss_mb", *STATUSES]
    if records.empty:
        return pd.DataFrame(columns=cols)
    df = records.copy()
    multi = df.groupby("method")["params"].nunique().to_dict()
    rows = []
    for (method, params, instance), g in df.groupby(["method", "params", "instance"], sort=True):
        ok = g[g["status"] == "ok"]
        col = f"metric.{primary}"
        vals = pd.to_numeric(ok[col], errors="coerce").to_numpy() if col in ok else np.array([])
        vals = vals[~np.isnan(vals)] if vals.size else vals
        lo, hi = bootstrap_ci(vals, seed=seed)
        mean = float(vals.mean()) if vals.size else math.nan
        ref_col = f"ref.{ref_name}" if ref_name else None
        ref = float(pd.to_numeric(g[ref_col], errors="coerce").dropna().iloc[0]) if ref_col and ref_col in g and g[ref_col].notna().any() else math.nan
        row = {
            "method": method_label(method, params, multi.get(method, 1) > 1),
            "kind": g["kind"].iloc[0],
            "instance": instance,
            "runs": int(vals.size),
            "mean": mean,
            "ci_low": lo,
            "ci_high": hi,
            "reference": ref,
            "gap_pct": _gap_pct(mean, ref, direction),
            "wall_s": float(pd.to_numeric(ok["wall_s"], errors="coerce").median()) if len(ok) else math.nan,
            "peak_rss_mb": float(pd.to_numeric(ok["peak_rss_mb"], errors="coerce").median()) if len(ok) else math.nan,
        }
        counts = g["status"].value_counts()
        for s in STATUSES:
            row[s] = int(counts.get(s, 0))
        rows.append(row)
    out = pd.DataFrame(rows, columns=cols)
    kind_order = {"method": 0, "baseline": 1}
    return out.sort_values(["instance", "kind", "method"], key=lambda s: s.map(kind_order) if s.name == "kind" else s).reset_index(drop=True)


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
    for c in ("instance", "method", "runs", primary, "95% CI", "ref", "gap %", "time s", "mem MB", "status"):
        t.add_column(c, justify="left" if c in ("instance", "method", "status") else "right", no_wrap=c in ("instance", "method"))
    for r in table.itertuples(index=False):
        status = " ".join(f"{s}:{getattr(r, s)}" for s in STATUSES if getattr(r, s))
        ci = f"[{_fmt(r.ci_low)}, {_fmt(r.ci_high)}]" if not math.isnan(r.ci_low) else "–"
        name = f"[bold cyan]{escape(r.method)}[/]" if r.kind == "method" else escape(r.method)
        t.add_row(escape(str(r.instance)), name, str(r.runs), _fmt(r.mean, 6), ci, _fmt(r.reference, 6), _fmt(r.gap_pct, 3), _fmt(r.wall_s, 3), _fmt(r.peak_rss_mb, 3), status)
    console.print(t)
    console.print("[dim]bold cyan = the paper's method; plain = baseline. Times are the runner's measurements.[/]")
