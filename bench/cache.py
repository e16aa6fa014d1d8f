"""Where tasks keep what they compute once: trusted references, prepared pools.

A cache entry is a pure function of its key (a task's version, an instance id,
a digest of the inputs, and :func:`source_digest` of the code that computes
it), so deleting the cache only costs the time to compute it again. The code
is part of the key because a version number alone is kept by hand: an entry
computed while a family's reference code was being written, under the same
version, once outlived the change and was published as the reference of a
whole tier (log-concave-sampling, 2026-12-06). Writes are atomic (a temporary file renamed into place), so a killed
process never leaves half a file; an entry that cannot be read (truncated,
edited, from another version of a library) is computed again and replaced.

The root is ``$BENCH_CACHE_DIR``, else ``$XDG_CACHE_HOME/bench``, else
``~/.cache/bench``.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import json
import os
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["cache_dir", "cached_json", "cached_npz", "atomic_write_bytes", "source_digest"]


def cache_dir(*parts: str) -> Path:
    """The cache directory ``<root>/<parts...>`` (not created)."""
    root = os.environ.get("BENCH_CACHE_DIR")
    if root:
        base = Path(root)
    else:
        xdg = os.environ.get("XDG_CACHE_HOME")
        base = (Path(xdg) if xdg else Path.home() / ".cache") / "bench"
    return base.joinpath(*parts)


@functools.cache
def source_digest(module: str) -> str:
    """A 16-hex digest of the Python source a cache entry of ``module`` depends on.

    ``module`` is a module's dotted name. For a module inside a family package
    (``tasks.pde.references``, or the package ``tasks.sampling`` itself) the
    digest covers every ``.py`` file under that package's directory, so any edit
    to the family's code, its helpers included, gives new keys; a module
    outside such a package (a plugin file) covers its own file. Edits to a
    docstring also count: they cost one recomputation, never a stale entry.

    Raises
    ------
    ModuleNotFoundError
        If ``module`` cannot be imported.
    """
    mod = importlib.import_module(module)
    name = mod.__name__ if hasattr(mod, "__path__") else (mod.__package__ or "")
    if name.count(".") >= 1:  # tasks.sampling, tasks.pde, ...: the family package
        family = importlib.import_module(".".join(name.split(".")[:2]))
        files = sorted(Path(p) for d in family.__path__ for p in Path(d).rglob("*.py"))
        root = Path(next(iter(family.__path__)))
    else:
        files, root = [Path(mod.__file__ or "")], Path(mod.__file__ or "").parent
    h = hashlib.sha256()
    for f in files:
        try:
            rel = f.relative_to(root).as_posix()
        except ValueError:
            rel = f.name
        h.update(rel.encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def atomic_write_bytes(path: Path, payload: bytes) -> None:
    """Write ``payload`` to ``path`` through a temporary file in the same directory."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(payload)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def cached_json(path: Path, compute: Callable[[], Any]) -> Any:
    """The JSON value cached at ``path``, or ``compute()`` written there first.

    An unreadable entry is computed again and replaced; an unwritable cache
    directory only costs the recomputation next time.
    """
    path = Path(path)
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        pass
    value = compute()
    try:
        atomic_write_bytes(path, json.dumps(value, sort_keys=True).encode())
    except OSError:
        pass
    return value


def cached_npz(path: Path, compute: Callable[[], dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """The arrays cached at ``path`` (an ``.npz``), or ``compute()`` written there first.

    Same rules as :func:`cached_json`; arrays are loaded without pickles.
    """
    path = Path(path)
    try:
        with np.load(path, allow_pickle=False) as z:
            return {k: z[k] for k in z.files}
    except (OSError, ValueError, EOFError, KeyError, zipfile.BadZipFile):  # truncated: BadZipFile
        pass
    arrays = compute()
    try:
        import io

        buf = io.BytesIO()
        np.savez(buf, **arrays)
        atomic_write_bytes(path, buf.getvalue())
    except OSError:
        pass
    return arrays
