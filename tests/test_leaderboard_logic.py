"""Leaderboard logic on real fixture bundles (MTEB-style): tables, roles, aggregates, verdicts, provenance."""

from __future__ import annotations

import json
import math
import shlex
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from conftest import ROOT
from leaderboard_fixtures import LB_METHODS, lb_source, results_copy  # noqa: F401

from bench.bundle import load_bundles
from bench.claims import Claim, verdict
from bench.report import (
    anytime_table,
    normalised_scores,
    paper_table,
    pareto_table,
    profile_table,
    role_aggregate,
    role_strata,
    summary_table,
    task_ranking,
    task_roles,
)
from bench.task import Normalization, Reference

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def bundles(lb_source):  # noqa: F811
    return load_bundles(lb_source["results"])


def _task(b, name):
    df = b.records[b.records["task"] == name]
    return df, b.tasks[name]["meta"], b.claims[name]


def test_bundles_hold_both_tasks_with_provenance(bundles):
    assert set(bundles.tasks) == {"toy-mean", "knapsack"}
    origins = {m["task"]: m["origin"] for m in bundles.manifests.values()}
    assert origins == {"toy-mean": "submitted", "knapsack": "maintainers"}
    assert not bundles.warnings


@pytest.mark.parametrize("name", ["records.parquet", "claims.json"])
def test_a_file_changed_after_publishing_skips_its_bundle_by_name(results_copy, name):  # noqa: F811
    path = next((results_copy / "toy-mean").glob(f"*/{name}"))
    if name.endswith(".parquet"):
        df = pd.read_parquet(path)
        df.loc[0, "metric.abs_err"] = 0.0  # a better number, edited in by hand
        df.to_parquet(path, index=False)
    else:
        path.write_text(path.read_text().replace("mean-accurate", "mean-accurate-edited"))
    with pytest.warns(UserWarning, match="sha256"):
        b = load_bundles(results_copy)
    assert len(b.warnings) == 1
    assert path.parent.name in b.warnings[0] and name in b.warnings[0] and "changed after publishing" in b.warnings[0]
    assert set(b.records["task"]) == {"knapsack"}  # the other bundle still loads


def test_a_job_published_twice_counts_once(results_copy, bundles):  # noqa: F811
    import shutil

    src = next((results_copy / "knapsack").iterdir())
    again = src.parent / "29990101-submitted-again"  # the same records, in a later bundle
    shutil.copytree(src, again)
    manifest = json.loads((again / "manifest.json").read_text())
    (again / "manifest.json").write_text(json.dumps({**manifest, "bundle": again.name}))
    with pytest.warns(UserWarning, match="repeat jobs"):
        b = load_bundles(results_copy)
    assert len(b.records) == len(bundles.records) and not b.records["key"].duplicated().any()
    assert len(b.warnings) == 1 and "29990101-submitted-again" in b.warnings[0] and src.name in b.warnings[0]
    assert set(b.records.loc[b.records["task"] == "knapsack", "bundle"]) == {src.name}


