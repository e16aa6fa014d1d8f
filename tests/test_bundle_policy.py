"""Bundles light enough to clone: the size cap, trimming, ``bench export`` and claims-only refreshes.

Everything runs on toy-mean bundles published into a tmp dir; the checks of
the bundles in ``results/`` themselves are in ``test_results_policy.py``.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import warnings
from pathlib import Path

import pandas as pd
import pytest
from conftest import PLUGINS, TOY_METHODS, run_toy_sweep

from bench import wire
from bench.bundle import (
    DEFAULT_MAX_SOLUTION_MB,
    PublishError,
    bundle_bytes,
    claims_difference,
    load_bundles,
    publish,
    trim_bundle,
)

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def _toy_sweep(tmp_path_factory):
    """One finished toy-mean sweep (2 seeds, 2 methods) for the whole module."""
    return run_toy_sweep(tmp_path_factory.mktemp("toy-sweep") / "runs", ("toy-sample-mean", "toy-noisy"), 2)


@pytest.fixture
def runs(_toy_sweep, tmp_path):
    dst = tmp_path / "runs"
    shutil.copytree(_toy_sweep, dst)
    return dst


def _publish(runs: Path, results: Path, **kw) -> Path:
    from bench.evaluator import probe_catalog
    from bench.registry import get_task
    from bench.store import Store

    store = Store(runs)
    sweep = [m.sweep for m in store.sweeps("toy-mean")][-1]
    catalog, _ = probe_catalog((TOY_METHODS,))
    return publish(store, get_task("toy-mean"), [sweep], results, origin="maintainers", author="ci", catalog=catalog, **kw)


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_publish_leaves_out_the_largest_solutions_until_the_bundle_fits(runs, tmp_path, cli):
    full = _publish(runs, tmp_path / "full")
    size, sols = bundle_bytes(full), {p.stem: p.stat().st_size for p in (full / "solutions").glob("*.npz")}
    assert len(sols) == 12 and json.loads((full / "manifest.json").read_text())["solutions_left_out"] == {}
    # a cap a few solutions below the full size: publish drops the largest until it fits
    cap = (size - 3.5 * max(sols.values())) / 2**20
    b = _publish(runs, tmp_path / "capped", max_bundle_mb=cap)
    manifest = json.loads((b / "manifest.json").read_text())
    left = manifest["solutions_left_out"]
    assert bundle_bytes(b) <= cap * 2**20 and 4 <= len(left["to_fit_bundle"]) < 12
    assert left["to_fit_bundle"] == sorted(left["to_fit_bundle"], key=lambda k: (-sols[k], k))  # largest first
    assert min(sols[k] for k in left["to_fit_bundle"]) >= max(v for k, v in sols.items() if k not in left["bytes"])
    assert left["max_bundle_mb"] == cap and left["max_solution_mb"] == DEFAULT_MAX_SOLUTION_MB
    assert "so that the bundle fits" in left["note"]
    recs = pd.read_parquet(b / "records.parquet").set_index("key")
    for k in left["bytes"]:
        assert f"solutions/{k}.npz" not in manifest["files"] and not (b / "solutions" / f"{k}.npz").exists()
        assert pd.isna(recs.loc[k, "solution_file"]) and len(recs.loc[k, "solution_sha256"]) == 64
        assert left["sha256"][k] == _sha(full / "solutions" / f"{k}.npz")
    rc, out, _ = cli("verify", "--task", "toy-mean", "--results", tmp_path / "capped")
    n = len(left["bytes"])
    assert rc == 0 and f"unverifiable {n}" in out and f"match {12 - n}" in out and "left out of the bundle" in out
    # records and metadata alone over the cap: refused, saying what to do
    with pytest.raises(PublishError, match=r"alone take .* over the 0.001 MB cap of a bundle: publish fewer sweeps"):
        _publish(runs, tmp_path / "tiny", max_bundle_mb=0.001)
    assert not list((tmp_path / "tiny" / "toy-mean").iterdir())  # no half-written bundle left behind


def test_publish_defaults_to_the_policy(cli, runs, tmp_path):
    from bench.cli import build_parser

    a = build_parser().parse_args(["publish", "--task", "toy-mean"])
    assert a.max_solution_mb == DEFAULT_MAX_SOLUTION_MB and not a.claims_only
    rc, out, err = cli("publish", "--task", "toy-mean", "--store", runs, "--results", tmp_path / "r", "--max-solution-mb", "1e-9")
    assert rc == 0 and "left out 12 solution files over 1e-09 MB" in out, err


def test_trim_keeps_the_hashes_valid_and_verify_calls_the_left_out_unverifiable(runs, tmp_path, cli):
    results = tmp_path / "results"
    b = _publish(runs, results)
    before = json.loads((b / "manifest.json").read_text())
    parquet_sha = _sha(b / "records.parquet")
    sols = {p.stem: p.stat().st_size for p in (b / "solutions").glob("*.npz")}
    cap = (bundle_bytes(b) - 2.5 * max(sols.values())) / 2**20
    removed = trim_bundle(b, max_bundle_mb=cap, commit="0123abc")
    assert 3 <= len(removed) < 12 and bundle_bytes(b) <= cap * 2**20
    assert all(not (b / r).exists() for r in removed) and _sha(b / "records.parquet") == parquet_sha
    after = json.loads((b / "manifest.json").read_text())
    left = after["solutions_left_out"]
    assert set(before["files"]) - set(after["files"]) == set(removed)
    assert {k: left["sha256"][k] for k in left["bytes"]} == {k: before["files"][f"solutions/{k}.npz"] for k in left["bytes"]}
    assert left["trimmed"]["commit"] == "0123abc" and left["trimmed"]["removed"] == len(removed)
    assert {k: v for k, v in after.items() if k not in ("files", "solutions_left_out")} == {
        k: v for k, v in before.items() if k not in ("files", "solutions_left_out")
    }
    # the records still name the removed files: verify reads the manifest, and calls them unverifiable
    recs = pd.read_parquet(b / "records.parquet")
    assert recs.set_index("key").loc[list(left["bytes"]), "solution_file"].notna().all()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the bundle still loads without a warning: its hashes hold
        assert len(load_bundles(results).records) == 12
    rc, out, _ = cli("verify", "--task", "toy-mean", "--results", results)
    assert rc == 0 and f"unverifiable {len(removed)}" in out and f"match {12 - len(removed)}" in out and "mismatch" not in out
    rc, out, _ = cli("verify", "--task", "toy-mean", "--results", results, "--sample", "1")
    assert rc == 0 and "match 2" in out  # a spot-check draws kept solutions first
    assert trim_bundle(b, max_bundle_mb=cap) == []  # already within the policy
    # a solution whose file was edited is refused before anything is removed
    keep = next(iter((b / "solutions").glob("*.npz")))
    keep.write_bytes(keep.read_bytes() + b"x")
    with pytest.raises(ValueError, match="sha256 does not match"):
        trim_bundle(b, max_bundle_mb=cap / 2)


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True).stdout.strip()


def test_export_writes_a_datasets_folder_with_every_solution(runs, tmp_path, cli, monkeypatch):
    datasets = pytest.importorskip("datasets")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    repo = tmp_path / "repo"
    b = _publish(runs, repo / "results")
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "bundle")
    sols = {p.stem: p.stat().st_size for p in (b / "solutions").glob("*.npz")}
    removed = trim_bundle(b, max_bundle_mb=(bundle_bytes(b) - 4.5 * max(sols.values())) / 2**20, commit=_git(repo, "rev-parse", "HEAD"))
    gone = {Path(r).stem for r in removed}
    assert len(gone) >= 4
    # from the run store: every solution, the left-out ones read from it
    rc, out, err = cli("export", b, "--output", tmp_path / "ds", "--store", runs)
    assert rc == 0 and f"12 of 12 solutions ({12 - len(gone)} from the bundle, {len(gone)} from the store)" in out, err
    card = (tmp_path / "ds" / "README.md").read_text()
    assert card.startswith("---\n") and "config_name: solutions" in card and "## Solutions not included" not in card
    records = pd.read_parquet(b / "records.parquet")
    rec = datasets.load_dataset("parquet", data_files=str(tmp_path / "ds" / "records" / "*.parquet"), split="train",
                                cache_dir=str(tmp_path / "cache")).to_pandas()  # fmt: skip
    assert list(rec["key"]) == list(records["key"]) and rec["metric.abs_err"].tolist() == records["metric.abs_err"].tolist()
    sol = datasets.load_dataset(str(tmp_path / "ds"), "solutions", split="train", cache_dir=str(tmp_path / "cache"))
    assert len(sol) == 12
    by_key = records.set_index("key")
    for row in sol:
        assert wire.digest(wire.load_npz(row["npz"])) == row["solution_sha256"] == by_key.loc[row["key"], "solution_sha256"]
        assert row["source"] == ("store" if row["key"] in gone else "bundle") and row["missing"] is None
    assert json.loads((tmp_path / "ds" / "bundle" / "manifest.json").read_text()) == json.loads((b / "manifest.json").read_text())
    # no store: the git commit that held the files before the trim gives them back
    rc, out, err = cli("export", b.name, "--task", "toy-mean", "--results", repo / "results", "--output", tmp_path / "ds2",
                       "--store", tmp_path / "empty")  # fmt: skip
    assert rc == 0 and f"{len(gone)} from the git" in out, err
    # neither: the export says which are missing, in its output and its card
    manifest = json.loads((b / "manifest.json").read_text())
    manifest["solutions_left_out"]["trimmed"]["commit"] = None
    (b / "manifest.json").write_text(json.dumps(manifest, indent=1))
    rc, out, err = cli("export", b, "--output", tmp_path / "ds3", "--store", tmp_path / "empty")
    assert rc == 0 and f"{len(gone)} solution(s) not included" in out, err
    card = (tmp_path / "ds3" / "README.md").read_text()
    assert "## Solutions not included" in card and all(f"`{k}`: not in the store" in card for k in gone)
    table = pd.read_parquet(tmp_path / "ds3" / "solutions")
    assert set(table.loc[table["npz"].isna(), "key"]) == gone and table["missing"].notna().sum() == len(gone)
    # bad input: one line, exit 2
    rc, _, err = cli("export", b, "--output", tmp_path / "ds3")
    assert rc == 2 and "exists and is not an empty folder" in err
    rc, _, err = cli("export", "nope", "--results", repo / "results", "--output", tmp_path / "ds4")
    assert rc == 2 and "nope: no such bundle directory" in err


def test_claims_only_refresh_becomes_the_newest_snapshot(runs, tmp_path, cli, monkeypatch):
    from bench.registry import get_task

    results = tmp_path / "results"
    rc, out, err = cli("publish", "--task", "toy-mean", "--claims-only", "--results", results)
    assert rc == 2 and "no published results bundle of toy-mean" in err
    b = _publish(runs, results)
    task = get_task("toy-mean")
    rc, out, err = cli("publish", "--task", "toy-mean", "--claims-only", "--results", results)
    assert rc == 0 and "agrees with its claims.toml" in out and len(list((results / "toy-mean").iterdir())) == 1, err
    rc, _, err = cli("publish", "--task", "toy-mean", "--claims-only", "--sweep", "x", "--results", results)
    assert rc == 2 and "--claims-only publishes no runs: drop --sweep" in err
    # claims.toml changes after publishing: the snapshot is stale, and says where
    edited = tmp_path / "toy"
    shutil.copytree(PLUGINS / "toy", edited)
    text = (edited / "claims.toml").read_text()
    (edited / "claims.toml").write_text(text.replace("value = 0.5", "value = 0.25", 1))
    monkeypatch.setattr(type(task), "data_dir", edited)
    diff = claims_difference(task, load_bundles(results))
    assert diff is not None and f"bundle {b.name}" in diff and "claim mean-accurate (comparison.value: snapshot 0.5, claims files now 0.25)" in diff
    assert "run `python -m bench publish --claims-only --task toy-mean`" in diff
    claims_before = (b / "claims.json").read_text()
    rc, out, err = cli("publish", "--task", "toy-mean", "--claims-only", "--results", results, "--author", "ci")
    assert rc == 0 and "wrote" in out, err
    (new,) = [p for p in (results / "toy-mean").iterdir() if p != b]
    assert "-claims-" in new.name and sorted(p.name for p in new.iterdir()) == ["claims.json", "manifest.json"]
    manifest = json.loads((new / "manifest.json").read_text())
    assert manifest["kind"] == "claims" and manifest["replaces_claims_of"] == b.name and manifest["author"] == "ci"
    assert (b / "claims.json").read_text() == claims_before  # the results bundle is never edited
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        loaded = load_bundles(results)
    assert loaded.claims_source["toy-mean"] == new.name and claims_difference(task, loaded) is None
    assert list(loaded.manifests) == [str(b)] and list(loaded.claims_bundles) == [str(new)] and len(loaded.records) == 12
    assert loaded.claims["toy-mean"][0]["comparison"]["value"] == 0.25
    rc, out, _ = cli("claims", "--task", "toy-mean", "--results", results, "--format", "json")
    assert rc == 0 and {r["id"]: r["verdict"] for r in json.loads(out)}["mean-accurate"] == "confirmed"
    # a claims-only bundle is checked against its manifest like any other
    (new / "claims.json").write_text((new / "claims.json").read_text().replace("0.25", "0.3"))
    with pytest.warns(UserWarning, match=rf"{new.name}: bundle skipped .*claims.json: sha256"):
        assert load_bundles(results).claims_source["toy-mean"] == b.name
    (new / "claims.json").write_text((new / "claims.json").read_text().replace("0.3", "0.25"))
    # a second edit: the newer snapshot replaces the earlier claims-only bundle
    (edited / "claims.toml").write_text(text.replace("value = 0.5", "value = 0.2", 1))
    rc, out, err = cli("publish", "--task", "toy-mean", "--claims-only", "--results", results)
    assert rc == 0 and f"removed the earlier claims-only bundle(s) {new.name}" in out, err
    assert not new.exists() and len(list((results / "toy-mean").iterdir())) == 2
    rc, _, err = cli("publish", "--task", "toy-mean", "--store", runs, "--results", results, "--supersedes",
                     next(p.name for p in (results / "toy-mean").iterdir() if "-claims-" in p.name))  # fmt: skip
    assert rc == 2 and "a claims-only bundle holds no records to replace" in err
