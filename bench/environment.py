"""Provenance of a run: versions, git commit, hardware. Captured once per process."""

from __future__ import annotations

import functools
import os
import platform
import socket
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path
from typing import Any

__all__ = ["capture", "repo_root", "git_commit", "load_average", "speed_probe"]


def repo_root() -> Path:
    """The directory that holds the ``bench`` package (the repository root in a checkout)."""
    return Path(__file__).resolve().parent.parent


def _git(*args: str) -> str | None:
    try:
        out = subprocess.run(
            ["git", *args], cwd=repo_root(), capture_output=True, text=True, timeout=10, check=True
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip()


def git_commit() -> tuple[str | None, bool | None]:
    """``(commit, dirty)`` of the checkout bench runs from; ``(None, None)`` outside git."""
    commit = _git("rev-parse", "HEAD")
    if commit is None:
        return None, None
    status = _git("status", "--porcelain", "--untracked-files=no")
    return commit, bool(status)


def _version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _memory_gb() -> float | None:
    try:
        return round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1)
    except (ValueError, OSError, AttributeError):
        return None


def load_average() -> float | None:
    """The 1-minute load average of the machine (None where the OS has none).

    Recorded at the start and at the end of every job, so that timings taken
    on a busy machine say so: a load above the core count means the job
    shared its CPU with others.
    """
    try:
        return round(os.getloadavg()[0], 2)
    except (OSError, AttributeError):
        return None


def _probe_once() -> float:
    import numpy as np

    t0 = time.perf_counter()
    acc = 0
    for i in range(30_000):
        acc += i * i % 7
    x = np.arange(100_000, dtype=np.float64) * 2654435761.0 % 1000003.0
    np.sort(x)
    np.cumsum(x)
    return (time.perf_counter() - t0) * 1e3


def speed_probe() -> float:
    """Milliseconds that one fixed, single-threaded CPU workload takes now (the faster of two tries).

    The workload is a pure-Python loop plus a few numpy passes over a fixed
    array (no BLAS, so no math threads): about 3 ms on an idle 2020s x86
    core. Recorded at the start of every job, it measures the speed the job
    was likely to get, which two things change: the machine (an older or
    newer CPU) and the load on it (another job on the same core). A wall-clock
    budget buys the same work only where the probe agrees, so comparing the
    probe is how to tell whether two sweeps' times, or two methods' budgets,
    were comparable. The faster of two tries drops a one-off hiccup (a page
    fault, a first call); sustained load slows both. Still one sample per
    job: read medians over a sweep, not single values.
    """
    return round(min(_probe_once(), _probe_once()), 3)


@functools.cache
def cpu_simd() -> str:
    """Which CPU-specific float paths this process takes: numpy's SIMD targets and OpenBLAS's kernels.

    Generated floating-point data (and so an instance's digest) can differ in
    its last bits between, say, ``numpy X86_V4`` and ``numpy X86_V3``; this
    label lets ``bench verify`` say why. Empty where it cannot be read.
    """
    parts = []
    try:
        from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__

        found = [f for f in __cpu_dispatch__ if __cpu_features__.get(f)]
        parts.append("numpy " + ("+".join(found) if found else "baseline"))
    except Exception:  # a numpy without these internals: say nothing rather than guess
        pass
    try:
        import threadpoolctl

        kernels = sorted(
            {
                str(i.get("architecture"))
                for i in threadpoolctl.threadpool_info()
                if i.get("internal_api") == "openblas"
            }
        )
        if kernels:
            parts.append("OpenBLAS " + "+".join(kernels))
    except Exception:
        pass
    return "; ".join(parts)


@functools.cache
def capture() -> dict[str, Any]:
    """Everything needed to say where and with what a result was produced."""
    from bench import __version__

    commit, dirty = git_commit()
    return {
        "bench_version": __version__,
        "git_commit": commit,
        "git_dirty": dirty,
        "python": platform.python_version(),
        "numpy": _version("numpy"),
        "torch": _version("torch"),
        "scipy": _version("scipy"),
        "platform": platform.platform(),
        "cpu_model": _cpu_model(),
        "cpu_simd": cpu_simd(),
        "cpu_cores": os.cpu_count(),
        "memory_gb": _memory_gb(),
        "hostname": socket.gethostname(),
        "executable": sys.executable,
    }


def hardware_id(env: dict[str, Any]) -> str:
    """A short label saying which machine a timing comes from."""
    return f"{env.get('cpu_model', '?')} x{env.get('cpu_cores', '?')}"
