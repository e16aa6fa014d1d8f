"""Attack 9 of the hostile battery: markup in every string a method controls, on every leaderboard page.

A submitted bundle is data its submitter wrote: the method's name, its
parameters (keys and values), its error messages, tracebacks and output
tails, its skip, truncation and invalid reasons, its ``methods.json`` entry
(reference, description, deviations, defaults) and its machine's name. Here
each carries HTML, script, a tag that closes the page's ``<div>``, markdown
and ``javascript:`` links, control characters and a very long string. Every
page that shows them is drawn in headless Chromium (Debian's, through
Playwright's ``executable_path``), and the DOM must hold no injected element
(no ``#injected``, no ``img[src=x]``, ``window.__pwned`` undefined, the title
unchanged, no dialog) while the payload is on the page as text. The markdown
path is checked without a browser too (AppTest: every markdown source is
escaped), and so is the source: no ``unsafe_allow_html``, ``st.html`` or HTML
component anywhere in ``leaderboard/``.
"""

from __future__ import annotations

import ast
import html.parser
import json
import shutil
import urllib.parse
import urllib.request

import pandas as pd
import pytest
from conftest import ROOT
from leaderboard_fixtures import lb_source, rehash  # noqa: F401

pytestmark = pytest.mark.slow

IMG = "<img src=x onerror=\"document.title='PWNED';window.__pwned=1\">"
SCRIPT = "<script>window.__pwned=1</script>"
BREAK = "</div><b id=injected>x</b>"
LINKS = "[click](javascript:window.__pwned=1) ![i](x) <a href=javascript:window.__pwned=1>a</a>"
CONTROL = "\x1b[31m\u202e\x07\x08"  # ANSI colour, right-to-left override, bell, backspace
LONG = "W" * 20_000
PAYLOAD = f"{IMG}{SCRIPT}{BREAK}{LINKS}"
#: The method names a hostile submitter chose (the Method page's URL carries the first).
NAME = f"noisy {PAYLOAD}"
NAME_CTL = f"first {CONTROL}{'L' * 3000}"
#: What must never reach a markdown source unescaped.
RAW = ("<img", "<script", "<b id=injected", "</div>", "](javascript", "![i]", "<a href")
#: A task folder whose name is markup (no "/": a folder name cannot hold one).
TASK_DIR = "<img src=x onerror=\"document.title='PWNED'\">"
BUNDLE_DIR = "20260101-submitted-<img src=x onerror=window.__pwned=1>"


def _raw(src: str) -> list[str]:
    """The markers of :data:`RAW` that occur in markdown source ``src`` unescaped (not after an odd run of backslashes)."""
    found = []
    for marker in RAW:
        i = src.find(marker)
        while i >= 0:
            slashes = len(src[:i]) - len(src[:i].rstrip("\\"))
            if slashes % 2 == 0:
                found.append(marker)
                break
            i = src.find(marker, i + 1)
    return found


def _forge_records(bdir) -> None:
    path = bdir / "records.parquet"
    df = pd.read_parquet(path)
    df["method"] = df["method"].replace({"toy-noisy": NAME, "toy-first": NAME_CTL})
    refine = df["method"] == "toy-refine"
    # two parameter sets, so the label names the hostile key and value
    df.loc[refine & (df["rep"] == 0), "params"] = json.dumps({f"{BREAK}k": f"{IMG}{LONG}", "x": SCRIPT}, sort_keys=True)
    df.loc[refine & (df["rep"] == 1), "params"] = json.dumps({f"{BREAK}k": LINKS, "x": CONTROL}, sort_keys=True)
    ours = df["method"] == "toy-sample-mean"
    insts = sorted(df["instance"].unique())
    for inst, status in zip(insts, ("error", "invalid", "truncated"), strict=False):
        rows = ours & (df["instance"] == inst) & (df["rep"] == 1)
        df.loc[rows, "status"] = status
        df.loc[rows, "reason"] = f"{status}: {PAYLOAD}{CONTROL}{LONG}"
    err = df["status"] == "error"
    df.loc[err, "error_type"] = PAYLOAD
    df.loc[err, "traceback"] = f"Traceback (most recent call last):\n  {PAYLOAD}\n{LONG}"
    skipped = (df["method"] == NAME) & (df["instance"] == insts[-1])
    df.loc[skipped, "status"] = "skipped"
    df.loc[skipped, "reason"] = f"skipped: {PAYLOAD}"
    df["stdout_tail"] = PAYLOAD
    df["stderr_tail"] = f"{CONTROL}{PAYLOAD}"
    df.loc[df["rep"] == 1, "env.cpu_model"] = f"CPU {PAYLOAD}"  # a second "machine": the page warns, naming it
    df.to_parquet(path, index=False)


