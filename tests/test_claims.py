"""bench.claims: the verdict on a paper's claim, from hand-built records frames."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from pydantic import ValidationError

from bench.claims import RUNNER_METRICS, VERDICTS, Claim, Comparison, Verdict, verdict

N_BOOT = 1000  # plenty for these tests, and fast
_counter = itertools.count()


def row(method, instance, rep, value=None, *, metric="score", task="maxcut", tier="standard",
        status="ok", wall_s=1.0, kind="method"):
    r = {
        "key": f"{next(_counter):064x}",
        "task": task,
        "task_version": "1",
        "tier": tier,
        "instance": instance,
        "method": method,
        "kind": kind,
        "rep": rep,
        "status": status,
        "wall_s": wall_s,
    }
    if value is not None:
        r[f"metric.{metric}"] = value
    return r


def frame(rows) -> pd.DataFrame:
    return pd.DataFrame(rows)


def runs(method, values_by_instance, **kw):
    """Rows for ``method``: ``{instance: [value of rep 0, rep 1, ...]}``."""
    return [row(method, inst, rep, v, **kw) for inst, vals in values_by_instance.items() for rep, v in enumerate(vals)]


def threshold(op=">=", value=0.9, metric="score", method="ros", **claim_kw) -> Claim:
    cmp_ = Comparison(kind="threshold", method=method, metric=metric, op=op, value=value)
    return make_claim(cmp_, **claim_kw)


def versus(op=">=", margin=0.0, metric="score", method="ros", baseline="greedy", **claim_kw) -> Claim:
    cmp_ = Comparison(kind="versus", method=method, baseline=baseline, metric=metric, op=op, margin=margin)
    return make_claim(cmp_, **claim_kw)


def make_claim(cmp_: Comparison, **kw) -> Claim:
    base = dict(id="c1", task="maxcut", paper="P", statement="S", source="Table 1", comparison=cmp_)
    base.update(kw)
    return Claim(**base)


def judge(claim: Claim, df: pd.DataFrame, **kw) -> Verdict:
    v = verdict(claim, df, n_boot=N_BOOT, **kw)
    assert v.verdict in VERDICTS
    assert v.claim == claim.id
    return v


GOOD = {"G1": [0.95, 0.96, 0.97], "G2": [0.94, 0.95, 0.96]}  # mean of means 0.955


# ----------------------------------------------------------------------------- threshold


def test_threshold_confirmed_when_ci_entirely_above():
    df = frame(runs("ros", GOOD))
    v = judge(threshold(">=", 0.9), df)
    assert v.verdict == "confirmed"
    assert v.estimate == pytest.approx(0.955)
    # each instance's resampled mean stays within its data range
    assert 0.945 - 1e-12 <= v.ci_low <= 0.955 <= v.ci_high <= 0.965 + 1e-12
    assert v.ci_low >= 0.9
    assert (v.n_instances, v.n_runs) == (2, 6)
    assert sorted(v.evidence) == sorted(df["key"])
    assert "95% CI" in v.reason and ">= 0.9" in v.reason


def test_threshold_contradicted_when_ci_entirely_below():
    v = judge(threshold(">=", 0.99), frame(runs("ros", GOOD)))
    assert v.verdict == "contradicted"
    assert v.ci_high < 0.99
    assert "wrong side of 0.99" in v.reason


def test_threshold_inconclusive_when_ci_contains_threshold():
    v = judge(threshold(">=", 0.955), frame(runs("ros", GOOD)))
    assert v.verdict == "inconclusive"
    assert v.ci_low < 0.955 < v.ci_high
    assert "contains 0.955" in v.reason


@pytest.mark.parametrize(
    ("op", "value", "expected"),
    [
        (">=", 0.0, "confirmed"),
        (">", 0.0, "confirmed"),
        ("<=", 1.0, "confirmed"),
        ("<", 1.0, "confirmed"),
        (">=", 1.0, "contradicted"),
        (">", 1.0, "contradicted"),
        ("<=", 0.0, "contradicted"),
        ("<", 0.0, "contradicted"),
    ],
)
def test_threshold_ops_on_a_known_interval(op, value, expected):
    v = judge(threshold(op, value), frame(runs("ros", {"G1": [0.2, 0.8, 0.5], "G2": [0.4, 0.6]})))
    assert v.verdict == expected


@pytest.mark.parametrize(
    ("op", "expected"),
    [(">=", "confirmed"), (">", "contradicted"), ("<=", "confirmed"), ("<", "contradicted")],
)
def test_zero_width_interval_on_the_threshold(op, expected):
    # Every run gives exactly 0.5: CI is [0.5, 0.5]. ">= 0.5" holds, "> 0.5" does not.
    v = judge(threshold(op, 0.5), frame(runs("ros", {"G1": [0.5, 0.5], "G2": [0.5, 0.5, 0.5]})))
    assert (v.ci_low, v.ci_high) == (0.5, 0.5)
    assert v.verdict == expected


def test_le_claim_on_a_runner_metric():
    assert "wall_s" in RUNNER_METRICS
    rows = [row("ros", inst, rep, 0.5, wall_s=w) for inst in ("G1", "G2") for rep, w in enumerate([1.0, 1.1, 1.2])]
    df = frame(rows)
    confirmed = judge(threshold("<=", 2.0, metric="wall_s"), df)
    assert confirmed.verdict == "confirmed"
    assert confirmed.estimate == pytest.approx(1.1)
    assert judge(threshold("<=", 0.5, metric="wall_s"), df).verdict == "contradicted"
    assert judge(threshold("<=", 1.1, metric="wall_s"), df).verdict == "inconclusive"


def test_runner_metric_is_not_read_from_a_metric_column():
    # A task metric called "wall_s" must not shadow the runner's measurement.
    rows = [row("ros", "G1", rep, 100.0, metric="wall_s", wall_s=1.0) for rep in range(3)]
    v = judge(threshold("<=", 2.0, metric="wall_s"), frame(rows))
    assert v.verdict == "confirmed" and v.estimate == 1.0


def test_single_seed_per_instance_is_inconclusive():
    df = frame(runs("ros", {"G1": [0.95, 0.96], "G2": [0.99]}))
    v = judge(threshold(">=", 0.5), df)
    assert v.verdict == "inconclusive"
    assert "seeds" in v.reason
    assert math.isnan(v.ci_low) and math.isnan(v.ci_high)
    assert v.estimate == pytest.approx((0.955 + 0.99) / 2)


def test_missing_metric_is_inconclusive():
    v = judge(threshold(">=", 0.5, metric="ratio"), frame(runs("ros", GOOD)))
    assert v.verdict == "inconclusive"
    assert "'ratio'" in v.reason and "missing" in v.reason


# ----------------------------------------------------------------------------- not testable / failures


def test_empty_records_are_not_testable():
    assert judge(threshold(), pd.DataFrame()).verdict == "not testable here"


def test_missing_method_is_not_testable():
    v = judge(threshold(method="ros"), frame(runs("tabu", GOOD)))
    assert v.verdict == "not testable here"
    assert "'ros'" in v.reason and "standard" in v.reason


def test_method_not_run_on_a_listed_instance_is_not_testable():
    v = judge(threshold(instances=["G1", "G2", "G3"]), frame(runs("ros", GOOD)))
    assert v.verdict == "not testable here"
    assert "G3" in v.reason and "G1" not in v.reason


def test_listed_instances_restrict_the_records():
    df = frame(runs("ros", {**GOOD, "G9": [0.0, 0.0]}))
    assert judge(threshold(">=", 0.9), df).verdict == "contradicted"  # G9 drags the mean down
    v = judge(threshold(">=", 0.9, instances=["G1", "G2"]), df)
    assert v.verdict == "confirmed" and v.n_instances == 2


def test_instance_with_only_failed_runs_is_inconclusive_naming_it():
    rows = runs("ros", GOOD) + [row("ros", "G3", rep, None, status="timeout") for rep in range(3)]
    v = judge(threshold(">=", 0.9), frame(rows))
    assert v.verdict == "inconclusive"
    assert "G3" in v.reason and "G1" not in v.reason


def test_failed_runs_do_not_enter_the_estimate():
    rows = runs("ros", GOOD) + [
        row("ros", "G1", 3, -100.0, status="invalid"),
        row("ros", "G2", 3, -100.0, status="error"),
    ]
    v = judge(threshold(">=", 0.9), frame(rows))
    assert v.verdict == "confirmed"
    assert v.estimate == pytest.approx(0.955)
    assert v.n_runs == 6


def test_not_testable_field_wins():
    reason = "needs 8 A100 GPUs"
    v = judge(threshold(">=", 0.9, not_testable=reason), frame(runs("ros", GOOD)))
    assert v.verdict == "not testable here"
    assert v.reason == reason


def test_other_tiers_and_tasks_are_ignored():
    noise = (
        runs("ros", {"G1": [0.0, 0.1], "G2": [0.0, 0.1]}, tier="smoke")
        + runs("ros", {"G1": [0.0, 0.1], "G2": [0.0, 0.1]}, task="knapsack")
        + runs("ros", {"H7": [0.0, 0.1]}, tier="full")
    )
    df = frame(runs("ros", GOOD) + noise)
    v = judge(threshold(">=", 0.9), df)
    assert v.verdict == "confirmed"
    assert v.estimate == pytest.approx(0.955)
    assert (v.n_instances, v.n_runs) == (2, 6)


def test_results_only_in_another_tier_are_not_testable():
    df = frame(runs("ros", GOOD, tier="smoke"))
    v = judge(threshold(">=", 0.9, tier="standard"), df)
    assert v.verdict == "not testable here"
    assert judge(threshold(">=", 0.9, tier="smoke"), df).verdict == "confirmed"


def test_verdict_is_reproducible_for_a_seed():
    df = frame(runs("ros", {"G1": [0.1, 0.5, 0.9, 0.3], "G2": [0.2, 0.7, 0.4]}))
    a = judge(threshold(">=", 0.0), df, seed=3)
    b = judge(threshold(">=", 0.0), df, seed=3)
    assert (a.ci_low, a.ci_high) == (b.ci_low, b.ci_high)


def test_interval_does_not_depend_on_record_order_or_unpaired_records():
    """The bootstrap sees the pairs in (instance, seed) order: shuffling the records, or adding a
    baseline run no method run pairs with, leaves the interval as it was."""
    base = {"G1": [0.3, 0.9, 0.1, 0.6, 0.4], "G2": [0.5, 0.2, 0.8]}
    rows = runs("greedy", base, kind="baseline") + runs("ros", {k: [v + 0.1 * (i % 3) for i, v in enumerate(vs)] for k, vs in base.items()})
    ref = judge(versus(">=", 0.0), frame(rows), seed=1)
    for shuffle in range(3):
        df = frame(rows).sample(frac=1.0, random_state=shuffle)
        assert (judge(versus(">=", 0.0), df, seed=1).ci_low, judge(versus(">=", 0.0), df, seed=1).ci_high) == (ref.ci_low, ref.ci_high)
    extra = frame(rows + [row("greedy", "G1", 9, 0.5, kind="baseline")])  # unpaired: ros has no rep 9
    got = judge(versus(">=", 0.0), extra, seed=1)
    assert (got.estimate, got.ci_low, got.ci_high) == (ref.estimate, ref.ci_low, ref.ci_high)
    th = judge(threshold(">=", 0.0, method="ros"), frame(rows), seed=1)
    shuffled = judge(threshold(">=", 0.0, method="ros"), frame(rows).sample(frac=1.0, random_state=5), seed=1)
    assert (shuffled.ci_low, shuffled.ci_high) == (th.ci_low, th.ci_high)


# ----------------------------------------------------------------------------- versus (paired)


def test_versus_pairs_on_instance_and_rep():
    # Common random numbers: run-to-run spread is huge (0..400), but on every
    # (instance, rep) ros beats greedy by exactly 1. Unpaired, the two means (201 vs
    # 200) would be indistinguishable; paired, the difference is exactly 1.
    base = {"G1": [0.0, 100.0, 200.0, 300.0, 400.0], "G2": [50.0, 250.0, 150.0]}
    rows = runs("greedy", base, kind="baseline") + runs("ros", {k: [v + 1 for v in vs] for k, vs in base.items()})
    df = frame(rows).sample(frac=1.0, random_state=0)  # row order must not matter
    v = judge(versus(">=", 0.0), df)
    assert v.verdict == "confirmed"
    assert (v.estimate, v.ci_low, v.ci_high) == (1.0, 1.0, 1.0)
    assert (v.n_instances, v.n_runs) == (2, 8)
    assert len(v.evidence) == 16
    # and ros is not better by 2
    assert judge(versus(">=", 2.0), df).verdict == "contradicted"


def test_versus_leaves_out_pairs_both_stopped_by_a_cap():
    """Both methods at a 60 s cap: equal times that say nothing; the rest is judged."""

    def claim():
        cmp_ = Comparison(kind="versus", method="ros", baseline="greedy", metric="score", op="<", censored_at=60.0)
        return make_claim(cmp_)

    capped = {"G1": [60.01, 60.02, 60.01], "G2": [60.03, 60.01, 60.02]}
    df = frame(runs("ros", {"G1": [60.02, 60.01, 60.02], "G2": [60.01, 60.02, 60.01]}) + runs("greedy", capped, kind="baseline"))
    v = judge(claim(), df)
    assert v.verdict == "not testable here" and "cap" in v.reason
    # without the cap, 10 ms of jitter would have decided it
    assert judge(versus("<", 0.0), df).verdict != "not testable here"
    # G2 uncapped for ros: judged on G2 alone, and the reason says what was left out
    df = frame(runs("ros", {"G1": [60.02, 60.01, 60.02], "G2": [40.0, 41.0, 42.0]}) + runs("greedy", capped, kind="baseline"))
    v = judge(claim(), df)
    assert v.verdict == "confirmed" and v.n_instances == 1 and v.n_runs == 3
    assert "3 pairs with both at the 60 cap left out (no pair left on G1)" in v.reason
    with pytest.raises(ValidationError, match="censored_at"):
        Comparison(kind="threshold", method="ros", metric="score", op="<", value=1.0, censored_at=60.0)


def test_versus_uses_only_common_reps_where_unpaired_means_mislead():
    # ros has an extra rep 2 with a huge value that greedy has no pair for. The unpaired
    # means say ros is better (36.67 vs 10.5); on the common reps ros is worse by 0.5.
    rows = (
        runs("ros", {"G1": [10.0, 10.0, 90.0]})
        + runs("greedy", {"G1": [10.5, 10.5]}, kind="baseline")
    )
    df = frame(rows)
    unpaired = df[df.method == "ros"]["metric.score"].mean() - df[df.method == "greedy"]["metric.score"].mean()
    assert unpaired > 0
    v = judge(versus(">=", 0.0), df)
    assert v.verdict == "contradicted"
    assert v.estimate == -0.5 and v.n_runs == 2


def test_versus_with_noisy_paired_differences():
    greedy = {"G1": [1.0, 5.0, 3.0, 7.0], "G2": [10.0, 12.0, 11.0]}
    diffs = {"G1": [0.4, 0.6, 0.5, 0.5], "G2": [0.3, 0.7, 0.5]}  # mean diff 0.5 on each
    ros = {k: [g + d for g, d in zip(greedy[k], diffs[k], strict=True)] for k in greedy}
    df = frame(runs("greedy", greedy, kind="baseline") + runs("ros", ros))
    v = judge(versus(">=", 0.0), df)
    assert v.verdict == "confirmed"
    assert v.estimate == pytest.approx(0.5)
    assert 0.3 <= v.ci_low < 0.5 < v.ci_high <= 0.7
    # margin: better by at least 0.2 holds, by 1.0 does not, by 0.5 is undecided
    assert judge(versus(">=", 0.2), df).verdict == "confirmed"
    assert judge(versus(">=", 1.0), df).verdict == "contradicted"
    assert judge(versus(">=", 0.5), df).verdict == "inconclusive"
    assert "contains 0.5" in judge(versus(">=", 0.5), df).reason


def test_versus_lower_is_better_on_wall_time():
    rows = []
    for inst, reps in {"G1": [1.0, 2.0, 3.0], "G2": [4.0, 5.0]}.items():
        for rep, w in enumerate(reps):
            rows.append(row("greedy", inst, rep, 0.0, wall_s=w, kind="baseline"))
            rows.append(row("ros", inst, rep, 0.0, wall_s=w / 2))  # always twice as fast
    df = frame(rows)
    assert judge(versus("<=", 0.0, metric="wall_s"), df).verdict == "confirmed"
    assert judge(versus(">=", 0.0, metric="wall_s"), df).verdict == "contradicted"


def test_versus_missing_baseline_is_not_testable():
    v = judge(versus(), frame(runs("ros", GOOD)))
    assert v.verdict == "not testable here"
    assert "'greedy'" in v.reason


def test_versus_baseline_not_run_on_an_instance_is_not_testable():
    rows = runs("ros", GOOD) + runs("greedy", {"G1": [0.9, 0.9]}, kind="baseline")
    v = judge(versus(), frame(rows))
    assert v.verdict == "not testable here"
    assert "'greedy'" in v.reason and "G2" in v.reason


def test_versus_baseline_failed_everywhere_on_an_instance_is_inconclusive():
    rows = (
        runs("ros", GOOD)
        + runs("greedy", {"G1": [0.9, 0.9, 0.9]}, kind="baseline")
        + [row("greedy", "G2", rep, None, status="timeout", kind="baseline") for rep in range(3)]
    )
    v = judge(versus(), frame(rows))
    assert v.verdict == "inconclusive"
    assert "G2" in v.reason


def test_versus_without_common_seeds_is_inconclusive():
    rows = runs("ros", {"G1": [1.0, 1.0]}) + [row("greedy", "G1", rep, 0.0, kind="baseline") for rep in (5, 6)]
    v = judge(versus(), frame(rows))
    assert v.verdict == "inconclusive"
    assert "same seed" in v.reason


# ----------------------------------------------------------------------------- models


def test_threshold_without_value_is_rejected():
    with pytest.raises(ValidationError, match="needs `value`"):
        Comparison(kind="threshold", method="m", metric="x", op=">=")


def test_versus_without_baseline_is_rejected():
    with pytest.raises(ValidationError, match="needs `baseline`"):
        Comparison(kind="versus", method="m", metric="x", op=">=")
    with pytest.raises(ValidationError, match="needs `baseline`"):
        Comparison(kind="versus", method="m", metric="x", op=">=", baseline="")


@pytest.mark.parametrize(
    "extra",
    [{"kind": "ratio"}, {"op": "=="}, {"threshold": 0.5}],
)
def test_comparison_rejects_bad_or_unknown_fields(extra):
    fields = dict(kind="threshold", method="m", metric="x", op=">=", value=1.0)
    fields.update(extra)
    with pytest.raises(ValidationError):
        Comparison(**fields)


def test_claim_rejects_unknown_fields_and_tiers():
    cmp_ = Comparison(kind="threshold", method="m", metric="x", op=">=", value=1.0)
    with pytest.raises(ValidationError, match="extra"):
        make_claim(cmp_, verdict="confirmed")  # verdicts are computed, never written
    with pytest.raises(ValidationError):
        make_claim(cmp_, tier="huge")
    assert make_claim(cmp_).tier == "standard"


def test_claim_and_comparison_are_frozen():
    c = threshold()
    with pytest.raises(ValidationError):
        c.id = "other"  # type: ignore[misc]
    with pytest.raises(ValidationError):
        c.comparison.value = 0.0  # type: ignore[misc]


def test_describe():
    assert threshold(">=", 0.93, metric="ratio").comparison.describe() == "mean ratio of ros >= 0.93"
    assert versus("<=", 0.5).comparison.describe() == "score: ros <= greedy + 0.5 (paired)"
    assert versus(">=", 0.0).comparison.describe() == "score: ros >= greedy (paired)"


def test_verdict_as_row():
    v = judge(threshold(">=", 0.9), frame(runs("ros", GOOD)))
    r = v.as_row()
    assert set(r) == {"claim", "verdict", "estimate", "ci_low", "ci_high", "instances", "runs", "reason"}
    assert (r["claim"], r["verdict"], r["instances"], r["runs"]) == ("c1", "confirmed", 2, 6)


def test_vocabulary():
    assert VERDICTS == ("confirmed", "contradicted", "inconclusive", "not testable here")


# -- which runs a claim is judged on: the registered configuration, paired by job seed ------------------

DEFAULT = '{"keep_flaws": []}'
GRID = '{"keep_flaws": ["all"]}'
REGISTERED = {"ros": {"params": {"keep_flaws": []}}, "greedy": {"params": {}}}


def with_params(rows, params, seed_base=100):
    """``rows`` with a ``params`` JSON and a job ``seed`` per repetition (as the runner derives them)."""
    return [{**r, "params": params, "seed": seed_base + r["rep"]} for r in rows]


def test_grid_runs_of_other_parameters_do_not_enter_a_claim():
    good = with_params(runs("ros", GOOD), DEFAULT)
    # an ablation grid of the same method on the same instances and seeds, far worse
    grid = with_params(runs("ros", {"G1": [0.1, 0.1, 0.1], "G2": [0.1, 0.1, 0.1]}), GRID)
    base = with_params(runs("greedy", {"G1": [0.5, 0.5, 0.5], "G2": [0.5, 0.5, 0.5]}), "{}")
    df = frame(grid + good + base)  # the grid first: "first duplicate" would have picked it
    v = judge(versus(">=", 0.0), df, methods=REGISTERED)
    assert v.verdict == "confirmed" and v.estimate == pytest.approx(0.455)
    assert v.n_runs == 6 and "judged on" not in v.reason
    t = judge(threshold(">=", 0.9), df, methods=REGISTERED)
    assert t.verdict == "confirmed" and t.estimate == pytest.approx(0.955)


def test_without_metadata_the_most_run_parameter_set_counts_and_the_reason_says_so():
    good = with_params(runs("ros", {"G1": [0.95, 0.96, 0.97, 0.95], "G2": [0.94, 0.95, 0.96, 0.95]}), DEFAULT)
    grid = with_params(runs("ros", {"G1": [0.1], "G2": [0.1]}), GRID)
    v = judge(threshold(">=", 0.9), frame(grid + good))
    assert v.verdict == "confirmed" and v.n_runs == 8
    assert "most-run of 2 parameter sets" in v.reason


def test_no_run_with_the_registered_parameters_is_not_testable():
    df = frame(with_params(runs("ros", GOOD), GRID) + with_params(runs("ros", {"G1": [0.5], "G2": [0.5]}), '{"keep_flaws": ["score"]}'))
    v = judge(threshold(">=", 0.9), df, methods=REGISTERED)
    assert v.verdict == "not testable here" and "registered version and parameters" in v.reason


def test_versus_pairs_runs_with_the_same_job_seed_not_the_same_repetition():
    # the method ran under two master seeds (job seeds 100.. and 200..); the baseline only under the second
    ours_a = with_params(runs("ros", {"G1": [0.0, 0.0], "G2": [0.0, 0.0]}), DEFAULT, seed_base=100)
    ours_b = with_params(runs("ros", {"G1": [0.9, 0.8], "G2": [0.9, 0.8]}), DEFAULT, seed_base=200)
    base = with_params(runs("greedy", {"G1": [0.5, 0.5], "G2": [0.5, 0.5]}), "{}", seed_base=200)
    v = judge(versus(">=", 0.0), frame(ours_a + ours_b + base), methods=REGISTERED)
    assert v.n_runs == 4 and v.estimate == pytest.approx(0.35)
    assert v.verdict == "confirmed"


def test_a_rerun_of_one_configuration_and_seed_counts_once_the_last_finished():
    old = [{**r, "finished_at": 1.0} for r in with_params(runs("ros", {"G1": [0.0, 0.0], "G2": [0.0, 0.0]}), DEFAULT)]
    new = [{**r, "finished_at": 2.0} for r in with_params(runs("ros", {"G1": [0.95, 0.96], "G2": [0.94, 0.95]}), DEFAULT)]
    v = judge(threshold(">=", 0.9), frame(new + old), methods=REGISTERED)
    assert v.verdict == "confirmed" and v.n_runs == 4 and v.estimate == pytest.approx(0.95)


def test_is_registered_fills_parameters_added_later_and_checks_the_version():
    from bench.claims import is_registered

    meta = {"version": "2", "params": {"steps": None, "max_gib": 1.0}, "tier_params": {"full": {"steps": 100}}}
    assert is_registered('{"steps": null, "max_gib": 1.0}', "2", meta, "standard")
    assert is_registered('{"steps": null}', "2", meta, "standard")  # recorded before max_gib existed
    assert not is_registered('{"steps": null, "max_gib": 8.0}', "2", meta, "standard")  # a --param override
    assert not is_registered('{"steps": null, "knob": 1}', "2", meta, "standard")  # a parameter it does not have
    assert not is_registered('{"steps": null}', "1", meta, "standard")  # an older version
    assert is_registered('{"steps": 100, "max_gib": 1.0}', "2", meta, "full")  # tier_params apply per tier
    assert not is_registered('{"steps": null, "max_gib": 1.0}', "2", meta, "full")


def test_registered_records_keeps_one_configuration_per_method_and_tier():
    from bench.claims import registered_records

    good = with_params(runs("ros", GOOD), DEFAULT)
    grid = with_params(runs("ros", {"G1": [0.1], "G2": [0.1]}), GRID)
    base = with_params(runs("greedy", {"G1": [0.5], "G2": [0.5]}), "{}")
    df = frame(good + grid + base)
    kept = registered_records(df, REGISTERED)
    assert set(kept["params"]) == {DEFAULT, "{}"} and len(kept) == 8
    assert registered_records(df, None) is df  # no metadata: a local grid stays rankable point by point


def test_a_single_parameter_set_that_is_not_the_registered_one_is_not_judged():
    # only an ablation point ran on the claim's instances: it is not the method as registered
    df = frame(with_params(runs("ros", GOOD), GRID))
    v = judge(threshold(">=", 0.9), df, methods=REGISTERED)
    assert v.verdict == "not testable here" and "1 other set)" in v.reason
    assert judge(threshold(">=", 0.9), df).verdict == "confirmed"  # without metadata it is all there is


# ----------------------------------------------------------------------------- resample = "repetitions"


def shared_draw_rows(method="ros", n_reps=6, n_inst=10, master_seed=0, base=0.9, kind="method", seed=0):
    """Rows whose repetition shifts every instance alike, as one pre-trained network per repetition does."""
    import numpy as np

    rng = np.random.default_rng(seed)
    shift = rng.normal(0.0, 0.02, n_reps)
    return [
        {**row(method, f"G{i}", r, base + shift[r] + rng.normal(0.0, 0.001), kind=kind), "master_seed": master_seed,
         "seed": 1000 * master_seed + 10 * r + i}
        for r in range(n_reps) for i in range(n_inst)
    ]  # fmt: skip


def test_resampling_repetitions_widens_the_interval_when_a_repetition_shifts_every_instance():
    df = frame(shared_draw_rows())
    by_runs = judge(threshold(">=", 0.0), df)
    cmp_ = Comparison(kind="threshold", method="ros", metric="score", op=">=", value=0.0, resample="repetitions")
    by_reps = judge(make_claim(cmp_), df)
    assert by_reps.estimate == pytest.approx(by_runs.estimate)
    assert (by_reps.ci_high - by_reps.ci_low) > 2.0 * (by_runs.ci_high - by_runs.ci_low)
    # a threshold just below the estimate: confirmed if the runs were independent, not with 6 real draws
    thr = by_runs.ci_low - 0.001
    assert judge(threshold(">=", thr), df).verdict == "confirmed"
    cmp_ = Comparison(kind="threshold", method="ros", metric="score", op=">=", value=thr, resample="repetitions")
    assert judge(make_claim(cmp_), df).verdict == "inconclusive"
    assert "CI resamples repetitions" in cmp_.describe()


def test_versus_resampling_repetitions_keeps_pairs_and_counts_each_master_seed_apart():
    ours = shared_draw_rows(n_reps=1, master_seed=0) + shared_draw_rows(n_reps=1, master_seed=1, seed=1)
    theirs = [{**r, "method": "greedy", "kind": "baseline", "key": f"{next(_counter):064x}", "metric.score": r["metric.score"] - 0.1}
              for r in ours]  # fmt: skip
    cmp_ = Comparison(kind="versus", method="ros", baseline="greedy", metric="score", op=">=", margin=0.05, resample="repetitions")
    v = judge(make_claim(cmp_), frame(ours + theirs))
    # rep 0 of master seeds 0 and 1 are two repetitions; every pair differs by exactly 0.1
    assert v.verdict == "confirmed" and v.estimate == pytest.approx(0.1)
    assert v.ci_low == pytest.approx(0.1) and v.n_runs == 20
    # one repetition alone gives no interval, and the reason says what is missing
    v = judge(make_claim(cmp_), frame(ours[:10] + theirs[:10]))
    assert v.verdict == "inconclusive" and "2 repetitions per instance" in v.reason
    assert "CI resamples repetitions" in cmp_.describe()


def test_resample_is_rejected_for_saving_comparisons():
    with pytest.raises(ValidationError, match="resample"):
        Comparison(kind="saving", method="a", baseline="b", metric="acc", x_metric="n", op=">=", value=0.0, resample="repetitions")
    with pytest.raises(ValidationError):
        Comparison(kind="threshold", method="a", metric="acc", op=">=", value=0.0, resample="clusters")


# ----------------------------------------------------------------------------- resample = "instances"


def test_resampling_instances_gives_deterministic_methods_an_interval_over_the_instance_draws():
    # a deterministic method: every seed gives the same value, instances (data draws) differ
    vals = {f"s{i}": [v] * 3 for i, v in enumerate([0.2, -0.4, 0.1, 0.5, -0.3, 0.3])}
    df = frame(runs("ros", vals))
    by_runs = judge(threshold(">=", -0.5), df)
    # within-instance resampling: no spread at all, so an exact (zero-width) interval
    assert by_runs.ci_low == by_runs.ci_high == pytest.approx(0.4 / 6)
    cmp_ = Comparison(kind="threshold", method="ros", metric="score", op=">=", value=-0.5, resample="instances")
    v = judge(make_claim(cmp_), df)
    assert v.estimate == pytest.approx(0.4 / 6) and v.ci_low < -0.1 and v.ci_high > 0.2
    assert v.verdict == "confirmed" and v.n_instances == 6 and v.n_runs == 18
    cmp_ = Comparison(kind="threshold", method="ros", metric="score", op=">=", value=0.0, resample="instances")
    assert judge(make_claim(cmp_), df).verdict == "inconclusive"  # exact by runs: confirmed (0.067 >= 0)
    assert judge(threshold(">=", 0.0), df).verdict == "confirmed"
    assert "CI resamples instances" in cmp_.describe()


def test_versus_resampling_instances_pairs_first_and_needs_two_instances():
    ours = runs("ros", {"s0": [1.0, 1.0], "s1": [2.0, 2.0], "s2": [0.0, 0.0]})
    theirs = runs("greedy", {"s0": [0.5, 0.5], "s1": [2.5, 2.5], "s2": [-1.0, -1.0]}, kind="baseline")
    cmp_ = Comparison(kind="versus", method="ros", baseline="greedy", metric="score", op=">", margin=0.0, resample="instances")
    v = judge(make_claim(cmp_), frame(ours + theirs))
    # paired differences 0.5, -0.5, 1.0 per instance: mean 1/3, and an interval that spans 0
    assert v.estimate == pytest.approx(1 / 3) and v.ci_low < 0 < v.ci_high and v.verdict == "inconclusive"
    one = judge(make_claim(cmp_, instances=["s0"]), frame(ours + theirs))
    assert one.verdict == "inconclusive" and "2 instances" in one.reason


# ----------------------------------------------------------------------------- ratio and slope


def ratio(op="<=", value=0.1, metric="wall_s", method="ros", baseline="greedy", **claim_kw) -> Claim:
    cmp_ = Comparison(kind="ratio", method=method, baseline=baseline, metric=metric, op=op, value=value)
    return make_claim(cmp_, **claim_kw)


def _speedup_rows(factor_by_instance):
    rows = []
    for inst, factors in factor_by_instance.items():
        for rep, f in enumerate(factors):
            w = 1.0 + rep + 3 * len(rows)
            rows.append(row("greedy", inst, rep, 0.0, wall_s=w, kind="baseline"))
            rows.append(row("ros", inst, rep, 0.0, wall_s=w / f))
    return frame(rows)


def test_ratio_is_the_geometric_mean_of_paired_ratios():
    df = _speedup_rows({"G1": [4.0, 4.0, 4.0], "G2": [16.0, 16.0, 16.0]})
    v = judge(ratio("<=", 0.2), df)
    assert v.estimate == pytest.approx(1 / 8)  # sqrt(1/4 * 1/16)
    assert v.verdict == "confirmed" and v.ci_low == pytest.approx(1 / 8) and "<= 0.2" in v.reason
    assert judge(ratio("<=", 0.1), df).verdict == "contradicted"  # 8x, not 10x
    assert judge(ratio(">=", 0.1), df).verdict == "confirmed"


def test_ratio_with_noise_is_inconclusive_near_the_value():
    df = _speedup_rows({"G1": [8.0, 12.0, 10.0], "G2": [9.0, 11.0, 10.5]})
    v = judge(ratio("<=", 0.1), df)
    assert v.verdict == "inconclusive" and v.ci_low < 0.1 < v.ci_high


def test_ratio_refuses_non_positive_values_and_needs_a_baseline_and_value():
    df = _speedup_rows({"G1": [2.0, 2.0]})
    df.loc[0, "wall_s"] = 0.0
    assert judge(ratio(), df).verdict == "inconclusive"
    with pytest.raises(ValidationError, match="baseline"):
        Comparison(kind="ratio", method="ros", metric="wall_s", op="<=", value=0.1)
    with pytest.raises(ValidationError, match="positive"):
        Comparison(kind="ratio", method="ros", baseline="greedy", metric="wall_s", op="<=", value=0.0)


def slope(op="<=", value=3.0, metric="wall_s", x="iparam.n", method="ros", resample="runs", cmp_kw=None, **claim_kw) -> Claim:
    cmp_ = Comparison(kind="slope", method=method, metric=metric, x_metric=x, op=op, value=value, resample=resample, **(cmp_kw or {}))
    return make_claim(cmp_, **claim_kw)


def _power_rows(exponent, sizes=(64, 128, 256, 512), noise=(0.9, 1.0, 1.1), per_size=1):
    rows = []
    for n in sizes:
        for j in range(per_size):
            for rep, e in enumerate(noise):
                r = row("ros", f"n{n}-s{j}", rep, 0.0, wall_s=1e-6 * n**exponent * e * (1 + 0.05 * j))
                r["iparam.n"] = n
                rows.append(r)
    return frame(rows)


def test_slope_recovers_a_power_law_exponent():
    v = judge(slope("<=", 2.2), _power_rows(2.0))
    assert v.estimate == pytest.approx(2.0, abs=1e-9) and v.verdict == "confirmed"
    assert "4 values of iparam.n" in v.reason
    assert judge(slope(">=", 2.5), _power_rows(2.0)).verdict == "contradicted"
    v = judge(slope("<=", 2.0, resample="instances"), _power_rows(2.0, per_size=2))
    assert v.estimate == pytest.approx(2.0, abs=0.05) and v.n_instances == 8


def test_slope_on_one_size_is_not_testable_and_needs_x_metric():
    assert judge(slope(), _power_rows(2.0, sizes=(128,))).verdict == "not testable here"
    with pytest.raises(ValidationError, match="x_metric"):
        Comparison(kind="slope", method="ros", metric="wall_s", op="<=", value=3.0)
    with pytest.raises(ValidationError, match="margin"):
        Comparison(kind="threshold", method="ros", metric="score", op="<=", value=3.0, margin=0.1)


def test_slope_reads_a_metric_as_x_and_weighs_instances_equally():
    rows = []
    for n, reps in ((10, 1), (100, 4)):  # 1 run at n = 10, 4 at n = 100: equal weight per instance
        for rep in range(reps):
            r = row("ros", f"n{n}", rep, float(n), metric="horizon", wall_s=float(n) ** 0.5)
            rows.append(r)
    v = judge(slope("<=", 0.6, x="horizon"), frame(rows))
    assert v.estimate == pytest.approx(0.5)


def _strata_rows(exponent, scales=(1.0, 50.0, 2500.0), sizes=(100, 1000, 10000), reps=3, jitter=0.0, shift=0.0):
    """Power laws n^(exponent + shift*g) in groups ``g`` whose levels differ by a constant factor."""
    rows = []
    for g, scale in enumerate(scales):
        for n in sizes:
            for rep in range(reps):
                e = 1.0 + jitter * (rep - 1)
                r = row("ros", f"g{g}-n{n}", rep, 0.0, wall_s=scale * n ** (exponent + shift * g) * e)
                r["iparam.n"], r["iparam.group"] = n, f"g{g}"
                rows.append(r)
    return frame(rows)


def test_slope_strata_give_each_group_its_intercept():
    # the groups' levels grow with g and their sizes are the same: a pooled fit with one intercept
    # still finds the exponent, but a design where the large groups hold the large sizes does not
    df = _strata_rows(-0.5, reps=2)
    df = df[~((df["iparam.group"] == "g0") & (df["iparam.n"] == 10000)) & ~((df["iparam.group"] == "g2") & (df["iparam.n"] == 100))]
    pooled = judge(slope("<=", 0.0), df)
    within = judge(slope("<=", 0.0, cmp_kw={"strata": ("iparam.group",)}), df)
    assert pooled.estimate > 0  # confounded: the level of the group, not the rate
    assert within.estimate == pytest.approx(-0.5, abs=1e-9) and within.verdict == "confirmed"
    assert "3 strata" in within.reason
    assert "within group" in slope(cmp_kw={"strata": ("iparam.group",)}).comparison.describe()


def test_slope_strata_resample_draws_whole_groups():
    # deterministic runs, rates -0.4, -0.5, -0.6 by group: only resampling groups shows the spread
    df = _strata_rows(-0.4, shift=-0.1)
    per_run = judge(slope("<=", -0.45, resample="instances", cmp_kw={"strata": ("iparam.group",)}), df)
    by_group = judge(slope("<=", -0.45, resample="strata", cmp_kw={"strata": ("iparam.group",)}), df)
    assert per_run.estimate == pytest.approx(-0.5, abs=1e-9) == by_group.estimate
    assert per_run.ci_low == per_run.ci_high  # one instance per cell, no spread within
    assert by_group.ci_low <= -0.59 and by_group.ci_high >= -0.41 and by_group.verdict == "inconclusive"
    with pytest.raises(ValidationError, match="strata"):
        Comparison(kind="slope", method="ros", metric="wall_s", x_metric="iparam.n", op="<=", value=0.0, resample="strata")
    with pytest.raises(ValidationError, match="iparam"):
        Comparison(kind="slope", method="ros", metric="wall_s", x_metric="iparam.n", op="<=", value=0.0, strata=("group",))
    with pytest.raises(ValidationError, match="slope comparisons only"):
        Comparison(kind="threshold", method="ros", metric="wall_s", op="<=", value=0.0, strata=("iparam.group",))


def test_slope_loglog_scale_fits_a_power_of_log_d():
    rows = []
    for d in (10, 30, 100, 300, 1000):
        for rep in range(3):
            r = row("ros", f"d{d}", rep, 0.0, wall_s=7.0 * math.log(d) ** 1.5 * (1 + 0.01 * (rep - 1)))
            r["iparam.n"] = d
            rows.append(r)
    v = judge(slope("<=", 1.6, cmp_kw={"x_scale": "loglog"}), frame(rows))
    assert v.estimate == pytest.approx(1.5, abs=1e-6) and v.verdict == "confirmed"
    assert "log log iparam.n" in slope(cmp_kw={"x_scale": "loglog"}).comparison.describe()
    rows[0]["iparam.n"] = 1  # log log 1 is undefined
    assert judge(slope("<=", 1.6, cmp_kw={"x_scale": "loglog"}), frame(rows)).verdict == "inconclusive"


def test_slope_of_the_log_mean_reads_replicate_columns():
    # replicates e * n^-0.5 with a spread that grows with n: the log of the mean keeps -0.5,
    # the mean of the logs drifts (it is another estimator)
    rng = np.random.default_rng(0)
    rows = []
    for n in (100, 1000, 10000, 100000):
        for rep in range(2):
            sigma = 0.2 + 0.3 * math.log10(n) / 5
            z = rng.standard_normal(200)
            vals = n**-0.5 * np.exp(sigma * z - sigma**2 / 2)  # mean n^-0.5 for every sigma
            r = row("ros", f"n{n}-s{rep}", 0, float(np.mean(vals)), metric="err")
            r.update({f"metric.err_r{i}": float(v) for i, v in enumerate(vals)}, **{"iparam.n": n})
            rows.append(r)
    df = frame(rows)
    mean = judge(slope(">=", -0.6, metric="err_r*", cmp_kw={"aggregate": "mean"}), df)
    logs = judge(slope(">=", -0.6, metric="err", resample="runs"), df)
    assert mean.estimate == pytest.approx(-0.5, abs=0.03) and mean.verdict == "confirmed"
    assert mean.ci_low < mean.estimate < mean.ci_high and mean.n_runs == 8
    assert abs(logs.estimate - mean.estimate) < 0.02  # per-run means of 200 samples: close here
    assert "slope of log mean err_r* on log iparam.n" in slope(metric="err_r*", cmp_kw={"aggregate": "mean"}).comparison.describe()
    with pytest.raises(ValidationError, match="aggregate"):
        Comparison(kind="slope", method="ros", metric="err_r*", x_metric="iparam.n", op="<=", value=0.0)


def test_slope_band_is_two_sided():
    df = _power_rows(0.5)
    assert judge(slope("in", -0.65, cmp_kw={"upper": -0.35}), _power_rows(-0.5)).verdict == "confirmed"
    v = judge(slope("in", -0.65, cmp_kw={"upper": -0.35}), df)
    assert v.verdict == "contradicted" and "misses [-0.65, -0.35]" in v.reason
    assert judge(slope("in", 0.3, cmp_kw={"upper": 0.5}), df).verdict == "inconclusive"  # the CI straddles 0.5
    assert "in [-0.65, -0.35]" in slope("in", -0.65, cmp_kw={"upper": -0.35}).comparison.describe()
    with pytest.raises(ValidationError, match="upper"):
        Comparison(kind="slope", method="ros", metric="wall_s", x_metric="iparam.n", op="in", value=-0.65)
    with pytest.raises(ValidationError, match="slope comparisons"):
        Comparison(kind="threshold", method="ros", metric="wall_s", op="in", value=-0.65, upper=-0.35)
