"""The Streamlit leaderboard: ``python -m bench leaderboard`` or ``streamlit run leaderboard/app.py``.

It reads published bundles (``results/`` by default, ``--results DIR`` or
``BENCH_RESULTS``) or a local run store (``--store DIR`` or ``BENCH_LB_STORE``)
as data only: it never imports a task or a method module. Every number on it
comes from :mod:`bench.report`, :mod:`bench.stats` and :mod:`bench.claims`,
the same functions ``bench show`` and ``bench claims`` use.

Pages (sidebar, or ``?view=Task&task=maxcut`` in the URL): Overview, Task,
Claims, Method, Submit.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import streamlit as st

# ``streamlit run leaderboard/app.py`` puts leaderboard/ on sys.path, not the repository root.
_ROOT = str(Path(__file__).resolve().parent.parent)
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)

from leaderboard.data import Data, load_results, load_store  # noqa: E402
from leaderboard.views import PAGES, RENDER, empty_state  # noqa: E402


def _args() -> argparse.Namespace:
    """``-- --results DIR`` / ``-- --store DIR`` after ``streamlit run``; environment otherwise."""
    p = argparse.ArgumentParser()
    p.add_argument("--results", default=os.environ.get("BENCH_RESULTS", "results"))
    p.add_argument("--store", default=os.environ.get("BENCH_LB_STORE") or None)
    return p.parse_known_args(sys.argv[1:])[0]


@st.cache_data(show_spinner="loading results…", max_entries=4)
def _load(results: str, store: str | None) -> Data:
    return load_store(store) if store else load_results(results)


def main() -> None:
    args = _args()
    st.set_page_config(page_title="bench leaderboard", layout="wide")
    st.title("bench: verified results for ICML 2025 methods")
    data = _load(args.results, args.store)
    key = f"{args.store or ''}|{args.results}"
    st.caption(f"Source: {data.source}")
    for w in data.warnings:
        st.warning(w)
    if data.superseded:
        st.caption(
            "Superseded bundles (kept as provenance; their records that a newer bundle reran are not counted): "
            + ", ".join(f"{old} (by {', '.join(new)})" for old, new in sorted(data.superseded.items()))
        )
    view = st.sidebar.radio("page", PAGES, index=PAGES.index(st.query_params.get("view", "Overview")) if st.query_params.get("view") in PAGES else 0, key="view")
    st.query_params["view"] = view
    if view == "Submit":
        RENDER[view](data, key)
        return
    if data.records.empty or not data.tasks:
        empty_state(data)
        return
    RENDER[view](data, key)


main()