def _forge_methods(bdir) -> None:
    path = bdir / "methods.json"
    entries = json.loads(path.read_text())
    for m in entries:
        m["name"] = {"toy-noisy": NAME, "toy-first": NAME_CTL}.get(m["name"], m["name"])
        m["reference"] = f"ref {PAYLOAD}"
        m["description"] = f"desc {PAYLOAD}{CONTROL}"
        m["deviations"] = f"dev {PAYLOAD}{LONG}"
        m["params"] = {f"{BREAK}p": PAYLOAD}
    path.write_text(json.dumps(entries))


@pytest.fixture(scope="module")
def hostile(lb_source, tmp_path_factory):  # noqa: F811
    """The fixture's published results with a hostile toy-mean bundle and a task folder named as markup."""
    out = tmp_path_factory.mktemp("hostile") / "results"
    shutil.copytree(lb_source["results"], out)
    bdir = next((out / "toy-mean").glob("*/records.parquet")).parent
    _forge_records(bdir)
    _forge_methods(bdir)
    task = json.loads((bdir / "task.json").read_text())
    task.setdefault("meta", {})["area"] = f"area {PAYLOAD}"
    (bdir / "task.json").write_text(json.dumps(task))
    rehash(bdir)
    # a folder named as markup holding a bundle named as markup, whose manifest does not parse: skipped, with a warning naming it
    (out / TASK_DIR / BUNDLE_DIR).mkdir(parents=True)
    (out / TASK_DIR / BUNDLE_DIR / "manifest.json").write_text("{not json")
    return out


# ----------------------------------------------------------------------------- the source: nothing renders HTML


def test_the_leaderboard_never_asks_streamlit_to_render_html():
    bad = []
    for path in sorted((ROOT / "leaderboard").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.keyword) and node.arg == "unsafe_allow_html":
                bad.append(f"{path.name}:{node.value.lineno}: unsafe_allow_html")
            if isinstance(node, ast.Attribute) and node.attr in ("html", "components", "write", "write_stream"):
                if isinstance(node.value, ast.Name) and node.value.id in ("st", "streamlit"):
                    bad.append(f"{path.name}:{node.lineno}: st.{node.attr}")
    assert not bad, "the leaderboard shows bundle values as text only: " + "; ".join(bad)


def test_markdown_escaping_leaves_no_markup():
    from leaderboard.index import esc, index_html, index_markdown

    for s in (PAYLOAD, NAME_CTL, TASK_DIR, "&lt;img src=x&gt;", "a\n===\n", ":red[x] $x$ :material/home:"):
        e = esc(s)
        # every markup character is preceded by a backslash; control characters are spelled out
        assert not any(ch in e for ch in "\x1b\u202e\x07\x08"), repr(e[:80])
        unescaped = [c for i, c in enumerate(e) if c in "<>[]()`*_!&:=$" and (i == 0 or e[i - 1] != "\\")]
        assert not unescaped, (s[:80], e[:80])
    line = index_markdown(["maxcut", TASK_DIR])
    assert not _raw(line) and "task=%3Cimg" in line
    assert _raw(f"x {IMG}") == ["<img"] and _raw("\\\\<img") == ["<img"]  # the detector itself
    page = index_html("<html><body><div id=root></div></body></html>", ["maxcut", TASK_DIR])
    assert "&lt;img src=x" in page and TASK_DIR not in page


# ----------------------------------------------------------------------------- AppTest: the markdown sources


def _markdown_sources(at) -> list[str]:
    out = []
    for kind in ("markdown", "caption", "warning", "error", "info", "success", "header", "subheader", "title"):
        out += [str(e.value) for e in getattr(at, kind)]
    return out


PAGES = [
    ("Overview", {}),
    ("Task", {"task": "toy-mean"}),
    ("Task", {"task": "toy-mean", "plot": "quality vs time"}),
    ("Task", {"task": "toy-mean", "plot": "performance profiles"}),
    ("Claims", {}),
    ("Method", {"task": "toy-mean", "method": NAME}),
    ("Method", {"task": "toy-mean", "method": NAME_CTL}),
    ("Method", {"task": "toy-mean", "method": "toy-refine"}),
    ("Provenance", {}),
]


def test_every_page_escapes_hostile_strings_in_its_markdown(monkeypatch, hostile):
    from streamlit.testing.v1 import AppTest

    from leaderboard.index import esc

    monkeypatch.setenv("BENCH_RESULTS", str(hostile))
    monkeypatch.delenv("BENCH_LB_STORE", raising=False)
    seen = ""
    for view, params in PAGES:
        at = AppTest.from_file(str(ROOT / "leaderboard" / "app.py"), default_timeout=120)
        at.query_params["view"] = view
        for k, v in params.items():
            at.query_params[k] = v
        at.run()
        assert not at.exception, (view, [e.value for e in at.exception])
        sources = _markdown_sources(at)
        for src in sources:
            assert not _raw(src), (view, params, _raw(src), src[:300])
        seen += "\n".join(sources) + "\n".join(t.value for t in at.text) + "\n".join(c.value for c in at.code)
        if view == "Method" and params["method"] == NAME:
            assert any("noisy \\<img src\\=x" in s.value for s in at.subheader), [s.value for s in at.subheader]
            assert any(f"dev {PAYLOAD}" in t.value for t in at.text)  # deviations, literally, as text
            assert any(BREAK in c.value for c in at.code)  # parameters, as code
    # the payloads reached the pages (so the checks above had something to check), escaped
    assert "area \\<img" in seen  # the Overview's area heading
    assert "CPU \\<img" in seen  # the warning that names the machines
    assert esc(TASK_DIR) in seen  # the index line
    assert esc(BUNDLE_DIR) in seen  # the warning that names the skipped bundle


