"""Imports run one way (README, "Architecture"): a static check of every package file.

Each ``.py`` file under ``bench/``, ``tasks/``, ``common/``, ``methods/``, ``baselines/`` and
``leaderboard/`` is parsed with :mod:`ast` (nothing is imported, so the check is fast and sees
imports inside functions too), and every import of a project package is checked against the
rule of the file's own package:

========================  =====================================================
a file in                 may import (besides the standard library and PyPI)
========================  =====================================================
``bench/``                ``bench``
``tasks/<F>/``            ``bench``, ``tasks.<F>``
``common/<F>/``           ``bench``, ``tasks.<F>``, ``common.<F>``
``methods/<F>/``          ``bench``, ``tasks.<F>``, ``common.<F>``, ``methods.<F>``
``baselines/<F>/``        ``bench``, ``tasks.<F>``, ``common.<F>``, ``baselines.<F>``
``leaderboard/``          ``bench``, ``leaderboard``
========================  =====================================================

``scripts/`` (maintainer scripts, not installed) may import anything and nothing imports it.
Relative imports are resolved first, and ``importlib.import_module("...")`` /
``__import__("...")`` with a literal name count as imports.
"""

from __future__ import annotations

import ast
import tomllib
from dataclasses import dataclass
from fnmatch import fnmatch
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: The packages the rules cover, in the order the arrows run.
CHECKED = ("bench", "tasks", "common", "methods", "baselines", "leaderboard")
#: Packages whose sub-packages are task families (``tasks/maxcut``, ``methods/maxcut``, ...).
FAMILY_LAYERS = ("tasks", "common", "methods", "baselines")
#: Every top-level name that is this project's (anything else is the standard library or PyPI).
PROJECT = (*CHECKED, "scripts")
#: What each family layer may import from the family layers, for its own family ``F``.
FAMILY_MAY_IMPORT = {
    "tasks": ("tasks",),
    "common": ("tasks", "common"),
    "methods": ("tasks", "common", "methods"),
    "baselines": ("tasks", "common", "baselines"),
}


@dataclass(frozen=True)
class Violation:
    """One import against the rules: where it is, what it imports, and which rule it breaks."""

    path: str
    line: int
    target: str
    rule: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: imports {self.target}: {self.rule}"


def _package_of(relpath: str) -> list[str]:
    """The dotted package a file's relative imports start from (``methods/pde/kron.py`` -> methods.pde)."""
    return list(Path(relpath).with_suffix("").parts[:-1])


