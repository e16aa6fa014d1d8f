"""The Streamlit leaderboard: ``python -m bench leaderboard`` or ``streamlit run leaderboard/app.py``.

It reads published bundles (``results/`` by default) or a local run store
(``--store DIR``) as data only: it never imports a task or a method module.
Every number on it comes from :mod:`bench.report` and :mod:`bench.claims`,
the same functions ``bench show`` and ``bench claims`` use.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import pandas as pd
import streamlit as st

from bench.bundle import load_bundles
from bench.claims import Claim, verdict
from bench.report import summary_table


def _args() -> argparse.Namespace:
    """``-- --results DIR`` after ``streamlit run``; ``BENCH_RESULTS`` otherwise."""
    p = argparse.ArgumentParser()
    p.add_argument("--results", default=os.environ.get("BENCH_RESULTS", "results"))
    p.add_argument("--store", default=None)
    return p.parse_known_args(sys.argv[1:])[0]


@st.cache_data(show_spinner=False)
def _load(results: str):
    b = load_bundles(results)
    return b.records, b.tasks, b.claims, b.paper_results, b.methods, b.warnings


def main() -> None:
    args = _args()
    st.set_page_config(page_title="bench leaderboard", layout="wide")
    st.title("bench: verified results for ICML 2025 methods")
    records, tasks, claims, paper, methods, warns = _load(args.results)
    for w in warns:
        st.warning(w)
    if records.empty or not tasks:
        st.info(
            f"No published results under `{Path(args.results).resolve()}` yet. "
            "Run `python -m bench run --task knapsack`, then `python -m bench publish --task knapsack`."
        )
        return
    name = st.sidebar.selectbox("task", sorted(tasks))
    meta = tasks[name]["meta"]
    df = records[(records["task"] == name) & (records["task_version"] == meta["version"])]
    tiers = sorted(df["tier"].unique())
    tier = st.sidebar.selectbox("tier", tiers, index=len(tiers) - 1)
    df = df[df["tier"] == tier]
    st.header(f"{name} (v{meta['version']})")
    st.text(meta["description"])
    table = summary_table(df, meta)
    st.subheader(f"{meta['primary']}: mean over seeds with 95% bootstrap CI")
    st.dataframe(table, hide_index=True)
    if paper.get(name):
        st.subheader("Numbers the paper reports (not ours)")
        st.dataframe(pd.DataFrame(paper[name]), hide_index=True)
    if claims.get(name):
        st.subheader("Claims")
        rows = []
        for c in claims[name]:
            claim = Claim.model_validate(c)
            v = verdict(claim, records[records["task_version"] == meta["version"]])
            rows.append({"claim": claim.id, "statement": claim.statement, "source": claim.source, **v.as_row()})
        st.dataframe(pd.DataFrame(rows), hide_index=True)


main()