# ----------------------------------------------------------------------------- the browser: nothing runs


class _Tags(html.parser.HTMLParser):
    """Every start tag of a page parsed as a browser without JavaScript parses it (a <noscript>'s content is markup)."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def _clean(page, where: str) -> None:
    """No injected element, no script ran, the title is the app's."""
    assert page.locator("#injected").count() == 0, where
    assert page.locator('img[src="x"]').count() == 0, where
    assert page.locator('a[href^="javascript"]').count() == 0, where
    assert page.evaluate("() => window.__pwned") is None, where
    assert page.title() == "bench leaderboard", where


@pytest.mark.long  # 26-41 s on the shared 2-core machine: 9 pages, a server start, two browser contexts
def test_no_page_runs_or_injects_hostile_markup_in_chromium(chromium, hostile, tmp_path):
    from playwright.sync_api import sync_playwright

    from leaderboard.serve import CHROMIUM_ARGS, serve

    dialogs: list[str] = []
    with serve("--results", str(hostile), env={"HOME": str(tmp_path)}) as url, sync_playwright() as p:
        # the HTML itself, as a reader without JavaScript gets it: the task index names the folder as text
        with urllib.request.urlopen(f"{url}/", timeout=30) as r:
            raw = r.read().decode()
        parsed = _Tags()
        parsed.feed(raw)
        assert not [t for t, a in parsed.tags if a.get("id") == "injected" or a.get("src") == "x"]
        assert "&lt;img src=x onerror=&quot;document.title=&#x27;PWNED&#x27;&quot;&gt;" in raw

        browser = p.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS, headless=True)
        try:
            plain = browser.new_context(java_script_enabled=False).new_page()
            plain.goto(f"{url}/")
            index = plain.locator("#bench-task-index")
            assert TASK_DIR in index.inner_text() and "toy-mean" in index.inner_text()
            assert plain.locator('img[src="x"]').count() == 0 and plain.locator("#injected").count() == 0

            page = browser.new_page(viewport={"width": 1400, "height": 1100})
            page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
            page.set_default_timeout(90_000)
            for view, params in PAGES:
                where = f"{view} {params}"
                page.goto(f"{url}/?" + urllib.parse.urlencode({"view": view, **params}))
                page.locator('[data-test-script-state="notRunning"]').first.wait_for(state="attached")
                page.locator('[data-testid="stHeading"]').first.wait_for()
                page.wait_for_timeout(500)  # charts and tables finish drawing
                _clean(page, where)
                body = page.locator("body").inner_text()
                if view == "Overview":
                    assert f"area {IMG}" in body  # the area's heading, as text
                    assert TASK_DIR in body  # the index line
                    assert BUNDLE_DIR in body  # the warning that names the skipped bundle
                if view == "Task" and "plot" not in params:
                    assert f"CPU {IMG}" in body  # the warning that names the machines
                if view == "Method" and params["method"] == NAME:
                    # the parameters' code block can land after the 500 ms (a loaded CI run missed it once)
                    page.locator('[data-testid="stCode"]').first.wait_for()
                    body = page.locator("body").inner_text()
                    assert f"{NAME} on toy-mean" in body
                    assert f"dev {PAYLOAD}" in body and f"ref {PAYLOAD}" in body
                    assert f"{BREAK}p" in body  # the parameters' keys, in the code block
                if view == "Method" and params["method"] == "toy-refine":
                    assert f"{BREAK}k" in body  # a hostile parameter key of the runs
            # the sidebar's method list holds the hostile names as options, and picking one runs nothing
            page.goto(f"{url}/?" + urllib.parse.urlencode({"view": "Method", "task": "toy-mean", "method": NAME_CTL}))
            page.locator('[data-test-script-state="notRunning"]').first.wait_for(state="attached")
            page.locator('[data-testid="stSidebar"] [data-testid="stSelectbox"]').nth(1).click()
            page.get_by_role("option").filter(has_text="noisy <img").first.click()
            page.get_by_text(f"{NAME} on toy-mean").wait_for()
            page.locator('[data-test-script-state="notRunning"]').first.wait_for(state="attached")
            _clean(page, "Method, picked in the sidebar")
        finally:
            browser.close()
    assert not dialogs