def _imports(tree: ast.AST, relpath: str) -> list[tuple[int, str]]:
    """``(line, absolute module name)`` of every import in ``tree``, at any depth."""
    out: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.extend((node.lineno, a.name) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                pkg = _package_of(relpath)
                base = pkg[: len(pkg) - (node.level - 1)] if node.level - 1 <= len(pkg) else []
                mod = ".".join([*base, *([node.module] if node.module else [])])
                # ``from . import x`` may name submodules: check each as ``pkg.x``
                names = [f"{mod}.{a.name}" for a in node.names] if not node.module else [mod]
                out.extend((node.lineno, n) for n in names if n)
            elif node.module:
                out.append((node.lineno, node.module))
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
            arg = node.args[0].value
            if name in ("import_module", "__import__") and isinstance(arg, str) and not arg.startswith("."):
                out.append((node.lineno, arg))
    return out


def _within(target: str, package: str) -> bool:
    return target == package or target.startswith(package + ".")


def rule_broken(relpath: str, target: str) -> str | None:
    """Why the file at ``relpath`` may not import ``target``, or ``None`` when it may.

    Parameters
    ----------
    relpath
        The importing file, relative to the repository root, with ``/`` separators.
    target
        The absolute dotted name it imports.
    """
    top = target.split(".")[0]
    if top not in PROJECT:
        return None
    parts = Path(relpath).parts
    layer = parts[0]
    if top == "scripts":
        return "scripts/ holds maintainer scripts, not installed; no package imports them (move the code into a package)"
    if _within(target, "bench"):
        return None
    if layer == "bench":
        return "bench/ (the core) imports only bench; a task or method reaches the core by registering itself"
    if layer == "leaderboard":
        if top == "leaderboard":
            return None
        return "leaderboard/ imports only bench and itself: it reads published results as data, never tasks, methods or baselines"
    family = parts[1] if len(parts) > 2 else None
    if family is None:
        return f"{layer}/{parts[-1]} belongs to no family: it may import bench only"
    allowed = FAMILY_MAY_IMPORT[layer]
    if top not in allowed:
        if {layer, top} == {"methods", "baselines"}:
            return f"methods/ and baselines/ never import each other: move what both use to common/{family}/"
        if layer in ("tasks", "common"):
            return f"{layer}/ never imports methods/ or baselines/ (the arrows run tasks -> common -> methods, baselines)"
        return f"{layer}/ may import {', '.join(('bench', *allowed))} only"
    if not _within(target, f"{top}.{family}"):
        return (f"a family imports only its own family's modules ({top}.{family}); code that families share "
                "belongs in bench/")
    return None


def check_source(source: str, relpath: str) -> list[Violation]:
    """Every import in ``source`` (the text of the file at ``relpath``) that breaks a rule."""
    tree = ast.parse(source, filename=relpath)
    return [Violation(relpath, line, t, r) for line, t in _imports(tree, relpath) if (r := rule_broken(relpath, t))]


def package_files(root: Path = ROOT) -> list[Path]:
    """Every ``.py`` file of the checked packages under ``root``."""
    return sorted(p for pkg in CHECKED for p in (root / pkg).rglob("*.py") if "__pycache__" not in p.parts)


def check_tree(root: Path = ROOT) -> list[Violation]:
    """Every import against the rules in the checked packages under ``root``."""
    out: list[Violation] = []
    for p in package_files(root):
        out.extend(check_source(p.read_text(encoding="utf-8"), p.relative_to(root).as_posix()))
    return out


# ----------------------------------------------------------------------------- the repository


def test_every_package_import_follows_the_rules():
    found = check_tree()
    assert not found, "imports against the rules (README, 'Architecture'):\n" + "\n".join(map(str, found))


def test_the_check_reads_every_package_and_their_function_level_imports():
    files = {p.relative_to(ROOT).as_posix() for p in package_files()}
    for layer in CHECKED:
        assert any(f.startswith(layer + "/") for f in files), f"no file of {layer}/ was checked"
    assert {"methods/pde/kron.py", "baselines/active_learning/galaxy.py", "leaderboard/app.py"} <= files
    assert not any(f.startswith("scripts/") for f in files)
    # the shared code is seen where it is imported: the top of baselines/pde/daks.py ...
    daks = _imports(ast.parse((ROOT / "baselines/pde/daks.py").read_text()), "baselines/pde/daks.py")
    assert any(t == "common.pde.kernels" for _, t in daks)
    # ... and inside function bodies, where the packages import lazily (bench/cli.py, say)
    nested = set()
    for p in package_files():
        rel = p.relative_to(ROOT).as_posix()
        for fn in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
                nested.update(t for _, t in _imports(fn, rel) if t.split(".")[0] in PROJECT)
    assert len(nested) > 10, nested


def test_scripts_are_not_installed_and_common_is():
    include = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]["find"]["include"]
    for pkg in ("bench", "tasks", "common", "methods", "baselines", "common.pde"):
        assert any(fnmatch(pkg, pat) for pat in include), f"{pkg} is not installed by pyproject's packages.find"
    assert not any(fnmatch(name, pat) for pat in include for name in ("scripts", "scripts.maxcut"))
    assert not (ROOT / "scripts" / "__init__.py").exists(), "scripts/ must stay a folder of scripts, not a package"


# ----------------------------------------------------------------------------- the checker itself

