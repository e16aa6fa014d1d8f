"""The CLI, called in-process: every command, and one-line errors with exit code 2."""

from __future__ import annotations

import getpass
import json
import shutil
import warnings

import numpy as np
import pandas as pd
import pytest
from conftest import TOY_METHODS, run_toy_sweep

TOY3 = ("toy-sample-mean", "toy-noisy", "toy-first")

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def _toy_sweep(tmp_path_factory):
    """One finished toy-mean sweep (3 seeds) for the whole module (a sweep costs seconds)."""
    return run_toy_sweep(tmp_path_factory.mktemp("toy-sweep") / "runs", TOY3, 3)


@pytest.fixture
def toy_run(_toy_sweep, tmp_path):
    """A private copy of the finished toy-mean sweep: tests may change or extend it."""
    dst = tmp_path / "runs"
    shutil.copytree(_toy_sweep, dst)
    return dst


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["run", "--task", "knapsak"], "unknown task 'knapsak'; did you mean 'knapsack'?"),
        (["run", "--task", "knapsack", "--method", "gredy", "--no-progress"], "unknown method 'gredy'; did you mean 'greedy'"),
        (["run", "--task", "knapsack", "--tier", "smok", "--no-progress"], "unknown tier 'smok'; did you mean 'smoke'?"),
        (["run", "--task", "knapsack", "--instances", "nope", "--no-progress"], "unknown instance of task knapsack 'nope'"),
        (["run", "--task", "knapsack", "--seeds", "0"], "--seeds: expected a positive integer"),
        (["run", "--task", "knapsack", "--budget", "-1"], "--budget: expected a positive number"),
        (["run", "--task", "knapsack", "--backend", "mpi", "--no-progress"], "unknown backend 'mpi'"),
        (["run"], "the following arguments are required: --task"),
        (["show", "--task", "nope"], "unknown task 'nope'"),
        (["frobnicate"], "invalid choice: 'frobnicate'"),
        (["list", "instances"], "list instances needs --task"),
        (["publish", "--task", "knapsack", "--sweep", "nope"], "unknown sweep 'nope'"),
        (["validate", "/no/such/file.py"], "no such file"),
        (["new-method", "--task", "knapsack", "--name", "Bad Name"], "must be lower case"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(cli, store, args, message):
    rc, out, err = cli(*args, *(["--store", store] if args[0] in ("run", "publish") and "--store" not in args else []))
    assert rc == 2
    assert message in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_list(cli):
    rc, out, _ = cli("list")
    assert rc == 0 and "knapsack" in out and "toy-mean" in out
    rc, out, _ = cli("list", "instances", "--task", "toy-mean", "--tier", "smoke")
    assert rc == 0 and "mu0" in out and "mu2" in out
    rc, out, _ = cli("list", "methods", "--task", "knapsack")
    assert rc == 0 and "greedy" in out and "dp" in out
    rc, out, _ = cli("list", "methods", "--plugin", TOY_METHODS, "--task", "toy-mean")
    assert rc == 0 and "toy-sample-mean" in out


def test_run_then_show_in_every_format(cli, toy_run):
    rc, out, _ = cli("show", "--task", "toy-mean", "--store", toy_run, "--format", "csv")
    assert rc == 0
    from io import StringIO

    table = pd.read_csv(StringIO(out))
    assert set(table["method"]) == {"toy-sample-mean", "toy-noisy", "toy-first"}
    mean_rows = table[table["method"] == "toy-sample-mean"]
    assert (mean_rows["runs"] == 3).all() and (mean_rows["ok"] == 3).all()
    assert mean_rows["ci_low"].isna().all() and mean_rows["ci_high"].isna().all()  # deterministic: no CI, never [x, x]
    noisy = table[table["method"] == "toy-noisy"]
    assert (noisy["ci_low"] < noisy["mean"]).all() and (noisy["mean"] < noisy["ci_high"]).all()
    assert table.loc[(table["method"] == "toy-first") & (table["instance"] == "mu2"), "skipped"].item() == 3
    rc, out, _ = cli("show", "--task", "toy-mean", "--store", toy_run, "--format", "json")
    assert rc == 0 and len(json.loads(out)) == len(table)
    rc, out, _ = cli("show", "--task", "toy-mean", "--store", toy_run)
    assert rc == 0 and "toy-sample-mean" in out and "95% CI" in out


def test_publish_claims_verify(cli, toy_run, tmp_path):
    results = tmp_path / "results"
    rc, out, err = cli("publish", "--task", "toy-mean", "--store", toy_run, "--results", results, "--origin", "maintainers", "--author", "ci")
    assert rc == 0, err
    bundles = list((results / "toy-mean").iterdir())
    assert len(bundles) == 1
    b = bundles[0]
    for name in ("records.parquet", "manifest.json", "task.json", "claims.json", "methods.json"):
        assert (b / name).exists()
    manifest = json.loads((b / "manifest.json").read_text())
    assert manifest["origin"] == "maintainers" and manifest["author"] == "ci" and manifest["records"] == 27
    assert "origin: maintainers, author: ci" in out and "the default" not in out
    assert manifest["status_counts"] == {"ok": 24, "skipped": 3}
    assert "bench run --task toy-mean" in manifest["sweeps"][0]["command"]
    assert json.loads((b / "claims.json").read_text())["paper_results"][0]["value"] == 0.07
    # publishing the same sweep twice is refused
    rc, _, err = cli("publish", "--task", "toy-mean", "--store", toy_run, "--results", results)
    assert rc == 2 and "already published" in err

    rc, out, _ = cli("claims", "--task", "toy-mean", "--results", results, "--format", "json")
    verdicts = {r["id"]: r["verdict"] for r in json.loads(out)}
    assert verdicts == {
        "mean-accurate": "confirmed",
        "noise-helps": "contradicted",
        "gpu-speed": "not testable here",
        "standard-only": "not testable here",
    }
    rc, out, _ = cli("claims", "--task", "toy-mean", "--results", results, "--format", "markdown")
    assert rc == 0 and "| mean-accurate |" in out
    # --update rewrites only the generated block of a README, and is idempotent
    readme = tmp_path / "README.md"
    readme.write_text("# toy\nbefore\n<!-- BEGIN GENERATED: python -m bench claims --task toy-mean --format markdown -->\nstale\n<!-- END GENERATED -->\nafter\n")
    rc, out, err = cli("claims", "--task", "toy-mean", "--results", results, "--update", readme)
    assert rc == 0 and "updated" in out, err
    text = readme.read_text()
    assert "stale" not in text and text.startswith("# toy\nbefore\n") and text.endswith("<!-- END GENERATED -->\nafter\n")
    assert "| mean-accurate |" in text and b.name in text
    rc, out, _ = cli("claims", "--task", "toy-mean", "--results", results, "--update", readme)
    assert rc == 0 and "already up to date" in out and readme.read_text() == text
    readme.write_text("no markers here\n")
    rc, _, err = cli("claims", "--task", "toy-mean", "--results", results, "--update", readme)
    assert rc == 2 and "no '<!-- BEGIN GENERATED" in err and readme.read_text() == "no markers here\n"

    # our method beside the paper's per-instance numbers, in its own generated block
    readme.write_text(
        "<!-- BEGIN GENERATED: python -m bench claims --task toy-mean --format markdown -->\nclaims\n<!-- END GENERATED -->\n"
        "<!-- BEGIN GENERATED: python -m bench claims --task toy-mean --versus-paper toy-sample-mean -->\nold\n<!-- END GENERATED -->\n"
    )
    rc, out, err = cli("claims", "--task", "toy-mean", "--results", results, "--versus-paper", "toy-sample-mean", "--update", readme)
    assert rc == 0 and "updated" in out, err
    text = readme.read_text()
    assert "claims\n" in text and "old" not in text  # only the versus block changed
    assert "| mu0 | 0.07 |" in text and "2 instances, metric `abs_err`" in text
    rc, out, _ = cli("claims", "--task", "toy-mean", "--results", results, "--versus-paper", "toy-noisy")
    assert rc == 2  # the paper reports nothing for toy-noisy

    rc, out, _ = cli("verify", "--task", "toy-mean", "--results", results)
    assert rc == 0 and "match 24" in out
    scored = pd.read_parquet(b / "records.parquet").query("status in ['ok', 'truncated', 'invalid']")
    pairs = len(scored.groupby(["method", "instance"]))
    rc, out, _ = cli("verify", "--task", "toy-mean", "--results", results, "--sample", "1", "--per", "instance")
    assert rc == 0 and f"spot-check: {pairs} records (1 per method and instance" in out
    rc, _, err = cli("verify", "--task", "toy-mean", "--results", results, "--per", "instance")
    assert rc == 2 and "--per draws a spot-check: give --sample N" in err
    # tamper with one solution: verify must notice
    sol = next((b / "solutions").glob("*.npz"))
    from bench import wire

    wire.save_npz(str(sol), np.array(123.0))
    rc, out, _ = cli("verify", "--task", "toy-mean", "--results", results)
    assert rc == 1 and "mismatch" in out
    # tamper with the records: the bundle no longer matches its manifest and is skipped, which
    # verify must report as a failure, not as "nothing to verify"
    df = pd.read_parquet(b / "records.parquet")
    df.loc[0, "metric.abs_err"] = 0.0
    df.to_parquet(b / "records.parquet")
    rc, out, _ = cli("verify", "--task", "toy-mean", "--results", results)
    assert rc == 1 and "not verified" in out and "records.parquet" in out and "1 bundle(s) skipped" in out
    rc, _, err = cli("verify", "--task", "toy-meen", "--results", results)
    assert rc == 2 and "toy-meen" in err
    rc, _, err = cli("verify", "--task", "toy-mean", "--results", tmp_path / "nowhere")
    assert rc == 2 and "no such directory" in err


def test_publish_can_leave_out_large_solutions_and_verify_says_so(cli, toy_run, tmp_path):
    results = tmp_path / "results"
    rc, _, err = cli("publish", "--task", "toy-mean", "--store", toy_run, "--results", results, "--max-solution-mb", "0")
    assert rc == 2 and "must be positive" in err
    rc, out, err = cli("publish", "--task", "toy-mean", "--store", toy_run, "--results", results, "--max-solution-mb", "1e-9")
    assert rc == 0 and "left out 24 solution files over 1e-09 MB" in out, err
    (b,) = (results / "toy-mean").iterdir()
    manifest = json.loads((b / "manifest.json").read_text())
    assert len(manifest["solutions_left_out"]["bytes"]) == 24 and manifest["solutions_left_out"]["max_solution_mb"] == 1e-9
    assert not list((b / "solutions").iterdir()) and not any(f.startswith("solutions/") for f in manifest["files"])
    recs = pd.read_parquet(b / "records.parquet")
    ok = recs[recs["status"] == "ok"]
    assert ok["solution_file"].isna().all() and ok["solution_sha256"].str.len().eq(64).all()
    rc, out, _ = cli("verify", "--task", "toy-mean", "--results", results)
    assert rc == 0 and "unverifiable 24" in out and "mismatch" not in out


def test_publish_default_author_by_origin(cli, toy_run, tmp_path):
    # a maintainers' bundle names the maintainers, not the login that ran publish
    for origin, expected in (("maintainers", "bench maintainers"), ("submitted", getpass.getuser())):
        results = tmp_path / origin
        rc, _, err = cli("publish", "--task", "toy-mean", "--store", toy_run, "--results", results, "--origin", origin)
        assert rc == 0, err
        (bundle,) = (results / "toy-mean").iterdir()
        assert json.loads((bundle / "manifest.json").read_text())["author"] == expected


def test_publish_refuses_runs_on_a_methods_development_seeds(toy_run, tmp_path):
    from bench.bundle import PublishError, publish
    from bench.registry import get_task
    from bench.store import Store

    store = Store(toy_run)
    (sweep,) = [m.sweep for m in store.sweeps("toy-mean")]
    version = store.frame("toy-mean").query("method == 'toy-noisy'")["method_version"].iloc[0]

    def catalog(dev):
        return [{"name": m, "version": version, "development_seeds": dev if m == "toy-noisy" else []} for m in TOY3]

    def pub(dev, results):
        return publish(store, get_task("toy-mean"), [sweep], results, origin="maintainers", author="ci", catalog=catalog(dev))

    # the sweep ran on master seed 0: declared as toy-noisy's development seed, it may not be published
    with pytest.raises(PublishError, match=r"toy-noisy version \S+ ran on master seed 0 .*development_seeds"):
        pub([{"master_seed": 0, "instances": None}], tmp_path / "a")
    assert not (tmp_path / "a" / "toy-mean").exists() or not any((tmp_path / "a" / "toy-mean").iterdir())
    # development runs on other instances, another seed, or another version do not block it
    assert pub([{"master_seed": 0, "instances": ["no-such-instance"]}, {"master_seed": 7, "instances": None}], tmp_path / "b").exists()
    stale = [{**m, "version": "v-other"} if m["name"] == "toy-noisy" else m for m in catalog([{"master_seed": 0, "instances": None}])]
    assert publish(store, get_task("toy-mean"), [sweep], tmp_path / "c", origin="maintainers", author="ci", catalog=stale).exists()
    # a method whose metadata cannot be read (its plugin moved) is named, not published without it
    with pytest.raises(PublishError, match=r"no metadata for toy-first: .*--plugin PATH"):
        publish(store, get_task("toy-mean"), [sweep], tmp_path / "d", origin="maintainers", author="ci", catalog=stale[:2])


def _publish_first(cli, toy_run, tmp_path):
    """The toy sweep published as a maintainers' bundle: ``(results folder, bundle directory)``."""
    results = tmp_path / "results"
    rc, _, err = cli("publish", "--task", "toy-mean", "--store", toy_run, "--results", results, "--origin", "maintainers")
    assert rc == 0, err
    (old,) = (results / "toy-mean").iterdir()
    return results, old


def test_a_rerun_published_with_supersedes_replaces_the_old_bundle(cli, toy_run, tmp_path):
    results, old = _publish_first(cli, toy_run, tmp_path)
    rc, _, err = cli("publish", "--task", "toy-mean", "--store", toy_run, "--results", results, "--origin", "maintainers", "--supersedes", "20000101-nope")
    assert rc == 2 and "--supersedes 20000101-nope: no such bundle" in err and old.name in err
    rc, _, err = cli("publish", "--task", "toy-mean", "--store", toy_run, "--results", results, "--origin", "maintainers", "--supersedes", f"{old.name}/")
    assert rc == 2 and "give the bundle's directory name" in err  # a path would match no bundle at load time
    rc, _, err = cli("publish", "--task", "toy-mean", "--store", toy_run, "--results", results, "--supersedes", old.name)
    assert rc == 2 and "submitted bundle cannot replace the maintainers'" in err
    rc, out, err = cli("publish", "--task", "toy-mean", "--store", toy_run, "--results", results, "--origin", "maintainers", "--supersedes", old.name)
    assert rc == 0 and f"supersedes {old.name}" in out, err
    (new,) = {p for p in (results / "toy-mean").iterdir()} - {old}
    assert json.loads((new / "manifest.json").read_text())["supersedes"] == [old.name]
    from bench.bundle import load_bundles

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the same jobs twice, but no "repeat jobs" warning: one bundle replaces the other
        b = load_bundles(results)
    assert b.superseded == {old.name: [new.name]} and set(b.records["bundle"]) == {new.name} and len(b.records) == 27
    rc, out, _ = cli("claims", "--task", "toy-mean", "--results", results, "--format", "json")
    assert rc == 0 and {r["id"]: r["verdict"] for r in json.loads(out)}["mean-accurate"] == "confirmed"


def test_replace_methods_supersedes_a_method_whose_job_keys_changed(cli, toy_run, tmp_path):
    """A method rerun with other parameters (new job keys) replaces only that method's old records."""
    results, old = _publish_first(cli, toy_run, tmp_path)
    rerun = ("run", "--task", "toy-mean", "--plugin", TOY_METHODS, "--method", "toy-noisy", "--param", "scale=0.1",
             "--seeds", "3", "--store", toy_run, "--no-progress")  # fmt: skip
    rc, _, err = cli(*rerun)
    assert rc == 0, err
    publish = ("publish", "--task", "toy-mean", "--store", toy_run, "--results", results, "--origin", "maintainers")
    rc, _, err = cli(*publish, "--replace-methods")
    assert rc == 2 and "--replace-methods needs --supersedes" in err
    rc, out, err = cli(*publish, "--supersedes", old.name, "--replace-methods")
    assert rc == 0 and f"supersedes {old.name}; every record of toy-noisy there" in out, err
    (new,) = {p for p in (results / "toy-mean").iterdir()} - {old}
    assert json.loads((new / "manifest.json").read_text())["supersedes_methods"] == ["toy-noisy"]
    from bench.bundle import load_bundles

    b = load_bundles(results)
    noisy = b.records[b.records["method"] == "toy-noisy"]
    assert set(noisy["bundle"]) == {new.name} and len(noisy) == 9  # 3 smoke instances x 3 seeds
    assert all(p["scale"] == 0.1 for p in noisy["params"].map(lambda v: json.loads(v) if isinstance(v, str) else v))
    others = b.records[b.records["method"] != "toy-noisy"]
    assert set(others["bundle"]) == {old.name} and set(others["method"]) == {"toy-sample-mean", "toy-first"}
    assert b.superseded == {old.name: [new.name]}


def test_replace_instances_supersedes_the_rerun_instance_and_methods_only(cli, toy_run, tmp_path):
    """A rerun of one instance (new job keys: here another master seed) replaces those methods' records there."""
    results, old = _publish_first(cli, toy_run, tmp_path)
    from bench.bundle import load_bundles

    first = load_bundles(results).records
    instance = sorted(set(first["instance"]))[0]
    rerun = ("run", "--task", "toy-mean", "--plugin", TOY_METHODS, "--method", "toy-noisy", "toy-first",
             "--instances", instance, "--seed", "5", "--seeds", "3", "--store", toy_run, "--no-progress")  # fmt: skip
    rc, _, err = cli(*rerun)
    assert rc == 0, err
    publish = ("publish", "--task", "toy-mean", "--store", toy_run, "--results", results, "--origin", "maintainers")
    rc, _, err = cli(*publish, "--replace-instances")
    assert rc == 2 and "--replace-instances needs --supersedes" in err
    rc, out, err = cli(*publish, "--supersedes", old.name, "--replace-instances")
    assert rc == 0 and f"every record of these methods on {instance} there" in out, err
    (new,) = {p for p in (results / "toy-mean").iterdir()} - {old}
    assert json.loads((new / "manifest.json").read_text())["supersedes_instances"] == [instance]
    b = load_bundles(results)
    assert len(b.records) == len(first)  # 6 replaced by 6
    moved = (b.records["instance"] == instance) & b.records["method"].isin(["toy-noisy", "toy-first"])
    assert set(b.records[moved]["bundle"]) == {new.name} and set(b.records[moved]["master_seed"]) == {5}
    assert set(b.records[~moved]["bundle"]) == {old.name}  # toy-sample-mean there, and every other instance
    assert b.superseded == {old.name: [new.name]}


def test_publish_leaves_out_reused_jobs_that_are_already_published(cli, toy_run, tmp_path):
    """A sweep that reuses stored jobs (here: one more seed) publishes only what it ran itself."""
    results, old = _publish_first(cli, toy_run, tmp_path)
    n_old = json.loads((old / "manifest.json").read_text())["records"]
    run = ("run", "--task", "toy-mean", "--plugin", TOY_METHODS, "--method", *TOY3, "--store", toy_run, "--no-progress")
    rc, _, err = cli(*run, "--seeds", "4")
    assert rc == 0, err
    rc, out, err = cli("publish", "--task", "toy-mean", "--store", toy_run, "--results", results, "--origin", "maintainers")
    assert rc == 0 and f"left out {n_old} records the sweep reused from the store: already published in {old.name}" in out, out + err
    (new,) = {p for p in (results / "toy-mean").iterdir()} - {old}
    manifest = json.loads((new / "manifest.json").read_text())
    assert manifest["left_out_already_published"] == {old.name: n_old} and manifest["records"] == n_old // 3
    from bench.bundle import load_bundles

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "repeat jobs" warning
        b = load_bundles(results)
    assert len(b.records) == n_old + n_old // 3 and b.records["key"].is_unique
    rc, _, err = cli(*run, "--seeds", "2")  # nothing new
    assert rc == 0, err
    rc, _, err = cli("publish", "--task", "toy-mean", "--store", toy_run, "--results", results, "--origin", "maintainers")
    assert rc == 2 and "is already published" in err, err


def test_publish_refuses_an_unfinished_sweep(cli, toy_run, tmp_path):
    victim = next(toy_run.glob("toy-mean/*/*.json"))
    victim.unlink()
    rc, _, err = cli("publish", "--task", "toy-mean", "--store", toy_run, "--results", tmp_path / "r")
    assert rc == 2 and "have no record" in err


def test_verify_local_store(cli, toy_run):
    rc, out, _ = cli("verify", "--task", "toy-mean", "--store", toy_run)
    assert rc == 0 and "match 24" in out


def test_new_method_scaffold_passes_validate(cli, tmp_path):
    path = tmp_path / "my_method.py"
    rc, out, err = cli("new-method", "--task", "knapsack", "--name", "my-method", "--output", path)
    assert rc == 0, err
    assert "@method(" in path.read_text()
    rc, out, err = cli("validate", path)
    assert rc == 0, out + err
    assert "PASSED" in out and "determinism" in out
    rc, _, err = cli("new-method", "--task", "knapsack", "--name", "my-method", "--output", path)
    assert rc == 2 and "already exists" in err


def test_validate_reports_failures(cli, tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text(
        "import numpy as np\nfrom bench import method\n"
        "@method(name='bad-len', kind='baseline', tasks=['knapsack'], deterministic=True)\n"
        "def solve(instance, *, seed, budget):\n    return np.zeros(3, dtype=int)\n"
        "@method(name='bad-sig', kind='baseline', tasks=['knapsack'])\n"
        "def solve2(instance):\n    return None\n"
        "@method(name='bad-task', kind='baseline', tasks=['knapsak'])\n"
        "def solve3(instance, *, seed, budget):\n    return None\n"
    )
    rc, out, _ = cli("validate", bad)
    assert rc == 1 and "FAILED" in out
    assert "did you mean 'knapsack'" in out
    assert "must accept the keyword argument 'seed'" in out
    assert "invalid" in out  # bad-len's smoke runs are rejected by the verifier
    broken = tmp_path / "broken.py"
    broken.write_text("import no_such_module_xyz\n")
    rc, out, _ = cli("validate", broken)
    assert rc == 1 and "No module named 'no_such_module_xyz'" in out.replace("\n", "")


def test_store_is_untouched_by_show_and_claims(cli, toy_run, tmp_path):
    before = sorted(p.name for p in toy_run.rglob("*"))
    cli("show", "--task", "toy-mean", "--store", toy_run)
    cli("claims", "--task", "toy-mean", "--store", toy_run)
    assert sorted(p.name for p in toy_run.rglob("*")) == before
    shutil.rmtree(toy_run)


def test_instances_without_tier_get_the_tier_that_holds_them(capsys):
    from bench.cli import _run_tier

    assert _run_tier("pde", None, None) == "smoke"
    assert _run_tier("pde", None, ["burgers-nu0.02-N588"]) == "smoke"  # smoke and standard: the first
    assert _run_tier("pde", None, ["burgers-nu0.02-N10800"]) == "standard"  # once labelled smoke by default
    assert _run_tier("pde", None, ["burgers-nu0.02-N588", "burgers-nu0.02-N2352"]) == "full"
    assert capsys.readouterr().err == ""
    assert _run_tier("pde", "smoke", ["burgers-nu0.02-N10800"]) == "smoke"  # explicit: obeyed, with a warning
    assert "burgers-nu0.02-N10800 not in the smoke tier" in capsys.readouterr().err
    assert _run_tier("pde", None, ["burgers-nu0.005-N300"]) == "smoke" and capsys.readouterr().err == ""  # in no tier


def test_publish_refuses_records_whose_solution_left_the_store(cli, toy_run, tmp_path):
    import shutil

    store = tmp_path / "store"
    shutil.copytree(toy_run, store)
    victim = next(store.glob("toy-mean/*/*.npz"))
    victim.unlink()  # a store file lost after its record was written
    rc, _, err = cli("publish", "--task", "toy-mean", "--store", store, "--results", tmp_path / "results")
    assert rc == 2 and "missing from the store" in err and victim.name in err
    assert not (tmp_path / "results" / "toy-mean").exists() or not any((tmp_path / "results" / "toy-mean").iterdir())


def test_a_publish_in_progress_is_not_read_as_a_bundle(cli, toy_run, tmp_path):
    import shutil

    from bench.bundle import load_bundles

    results = tmp_path / "results"
    rc, _, err = cli("publish", "--task", "toy-mean", "--store", toy_run, "--results", results)
    assert rc == 0, err
    (b,) = (results / "toy-mean").iterdir()
    shutil.copytree(b, b.parent / f".{b.name}-again.tmp")  # what a crash mid-publish would leave
    loaded = load_bundles(results, "toy-mean")
    assert list(loaded.manifests) == [str(b)] and not loaded.warnings
