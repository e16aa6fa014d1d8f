"""Load a maintainer script from ``scripts/`` as a module, for the tests that check what it prints.

``scripts/`` is no package (nothing installs it, nothing in the packages imports it), so a
test loads a script from its path instead of importing it by name.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]


def load_script(relpath: str) -> ModuleType:
    """The script at ``ROOT / relpath`` (e.g. ``"scripts/maxcut/official_ros.py"``), executed once.

    Parameters
    ----------
    relpath
        Path of the script, relative to the repository root.

    Returns
    -------
    ModuleType
        The script's module, named ``scripts_<family>_<stem>`` in ``sys.modules`` (registered
        before it runs, so dataclasses and pickling inside it resolve their module), and the same
        object on later calls.

    Raises
    ------
    FileNotFoundError
        No script at that path (say, after a rename: update the test with the script).
    """
    path = ROOT / relpath
    if not path.is_file():
        raise FileNotFoundError(f"{relpath}: no such script under {ROOT}")
    name = "_".join(Path(relpath).with_suffix("").parts)
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module
