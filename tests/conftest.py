"""Shared fixtures. Test-only tasks and methods live in tests/plugins/.

The test-only task ``toy-mean`` is registered for the whole session through
``BENCH_TASK_PATHS`` (set before anything discovers tasks, and inherited by
every worker process). Test-only methods are passed explicitly with
``--plugin`` / ``extra_paths`` so that they never leak into other tests.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PLUGINS = ROOT / "tests" / "plugins"
CHAOS = str(PLUGINS / "chaos_methods.py")
TOY_METHODS = str(PLUGINS / "toy" / "methods.py")

os.environ["BENCH_TASK_PATHS"] = str(PLUGINS / "toy" / "task.py")
os.environ.setdefault("BENCH_STORE", str(Path(os.environ.get("TMPDIR", "/tmp")) / f"bench-test-store-{os.getpid()}"))


@pytest.fixture
def store(tmp_path: Path) -> Path:
    return tmp_path / "runs"


@pytest.fixture
def cli(capsys):
    """Run ``python -m bench ARGS`` in-process; returns (exit code, stdout, stderr)."""
    from bench.cli import main

    def run(*args: object) -> tuple[int, str, str]:
        rc = main([str(a) for a in args])
        out = capsys.readouterr()
        return rc, out.out, out.err

    return run


def job_processes_alive() -> list[int]:
    """PIDs of processes that carry a bench job token (leftovers of a job)."""
    me = os.getpid()
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == me:
            continue
        try:
            with open(f"/proc/{entry.name}/environ", "rb") as fh:
                env = fh.read()
            with open(f"/proc/{entry.name}/stat", "rb") as fh:
                state = fh.read().rsplit(b")", 1)[1].split()[0]
        except OSError:
            continue
        if state != b"Z" and b"BENCH_JOB_TOKEN=" in env:
            found.append(int(entry.name))
    return found