BROKEN = [
    # (file, source, words the reported rule must contain)
    ("baselines/pde/daks.py", "from methods.pde.kernels import kernel_matrix\n", "never import each other"),
    ("methods/maxcut/ros.py", "import baselines.maxcut.greedy as g\n", "never import each other"),
    ("tasks/pde/problems.py", "def f():\n    if True:\n        from methods.pde.sks import build_model\n", "never imports methods"),
    ("tasks/maxcut/gset.py", "from baselines.maxcut import greedy\n", "never imports methods/ or baselines/"),
    ("common/pde/kernels.py", "from methods.pde import sks\n", "never imports methods"),
    ("leaderboard/app.py", "from tasks.maxcut import MaxCut\n", "leaderboard/ imports only bench"),
    ("leaderboard/views.py", "def g():\n    import methods.maxcut\n", "leaderboard/ imports only bench"),
    ("bench/runner.py", "from tasks.knapsack import Knapsack\n", "bench/ (the core) imports only bench"),
    ("bench/registry.py", "import importlib\nimportlib.import_module('methods.maxcut.ros')\n", "imports only bench"),
    ("baselines/pde/daks.py", "from ...methods.pde.kernels import kernel_matrix\n", "never import each other"),
    ("methods/pde/kron.py", "from tasks.maxcut.graph import graph_digest\n", "its own family's modules"),
    ("baselines/maxcut/gw.py", "from common.pde.kernels import kernel_matrix\n", "its own family's modules"),
    ("tasks/pde/problems.py", "from tasks.maxcut import gset\n", "its own family's modules"),
    ("methods/pde/sks.py", "from scripts.pde import scaling\n", "no package imports them"),
    ("tasks/maxcut/references.py", "__import__('scripts.maxcut.official_ros')\n", "no package imports them"),
    ("methods/helpers.py", "from methods.pde import sks\n", "belongs to no family"),
]


@pytest.mark.parametrize(("relpath", "source", "words"), BROKEN, ids=[f"{i}-{b[0]}" for i, b in enumerate(BROKEN)])
def test_the_checker_names_file_line_and_rule_of_a_violation(relpath, source, words):
    found = check_source(source, relpath)
    assert len(found) == 1, found
    v = found[0]
    assert words in v.rule
    last_line = len(source.rstrip("\n").splitlines())
    assert v.line == last_line and str(v).startswith(f"{relpath}:{last_line}: imports ")


ALLOWED = [
    ("methods/pde/kron.py", "from common.pde.kernels import kernel_matrix\nfrom tasks.pde.problems import Elliptic\n"),
    ("baselines/active_learning/galaxy.py", "from common.active_learning.driver import Plan\nfrom bench import method\n"),
    ("common/manifold_diffusion/models.py", "import tasks.manifold_diffusion as md\nfrom bench import time_left\n"),
    ("tasks/maxcut/__init__.py", "from tasks.maxcut.graph import graph_digest\nimport numpy as np\n"),
    ("tasks/maxcut/gset.py", "from .graph import graph_digest\nfrom . import references\n"),
    ("leaderboard/app.py", "from leaderboard import views\nfrom bench.bundle import load_bundles\nimport streamlit\n"),
    ("bench/cli.py", "from bench import registry\nimport importlib\nimportlib.import_module(name)\n"),
    ("methods/maxcut/ros.py", "import common_lib\nimport benchmark_tools\nimport tasks_extra\n"),
]


@pytest.mark.parametrize(("relpath", "source"), ALLOWED, ids=[a[0] for a in ALLOWED])
def test_the_checker_lets_allowed_imports_pass(relpath, source):
    assert check_source(source, relpath) == []


def test_a_violation_in_a_tree_fails_the_check(tmp_path):
    """The whole-tree check, not just the snippet check, reports a file that breaks a rule."""
    for rel, text in {
        "methods/pde/__init__.py": "",
        "methods/pde/sks.py": "from common.pde.kernels import kernel_matrix\n",
        "baselines/pde/daks.py": "import numpy as np\n\n\ndef solve():\n    from methods.pde.sks import build_model\n",
        "leaderboard/app.py": "from bench.bundle import load_bundles\n",
    }.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    found = check_tree(tmp_path)
    assert [str(v).split(": ", 1)[0] for v in found] == ["baselines/pde/daks.py:5"]
    assert "move what both use to common/pde/" in found[0].rule
