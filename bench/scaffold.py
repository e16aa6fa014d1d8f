"""``bench new-method``: write a method file that passes ``bench validate`` as written."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

from bench.environment import repo_root

__all__ = ["render_method", "new_method_path", "write_method", "NAME_RE"]

NAME_RE = re.compile(r"^[a-z0-9][a-z0-9_-]*$")

_TEMPLATE = '''"""{name}: one line saying what this {kind} does.

Reference: the paper or library it implements (fill in ``reference=`` below).

Deviations from the reference
-----------------------------
List every departure from the paper or its official code, and why.
"""

from __future__ import annotations

import numpy as np  # noqa: F401 - most methods need it

from bench import method


@method(
    name="{name}",
    kind="{kind}",
    tasks=["{task}"],
    reference="",
    version="1",
    params={{}},
    deterministic=True,
)
def solve(instance, *, seed: int, budget: float):
    """Return a solution for ``instance`` within ``budget`` seconds.

    ``instance.data`` is the task's public data, ``instance.params`` its
    parameters. Seed every random choice from ``seed``. The task recomputes
    every metric from what you return; see tasks/{family}/README.md for the
    solution format. Import heavy libraries at the top of the file, not here:
    the worker imports this module once, and every job starts from that.
    """
{body}
'''


def render_method(task_name: str, family: str, body: str, name: str, kind: str) -> str:
    """Source of a new method file; ``body`` is the task's template (a function body)."""
    if not NAME_RE.match(name):
        raise ValueError(f"method name {name!r} must be lower case letters, digits, '-' or '_'")
    if kind not in ("method", "baseline"):
        raise ValueError(f"--kind must be 'method' or 'baseline', got {kind!r}")
    body = textwrap.indent(textwrap.dedent(body).strip("\n"), "    ")
    return _TEMPLATE.format(name=name, kind=kind, task=task_name, family=family, body=body)


def new_method_path(family: str, name: str, kind: str) -> Path:
    """Where ``new-method`` writes by default: ``methods/<family>/<name>.py`` (or ``baselines/``)."""
    top = "methods" if kind == "method" else "baselines"
    return repo_root() / top / family / (name.replace("-", "_") + ".py")


def write_method(path: Path, source: str) -> Path:
    """Write ``source`` to ``path`` (never over an existing file); makes the package if needed."""
    path = Path(path)
    if path.exists():
        raise FileExistsError(f"{path} already exists; pick another --name or --output")
    path.parent.mkdir(parents=True, exist_ok=True)
    top = repo_root()
    if path.parent.parent in (top / "methods", top / "baselines"):
        init = path.parent / "__init__.py"
        if not init.exists():
            init.write_text(f'"""{path.parent.name}: methods for this family (see the family README)."""\n')
    path.write_text(source)
    return path
