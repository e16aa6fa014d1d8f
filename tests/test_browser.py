"""Real-browser end-to-end test: Streamlit on a free port, Debian's Chromium driven by Playwright.

No browser is downloaded: Playwright launches the system ``chromium`` through
``executable_path`` (``.ci/run`` installs it). Skipped when Chromium is absent,
failed instead when ``CI=true``.
"""

from __future__ import annotations

import re
import subprocess

import pytest
from conftest import ROOT
from leaderboard_fixtures import lb_source, rehash, results_copy  # noqa: F401

from leaderboard.serve import CHROMIUM_ARGS, serve

pytestmark = pytest.mark.slow

XSS = "<script>window.__xss=1</script>"


def _forge_name(results_dir) -> None:
    import pandas as pd

    path = next((results_dir / "toy-mean").glob("*/records.parquet"))
    df = pd.read_parquet(path)
    df["method"] = df["method"].where(df["method"] != "toy-noisy", XSS)
    df.to_parquet(path, index=False)
    rehash(path.parent)


def _idle(page) -> None:
    """Wait until Streamlit's script has stopped running (nothing more is coming)."""
    page.locator('[data-test-script-state="notRunning"]').first.wait_for(state="attached")


def _sideways(table) -> float:
    """How far a data frame's grid can scroll sideways, in px (0: it fits)."""
    return table.evaluate("el => Math.max(0, ...[...el.querySelectorAll('.dvn-scroller')].map(s => s.scrollWidth - s.clientWidth))")


def test_overview_and_task_page_in_chromium(chromium, results_copy, tmp_path):  # noqa: F811
    from playwright.sync_api import sync_playwright

    _forge_name(results_copy)
    dialogs: list[str] = []
    with serve("--results", str(results_copy)) as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1100})
            page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
            page.set_default_timeout(90_000)

            page.goto(f"{url}/?view=Overview")
            page.get_by_text("Across tasks, by role").wait_for()
            page.get_by_text("its aggregate is empty").wait_for()
            page.locator('[data-testid="stDataFrame"]').first.wait_for()
            _idle(page)
            page.wait_for_timeout(1500)
            # one table per area, none wider than the page at 1,400 px: nothing to scroll sideways
            tables = page.locator('[data-testid="stDataFrame"]')
            assert tables.count() == 3  # two areas (the fixture's families) and the role aggregate
            for i in range(2):
                box = tables.nth(i).bounding_box()
                assert box["x"] + box["width"] <= 1400, box
                assert _sideways(tables.nth(i)) <= 1, f"the overview's table {i} scrolls sideways"
            page.screenshot(path=str(tmp_path / "overview.png"), full_page=True)
            # search: typing a name leaves that task's area only
            page.get_by_label("search (task, paper, method, area)").fill("knapsack")
            page.keyboard.press("Enter")
            page.get_by_text("1 of 2 tasks").wait_for()
            _idle(page)
            assert page.locator('[data-testid="stDataFrame"]').count() == 2

            page.goto(f"{url}/?view=Task&task=toy-mean")
            page.get_by_text("toy-mean (v1), smoke tier").wait_for()
            head = page.locator(".st-key-headline")
            head.get_by_text("Who wins on the smoke tier").wait_for()
            assert "The paper's method toy-sample-mean: rank" in head.inner_text() and "Its claims:" in head.inner_text()
            page.get_by_text("4 methods, 3 instances after filters").wait_for()
            page.get_by_text("Friedman test").wait_for()
            # superseded bundles and every other bundle: the provenance page
            page.goto(f"{url}/?view=Provenance")
            page.get_by_text("bundles, 0 of them superseded").wait_for()
            # a method named like a script is shown as text and never runs
            page.goto(f"{url}/?view=Method&task=toy-mean&method={XSS}")
            page.get_by_text(f"{XSS} on toy-mean").wait_for()
            assert page.evaluate("() => window.__xss") is None

            page.goto(f"{url}/?view=Task&task=toy-mean")
            page.get_by_text("4 methods, 3 instances after filters").wait_for()
            # filter: drop the "method" kind (the last chip of the "method kind" multiselect)
            box = page.locator('[data-testid="stMultiSelect"]').filter(has_text="method kind")
            box.locator("input").click()
            page.keyboard.press("Backspace")
            page.keyboard.press("Escape")
            page.get_by_text("3 methods, 3 instances after filters").wait_for()
            page.wait_for_timeout(1500)
            page.screenshot(path=str(tmp_path / "task.png"), full_page=True)
        finally:
            browser.close()
    assert not dialogs
    assert (tmp_path / "overview.png").stat().st_size > 10_000
    assert (tmp_path / "task.png").stat().st_size > 10_000


def _published(results) -> list[str]:
    """Every task with a bundle (a ``<task>/<bundle>/manifest.json``) under ``results``, read here independently of the app."""
    return sorted({p.parent.parent.name for p in results.glob("*/*/manifest.json") if not p.parent.parent.name.startswith("_")})


def _named(text: str, task: str) -> bool:
    """``task`` occurs in ``text`` as a whole name (``pde`` inside another task's name does not count)."""
    return re.search(rf"(?<![\w-]){re.escape(task)}(?![\w-])", text) is not None


def test_a_cold_overview_names_every_published_task_within_15_s_of_virtual_time(chromium, tmp_path):
    """The first request after ``streamlit run``, on the repository's results, dumped by headless Chromium.

    ``--virtual-time-budget`` lets virtual time run on while the page only
    waits for Streamlit's websocket, so the dump keeps what the server sent
    in its first few hundred milliseconds: before the fix, nothing of a cold
    server's Overview (its first script run imports for about 3 s first).
    Now the HTML names every task (a <noscript> list) and the Overview's first
    line does, before the heavy imports. A fresh ``HOME`` empties Streamlit's
    disk cache: a fresh clone.
    """
    from playwright.sync_api import sync_playwright

    results = ROOT / "results"
    tasks = _published(results)
    assert "maxcut" in tasks and len(tasks) >= 2
    env = {"HOME": str(tmp_path / "home")}
    with serve("--results", str(results), env=env) as url:  # cold: nothing cached, no session yet
        dom = subprocess.run(
            [chromium, "--headless", *CHROMIUM_ARGS, "--disable-gpu", "--dump-dom", "--virtual-time-budget=15000", f"{url}/"],
            capture_output=True, text=True, timeout=120, check=True,
        ).stdout  # fmt: skip
    assert 'id="root"' in dom  # Streamlit's page, run in the browser
    missing = [t for t in tasks if not _named(dom, t)]
    assert not missing, f"the cold Overview's DOM does not name {missing}"
    index = dom[dom.index("bench-task-index") :]
    assert all(_named(index, t) for t in tasks) and "view=Task&amp;task=maxcut" in index

    # the drawn app, not only the HTML: a second cold server, the Overview's index line within 15 s
    (tmp_path / "home").mkdir(exist_ok=True)
    with serve("--results", str(results), env={"HOME": str(tmp_path / "home2")}) as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1100})
            page.goto(f"{url}/")
            line = page.get_by_text(f"Published tasks ({len(tasks)}):")
            line.wait_for(timeout=15_000)
            drawn = page.locator('[data-testid="stMarkdownContainer"]').filter(has=line).inner_text()
            assert [t for t in tasks if not _named(drawn, t)] == []
            link = page.get_by_role("link", name="maxcut", exact=True).first
            assert link.get_attribute("href") == "./?view=Task&task=maxcut"
        finally:
            browser.close()
