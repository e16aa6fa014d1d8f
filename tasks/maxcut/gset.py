"""The Gset graph files: their format, their checksums, where they are found.

Format (Helmberg & Rendl 1997; the files on Yinyu Ye's Gset page): line 1 is
``n m``; then ``m`` lines ``i j w``, an undirected edge between the 1-indexed
vertices ``i`` and ``j`` with integer weight ``w`` (+1 or -1 in Gset). Blank
lines are ignored (some copies end with one).

Three steps, kept apart so that each can be tested on its own:

- :func:`parse_gset` reads any file in that format and checks its structure
  (header, counts, indices, self-loops, duplicates, integer weights). A broken
  file raises :class:`GsetFormatError` naming the file, the line and the
  problem.
- :func:`verify_checksum` compares a file's sha256 with the digest committed in
  ``gset_sha256.json`` (copied from ``shared/data/gset/SOURCE.md``).
- :func:`locate_gset` finds a graph by name: ``$BENCH_DATA_DIR/gset/``, then
  ``shared/data/gset/`` beside the repository, then the user cache
  (``$XDG_CACHE_HOME/bench/gset``, default ``~/.cache/bench/gset``); if it is in
  none of them, :func:`download_gset` fetches it from the canonical Stanford
  page into the cache.

:func:`read_gset` does all three and caches the parsed graph in-process.
"""

from __future__ import annotations

import functools
import hashlib
import io
import json
import os
import re
import tempfile
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
    "GSET_URL",
    "GSET_NAMES",
    "GsetError",
    "GsetFormatError",
    "GsetChecksumError",
    "Graph",
    "gset_info",
    "parse_gset",
    "verify_checksum",
    "search_dirs",
    "cache_dir",
    "locate_gset",
    "download_gset",
    "read_gset",
]

#: Canonical home of the files (Yinyu Ye's page); ``<name>`` has no extension.
GSET_URL = "https://web.stanford.edu/~yyye/yyye/Gset/{name}"

_HERE = Path(__file__).resolve().parent
_DOWNLOAD_TIMEOUT_S = 60.0


class GsetError(Exception):
    """A Gset graph cannot be found, fetched or trusted."""


class GsetFormatError(GsetError, ValueError):
    """A file is not a well-formed Gset file; the message names file, line and problem."""


class GsetChecksumError(GsetError):
    """A file's sha256 differs from the committed digest."""


@functools.cache
def _table() -> dict[str, dict[str, Any]]:
    with open(_HERE / "gset_sha256.json") as fh:
        raw = json.load(fh)
    return raw["files"]


def _gset_key(name: str) -> tuple[int, str]:
    m = re.fullmatch(r"G(\d+)", name)
    return (int(m[1]) if m else 10**9, name)


#: The 71 graphs, in numeric order (G1 ... G67, G70, G72, G77, G81).
GSET_NAMES: tuple[str, ...] = tuple(sorted(_table(), key=_gset_key))


def gset_info(name: str) -> dict[str, Any]:
    """Committed facts about one graph: ``n``, ``m``, ``weights`` ("+1" or "-1,+1"),
    ``type`` (random / planar / toroidal), ``bytes`` and ``sha256``.

    Raises
    ------
    KeyError
        For a name that is not one of :data:`GSET_NAMES`.
    """
    try:
        return dict(_table()[name])
    except KeyError:
        raise KeyError(f"{name!r} is not a Gset graph; the graphs are {', '.join(GSET_NAMES)}") from None


# ----------------------------------------------------------------------------- parsing


@dataclass(frozen=True)
class Graph:
    """A parsed graph, in the data contract of :mod:`tasks.maxcut.graph`.

    ``edges`` is ``int64 (m, 2)``, 0-indexed, ``u < v``, in file order;
    ``weights`` is ``float64 (m,)``. Both arrays are read-only (they are cached
    and shared).
    """

    name: str
    n: int
    edges: np.ndarray
    weights: np.ndarray
    sha256: str


def _fail(label: str, lineno: int | None, problem: str) -> GsetFormatError:
    where = f"{label}: line {lineno}: " if lineno is not None else f"{label}: "
    return GsetFormatError(where + problem)


def _header(label: str, first: str) -> tuple[int, int]:
    fields = first.split()
    if len(fields) != 2:
        raise _fail(label, 1, f"expected the header `n m` (2 integers), got {len(fields)} fields: {first.strip()!r}")
    try:
        n, m = int(fields[0]), int(fields[1])
    except ValueError:
        raise _fail(label, 1, f"expected the header `n m` (2 integers), got {first.strip()!r}") from None
    if n < 1:
        raise _fail(label, 1, f"the header declares n={n} nodes; a graph needs at least 1")
    if m < 0:
        raise _fail(label, 1, f"the header declares m={m} edges; the count cannot be negative")
    return n, m


