"""The intervals printed beside scores: over instances, and never a zero-width bracket (bench.stats.score_ci).

A deterministic method gives the same result on every seed, so an interval
over seeds is ``0.657 [0.657, 0.657]``. The leaderboard's task scores resample
instances instead (each with its mean over seeds); one instance whose runs all
agree gets no interval ("no CI").
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from bench.report import role_score, role_strata, summary_table
from bench.stats import bootstrap_ci, score_ci
from leaderboard.digest import _score

META = {
    "name": "synthetic",
    "version": "1",
    "primary": "value",
    "metrics": [{"name": "value", "direction": "max"}],
    "normalization": {"kind": "linear", "zero": 0.0, "one": 1.0},
}


def _records(scores: dict[str, dict[str, list[float]]]) -> pd.DataFrame:
    """Runs of ``{method: {instance: [value of seed 0, seed 1, ...]}}``, every one ``ok``."""
    rows = []
    for method, per_instance in scores.items():
        for inst, values in per_instance.items():
            for rep, v in enumerate(values):
                rows.append({"key": f"{method}-{inst}-{rep}", "task": "synthetic", "method": method, "params": "{}",
                             "kind": "baseline", "instance": inst, "tier": "smoke", "rep": rep, "master_seed": 0,
                             "status": "ok", "metric.value": v, "wall_s": 0.1, "peak_rss_mb": 10.0,
                             "method_version": "1", "budget": 1.0})  # fmt: skip
    return pd.DataFrame(rows)


# a deterministic method: three seeds, the same value each time, on instances that differ
DETERMINISTIC = {"det": {"a": [0.62] * 3, "b": [0.71] * 3, "c": [0.55] * 3, "d": [0.78] * 3, "e": [0.63] * 3}}


def test_a_deterministic_method_over_several_instances_gets_a_nonzero_interval_from_the_instances():
    df = _records(DETERMINISTIC)
    strata = role_strata(df, META, "det")
    assert np.ptp(strata) == 0  # every repetition's task score is the same: a seed bootstrap has nothing to resample
    assert bootstrap_ci(strata) == (pytest.approx(0.658), pytest.approx(0.658))  # the old, zero-width interval
    est, lo, hi = role_score(df, META, "det")
    assert est == pytest.approx(np.mean([0.62, 0.71, 0.55, 0.78, 0.63]))
    assert lo < est < hi and hi - lo > 0.05
    # the instance bootstrap by hand: 2,000 resamples of the 5 instance means, seed 0
    means = np.array([0.62, 0.71, 0.55, 0.78, 0.63])
    boots = means[np.random.default_rng(0).integers(0, 5, size=(2000, 5))].mean(axis=1)
    assert (lo, hi) == pytest.approx(tuple(np.quantile(boots, [0.025, 0.975])))
    text = _score((est, lo, hi))
    assert text.startswith("0.658 [") and "0.658, 0.658" not in text


def test_one_instance_with_a_deterministic_method_shows_no_interval():
    df = _records({"det": {"a": [0.657] * 4}})
    est, lo, hi = role_score(df, META, "det")
    assert est == pytest.approx(0.657) and math.isnan(lo) and math.isnan(hi)
    assert _score((est, lo, hi)) == "0.657 (no CI)"
    # the task page's per-instance row: no bracket either
    row = summary_table(df, META).iloc[0]
    assert row["mean"] == pytest.approx(0.657) and math.isnan(row["ci_low"]) and math.isnan(row["ci_high"])


def test_one_instance_with_a_noisy_method_resamples_its_seeds():
    vals = [0.5, 0.6, 0.7, 0.55, 0.65]
    est, lo, hi = score_ci([vals])
    assert est == pytest.approx(0.6) and (lo, hi) == bootstrap_ci(vals)
    assert lo < est < hi
    row = summary_table(_records({"noisy": {"a": vals}}), META).iloc[0]
    assert (row["ci_low"], row["ci_high"]) == (lo, hi)


def test_the_rule_follows_the_design_not_the_values():
    """Several instances: always the instance bootstrap, for a noisy method too (intervals of one kind, comparable)."""
    noisy = [[0.60, 0.64], [0.70, 0.72], [0.50, 0.60], [0.80, 0.76]]
    est, lo, hi = score_ci(noisy)
    means = np.array([np.mean(s) for s in noisy])
    boots = means[np.random.default_rng(0).integers(0, 4, size=(2000, 4))].mean(axis=1)
    assert est == pytest.approx(means.mean()) and (lo, hi) == pytest.approx(tuple(np.quantile(boots, [0.025, 0.975])))
    # instances that all score the same, one run, no run: nothing to resample, no interval
    for strata in ([[0.9, 0.9], [0.9, 0.9]], [[0.4]], [[0.4], [0.4]]):
        e, lo_, hi_ = score_ci(strata)
        assert math.isfinite(e) and math.isnan(lo_) and math.isnan(hi_), strata
    assert all(math.isnan(x) for x in score_ci([]))
    assert all(math.isnan(x) for x in score_ci([[0.1], []]))
