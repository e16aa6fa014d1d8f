"""Screenshots of the leaderboard for the README: ``python docs/make_screenshots.py [--results DIR | --fresh]``.

By default it shows the published bundles in ``results/``. With ``--fresh`` it
makes real results first, in a temporary directory:
smoke-tier sweeps of Max-k-Cut (every method and baseline, 2 seeds) and
knapsack (every baseline, 3 seeds), and the test-only ``toy-mean`` task (a
paper method and baselines, one with anytime checkpoints), each published as
a bundle (about 10 minutes on 2 cores). Then it starts the app on a free
port and drives Debian's Chromium (``executable_path``; nothing is downloaded)
to write ``docs/leaderboard-overview.png`` and ``docs/leaderboard-task.png``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from leaderboard.serve import CHROMIUM_ARGS, chromium_path, serve  # noqa: E402


def _bench(*args: str, env: dict[str, str]) -> None:
    subprocess.run([sys.executable, "-m", "bench", *args], cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL)


def make_results(tmp: Path) -> Path:
    """Real runs on tiny tasks, published as bundles (a few minutes on 2 cores)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1",
           "BENCH_TASK_PATHS": str(ROOT / "tests" / "plugins" / "toy" / "task.py")}  # fmt: skip
    store, results = tmp / "runs", tmp / "results"
    plugins = ["--plugin", str(ROOT / "tests" / "plugins" / "toy" / "methods.py"), "--plugin", str(ROOT / "tests" / "plugins" / "leaderboard_methods.py")]
    _bench("run", "--task", "maxcut", "--tier", "smoke", "--seeds", "2", "--jobs", "2", "--store", str(store), "--no-progress", env=env)
    _bench("run", "--task", "knapsack", "--tier", "smoke", "--seeds", "3", "--jobs", "2", "--store", str(store), "--no-progress", env=env)
    _bench("run", "--task", "toy-mean", *plugins, "--method", "toy-sample-mean", "toy-noisy", "toy-first", "toy-refine",
           "--seeds", "3", "--jobs", "2", "--store", str(store), "--no-progress", env=env)  # fmt: skip
    _bench("publish", "--task", "maxcut", "--store", str(store), "--results", str(results), "--origin", "maintainers", env=env)
    _bench("publish", "--task", "knapsack", "--store", str(store), "--results", str(results), "--origin", "maintainers", env=env)
    _bench("publish", "--task", "toy-mean", "--store", str(store), "--results", str(results), "--origin", "submitted", env=env)
    return results


def shoot(results: Path, out_dir: Path) -> list[Path]:
    from playwright.sync_api import sync_playwright

    exe = chromium_path()
    if exe is None:
        raise SystemExit("Debian's chromium is not installed: `make browser-deps`")
    shots = []
    task = "maxcut" if (results / "maxcut").is_dir() else "toy-mean"
    with serve("--results", str(results)) as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=exe, args=CHROMIUM_ARGS, headless=True)
        page = browser.new_page(viewport={"width": 1500, "height": 2400})
        page.set_default_timeout(120_000)
        for name, path, wait, height in [
            ("leaderboard-overview.png", "/?view=Overview", "Across tasks, by role", 1050),
            ("leaderboard-task.png", f"/?view=Task&task={task}", "Friedman test", 2200),
        ]:
            page.set_viewport_size({"width": 1500, "height": height})
            page.goto(url + path)
            page.get_by_text(wait).first.wait_for()
            page.wait_for_timeout(3000)  # charts finish drawing
            target = out_dir / name
            page.screenshot(path=str(target), full_page=True)
            shots.append(target)
        browser.close()
    return shots


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--results", type=Path, default=ROOT / "results", help="published bundles to show (default: results/)")
    ap.add_argument("--fresh", action="store_true", help="make fresh smoke-tier bundles in a temporary directory instead")
    ap.add_argument("--out", type=Path, default=ROOT / "docs")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        results = make_results(Path(tmp)) if a.fresh else a.results
        for s in shoot(results, a.out):
            print(f"wrote {s}")


if __name__ == "__main__":
    main()