def _slow_parse(label: str, lines: list[str], n: int, m: int) -> tuple[np.ndarray, np.ndarray]:
    """Line-by-line parse: slow, but says exactly which line is wrong and why."""
    edges = np.empty((m, 2), dtype=np.int64)
    weights = np.empty(m, dtype=np.float64)
    seen: dict[tuple[int, int], int] = {}
    count = 0
    for lineno, line in enumerate(lines[1:], start=2):
        fields = line.split()
        if not fields:
            continue
        if count == m:
            raise _fail(label, lineno, f"more edge lines than the m={m} the header declares")
        if len(fields) != 3:
            raise _fail(label, lineno, f"expected 3 fields `i j w`, got {len(fields)}: {line.strip()!r}")
        ints = []
        for what, tok in zip(("node index i", "node index j", "weight w"), fields, strict=True):
            try:
                ints.append(int(tok))
            except ValueError:
                raise _fail(label, lineno, f"{what} {tok!r} is not an integer") from None
        i, j, w = ints
        for node in (i, j):
            if not 1 <= node <= n:
                raise _fail(label, lineno, f"node {node} is outside [1, {n}] (the header declares n={n})")
        if i == j:
            raise _fail(label, lineno, f"self-loop on node {i}")
        key = (min(i, j), max(i, j))
        if key in seen:
            raise _fail(label, lineno, f"edge {{{key[0]}, {key[1]}}} repeats line {seen[key]}")
        seen[key] = lineno
        edges[count] = (key[0] - 1, key[1] - 1)
        weights[count] = w
        count += 1
    if count < m:
        raise _fail(
            label,
            None,
            f"the header declares m={m} edges but the file has only {count} edge lines "
            f"(after line {len(lines)}); the file looks truncated",
        )
    return edges, weights


def _fast_parse(body: str, n: int, m: int) -> tuple[np.ndarray, np.ndarray] | None:
    """Vectorised parse; ``None`` when anything is off (the slow path then says what)."""
    if not body.strip():
        return (np.empty((0, 2), np.int64), np.empty(0, np.float64)) if m == 0 else None
    try:
        arr = np.loadtxt(io.StringIO(body), dtype=np.int64, ndmin=2, comments=None)
    except (ValueError, OverflowError):
        return None
    if arr.shape != (m, 3):
        return None
    u, v = np.minimum(arr[:, 0], arr[:, 1]), np.maximum(arr[:, 0], arr[:, 1])
    if u.min() < 1 or v.max() > n or np.any(u == v):
        return None
    if np.unique(u * (n + 1) + v).size != m:
        return None
    edges = np.stack([u - 1, v - 1], axis=1)
    return edges, arr[:, 2].astype(np.float64)


def parse_gset(path: str | os.PathLike[str], *, name: str | None = None) -> Graph:
    """Parse a file in the Gset format; no checksum is checked here.

    Parameters
    ----------
    path
        The file.
    name
        Used in messages (default: the file name).

    Returns
    -------
    Graph
        With ``sha256`` the digest of the file's bytes.

    Raises
    ------
    GsetFormatError
        For an empty file, a bad header, a line without exactly 3 integer
        fields, a node outside ``[1, n]``, a self-loop, a repeated edge (in
        either orientation), or a line count that differs from the header's
        ``m``. The message names the file, the line and the problem, e.g.
        ``"G60: line 17: expected 3 fields `i j w`, got 4: '1 2 1 7'"``.
    """
    path = Path(path)
    label = name or path.name
    data = path.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    try:
        text = data.decode("ascii")
    except UnicodeDecodeError as exc:
        lineno = data[: exc.start].count(b"\n") + 1
        raise _fail(label, lineno, f"byte 0x{data[exc.start]:02x} is not ASCII; Gset files are plain text") from None
    if not text.strip():
        raise _fail(label, None, f"the file {path} is empty; expected a header line `n m` and then one line `i j w` per edge")
    first, _, body = text.partition("\n")
    n, m = _header(label, first)
    fast = _fast_parse(body, n, m)
    if fast is None:
        edges, weights = _slow_parse(label, text.splitlines(), n, m)
    else:
        edges, weights = fast
    edges.setflags(write=False)
    weights.setflags(write=False)
    return Graph(name=label, n=n, edges=edges, weights=weights, sha256=digest)


# ----------------------------------------------------------------------------- checksums


def verify_checksum(path: str | os.PathLike[str], name: str) -> str:
    """Check that ``path`` holds exactly the committed Gset file ``name``.

    Returns
    -------
    str
        The sha256 (hex) of the file.

    Raises
    ------
    GsetChecksumError
        If the digest differs from the one in ``gset_sha256.json``.
    """
    expected = gset_info(name)["sha256"]
    got = hashlib.sha256(Path(path).read_bytes()).hexdigest()
    if got != expected:
        raise GsetChecksumError(_checksum_message(name, str(path), got, expected))
    return got


