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


@pytest.fixture(autouse=True)
def _no_leaderboard_preload_left_running():
    """Wait, after each test, for the leaderboard's background record loader (``bench-lb-preload``).

    An AppTest run starts it and returns; left running into the next test, the
    ``warnings.catch_warnings`` that pandas uses inside ``read_parquet`` would
    swap the process-wide warning hooks under that test's ``pytest.warns``
    (CI lost a warning that way once).
    """
    import threading

    yield
    for t in threading.enumerate():
        if t.name == "bench-lb-preload":
            t.join(timeout=120)


def run_toy_sweep(store: Path, methods: tuple[str, ...], seeds: int) -> Path:
    """A finished toy-mean sweep of ``methods`` into ``store`` (quietly; fails the test on a non-zero exit)."""
    import contextlib
    import io

    from bench.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(["run", "--task", "toy-mean", "--plugin", TOY_METHODS, "--method", *methods, "--seeds", str(seeds),
                   "--store", str(store), "--no-progress", "--jobs", "2"])  # fmt: skip
    assert rc == 0, err.getvalue()
    return store


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


# ----------------------------------------------------------------------------- test time per family
#
# `make test` must stay under 15 minutes as families are added, so each family's
# tests have a budget (FAMILY_BUDGET_S) and the summary prints what each took.
# A test belongs to a family by its file name (tests/test_<family>*.py, where
# <family> is the family's package name or its first word), else by a task
# name in its parameters (test_conformance[maxcut:ros]), else to "core".

FAMILY_BUDGET_S = 20.0
_FAMILY_TIME: dict[str, list[float]] = {}


def _families() -> dict[str, str]:
    """Package name of each family -> the family's name as shown (its task's name)."""
    from bench.registry import discover_tasks

    out = {}
    for name in discover_tasks().names():
        task = discover_tasks().get(name)
        fam = task.meta.family
        if Path(getattr(task, "data_dir", None) or "").is_relative_to(ROOT / "tasks"):
            out.setdefault(fam, name if fam.replace("_", "-") == name else fam)
    return out


def family_of(nodeid: str, families: dict[str, str]) -> str:
    """The family a test belongs to (see above); ``"core"`` if none."""
    path, _, rest = nodeid.partition("::")
    stem = Path(path).stem.removeprefix("test_")
    for pkg, shown in sorted(families.items(), key=lambda kv: -len(kv[0])):
        if stem.startswith(pkg) or stem.split("_")[0] == pkg.split("_")[0]:
            return shown
    if "[" in rest:
        params = rest[rest.index("[") + 1 : -1]
        for pkg, shown in families.items():
            task = shown if shown != pkg else pkg.replace("_", "-")
            if params.split(":")[0].split("/")[0] in (task, pkg):
                return shown
    return "core"


def pytest_runtest_logreport(report) -> None:
    _FAMILY_TIME.setdefault(report.nodeid, []).append(report.duration)


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:
    if not _FAMILY_TIME:
        return
    families = _families()
    totals: dict[str, list[float]] = {}
    for nodeid, durations in _FAMILY_TIME.items():
        fam = family_of(nodeid, families)
        entry = totals.setdefault(fam, [0.0, 0])
        entry[0] += sum(durations)
        entry[1] += 1
    tr = terminalreporter
    # The budget is make test's; the long step (-m long) only reports its times.
    budgeted = "long" not in (config.getoption("markexpr", "") or "").replace("not long", "")
    tr.section("test time per family" + ("" if budgeted else " (long step: no per-family budget)"))
    for fam, (seconds, n) in sorted(totals.items(), key=lambda kv: -kv[1][0]):
        over = "" if fam == "core" or seconds <= FAMILY_BUDGET_S or not budgeted else f"  OVER the {FAMILY_BUDGET_S:g} s budget"
        tr.write_line(f"{fam:<22} {seconds:8.1f} s  {n:5d} tests{over}")
    tr.write_line(f"{'total':<22} {sum(s for s, _ in totals.values()):8.1f} s")


@pytest.fixture(scope="module")
def chromium() -> str:
    """Debian's chromium for the browser tests: skipped without it, failed without it under CI=true."""
    import shutil

    from leaderboard.serve import chromium_path

    path = chromium_path()
    if path is None or shutil.which(path) is None:
        msg = "Debian's chromium is not installed (apt-get install chromium; .ci/run does it)"
        if os.environ.get("CI") == "true":
            pytest.fail(msg)
        pytest.skip(msg)
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        if os.environ.get("CI") == "true":
            pytest.fail("the playwright Python package is missing")
        pytest.skip("the playwright Python package is missing")
    return path