def test_supersedes_replaces_shared_jobs_only_within_its_task_and_origin(results_copy, bundles):  # noqa: F811
    import shutil

    from leaderboard_fixtures import rehash

    toy = next((results_copy / "toy-mean").iterdir())  # submitted
    knap = next((results_copy / "knapsack").iterdir())  # maintainers
    again = knap.parent / "29990101-maintainers-rerun"  # a partial rerun: half of the jobs
    shutil.copytree(knap, again)
    rows = pd.read_parquet(again / "records.parquet")
    rows.iloc[: len(rows) // 2].to_parquet(again / "records.parquet", index=False)
    manifest = json.loads((again / "manifest.json").read_text())
    (again / "manifest.json").write_text(json.dumps({**manifest, "bundle": again.name, "supersedes": [knap.name]}))
    rehash(again)
    rogue = toy.parent / "29990101-submitted-rogue"  # a submission may not replace the maintainers' jobs
    shutil.copytree(toy, rogue)
    manifest = json.loads((rogue / "manifest.json").read_text())
    (rogue / "manifest.json").write_text(json.dumps({**manifest, "bundle": rogue.name, "supersedes": [toy.name, knap.name]}))
    with pytest.warns(UserWarning, match="another task"):
        b = load_bundles(results_copy)
    import warnings

    with warnings.catch_warnings():  # warn=False keeps the same messages and emits none (for background threads)
        warnings.simplefilter("error")
        quiet = load_bundles(results_copy, warn=False)
    assert quiet.warnings == b.warnings and quiet.superseded == b.superseded
    assert b.superseded == {knap.name: [again.name], toy.name: [rogue.name]}
    assert len(b.records) == len(bundles.records) and not b.records["key"].duplicated().any()
    knap_rows = b.records[b.records["task"] == "knapsack"]
    assert knap_rows["bundle"].value_counts().to_dict() == {again.name: len(rows) // 2, knap.name: len(rows) - len(rows) // 2}
    assert set(b.records.loc[b.records["task"] == "toy-mean", "bundle"]) == {rogue.name}  # wholly replaced
    assert str(toy) not in b.manifests and str(knap) in b.manifests
    assert [w for w in b.warnings if "another task" in w and knap.name in w]
    (rogue / "manifest.json").write_text(json.dumps({**manifest, "bundle": rogue.name, "supersedes": "oops"}))
    with pytest.warns(UserWarning, match="'supersedes' is not a list"):
        b = load_bundles(results_copy)
    assert set(b.records["bundle"]) == {again.name, knap.name, toy.name}
    manifest = json.loads((again / "manifest.json").read_text())
    (again / "manifest.json").write_text(json.dumps({**manifest, "origin": "submitted"}))
    with pytest.warns(UserWarning, match="cannot supersede the maintainers' bundle"):
        b = load_bundles(results_copy)
    assert not b.superseded and not b.records["key"].duplicated().any()
    assert set(b.records.loc[b.records["task"] == "knapsack", "bundle"]) == {knap.name}  # the first copy is kept


def test_summary_rows_name_their_machine_and_the_command_that_reruns_them(bundles):
    df, meta, _ = _task(bundles, "toy-mean")
    table = summary_table(df, meta)
    assert table["hardware"].str.len().gt(0).all()
    row = table[(table["method"] == "toy-noisy") & (table["instance"] == "mu1")].iloc[0]
    cmd = row["command"]
    assert cmd.startswith("python -m bench run --task toy-mean --tier smoke --method toy-noisy --instances mu1 --seeds 2 --seed 0")
    assert cmd.endswith("--param scale=0.3")
    # The command plans exactly the published jobs (same keys), so rerunning it reuses or reproduces them.
    from bench.cli import build_parser
    from bench.evaluator import probe_catalog
    from bench.registry import get_task
    from bench.runner import RunOptions, plan

    a = build_parser().parse_args(shlex.split(cmd)[3:])
    catalog, _ = probe_catalog((LB_METHODS, str(ROOT / "tests" / "plugins" / "toy" / "methods.py")))
    opts = RunOptions(task=a.task, methods=a.methods, instances=a.instances, tier=a.tier, seeds=a.seeds,
                      master_seed=a.seed, budget=a.budget, params=dict(a.param))  # fmt: skip
    jobs = plan(get_task("toy-mean"), [m for m in catalog if m["name"] in a.methods], opts)
    want = set(df[(df["method"] == "toy-noisy") & (df["instance"] == "mu1")]["key"])
    assert {j.key for j in jobs} == want


def test_normalised_scores_follow_the_declared_rule_run_by_run(bundles):
    for name in ("toy-mean", "knapsack"):
        df, meta, _ = _task(bundles, name)
        got = normalised_scores(df, meta)
        rule = Normalization.model_validate(meta["normalization"])
        for (i, r), g in zip(df.iterrows(), got, strict=True):
            refs = {c[4:]: Reference(value=float(r[c]), source="") for c in df.columns if c.startswith("ref.") and r[c] == r[c]}
            want = rule.apply(float(r[f"metric.{meta['primary']}"]), refs) if r["status"] == "ok" else math.nan
            assert (math.isnan(want) and math.isnan(g)) or g == pytest.approx(want), (name, i)
    # knapsack: value / optimum -> the exact DP is 1 everywhere; toy: log scale, 1 at err 1e-3, 0 at err 1
    df, meta, _ = _task(bundles, "knapsack")
    s = normalised_scores(df, meta)
    assert np.allclose(s[df["method"] == "dp"], 1.0)
    df, meta, _ = _task(bundles, "toy-mean")
    s = normalised_scores(df, meta)
    ok = df["status"] == "ok"
    err = df.loc[ok, "metric.abs_err"].astype(float)
    assert np.allclose(s[ok], -np.log10(err) / 3.0)


def test_roles_and_the_empty_aggregate_when_a_role_is_missing(bundles):
    toy, kn = _task(bundles, "toy-mean"), _task(bundles, "knapsack")
    roles = task_roles(*toy)
    assert roles["paper's method"] == "toy-sample-mean"  # the only kind="method" entry, named by the claims
    assert roles["weak baseline"] == "toy-noisy"  # toy-first skips mu2: it does not cover the task
    assert role_strata(toy[0], toy[1], "toy-first") is None
    kroles = task_roles(*kn)
    assert kroles["paper's method"] is None and kroles["best baseline"] == "dp"
    agg = role_aggregate({"toy-mean": toy, "knapsack": kn}).set_index("role")
    assert math.isnan(agg.loc["paper's method", "iqm"]) and agg.loc["paper's method", "missing"] == "knapsack"
    assert agg.loc["best baseline", "tasks"] == 2 and not math.isnan(agg.loc["best baseline", "iqm"])
    # The same role on toy alone has an aggregate, with a CI around it.
    one = role_aggregate({"toy-mean": toy}).set_index("role")
    est, lo, hi = one.loc["paper's method", ["iqm", "ci_low", "ci_high"]]
    strata = role_strata(toy[0], toy[1], "toy-sample-mean")
    assert len(strata) == 2 and est == pytest.approx(float(np.mean(strata)))  # IQM of 2 values = their mean
    assert lo <= est <= hi


def test_the_paper_role_goes_to_the_registered_configuration_not_the_best_grid_variant(bundles):
    df, meta, claims = _task(bundles, "toy-mean")
    ours = df[df["method"] == "toy-sample-mean"]
    registered = json.loads(ours["params"].iloc[0])
    # a grid variant of the paper's method on every instance and seed, with better (smaller) errors
    variant = ours.assign(params=json.dumps({**registered, "grid_knob": 1}), key=ours["key"] + "-v")
    variant["metric.abs_err"] = variant["metric.abs_err"].astype(float) / 10
    both = pd.concat([df, variant], ignore_index=True)
    best = task_roles(both, meta, claims)["paper's method"]  # without metadata: the best-scoring variant
    assert "grid_knob=1" in best
    fair = task_roles(both, meta, claims, {"toy-sample-mean": {"params": registered}})["paper's method"]
    assert fair.startswith("toy-sample-mean[") and "grid_knob=unset" in fair
    agg = role_aggregate({"toy-mean": (both, meta, claims, {"toy-sample-mean": {"params": registered}})}).set_index("role")
    assert fair in agg.loc["paper's method", "methods"]


def test_ranking_uses_complete_blocks_and_says_what_it_left_out(bundles):
    df, meta, _ = _task(bundles, "toy-mean")
    res = task_ranking(df, meta)
    assert set(res.methods) == {"toy-sample-mean", "toy-noisy", "toy-first", "toy-refine"}
    assert res.n_blocks == 2  # mu2 dropped: toy-first skipped it
    assert "(instances)" in res.excluded
    assert res.mean_ranks[0] <= res.mean_ranks[-1]
    kdf, kmeta, _ = _task(bundles, "knapsack")
    kres = task_ranking(kdf, kmeta)
    assert kres.methods[-1] == "random-fill" and kres.n_blocks == 2


def test_versus_paper_takes_one_tier_per_instance():
    from bench.report import versus_paper

    rec = pd.DataFrame({
        "method": ["m"] * 4, "instance": ["a"] * 4, "status": ["ok"] * 4,
        "tier": ["standard"] * 3 + ["full"],  # the full-tier run had a longer budget: not the same measurement
        "metric.cut": [10.0, 11.0, 12.0, 50.0],
    })  # fmt: skip
    paper = [{"instance": "a", "method": "m", "metric": "cut", "value": 14.0, "source": "T1"}]
    t = versus_paper(rec, paper, {"primary": "cut"}, "m").set_index("instance")
    assert t.loc["a", "runs"] == 3 and t.loc["a", "ours"] == 11.0


def test_versus_paper_bounds_our_mean_against_the_papers_single_run():
    from bench.report import versus_paper

    rec = pd.DataFrame({
        "method": ["m"] * 7 + ["other"],
        "instance": ["a", "a", "a", "b", "b", "b", "c", "a"],
        "status": ["ok"] * 6 + ["ok", "ok"],
        "metric.cut": [10.0, 11.0, 12.0, 20.0, 20.0, 20.0, 5.0, 99.0],
    })  # fmt: skip
    paper = [
        {"instance": "a", "method": "m", "metric": "cut", "value": 14.0, "source": "T1"},  # hi = 11 + 1.686 < 14
        {"instance": "b", "method": "m", "metric": "cut", "value": 20.0, "source": "T1"},  # no spread, equal
        {"instance": "c", "method": "m", "metric": "cut", "value": 1.0, "source": "T1"},  # one run
        {"instance": "z", "method": "m", "metric": "cut", "value": 1.0, "source": "T1"},  # not run here
        {"instance": "a", "method": "m", "metric": "time_s", "value": 1.0, "source": "T1"},  # other metric
    ]
    t = versus_paper(rec, paper, {"primary": "cut"}, "m").set_index("instance")
    assert list(t.index) == ["a", "b", "c"]
    assert t.loc["a", "verdict"] == "below the paper" and t.loc["a", "ours"] == 11.0 and t.loc["a", "runs"] == 3
    assert t.loc["a", "hi"] == pytest.approx(11.0 + 1.685854, abs=1e-6)
    assert t.loc["a", "diff_pct"] == pytest.approx(100 * (11 - 14) / 14)
    assert t.loc["b", "verdict"] == "consistent" and t.loc["c", "verdict"] == "one run"
    # as one run: 14 is above our mean's bound but within the range of one further run of ours
    # (11 + t(0.95, 2) * 1 * sqrt(1 + 1/3) = 14.37)...
    assert t.loc["a", "run_hi"] == pytest.approx(11.0 + 1.685854 * 3**0.5 * (4 / 3) ** 0.5, abs=1e-6)
    assert t.loc["a", "run_verdict"] == "consistent" and t.loc["c", "run_verdict"] == "one run"
    # ...and 15 is above both
    paper[0]["value"] = 15.0
    row = versus_paper(rec, paper, {"primary": "cut"}, "m").iloc[0]
    assert (row["verdict"], row["run_verdict"]) == ("below the paper", "below the paper")
    paper[0]["value"] = 9.0  # lo = 9.31 > 9
    assert versus_paper(rec, paper, {"primary": "cut"}, "m").iloc[0]["verdict"] == "above the paper"
    assert versus_paper(rec, paper, {"primary": "cut"}, "m", metric="nope").empty


def test_paper_numbers_are_separate_labelled_rows(bundles):
    pt = paper_table(bundles.paper_results["toy-mean"])
    assert set(pt["row"]) == {"reported by the paper"}
    assert set(pt["instance"]) == {"mu0", "mu1"}
    # never in our table
    df, meta, _ = _task(bundles, "toy-mean")
    ours = summary_table(df, meta)
    assert not (ours["mean"].isin(pt["value"])).any()


def test_plots_tables(bundles):
    df, meta, _ = _task(bundles, "toy-mean")
    tr = anytime_table(df, meta)
    assert set(tr["label"]) == {"toy-refine"}
    assert len(tr) == 3 * 2 * 4  # 3 instances x 2 seeds x (3 checkpoints + final)
    pts = pareto_table(df, meta).set_index("label")
    assert pts["pareto"].any() and set(pts["kind"]) == {"method", "baseline"}
    # toy-first has no valid run on one instance: no comparable mean, so neither a score nor a front point
    assert pts.loc["toy-first", "instances"] == "2 of 3" and math.isnan(pts.loc["toy-first", "score"])
    assert not pts.loc["toy-first", "pareto"] and pts.loc["toy-sample-mean", "instances"] == "3 of 3"
    prof = profile_table(df, meta)
    first = prof[prof["label"] == "toy-first"]
    assert first["fraction"].max() <= 2 / 3  # it has no result on one of 3 instances
    assert prof.groupby("label")["fraction"].apply(lambda s: s.is_monotonic_increasing).all()


def test_verdicts_match_the_claims_command(bundles, lb_source, cli):  # noqa: F811
    df, meta, claims = _task(bundles, "toy-mean")
    ours = {c["id"]: verdict(Claim.model_validate(c), df).verdict for c in claims}
    rc, out, err = cli("claims", "--task", "toy-mean", "--results", lb_source["results"], "--format", "json")
    assert rc == 0, err
    theirs = {r["id"]: r["verdict"] for r in json.loads(out)}
    assert ours == theirs
    assert ours["gpu-speed"] == "not testable here" and ours["mean-accurate"] == "confirmed"


def test_show_prints_the_same_ranking_and_paper_rows(lb_source, cli, bundles):  # noqa: F811
    rc, out, err = cli("show", "--task", "toy-mean", "--results", lb_source["results"])
    assert rc == 0, err
    res = task_ranking(*_task(bundles, "toy-mean")[:2])
    assert "Friedman" in out and f"{res.mean_ranks[0]:.3g}" in out
    assert "reported by the paper" in out
    rc, out, _ = cli("show", "--task", "toy-mean", "--results", lb_source["results"], "--format", "csv")
    table = pd.read_csv(__import__("io").StringIO(out))
    assert {"hardware", "command"} <= set(table.columns)


def test_store_mode_reads_exported_metadata(lb_source, tmp_path):  # noqa: F811
    import shutil

    from bench.cli import export_store_meta
    from leaderboard.data import load_store

    store = tmp_path / "runs"
    shutil.copytree(lb_source["store"], store)
    d = load_store(store)
    assert d.records.empty and any("bench leaderboard --store" in w for w in d.warnings)
    assert set(export_store_meta(str(store))) == {"toy-mean", "knapsack"}
    d = load_store(store)
    assert set(d.tasks) == {"toy-mean", "knapsack"} and not d.warnings
    assert len(d.records) == len(load_bundles(lb_source["results"]).records)
    assert d.claims["toy-mean"] and d.paper_results["toy-mean"]


def test_leaderboard_modules_never_import_tasks_or_methods(lb_source):  # noqa: F811
    code = (
        "import sys, os\n"
        f"sys.path.insert(0, {str(ROOT)!r})\n"
        "from streamlit.testing.v1 import AppTest\n"
        f"os.environ['BENCH_RESULTS'] = {str(lb_source['results'])!r}\n"
        "for view in ('Overview', 'Task', 'Claims', 'Method'):\n"
        f"    at = AppTest.from_file({str(ROOT / 'leaderboard' / 'app.py')!r}, default_timeout=120)\n"
        "    at.query_params['view'] = view\n"
        "    at.run()\n"
        "    assert not at.exception, at.exception\n"
        f"roots = tuple(os.path.join({str(ROOT)!r}, d) for d in ('tasks', 'methods', 'baselines', os.path.join('tests', 'plugins')))\n"
        "bad = sorted(n for n, m in list(sys.modules.items()) if n.split('.')[0] in ('tasks', 'methods', 'baselines')\n"
        "             or str(getattr(m, '__file__', None) or '').startswith(roots))\n"
        "assert not bad, bad\n"
        "print('clean')\n"
    )
    env = {k: v for k, v in __import__("os").environ.items() if k != "BENCH_TASK_PATHS"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=env, timeout=300)
    assert out.returncode == 0 and "clean" in out.stdout, out.stderr[-2000:]


def _meta(rule):
    return {"primary": "m", "metrics": [{"name": "m", "direction": "max"}], "normalization": rule}


@pytest.mark.parametrize(
    ("rule", "value", "refs", "want"),
    [
        ({"kind": "linear", "zero": "random", "one": "best_known"}, 90.0, {"random": 50.0, "best_known": 100.0}, 0.8),  # maxcut
        ({"kind": "linear", "zero": 1.0, "one": 0.5}, 0.6, {}, 0.8),  # C2ST accuracy: 1.0 -> 0, 0.5 -> 1
        ({"kind": "log", "zero": 1.0, "one": 1e-4}, 1e-2, {}, 0.5),  # PDE error: two of four decades
        ({"kind": "linear", "zero": 0.0, "one": "full_pool"}, 0.45, {"full_pool": 0.9}, 0.5),  # active learning
        ({"kind": "linear", "zero": "random", "one": "best_known"}, 90.0, {"random": 50.0}, math.nan),  # no best known
        ({"kind": "log", "zero": 1.0, "one": 1e-4}, 0.0, {}, math.nan),  # log of 0 is undefined
    ],
)
def test_normalisation_rules_hand_computed(rule, value, refs, want):
    df = pd.DataFrame([{"status": "ok", "metric.m": value, **{f"ref.{k}": v for k, v in refs.items()}},
                       {"status": "invalid", "metric.m": value, **{f"ref.{k}": v for k, v in refs.items()}}])  # fmt: skip
    got = normalised_scores(df, _meta(rule))
    assert math.isnan(got[1])  # an invalid run has no score
    assert (math.isnan(want) and math.isnan(got[0])) or got[0] == pytest.approx(want)


def test_labels_name_only_the_parameters_that_differ():
    """A --grid over one switch labels its variants by that switch, not by every parameter."""
    import json

    import pandas as pd

    from bench.report import with_labels

    base = {"hidden": 256, "lr": 5e-4, "keep_flaws": []}
    rows = [
        {"method": "pd", "params": json.dumps(base)},
        {"method": "pd", "params": json.dumps({**base, "keep_flaws": ["score"]})},
        {"method": "pd", "params": json.dumps(dict(reversed(list(base.items()))))},  # same set, other key order
        {"method": "ddpm", "params": json.dumps({"hidden": 256})},
        {"method": "ddpm", "params": json.dumps({"lr": 1e-3, "hidden": 256})},  # a parameter only one set has
    ]
    labels = list(with_labels(pd.DataFrame(rows))["label"])
    assert labels == ["pd[keep_flaws=[]]", "pd[keep_flaws=['score']]", "pd[keep_flaws=[]]", "ddpm[lr=unset]", "ddpm[lr=0.001]"]


def test_overview_names_every_method_tied_for_the_best_mean_rank():
    from leaderboard.digest import best_label

    assert best_label(["b", "a", "c"], [1.5, 1.5, 3.0]) == "tie: b, a"
    assert best_label(["b", "a"], [1.0, 2.0]) == "b"
    assert best_label([], []) == "–"


# ----------------------------------------------------------------------------- digests (Overview, headline, provenance)


def test_area_comes_from_task_json_else_the_family():
    from leaderboard.digest import task_area

    assert task_area({"meta": {"name": "t", "family": "maxcut", "area": "combinatorial optimisation"}}) == "combinatorial optimisation"
    assert task_area({"meta": {"name": "t", "family": "maxcut", "area": None}}) == "maxcut"
    assert task_area({"meta": {"name": "t", "family": "maxcut"}, "area": "scientific ML"}) == "scientific ML"
    assert task_area({"meta": {"name": "t"}}) == "t"


def test_verdict_marks_are_short_and_spell_out_what_they_do_not_know():
    from leaderboard.digest import verdict_marks

    assert verdict_marks({"confirmed": 11, "contradicted": 3, "not testable here": 2}) == "✓11 ✗3 –2"
    assert verdict_marks({"inconclusive": 1, "unreadable claim": 1, "a new verdict": 2}) == "?1 !1 2 a new verdict"
    assert verdict_marks({}) == "no claims"


def test_unknown_statuses_are_counted_not_dropped():
    from leaderboard.digest import status_counts

    df = pd.DataFrame({"status": ["ok", "ok", "truncated", "timeout", "a-status-from-the-future"]})
    assert status_counts(df) == {"a-status-from-the-future": 1, "ok": 2, "timeout": 1, "truncated": 1}
    assert status_counts(pd.DataFrame()) == {}


@pytest.fixture(scope="module")
def digests(lb_source):  # noqa: F811
    from leaderboard.data import load_results
    from leaderboard.digest import site_digest

    data = load_results(lb_source["results"])
    return data, site_digest(data)


def test_digests_hold_the_numbers_of_the_task_page_and_the_claims_command(digests, bundles):
    from bench.claims import registered_records
    from bench.report import role_strata, task_roles

    data, site = digests
    assert set(site.digests) == {"toy-mean", "knapsack"} and not site.empty and not site.warnings
    toy = site.digests["toy-mean"]
    df, meta, claims = _task(bundles, "toy-mean")
    reg = registered_records(df, bundles.methods["toy-mean"])
    res = task_ranking(reg, meta)
    assert toy.ranking == [(m, pytest.approx(r)) for m, r in zip(res.methods, res.mean_ranks, strict=True)]
    assert toy.paper_method == "toy-sample-mean" and toy.paper_rank == f"{res.methods.index('toy-sample-mean') + 1} of {len(res.methods)}"
    roles = task_roles(reg, meta, claims, bundles.methods["toy-mean"])
    for role, (label, strata) in toy.roles.items():
        assert label == roles[role]
        want = role_strata(reg, meta, label) if label else None
        assert (want is None and strata is None) or np.allclose(strata, want)
        if strata is not None:
            est, lo, hi = toy.scores[role]
            assert est == pytest.approx(float(np.mean(want))) and lo <= est <= hi
    want = {c["id"]: verdict(Claim.model_validate(c), df, methods=bundles.methods["toy-mean"]).verdict for c in claims}
    assert {v["claim"]: v["verdict"] for v in toy.verdicts} == want
    assert sum(toy.verdict_counts.values()) == len(claims)
    assert toy.statuses == df["status"].value_counts().sort_index().to_dict() and toy.runs == len(df)
    assert toy.tables.summary.equals(summary_table(df, meta))
    kn = site.digests["knapsack"]
    assert kn.paper_method is None and kn.paper_rank == "no method" and kn.best == "dp"


def test_the_aggregate_from_digests_equals_role_aggregate(digests, bundles):
    from bench.report import aggregate_roles

    _, site = digests
    inputs = {t: (*_task(bundles, t), bundles.methods[t]) for t in ("toy-mean", "knapsack")}
    from bench.claims import registered_records

    inputs = {t: (registered_records(r, ms), m, c, ms) for t, (r, m, c, ms) in inputs.items()}
    want = role_aggregate(inputs, seed=0)
    got = aggregate_roles({t: d.roles for t, d in site.digests.items()}, seed=0)
    pd.testing.assert_frame_equal(got, want)


def test_overview_groups_by_area_and_filters_by_search_and_area(digests):
    from leaderboard.digest import (
        OVERVIEW_COLUMNS,
        VERDICT_MARKS,
        filter_overview,
        overview_table,
        task_area,
    )

    data, site = digests
    table = overview_table(site.digests.values(), link=lambda t: f"./?view=Task&task={t}")
    assert list(table.columns) == ["area", *OVERVIEW_COLUMNS, "page", "search"] and len(table) == 2
    areas = {t: task_area(data.tasks[t]) for t in data.tasks}
    assert list(table["area"]) == sorted(table["area"]) and dict(zip(table["task"], table["area"], strict=True)) == areas
    row = table.set_index("task").loc["toy-mean"]
    assert row["paper's method"] == "toy-sample-mean" and row["page"] == "./?view=Task&task=toy-mean"
    assert row["paper's method vs best baseline"].endswith(f"({site.digests['toy-mean'].roles['best baseline'][0]})")
    assert " vs " in row["paper's method vs best baseline"] and "[" in row["paper's method vs best baseline"]
    counts = site.digests["toy-mean"].verdict_counts
    assert row["verdicts"] == " ".join(f"{m}{counts[v]}" for v, m in VERDICT_MARKS.items() if counts.get(v)) and "✓" in row["verdicts"]
    kn = table.set_index("task").loc["knapsack"]
    assert kn["paper's method vs best baseline"] == "no paper method" and kn["its rank"] == "no method"
    # search: every word must match, case-insensitively, in task, paper, area or method names
    assert list(filter_overview(table, "TOY")["task"]) == ["toy-mean"]
    assert list(filter_overview(table, "dp")["task"]) == ["knapsack"]  # a method name
    assert filter_overview(table, "toy dp").empty
    assert len(filter_overview(table, "")) == 2
    assert list(filter_overview(table, areas=[areas["knapsack"]])["task"]) == ["knapsack"]
    assert filter_overview(table, "toy", areas=[areas["knapsack"]]).empty


def test_headline_says_who_wins_where_the_paper_stands_and_what_its_claims_came_to(digests):
    from leaderboard.digest import headline

    _, site = digests
    toy = site.digests["toy-mean"]
    win, stand, claims = headline(toy)
    assert win.startswith(f"Who wins on the {toy.tier} tier: {toy.best}") and f"over {toy.n_blocks} complete instances" in win
    assert stand.startswith(f"The paper's method toy-sample-mean: rank {toy.paper_rank}; normalised score {toy.scores[ROLE_PAPER][0]:.3f}")
    assert "against the best baseline" in stand
    counts = toy.verdict_counts
    assert claims == "Its claims: " + ", ".join(f"{n} {k}" for k, n in counts.items()) + f" (of {sum(counts.values())})."
    _, stand, _ = headline(site.digests["knapsack"])
    assert "baselines only" in stand


ROLE_PAPER = "paper's method"


def test_superseded_bundles_are_in_the_provenance_table(results_copy):  # noqa: F811
    import shutil

    from leaderboard_fixtures import rehash

    from leaderboard.data import load_results
    from leaderboard.digest import bundles_table

    knap = next((results_copy / "knapsack").iterdir())
    toy = next((results_copy / "toy-mean").iterdir())
    part = knap.parent / "29990101-maintainers-rerun"  # reruns half of knapsack's jobs
    shutil.copytree(knap, part)
    rows = pd.read_parquet(part / "records.parquet")
    rows.iloc[: len(rows) // 2].to_parquet(part / "records.parquet", index=False)
    manifest = json.loads((part / "manifest.json").read_text())
    (part / "manifest.json").write_text(json.dumps({**manifest, "bundle": part.name, "supersedes": [knap.name]}))
    rehash(part)
    whole = toy.parent / "29990101-submitted-whole"  # reruns every toy-mean job
    shutil.copytree(toy, whole)
    manifest = json.loads((whole / "manifest.json").read_text())
    (whole / "manifest.json").write_text(json.dumps({**manifest, "bundle": whole.name, "supersedes": [toy.name]}))
    rehash(whole)
    data = load_results(results_copy)
    t = bundles_table(data).set_index("bundle")
    assert t.loc[knap.name, "state"] == "partly superseded" and t.loc[knap.name, "superseded by"] == part.name
    assert t.loc[knap.name, "records"] == len(rows) - len(rows) // 2 and t.loc[part.name, "records"] == len(rows) // 2
    assert t.loc[toy.name, "state"] == "superseded (provenance only)" and t.loc[toy.name, "records"] == 0
    assert t.loc[toy.name, "task"] == "toy-mean" and t.loc[toy.name, "origin"] == "submitted"
    assert t.loc[whole.name, "state"] == "counted" and t["records"].sum() == len(data.records)


def test_the_fingerprint_changes_with_any_bundle_file_and_only_then(results_copy):  # noqa: F811
    import os
    import shutil

    from leaderboard.digest import fingerprint

    a = fingerprint(results_copy)
    assert fingerprint(results_copy) == a and len(a) == 20
    (results_copy / "README.md").write_text("not a bundle file")
    assert fingerprint(results_copy) == a
    path = next((results_copy / "knapsack").glob("*/claims.json"))
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    b = fingerprint(results_copy)
    assert b != a
    shutil.rmtree(next((results_copy / "toy-mean").iterdir()))  # a bundle removed
    assert fingerprint(results_copy) not in (a, b)
    assert fingerprint(store=results_copy) != fingerprint(results_copy)


def test_task_metadata_comes_from_the_newest_bundle_not_the_last_name(results_copy):  # noqa: F811
    import hashlib
    import shutil

    src = next((results_copy / "toy-mean").iterdir())
    # an older bundle whose name sorts last, with different claims: its metadata must not win
    old = results_copy / "toy-mean" / "29991231-submitted-zzzzzzzzzz"
    shutil.copytree(src, old)
    claims = json.loads((old / "claims.json").read_text())
    claims["claims"] = claims["claims"][:1] + [{**claims["claims"][0], "id": "stale-claim"}]
    (old / "claims.json").write_text(json.dumps(claims))
    manifest = json.loads((old / "manifest.json").read_text())
    manifest["files"]["claims.json"] = hashlib.sha256((old / "claims.json").read_bytes()).hexdigest()
    manifest["created_at"] = "2000-01-01T00:00:00Z"
    manifest["bundle"] = old.name
    (old / "manifest.json").write_text(json.dumps(manifest))
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the copy's records repeat the original's job keys
        b = load_bundles(results_copy)
    ids = [c["id"] for c in b.claims["toy-mean"]]
    assert "stale-claim" not in ids and ids == [c["id"] for c in json.loads((src / "claims.json").read_text())["claims"]]


def test_the_maintainers_copy_of_a_job_wins_and_bad_metadata_skips_a_bundle(results_copy, bundles):  # noqa: F811
    import shutil
    import warnings

    from leaderboard_fixtures import rehash

    knap = next((results_copy / "knapsack").iterdir())  # maintainers
    early = knap.parent / "20000101-submitted-early"  # a submitted copy that sorts first and claims an older date
    shutil.copytree(knap, early)
    manifest = json.loads((early / "manifest.json").read_text())
    (early / "manifest.json").write_text(json.dumps({**manifest, "bundle": early.name, "origin": "submitted", "created_at": "2000-01-01T00:00:00Z"}))
    rehash(early)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        b = load_bundles(results_copy)
    assert set(b.records.loc[b.records["task"] == "knapsack", "bundle"]) == {knap.name}
    assert [w for w in b.warnings if w.startswith(early.name) and "repeat jobs" in w]
    # a bundle that names no origin may not supersede the maintainers' one either
    (early / "manifest.json").write_text(json.dumps({**manifest, "bundle": early.name, "supersedes": [knap.name]}
                                                    | {"origin": None}))  # fmt: skip
    rehash(early)
    with pytest.warns(UserWarning, match="cannot supersede the maintainers' bundle"):
        b = load_bundles(results_copy)
    assert not b.superseded
    # a methods.json entry without a name: the bundle is skipped with a message naming the file
    (early / "methods.json").write_text(json.dumps([{"version": "1"}]))
    rehash(early)
    with pytest.warns(UserWarning, match="methods.json: not a list of method entries"):
        b = load_bundles(results_copy)
    assert set(b.records["bundle"]) == set(bundles.records["bundle"])


def test_the_speed_note_flags_methods_that_ran_at_different_machine_speeds():
    """Times are comparable only at the same machine speed: the note names the slowest and fastest method."""
    from bench.report import speed_note, speed_probes

    def runs(method, probes):
        return [{"method": method, "params": "{}", "env.speed_probe_ms": p} for p in probes]

    same = pd.DataFrame(runs("ros", [3.0, 3.2, 2.9]) + runs("md", [3.1, 3.3, 3.0]))
    assert speed_note(same) is None
    slow = pd.DataFrame(runs("ros", [3.0, 3.2, 2.9]) + runs("md", [6.1, 30.0, 5.9]))
    probes = speed_probes(slow)
    assert list(probes["method"]) == ["ros", "md"] and list(probes["median_ms"]) == [3.0, 6.1]
    note = speed_note(slow)
    assert note.startswith("machine speed differed: md's runs") and "ros's 3.00 ms (2.0x slower)" in note
    # runs recorded before the probe existed have no value: they are left out, never read as fast
    old = pd.concat([same, pd.DataFrame([{"method": "gw", "params": "{}", "env.speed_probe_ms": np.nan}])])
    assert speed_note(old) is None and "gw" not in set(speed_probes(old)["method"])
    assert speed_note(same.drop(columns="env.speed_probe_ms")) is None
    # a method with fewer than three probed runs is too noisy to flag anything
    assert speed_note(pd.DataFrame(runs("ros", [3.0, 3.2, 2.9]) + runs("md", [9.0, 9.1]))) is None
    assert speed_probes(pd.DataFrame()).empty


def test_filter_options_read_the_same_from_one_task_or_from_every_task():
    """An integer instance parameter is a float once tasks without it are read beside it: the filter shows it the same."""
    from leaderboard.digest import filter_options, iparam_options, param_text

    one = pd.DataFrame({"kind": ["method", "baseline"], "method": ["a", "b"], "instance_tags": ["x,y", None],
                        "iparam.n": [800, 1000], "iparam.nu": [0.5, 1.0], "iparam.only": [1, 1]})  # fmt: skip
    every = pd.concat([one, pd.DataFrame({"kind": ["baseline"], "method": ["c"]})], ignore_index=True).iloc[:2]
    assert every["iparam.n"].dtype == float and one["iparam.n"].dtype == int
    assert iparam_options(one) == iparam_options(every) == {"iparam.n": ["1000", "800"], "iparam.nu": ["0.5", "1"]}
    assert filter_options(one) == {"kinds": ["baseline", "method"], "tags": ["x", "y"], "iparams": iparam_options(one), "methods": ["a", "b"]}
    assert [param_text(v) for v in (800, 800.0, 0.25, True, "G1", float("nan"))] == ["800", "800", "0.25", "True", "G1", "nan"]


def test_privacy_rows_mark_a_violation_and_the_non_private_reference():
    from bench.digest import TaskDigest, encode_digest, privacy_rows

    def rec(method, kind, instance, eps, lb=None, viol=None, mech="laplace"):
        r = {"method": method, "kind": kind, "instance": instance, "status": "ok",
             "params": json.dumps({"mechanism": mech, "accountant": "pure-dp"}),
             "metric.declared_epsilon": eps, "metric.declared_delta": 0.0}  # fmt: skip
        if lb is not None:
            r.update({"metric.eps_lb": lb, "metric.privacy_violation": viol, "metric.audit_max_detectable": 3.3})
        return r

    df = pd.DataFrame(
        [rec("leaky", "method", "task-a", 1.0), rec("leaky", "method", "audit-a", 1.0, 2.5, 1), rec("leaky", "method", "audit-a", 1.0, 0.4, 0)]
        + [rec("ref", "baseline", "task-a", math.inf, mech="none"), rec("ref", "baseline", "audit-a", math.inf, 3.0, 0, mech="none")]
        + [rec("good", "method", "task-a", 0.1), rec("good", "method", "task-a", 8.0), rec("good", "method", "audit-a", 1.0, 0.0, 0)]
    )
    rows = {(r["method"], r["instance"]): r for r in privacy_rows(df)}
    assert rows[("leaky", "audit-a")]["status"] == "violates its declared epsilon" and rows[("leaky", "audit-a")]["violations"] == 1
    assert rows[("leaky", "audit-a")]["eps_lb"] == 2.5
    assert rows[("ref", "audit-a")]["status"] == "non-private reference" and rows[("ref", "audit-a")]["mechanism"] == "none"
    assert rows[("good", "audit-a")]["status"] == "no violation found"
    assert rows[("good", "(all)")]["declared_epsilon"] == "0.1-8"
    assert privacy_rows(df.drop(columns=["metric.declared_epsilon"])) == []
    # a task without declarations keeps its digest file as it was (no "privacy" key)
    assert "privacy" not in encode_digest(TaskDigest(task="t", area="a", family="f", paper="p", version="1", tier=None))


def test_the_overview_holdout_column_compares_the_roles_on_holdout_runs(bundles):
    """Holdout runs (secret seeds) give their own paper-vs-best-baseline column; a task without any says so."""
    from bench.digest import _BundleData, decode_digest, encode_digest, task_digest
    from leaderboard.digest import _score, overview_table

    toy = bundles.records[bundles.records["task"] == "toy-mean"]
    tier = toy["tier"].iloc[0]
    held = toy[toy["tier"] == tier].assign(tier="holdout", key=lambda d: "h" + d["key"].str[1:])
    held = held.assign(instance=held["instance"] + "-sh0123abcd")
    # on the holdout tier the sample mean does worse: every error doubled
    held["metric.abs_err"] = held["metric.abs_err"].where(held["method"] != "toy-sample-mean", held["metric.abs_err"] * 2)
    data = _BundleData(records=pd.concat([bundles.records, held], ignore_index=True), tasks=bundles.tasks, claims=bundles.claims,
                       methods=bundles.methods, paper_results=bundles.paper_results, claims_source=bundles.claims_source)  # fmt: skip
    d = task_digest(data, "toy-mean")
    assert d.tier == tier and "holdout" in d.tiers
    (label, score), (base, base_score) = d.holdout["paper's method"], d.holdout["best baseline"]
    assert label == "toy-sample-mean" and base is not None and np.isfinite(score[0])
    assert score[0] < d.scores["paper's method"][0]  # the doubled errors show, on the holdout column only
    again = decode_digest(json.loads(json.dumps(encode_digest(d))))
    assert again.holdout == d.holdout
    plain = task_digest(data, "knapsack")
    assert plain.holdout == {} and "holdout" not in encode_digest(plain)  # other tasks' digest files stay as they were
    rows = overview_table([d, plain]).set_index("task")["holdout"]
    assert rows["toy-mean"] == f"{_score(score, 2)} vs {_score(base_score, 2)} ({base})" and "[" in rows["toy-mean"]
    assert rows["knapsack"] == "no holdout runs"
