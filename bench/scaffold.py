"""``bench new-method`` and ``bench new-task``: files that pass ``bench validate`` as written.

``new-method`` writes one method file from a task's template; ``new-task``
writes a whole family skeleton (task, claims, paper numbers, README, a
method, a baseline and tests) from the templates in ``bench/templates/family``.
Both are tested as written, so what a newcomer starts from always works.
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

from bench.environment import repo_root

__all__ = ["render_method", "render_module", "new_method_path", "write_method", "write_family", "NAME_RE", "FAMILY_RE"]

NAME_RE = re.compile(r"^[a-z0-9][a-z0-9_-]*$")
#: A family name: a Python identifier in lower case (``graph_coloring``; ``-`` is read as ``_``).
FAMILY_RE = re.compile(r"^[a-z][a-z0-9_]*$")
FAMILY_TEMPLATES = Path(__file__).resolve().parent / "templates" / "family"

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
    deterministic={deterministic},{why}
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


def _check_name_kind(name: str, kind: str) -> None:
    if not NAME_RE.match(name):
        raise ValueError(f"method name {name!r} must be lower case letters, digits, '-' or '_'")
    if kind not in ("method", "baseline"):
        raise ValueError(f"--kind must be 'method' or 'baseline', got {kind!r}")


def is_module_template(template: str) -> bool:
    """Whether a task's template is a whole module (a class with ``select``) rather than a ``solve`` body."""
    return "@method(" in template


def render_method(task_name: str, family: str, body: str, name: str, kind: str, deterministic: bool | str = True) -> str:
    """Source of a new method file; ``body`` is the task's template (a function body).

    ``deterministic`` is written into the decorator: ``True``, or a reason
    string for ``False`` (written as a comment beside it).
    """
    _check_name_kind(name, kind)
    body = textwrap.indent(textwrap.dedent(body).strip("\n"), "    ")
    why = f"  # {deterministic}" if isinstance(deterministic, str) else ""
    return _TEMPLATE.format(name=name, kind=kind, task=task_name, family=family, body=body,
                            deterministic=deterministic is True, why=why)  # fmt: skip


def render_module(template: str, name: str, kind: str) -> str:
    """Source of a new method file from a whole-module template (``{name}``, ``{kind}``; braces doubled)."""
    _check_name_kind(name, kind)
    return template.format(name=name, kind=kind)


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


def write_family(
    family: str,
    *,
    root: Path | None = None,
    method: str | None = None,
    baseline: str | None = None,
    paper: str = "Author et al., Title (ICML 2025)",
    area: str = "(replace: research area)",
) -> list[Path]:
    """Write a family skeleton under ``root`` (default: the repository) and return its files.

    Parameters
    ----------
    family
        The family's package name (``graph_coloring``; ``graph-coloring`` is
        read the same). The task is registered as its hyphenated form.
    root
        The directory holding ``tasks/``, ``methods/``, ``baselines/`` and
        ``tests/``; missing package ``__init__.py`` files are created.
    method, baseline
        Names of the skeleton's method and baseline (default
        ``<task>-method`` and ``<task>-baseline``).
    paper, area
        Written into the task's metadata, claims and README.

    Raises
    ------
    ValueError
        For a family or method name that is not a lower-case identifier.
    FileExistsError
        If any file it would write exists; nothing is written then.
    """
    family = family.replace("-", "_")
    if not FAMILY_RE.match(family):
        raise ValueError(f"family name {family!r} must be lower case letters, digits and '_', starting with a letter")
    task = family.replace("_", "-")
    method = method or f"{task}-method"
    baseline = baseline or f"{task}-baseline"
    for name in (method, baseline):
        if not NAME_RE.match(name):
            raise ValueError(f"method name {name!r} must be lower case letters, digits, '-' or '_'")
    if method == baseline:
        raise ValueError("the method and the baseline need different names")
    root = Path(root) if root is not None else repo_root()
    words = {
        "__FAMILY__": family,
        "__TASK__": task,
        "__CLASS__": "".join(w.capitalize() for w in family.split("_")) + "Task",
        "__METHOD__": method,
        "__BASELINE__": baseline,
        "__PAPER__": paper.replace('"', "'"),
        "__AREA__": area.replace('"', "'"),
    }
    plan = {
        root / "tasks" / family / "__init__.py": "task.py.tmpl",
        root / "tasks" / family / "README.md": "README.md.tmpl",
        root / "tasks" / family / "claims.toml": "claims.toml.tmpl",
        root / "tasks" / family / "paper_results.csv": "paper_results.csv.tmpl",
        root / "methods" / family / "__init__.py": "methods_init.py.tmpl",
        root / "methods" / family / (method.replace("-", "_") + ".py"): "method.py.tmpl",
        root / "baselines" / family / "__init__.py": "baselines_init.py.tmpl",
        root / "baselines" / family / (baseline.replace("-", "_") + ".py"): "baseline.py.tmpl",
        root / "tests" / f"test_{family}.py": "test.py.tmpl",
    }
    existing = [str(p) for p in plan if p.exists()]
    if existing:
        raise FileExistsError(f"{existing[0]} already exists; pick another --family (or remove the old skeleton)")
    for top in ("tasks", "methods", "baselines"):
        init = root / top / "__init__.py"
        if not init.exists():
            init.parent.mkdir(parents=True, exist_ok=True)
            init.write_text(f'"""{top}: one sub-package per family."""\n')
    for path, template in plan.items():
        text = (FAMILY_TEMPLATES / template).read_text()
        for word, value in words.items():
            text = text.replace(word, value)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return list(plan)