def _checksum_message(name: str, where: str, got: str, expected: str, *, downloaded: bool = False) -> str:
    good_copy = f"the copy in GitHub NetSysOpt/ROS @ 3957340, instance/{name}/{name}.txt, has the expected digest"
    if downloaded:
        hint = (
            "Nothing was written. The server may hold another revision of the file; put a copy with the "
            f"expected digest ({good_copy}) in $BENCH_DATA_DIR/gset/{name} or {cache_dir() / name} by hand."
        )
    else:
        hint = (
            "Delete or replace the file: the task only uses the exact bytes its references and "
            f"results were computed on ({good_copy})."
        )
    if name == "G60":
        hint += " Note: a third-party list reports a different digest for Stanford's G60; see tasks/maxcut/README.md."
    return f"{name}: sha256 of {where} is {got}, expected {expected} (tasks/maxcut/gset_sha256.json). {hint}"


# ----------------------------------------------------------------------------- where files live


def cache_dir() -> Path:
    """``$XDG_CACHE_HOME/bench/gset``, or ``~/.cache/bench/gset``."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "bench" / "gset"


def search_dirs() -> list[Path]:
    """Where :func:`locate_gset` looks, in order.

    1. ``$BENCH_DATA_DIR/gset`` (if the variable is set);
    2. ``shared/data/gset`` next to the repository (``<repo>/../shared/data/gset``);
    3. the user cache, :func:`cache_dir`.
    """
    from bench.environment import repo_root

    dirs = []
    if os.environ.get("BENCH_DATA_DIR"):
        dirs.append(Path(os.environ["BENCH_DATA_DIR"]) / "gset")
    dirs.append(repo_root().parent / "shared" / "data" / "gset")
    dirs.append(cache_dir())
    return dirs


def locate_gset(name: str, *, download: bool = True) -> Path:
    """The path of Gset graph ``name``, downloading it into the cache if needed.

    The first directory of :func:`search_dirs` holding a file called ``name``
    wins; its checksum is then checked by :func:`read_gset` (a wrong file is an
    error, never skipped in favour of the next directory).

    Raises
    ------
    GsetError
        If the file is nowhere and ``download`` is false, or the download fails.
    """
    gset_info(name)  # unknown names fail here, before any network access
    dirs = search_dirs()
    for d in dirs:
        p = d / name
        if p.is_file():
            return p
    if not download:
        raise GsetError(f"{name}: not found in {', '.join(str(d) for d in dirs)}")
    return download_gset(name, cache_dir())


def download_gset(name: str, dest_dir: Path) -> Path:
    """Fetch ``name`` from :data:`GSET_URL` into ``dest_dir``, checking its sha256.

    The file is written to a temporary name in ``dest_dir`` and renamed into
    place only after its checksum matched, so a failed or interrupted download
    never leaves a file that looks complete.

    Raises
    ------
    GsetChecksumError
        If the downloaded bytes differ from the committed digest (nothing is written).
    GsetError
        If the download fails.
    """
    url = GSET_URL.format(name=name)
    expected = gset_info(name)["sha256"]
    try:
        with urllib.request.urlopen(url, timeout=_DOWNLOAD_TIMEOUT_S) as resp:
            data = resp.read()
    except OSError as exc:  # URLError, HTTPError and timeouts are all OSErrors
        raise GsetError(
            f"{name}: not found locally ({', '.join(str(d) for d in search_dirs())}) and the download "
            f"from {url} failed: {exc}. Put the file in $BENCH_DATA_DIR/gset/ or {dest_dir}/ by hand."
        ) from exc
    got = hashlib.sha256(data).hexdigest()
    if got != expected:
        raise GsetChecksumError(_checksum_message(name, f"the download from {url}", got, expected, downloaded=True))
    dest_dir.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".part", dir=dest_dir)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, dest_dir / name)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return dest_dir / name


@functools.cache
def read_gset(name: str) -> Graph:
    """Locate, verify and parse Gset graph ``name`` (cached in-process).

    Caching by name is safe because the checksum pins the contents: whichever
    directory the file comes from, a verified file has the same bytes.

    Raises
    ------
    KeyError
        For a name that is not a Gset graph.
    GsetError
        If the file cannot be found or fetched, fails its checksum
        (:class:`GsetChecksumError`) or does not parse (:class:`GsetFormatError`).
    """
    path = locate_gset(name)
    verify_checksum(path, name)
    graph = parse_gset(path, name=name)
    info = gset_info(name)
    if (graph.n, len(graph.edges)) != (info["n"], info["m"]):  # pragma: no cover - the checksum pins these
        raise GsetFormatError(f"{name}: parsed n={graph.n}, m={len(graph.edges)}; expected n={info['n']}, m={info['m']}")
    return graph
