"""The cheap index of published tasks, and markdown escaping: the standard library only.

``app.py`` draws the Overview's first line, the name of every published task
with a link to its page, from :func:`published_tasks` before it imports
anything heavy (pandas, scipy, altair, the digests: about 3 s on a cold
server). A reader that gives the page little time, such as ``chromium
--headless --dump-dom --virtual-time-budget=15000`` (whose virtual time runs
on while the page only waits for the websocket, so that it keeps what the
server sent in the first few hundred milliseconds), still finds every task
named. ``tests/test_browser.py`` checks it on a cold start.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

__all__ = ["PAGES", "published_tasks", "esc", "task_link", "index_markdown", "index_html"]

#: The app's pages, in the sidebar's order (here, not in ``views``, so that ``app.py`` has them before its heavy imports).
PAGES = ("Overview", "Task", "Claims", "Method", "Provenance", "Submit")

#: Characters that are markup anywhere in a line (``.`` and ``:`` too: they make autolinks, ``:red[...]`` and emoji).
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()<>!|~$:&=.])")
#: ``-``, ``+`` and ``#`` are markup only where a line starts (lists, headings, rules), so only there are they escaped:
#: a name such as ``20260101-submitted-x`` stays readable in the markdown source.
_MD_LINE_START = re.compile(r"(?m)^([ \t]*)([-+#])")
#: C0/C1 control characters (but tab and newline) and the invisible formatting ones that reorder or hide text
#: (zero-width, bidirectional embeddings, overrides and isolates, BOM).
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]")


def esc(text: Any) -> str:
    """Text safe to put inside markdown: every markup character is backslash-escaped (``-``, ``+``, ``#`` where a line starts).

    Control characters (all but tab and newline) and invisible formatting
    characters (zero-width ones, bidirectional overrides) become ``\\xNN`` /
    ``\\uNNNN``, so that a string cannot hide or reorder what follows it. ``&`` is escaped too, so
    an entity such as ``&lt;`` is shown as typed, not decoded.
    """
    return _MD_LINE_START.sub(r"\1\\\2", _MD_SPECIAL.sub(r"\\\1", _CONTROL.sub(_spell, str(text))))


def _spell(m: re.Match[str]) -> str:
    c = ord(m.group())
    return f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}"


def task_link(task: str) -> str:
    """The URL of a task's page, relative to the app (the task name is URL-encoded)."""
    return "./?" + urlencode({"view": "Task", "task": task})


def published_tasks(results: str | Path) -> list[str]:
    """Every task with a bundle under ``results`` (a folder ``results/<task>/<bundle>/`` with a ``manifest.json``), sorted.

    Only directory entries are read: no manifest is parsed and no hash is
    checked, so a task whose every bundle fails its check is listed here
    while the Overview's tables leave it out (with a warning naming the
    bundle). Folders starting with ``_`` or ``.`` (``_digests``) are not tasks.
    """
    root = Path(results)
    if not root.is_dir():
        return []
    out = []
    for task in sorted(root.iterdir()):
        if task.name.startswith(("_", ".")) or not task.is_dir():
            continue
        try:
            if any((b / "manifest.json").is_file() for b in task.iterdir() if b.is_dir()):
                out.append(task.name)
        except OSError:
            continue
    return out


def index_markdown(tasks: list[str]) -> str:
    """One markdown line naming every task, each a link to its page; names escaped (:func:`esc`)."""
    return f"**Published tasks ({len(tasks)}):** " + " · ".join(f"[{esc(t)}]({task_link(t)})" for t in tasks)


def index_html(page: str, tasks: list[str]) -> str:
    """Streamlit's ``index.html`` (``page``) with a ``<noscript>`` list of every task, each a link to its page.

    The app is drawn in the browser from a websocket; this list is in the
    HTML itself, for a reader that does not run the app's JavaScript (a
    crawler, ``curl``) or gives it little time (``chromium --headless
    --dump-dom --virtual-time-budget``, which keeps the noscript's text in
    its dump). Names are HTML-escaped. ``page`` comes back unchanged when it
    has no ``<body>`` tag or there is no task.
    """
    import html

    m = re.search(r"<body[^>]*>", page)
    if m is None or not tasks:
        return page
    items = "".join(f'<li><a href="{html.escape(task_link(t))}">{html.escape(t)}</a></li>' for t in tasks)
    block = (
        '<noscript><div id="bench-task-index"><h1>bench: verified results for ICML 2025 methods</h1>'
        f"<p>Published tasks ({len(tasks)}); each page needs JavaScript:</p><ul>{items}</ul></div></noscript>"
    )
    return page[: m.end()] + block + page[m.end() :]
