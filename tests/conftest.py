"""Shared fixtures. Test-only tasks and methods live in tests/plugins/.

The test-only task ``toy-mean`` is registered for the whole session through
``BENCH_TASK_PATHS`` (set before anything discovers tasks, and inherited by
every worker process). Test-only methods are passed explicitly with
``--plugin`` / ``extra_paths`` so that they never leak into other tests.
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PLUGINS = ROOT / "tests" / "plugins"
CHAOS = str(PLUGINS / "chaos_methods.py")
TOY_METHODS = str(PLUGINS / "toy" / "methods.py")
GUESS_METHODS = str(PLUGINS / "guess" / "methods.py")

os.environ["BENCH_TASK_PATHS"] = os.pathsep.join(str(PLUGINS / d / "task.py") for d in ("toy", "guess"))
SESSION = uuid.uuid4().hex
os.environ["BENCH_TEST_SESSION"] = SESSION
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
    """Processes of this test session that nobody owns any more (leftovers).

    Every process the session starts inherits ``BENCH_TEST_SESSION`` (forked
    ones share their exec-ed ancestor's environment block). A process whose
    parent is neither the test process nor another of ours is an orphan.
    """
    needle = f"BENCH_TEST_SESSION={SESSION}".encode()
    me = os.getpid()
    marked: dict[int, int] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == me:
            continue
        try:
            with open(f"/proc/{entry.name}/environ", "rb") as fh:
                env = fh.read()
            with open(f"/proc/{entry.name}/stat", "rb") as fh:
                fields = fh.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != b"Z" and needle in env.split(b"\0"):
            marked[int(entry.name)] = int(fields[1])
    return sorted(pid for pid, ppid in marked.items() if ppid != me and ppid not in marked)
