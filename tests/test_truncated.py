"""``bench.truncated``: a run the clock cut short is kept and verified, never counted as finished."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest

from bench import truncated
from bench.registry import get_task
from bench.report import FAILED_STATUSES, summary_table
from bench.runner import RunOptions, run_sweep
from bench.store import DONE_STATUSES, STATUSES, RunRecord, Store

CLOCK = str(Path(__file__).resolve().parent / "plugins" / "clock_methods.py")
ONE = ["uncorrelated-n20-s0"]


def _sweep(store: Path, methods: list[str]) -> dict[str, RunRecord]:
    run_sweep(RunOptions(task="knapsack", methods=methods, instances=ONE, store=store, progress=False, extra_paths=(CLOCK,)))
    return {r.method: r for r in Store(store).iter_records("knapsack")}


@pytest.fixture(scope="module")
def swept(tmp_path_factory) -> Path:
    """One store with a finished sweep of both clock methods, shared by the tests (a sweep starts a worker)."""
    store = tmp_path_factory.mktemp("truncated") / "runs"
    _sweep(store, ["clock-cut", "clock-cut-invalid"])
    return store


def test_a_truncated_run_keeps_its_verified_solution_and_reasons(swept):
    recs = {r.method: r for r in Store(swept).iter_records("knapsack")}
    cut = recs["clock-cut"]
    assert cut.status == "truncated"
    assert cut.reason == "cut short by the clock: stopped by the clock after 3 of 10 passes; and skipped the polish"
    assert cut.metrics and cut.solution_sha256 and cut.solution_file  # verified and kept, only not ranked
    # the verifier's verdict comes first: a broken solution is invalid, whatever the clock did
    assert recs["clock-cut-invalid"].status == "invalid"


def test_a_truncated_run_is_retried_on_resume_and_never_ranked(swept, tmp_path):
    store = tmp_path / "runs"
    shutil.copytree(swept, store)  # resumed in a copy: the other tests read the first attempt
    first = next(r for r in Store(swept).iter_records("knapsack") if r.method == "clock-cut")
    again = _sweep(store, ["clock-cut"])["clock-cut"]
    assert "truncated" not in DONE_STATUSES and "truncated" in STATUSES and "truncated" in FAILED_STATUSES
    assert again.attempt == first.attempt + 1 and again.previous_statuses == ["truncated"]
    frame = Store(store).frame("knapsack")
    table = summary_table(frame, get_task("knapsack").meta.model_dump(mode="json"))
    row = table[table["method"] == "clock-cut"].iloc[0]
    assert row["truncated"] == 1 and row["ok"] == 0
    assert pd.isna(row["mean"]), "a truncated run's metric must not enter the mean"


def test_old_records_still_load_and_truncated_is_a_no_op_outside_a_job(swept):
    truncated("outside a job this does nothing")
    rec = next(r for r in Store(swept).iter_records("knapsack") if r.method == "clock-cut")
    old = RunRecord.model_validate({**rec.model_dump(), "status": "timeout"})  # a schema-1 record of before
    assert old.schema_version == rec.schema_version == 1
