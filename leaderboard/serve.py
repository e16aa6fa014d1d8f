"""Start the app on a free localhost port and drive Debian's Chromium (browser test, screenshots).

Nothing here downloads a browser: Playwright is pointed at the system
``chromium`` with ``executable_path``, sandbox off (containers) and background
networking off.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

__all__ = ["free_port", "serve", "chromium_path", "CHROMIUM_ARGS", "wait_ready"]

APP = Path(__file__).resolve().parent / "app.py"
#: Flags for a headless, offline, unsandboxed Chromium in CI containers.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-default-apps",
    "--disable-sync",
    "--no-first-run",
    "--disable-dev-shm-usage",
]


def chromium_path() -> str | None:
    """The system Chromium (Debian's ``chromium`` package), or None."""
    for name in ("chromium", "chromium-browser"):
        p = shutil.which(name)
        if p:
            return p
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_ready(port: int, proc: subprocess.Popen[bytes], timeout: float = 90.0) -> None:
    """Wait for Streamlit's health endpoint; raise with the server's output if it dies or hangs."""
    deadline = time.monotonic() + timeout
    url = f"http://127.0.0.1:{port}/_stcore/health"
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            out = proc.stdout.read().decode(errors="replace") if proc.stdout else ""
            raise RuntimeError(f"streamlit exited with {proc.returncode}: {out[-2000:]}")
        with contextlib.suppress(OSError):
            with urllib.request.urlopen(url, timeout=2) as r:
                if r.status == 200:
                    return
        time.sleep(0.3)
    raise TimeoutError(f"streamlit did not answer on port {port} within {timeout:.0f} s")


@contextlib.contextmanager
def serve(*app_args: str, port: int | None = None, env: dict[str, str] | None = None, app: Path = APP) -> Iterator[str]:
    """Run ``streamlit run leaderboard/app.py -- APP_ARGS`` on a free port; yields its base URL.

    ``app`` runs another copy of the app (the speed benchmark serves an older
    leaderboard beside this one); the repository root stays on ``PYTHONPATH``.
    """
    port = port or free_port()
    root = str(APP.parent.parent)
    e = {**os.environ, **(env or {})}
    e["PYTHONPATH"] = root + (os.pathsep + e["PYTHONPATH"] if e.get("PYTHONPATH") else "")
    cmd = [sys.executable, "-m", "streamlit", "run", str(app), "--server.port", str(port), "--server.address", "127.0.0.1",
           "--server.headless", "true", "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none",
           "--global.developmentMode", "false", "--", *app_args]  # fmt: skip
    proc = subprocess.Popen(cmd, cwd=root, env=e, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        wait_ready(port, proc)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
