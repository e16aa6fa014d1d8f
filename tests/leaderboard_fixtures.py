"""Real result bundles for the leaderboard tests, built once per session.

``published``: a results directory with two bundles made by real ``bench run``
and ``bench publish`` invocations: ``toy-mean`` (the test-only task, with a
paper method, three baselines, an anytime baseline with verified checkpoints
and a skipped instance; 2 seeds) and ``knapsack`` (two instances, three
baselines and no paper method; 2 seeds). ``store``: the run store they came
from. Tests that alter bundles copy them first.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import PLUGINS, TOY_METHODS

LB_METHODS = str(PLUGINS / "leaderboard_methods.py")
KNAPSACK_INSTANCES = ("uncorrelated-n20-s0", "strongly-correlated-n20-s0")


def _bench(*args: object) -> None:
    from bench.cli import main

    rc = main([str(a) for a in args])
    assert rc == 0, f"bench {' '.join(map(str, args))} exited {rc}"


_BUILT: dict[str, dict[str, Path]] = {}


@pytest.fixture(scope="session")
def lb_source(tmp_path_factory) -> dict[str, Path]:
    # Each test module imports this fixture, which makes one fixture per module:
    # the module-level cache keeps it to one build per session.
    if "lb" in _BUILT:
        return _BUILT["lb"]
    root = tmp_path_factory.mktemp("lb")
    store, results = root / "runs", root / "results"
    _bench("run", "--task", "toy-mean", "--plugin", TOY_METHODS, "--plugin", LB_METHODS, "--method", "toy-sample-mean", "toy-noisy",
           "toy-first", "toy-refine", "--seeds", "2", "--jobs", "2", "--store", store, "--no-progress")  # fmt: skip
    _bench("run", "--task", "knapsack", "--instances", *KNAPSACK_INSTANCES, "--method", "dp", "greedy", "random-fill",
           "--seeds", "2", "--jobs", "2", "--store", store, "--no-progress")  # fmt: skip
    _bench("publish", "--task", "toy-mean", "--store", store, "--results", results, "--origin", "submitted", "--author", "tester")
    _bench("publish", "--task", "knapsack", "--store", store, "--results", results, "--origin", "maintainers")
    _BUILT["lb"] = {"store": store, "results": results}
    return _BUILT["lb"]


def rehash(bundle_dir: Path) -> None:
    """Re-sign an altered bundle's manifest, as a hostile or careless submitter could."""
    import hashlib
    import json

    mpath = bundle_dir / "manifest.json"
    manifest = json.loads(mpath.read_text())
    for name in ("records.parquet", "task.json", "claims.json", "methods.json"):
        if (bundle_dir / name).exists():
            manifest["files"][name] = hashlib.sha256((bundle_dir / name).read_bytes()).hexdigest()
    mpath.write_text(json.dumps(manifest))


@pytest.fixture
def results_copy(lb_source, tmp_path) -> Path:
    """A private copy of the published results, free to alter."""
    out = tmp_path / "results"
    shutil.copytree(lb_source["results"], out)
    return out
