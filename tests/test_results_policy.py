"""The bundles in results/ keep to the repository's policy.

- Size: a bundle keeps at most ``bench.bundle.MAX_BUNDLE_MB`` in git (every
  file counted); larger solutions are left out with their hashes
  (``solutions_left_out``) and ``bench export`` puts them back.
- Claims: each task's claims snapshot (the ``claims.json`` of the newest bundle
  holding one, which the leaderboard shows) equals ``tasks/<family>/claims.toml``
  and ``paper_results.csv``; ``bench publish --claims-only --task T`` refreshes it.
"""

from __future__ import annotations

import subprocess
import warnings
from pathlib import Path

import pytest
from conftest import ROOT

from bench.bundle import MAX_BUNDLE_MB, claims_difference, left_out_solutions, load_bundles

RESULTS = ROOT / "results"
BUNDLES = sorted(
    p.parent for p in RESULTS.glob("*/*/manifest.json") if not p.parent.name.startswith(".")
)


def bundle_bytes_in_git(bdir: Path) -> int:
    """Bytes of the files of ``bdir`` that git holds or would add (tracked, or untracked and not ignored).

    Outside a git checkout, every file under ``bdir`` counts.
    """
    try:
        out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", "."],
                             cwd=bdir, capture_output=True, check=True, timeout=60).stdout  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return sum(p.stat().st_size for p in bdir.rglob("*") if p.is_file())
    paths = {bdir / name for name in out.decode().split("\0") if name}
    return sum(
        p.stat().st_size for p in paths if p.is_file()
    )  # a deleted, still-tracked file is gone


def oversized(bundles: list[Path], cap_mb: float = MAX_BUNDLE_MB) -> list[str]:
    """One line per bundle over ``cap_mb`` MiB in git, naming it, its size and what to do."""
    out = []
    for b in bundles:
        size = bundle_bytes_in_git(b)
        if size > cap_mb * 2**20:
            out.append(f"{b.relative_to(b.parent.parent.parent)}: {size / 2**20:.2f} MB in git, over the {cap_mb:g} MB cap of a bundle; "
                       "publish with the default --max-solution-mb (or trim it with bench.bundle.trim_bundle)")  # fmt: skip
    return out


def test_no_bundle_in_results_exceeds_the_cap():
    assert BUNDLES, "no bundle under results/"
    assert not oversized(BUNDLES), "\n".join(oversized(BUNDLES))


def test_the_cap_check_counts_what_git_would_hold(tmp_path):
    b = tmp_path / "results" / "t" / "20260101-maintainers-0000000000"
    (b / "solutions").mkdir(parents=True)
    (b / "manifest.json").write_text("{}")
    (b / "solutions" / "big.npz").write_bytes(b"\0" * (2**20 + 1))
    (msg,) = oversized([b], cap_mb=1.0)
    assert (
        msg.startswith(
            "results/t/20260101-maintainers-0000000000: 1.00 MB in git, over the 1 MB cap"
        )
        and "--max-solution-mb" in msg
    )
    assert oversized([b], cap_mb=2.0) == []


@pytest.mark.parametrize("task", sorted({b.parent.name for b in BUNDLES}))
def test_claims_snapshot_matches_claims_toml(task):
    from bench.registry import get_task

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bundles = load_bundles(RESULTS, task)
    assert task in bundles.claims_source, f"no readable bundle of {task} under results/"
    diff = claims_difference(get_task(task), bundles)
    assert diff is None, diff


def test_left_out_solutions_are_gone_from_the_tree_and_keep_their_hashes():
    """What a manifest says it left out is not in the bundle, and every record of it keeps its digest."""
    import pandas as pd

    from bench.bundle import checked_manifest

    for b in BUNDLES:
        manifest = checked_manifest(b)
        left = left_out_solutions(manifest)
        if not left:
            continue
        table = manifest["solutions_left_out"]
        assert not any((b / "solutions" / f"{k}.npz").exists() for k in left), b
        assert not any(f"solutions/{k}.npz" in manifest["files"] for k in left), b
        recs = pd.read_parquet(b / "records.parquet", columns=["key", "solution_sha256"]).set_index(
            "key"
        )
        assert recs.loc[list(left), "solution_sha256"].str.len().eq(64).all(), b
        if "trimmed" in table:  # every file the trim removed keeps the sha256 its manifest listed
            assert (
                len(table["sha256"]) >= table["trimmed"]["removed"] > 0
                and table["trimmed"]["commit"]
            ), b


#: Tasks published without a smoke-tier reference bundle, and why (README, "Submitting a method").
NO_SMOKE_REFERENCE = {
    "maxcut": "five methods changed version in e2e60887; their standard-tier runs are rerun first (issue 43)",
}


@pytest.mark.long  # probes the method catalogue (about 5 s) and reads every task's bundles
def test_every_published_task_has_a_smoke_reference_bundle_of_all_its_methods():
    """`bench show --task T --tier smoke` ranks a first smoke run against every method of T."""
    from bench.evaluator import probe_catalog

    catalog, _ = probe_catalog()
    gaps = []
    for task in sorted({b.parent.name for b in BUNDLES}):
        if task in NO_SMOKE_REFERENCE:
            continue
        methods = {m["name"] for m in catalog if task in m["tasks"]}
        records = load_bundles(RESULTS, task, warn=False).records
        smoke = (
            set(records.loc[records["tier"] == "smoke", "method"]) if not records.empty else set()
        )
        if methods - smoke:
            gaps.append(f"{task}: no published smoke run of {sorted(methods - smoke)}")
    assert not gaps, (
        "\n".join(gaps)
        + "\n(run `bench run --task T --tier smoke`, then `bench publish --task T --origin maintainers`)"
    )
    assert set(NO_SMOKE_REFERENCE) <= {b.parent.name for b in BUNDLES}
