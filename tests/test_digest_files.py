"""The leaderboard's digest files (``results/_digests/<task>.json``, :mod:`bench.digest`).

- Every task in ``results/`` has a committed digest that a fresh computation
  agrees with (the fix, named in the failure: ``python -m bench publish
  --refresh-digest --task T``), like the README claims-block check.
- A digest read back is the digest computed: the Overview, the headlines and
  the task page's tables come out the same (the anytime traces, left out of
  the file, are recomputed by the task page).
- :func:`leaderboard.digest.site_from_results` uses a matching file without
  reading a record, and recomputes a task whose bundles changed (a new
  manifest, a file edited after publishing), whose digest version is another,
  or whose file is missing.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import ROOT
from leaderboard_fixtures import lb_source, results_copy  # noqa: F401

from bench import digest as bd
from leaderboard.data import load_results, read_paper_results
from leaderboard.digest import headline, overview_table, site_digest, site_from_results

RESULTS = ROOT / "results"
COMMITTED = bd.digest_tasks(RESULTS)


#: The digests make test recomputes (iv-bounds: paper rows and a generated family, 1 s;
#: robust-gossip: the most jobs); make test-long recomputes every task's, maxcut's (the largest
#: bundles, 5-8 s) included.
SAMPLED = frozenset({"iv-bounds", "robust-gossip"})


@pytest.mark.parametrize("task", [pytest.param(t, marks=() if t in SAMPLED else pytest.mark.long) for t in COMMITTED] or ["(none)"])
def test_committed_digest_is_current(task):
    if task == "(none)":
        pytest.skip("no published bundles in results/")
    problem = bd.digest_problem(RESULTS, task, recompute=True)
    assert problem is None, f"{problem}; refresh it with `python -m bench publish --refresh-digest --task {task}` and commit it"


def test_committed_digests_are_small():
    for t in COMMITTED:
        size = bd.digest_path(RESULTS, t).stat().st_size
        assert size < 1_000_000, f"{t}: its digest takes {size / 1e6:.2f} MB, over 1 MB"


def _never() -> None:
    raise AssertionError("the records were read although every digest file matches")


def _same_digest(a: bd.TaskDigest, b: bd.TaskDigest) -> None:
    assert overview_table([a]).equals(overview_table([b])) and headline(a) == headline(b)
    assert pd.DataFrame(a.verdicts).equals(pd.DataFrame(b.verdicts)) and [list(v) for v in a.verdicts] == [list(v) for v in b.verdicts]
    assert list(a.roles) == list(b.roles) and a.statuses == b.statuses and a.ranking == b.ranking
    # what the task page's default view shows beside the tables
    assert (a.meta, a.tiers, a.hardware, a.speed_note, a.filters, a.claims_source) == (b.meta, b.tiers, b.hardware, b.speed_note, b.filters, b.claims_source)
    for role, (label, strata) in a.roles.items():
        assert b.roles[role][0] == label
        assert (strata is None and b.roles[role][1] is None) or np.array_equal(strata, b.roles[role][1])
    if a.tables is None:
        assert b.tables is None
        return
    for name in ("summary", "pareto", "profile_quality", "profile_time"):
        pd.testing.assert_frame_equal(getattr(a.tables, name), getattr(b.tables, name))
    ra, rb = a.tables.ranking, b.tables.ranking
    assert ra.methods == rb.methods and ra.cliques == rb.cliques and ra.excluded == rb.excluded
    for f in ("mean_ranks", "p_raw", "p_holm", "significant"):
        np.testing.assert_array_equal(getattr(ra, f), getattr(rb, f))
    assert (a.tables.runs, a.tables.registered, a.tables.kinds) == (b.tables.runs, b.tables.registered, b.tables.kinds)


def test_publish_writes_digests_that_read_back_as_computed(lb_source):  # noqa: F811
    results = lb_source["results"]
    assert bd.digest_tasks(results) == ["knapsack", "toy-mean"]
    computed = site_digest(load_results(results))
    site = site_from_results(results, _never)
    assert sorted(site.digests) == sorted(computed.digests) and site.warnings == computed.warnings and not site.empty
    for t, d in computed.digests.items():
        _same_digest(d, site.digests[t])
        assert site.digests[t].tables.anytime is None and d.tables.anytime is not None
        # the paper's numbers stay in the claims bundle's claims.json, which the task page reads
        assert site.digests[t].paper_results is None and d.paper_results is not None
        assert read_paper_results(results, t, site.digests[t].claims_source) == d.paper_results


def test_a_changed_bundle_is_recomputed(results_copy):  # noqa: F811
    from leaderboard_fixtures import rehash

    before = bd.read_task_digest(results_copy, "toy-mean")[0]
    toy = next(p for p in (results_copy / "toy-mean").iterdir() if (p / "manifest.json").exists())
    # a second bundle of the task: the digest's fingerprint no longer matches
    extra = results_copy / "toy-mean" / (toy.name[:-1] + "x")
    shutil.copytree(toy, extra)
    manifest = json.loads((extra / "manifest.json").read_text())
    manifest["bundle"] = extra.name
    df = pd.read_parquet(extra / "records.parquet")
    df = df[df["method"] == "toy-first"].assign(key=lambda d: d["key"] + "-x")
    df.to_parquet(extra / "records.parquet", index=False)
    (extra / "manifest.json").write_text(json.dumps(manifest))
    rehash(extra)
    assert "stale" in bd.digest_problem(results_copy, "toy-mean")
    assert bd.digest_problem(results_copy, "knapsack") is None
    loads = []

    def load():
        loads.append(1)
        return load_results(results_copy)

    site = site_from_results(results_copy, load)
    fresh = site_digest(load_results(results_copy))
    assert loads == [1]
    assert site.digests["toy-mean"].runs == fresh.digests["toy-mean"].runs > before.runs
    _same_digest(site.digests["toy-mean"], fresh.digests["toy-mean"])
    assert site.digests["toy-mean"].tables.anytime is not None  # recomputed, not read


def test_a_bundle_edited_after_publishing_is_not_trusted_to_its_digest(results_copy):  # noqa: F811
    toy = next(p for p in (results_copy / "toy-mean").iterdir() if (p / "manifest.json").exists())
    df = pd.read_parquet(toy / "records.parquet")
    df.iloc[: len(df) // 2].to_parquet(toy / "records.parquet", index=False)  # its manifest's sha256 no longer matches
    assert "match their manifests" in bd.digest_problem(results_copy, "toy-mean")
    site = site_from_results(results_copy, lambda: load_results(results_copy))
    assert "toy-mean" not in site.digests and any("bundle skipped" in w and toy.name in w for w in site.warnings)


def test_another_digest_version_or_a_missing_file_is_recomputed(results_copy, monkeypatch):  # noqa: F811
    bd.digest_path(results_copy, "knapsack").unlink()
    assert "missing" in bd.digest_problem(results_copy, "knapsack")
    monkeypatch.setattr(bd, "DIGEST_VERSION", bd.DIGEST_VERSION + 1)
    assert "digest version" in bd.digest_problem(results_copy, "toy-mean")
    loads = []
    site = site_from_results(results_copy, lambda: loads.append(1) or load_results(results_copy))
    assert loads == [1] and sorted(site.digests) == ["knapsack", "toy-mean"]


def test_a_hand_edited_digest_fails_the_ci_check(results_copy):  # noqa: F811
    path = bd.digest_path(results_copy, "toy-mean")
    x = json.loads(path.read_text())
    x["digest"]["best"] = "toy-noisy"
    path.write_text(json.dumps(x))
    assert bd.digest_problem(results_copy, "toy-mean") is None  # the fingerprint still matches ...
    assert "differs from a fresh computation at .digest.best" in bd.digest_problem(results_copy, "toy-mean", recompute=True)


def test_refresh_digest_command(results_copy, cli):  # noqa: F811
    bd.digest_path(results_copy, "toy-mean").unlink()
    rc, out, err = cli("publish", "--refresh-digest", "--task", "toy-mean", "--results", results_copy)
    assert rc == 0 and "_digests/toy-mean.json" in out, err
    assert bd.digest_problem(results_copy, "toy-mean", recompute=True) is None
    rc, _, err = cli("publish", "--refresh-digest", "--claims-only", "--task", "toy-mean", "--results", results_copy)
    assert rc != 0 and "--claims-only" in err
    shutil.rmtree(results_copy / "knapsack")
    rc, out, _ = cli("publish", "--refresh-digest", "--task", "knapsack", "--results", results_copy)
    assert rc == 0 and "no bundle" in out and not bd.digest_path(results_copy, "knapsack").exists()


def test_digest_files_are_not_bundles(lb_source):  # noqa: F811
    from bench.bundle import load_bundles

    b = load_bundles(lb_source["results"])
    assert not b.warnings and not any(bd.DIGEST_DIR in p for p in b.manifests)
    assert not any(Path(p).parent.name == bd.DIGEST_DIR for p in b.manifests)


def test_the_paper_numbers_are_read_only_from_a_claims_json_that_matches_its_manifest(results_copy):  # noqa: F811
    bundle = bd.read_task_digest(results_copy, "toy-mean")[0].claims_source
    assert read_paper_results(results_copy, "toy-mean", bundle)
    path = results_copy / "toy-mean" / bundle / "claims.json"
    path.write_text(path.read_text().replace("mu0", "mu9"))  # edited after publishing: its sha256 no longer matches
    assert read_paper_results(results_copy, "toy-mean", bundle) is None
    assert read_paper_results(results_copy, "toy-mean", "no-such-bundle") is None
