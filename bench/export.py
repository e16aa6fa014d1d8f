"""``bench export``: a published bundle as a Hugging Face ``datasets`` dataset, solutions included.

A bundle in ``results/`` keeps at most :data:`bench.bundle.MAX_BUNDLE_MB` in
git, so large solutions are left out of it (``solutions_left_out``). The
export puts them back: it reads each solution from the bundle, else from the
local run store (``.bench/runs``), else from the git commit that held it
before the bundle was trimmed, checks it against the record's
``solution_sha256``, and writes a folder that ``datasets`` (and the Hugging
Face hub) reads as it is::

    README.md                                 dataset card: YAML front matter (configs) + provenance
    records/train-00000-of-00001.parquet      records.parquet of the bundle, one row per job
    solutions/train-0000i-of-0000n.parquet    one row per ok/invalid job: the solution's .npz bytes
    bundle/manifest.json, task.json, ...      the bundle's own metadata files, unchanged

The ``solutions`` rows carry ``key``, ``task``, ``instance``, ``method``,
``seed``, ``rep``, ``status``, ``solution_sha256``, ``npz`` (the bytes of the
file :func:`bench.wire.save_npz` wrote; :func:`bench.wire.load_npz` reads
them), ``bytes``, ``source`` (``bundle``, ``store`` or ``git``) and
``missing`` (why a solution could not be included; ``npz`` is then null).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from bench import wire
from bench.bundle import checked_manifest, left_out_solutions
from bench.store import Store

__all__ = ["ExportReport", "export_bundle", "SHARD_MB"]

#: Target size of one solutions shard (MiB); the hub serves shards of a few hundred MB well.
SHARD_MB = 256.0

_META_FILES = ("manifest.json", "task.json", "claims.json", "methods.json")

_SOLUTION_SCHEMA = pa.schema(
    [
        ("key", pa.string()),
        ("task", pa.string()),
        ("instance", pa.string()),
        ("method", pa.string()),
        ("seed", pa.int64()),
        ("rep", pa.int64()),
        ("status", pa.string()),
        ("solution_sha256", pa.string()),
        ("npz", pa.binary()),
        ("bytes", pa.int64()),
        ("source", pa.string()),
        ("missing", pa.string()),
    ]
)


@dataclass
class ExportReport:
    """What :func:`export_bundle` wrote."""

    output: Path
    records: int
    #: source ("bundle", "store", "git") -> solutions included from it
    included: dict[str, int] = field(default_factory=dict)
    #: job key -> why its solution could not be included
    missing: dict[str, str] = field(default_factory=dict)
    shards: list[str] = field(default_factory=list)


def _git_blob(bdir: Path, rel: str, commit: str) -> bytes | None:
    """The bytes of ``bdir/rel`` at git ``commit`` (``bdir`` inside a git checkout), or None."""
    try:
        top = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=bdir, capture_output=True, text=True, timeout=30, check=True)
        path = (bdir.resolve() / rel).relative_to(Path(top.stdout.strip()).resolve()).as_posix()
        out = subprocess.run(["git", "cat-file", "blob", f"{commit}:{path}"], cwd=bdir, capture_output=True, timeout=60, check=True)
    except (OSError, ValueError, subprocess.SubprocessError):
        return None
    return out.stdout


def _solution_bytes(
    row: dict[str, Any], bdir: Path, left_out: dict[str, int], store: Store, commit: str | None
) -> tuple[bytes | None, str]:
    """The solution's ``.npz`` bytes and where they came from, or ``(None, reason)``."""
    key, want = str(row["key"]), row.get("solution_sha256")
    tried = []
    sol = row.get("solution_file")
    candidates: list[tuple[str, Any]] = []
    if isinstance(sol, str) and sol and key not in left_out:
        candidates.append(("bundle", lambda: (bdir / sol).read_bytes()))
    candidates.append(("store", lambda: store.solution_path(str(row["task"]), key).read_bytes()))
    if commit:
        rel = sol if isinstance(sol, str) and sol else f"solutions/{key}.npz"
        candidates.append(("git", lambda: _git_blob(bdir, rel, commit)))
    for source, read in candidates:
        try:
            data = read()
        except OSError:
            data = None
        if data is None:
            tried.append(f"not in the {source}" if source != "git" else f"not in git commit {commit[:12]}")
            continue
        try:
            got = wire.digest(wire.load_npz(data))
        except (OSError, ValueError) as exc:
            tried.append(f"the {source} copy is unreadable ({exc})")
            continue
        if isinstance(want, str) and want and got != want:
            tried.append(f"the {source} copy's hash differs from the record's solution_sha256")
            continue
        return data, source
    return None, "; ".join(tried)


def _write_shards(rows: list[dict[str, Any]], folder: Path, shard_bytes: float) -> list[str]:
    """Write ``rows`` as ``train-0000i-of-0000n.parquet`` shards of about ``shard_bytes`` each."""
    groups: list[list[dict[str, Any]]] = [[]]
    size = 0
    for r in rows:
        n = len(r["npz"] or b"")
        if groups[-1] and size + n > shard_bytes:
            groups.append([])
            size = 0
        groups[-1].append(r)
        size += n
    folder.mkdir(parents=True)
    names = []
    for i, g in enumerate(groups):
        name = f"train-{i:05d}-of-{len(groups):05d}.parquet"
        pq.write_table(pa.Table.from_pylist(g, schema=_SOLUTION_SCHEMA), folder / name)
        names.append(f"{folder.name}/{name}")
    return names


def _card(manifest: dict[str, Any], report: ExportReport, n_solutions: int) -> str:
    """The dataset card: YAML front matter the hub and ``datasets`` read, then the provenance."""
    task, bundle = manifest.get("task", "?"), manifest.get("bundle", "?")
    yaml_lines = [
        "---",
        f"pretty_name: {json.dumps(f'bench {task} results, bundle {bundle}')}",
        "tags:",
        "- benchmark",
        "- bench",
        f"- {json.dumps(str(task))}",
        "configs:",
        "- config_name: records",
        "  default: true",
        "  data_files:",
        "  - split: train",
        '    path: "records/*.parquet"',
        "- config_name: solutions",
        "  data_files:",
        "  - split: train",
        '    path: "solutions/*.parquet"',
        "---",
    ]
    sweeps = manifest.get("sweeps") or []
    lines = [
        f"# bench results: {task}, bundle `{bundle}`",
        "",
        f"Exported by `python -m bench export` from the published bundle `results/{task}/{bundle}/` of the bench "
        "repository. The task verified every solution and computed every metric itself; nothing here is a number a "
        "method reported about itself.",
        "",
        f"- origin: {manifest.get('origin', '?')}, author: {manifest.get('author', '?')}, published {manifest.get('created_at', '?')}",
        f"- task version {manifest.get('task_version', '?')}; hardware: {', '.join(manifest.get('hardware') or []) or '?'}",
        f"- git commits of the runs: {', '.join(manifest.get('git_commits') or []) or '?'}",
        *(f"- sweep `{s.get('sweep')}`: `{s.get('command')}`" for s in sweeps),
        f"- records: {report.records} (config `records`, one row per job, failures included: see `status`)",
        f"- solutions: {n_solutions - len(report.missing)} of {n_solutions} ok/invalid jobs included (config `solutions`; "
        + (", ".join(f"{n} from the {s}" for s, n in sorted(report.included.items())) or "none") + ")",
        "",
        "`bundle/` holds the bundle's own `manifest.json`, `task.json` (instances and tiers), `claims.json` (the paper's "
        "claims and numbers) and `methods.json`, unchanged.",
        "",
        "## Loading",
        "",
        "```python",
        "from datasets import load_dataset",
        'records = load_dataset("parquet", data_files="records/*.parquet", split="train")',
        'solutions = load_dataset("parquet", data_files="solutions/*.parquet", split="train")',
        "from bench import wire",
        'value = wire.load_npz(solutions[0]["npz"])   # the solution as the method returned it',
        'assert wire.digest(value) == solutions[0]["solution_sha256"]',
        "```",
        "",
        "`python -m bench verify` re-scores solutions with the task's verifier.",
    ]
    if report.missing:
        lines += ["", "## Solutions not included", "",
                  f"{len(report.missing)} solution(s) could not be found or did not match their record's hash; their rows in "
                  "`solutions` have a null `npz` and say why in `missing`:", ""]  # fmt: skip
        lines += [f"- `{k}`: {why}" for k, why in sorted(report.missing.items())]
    return "\n".join(yaml_lines + [""] + lines) + "\n"


def export_bundle(bdir: Path, output: Path, *, store: str | Path | None = None, shard_mb: float = SHARD_MB) -> ExportReport:
    """Write the bundle ``bdir`` as a Hugging Face ``datasets`` folder at ``output``.

    Parameters
    ----------
    bdir
        A results bundle directory (``results/<task>/<bundle>``); its files
        must still match its manifest's sha256 sums.
    output
        A folder that does not exist yet, or is empty.
    store
        The run store to read left-out solutions from (default ``.bench/runs``
        or ``$BENCH_STORE``).
    shard_mb
        Target size of a solutions shard, MiB.

    Returns
    -------
    ExportReport
        Counts per source and, by job key, every solution that could not be
        included and why (also listed in the dataset card).

    Raises
    ------
    ValueError
        If ``bdir`` is not a results bundle, fails its manifest's checks, or
        ``output`` is a non-empty folder or a file.
    """
    bdir, output = Path(bdir), Path(output)
    if not (bdir / "manifest.json").is_file():
        raise ValueError(f"{bdir}: no manifest.json; give a bundle directory such as results/<task>/<bundle>")
    manifest = checked_manifest(bdir)
    if manifest.get("kind") is not None or not (bdir / "records.parquet").is_file():
        raise ValueError(f"{bdir}: not a results bundle (a claims-only bundle has no records to export)")
    if output.exists() and (not output.is_dir() or any(output.iterdir())):
        raise ValueError(f"{output}: exists and is not an empty folder; choose a new --output")
    records = pd.read_parquet(bdir / "records.parquet")
    left_out = left_out_solutions(manifest)
    commit = ((manifest.get("solutions_left_out") or {}).get("trimmed") or {}).get("commit")
    runs = Store(store)
    tmp = output.with_name(f".{output.name}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    report = ExportReport(output=output, records=len(records))
    (tmp / "records").mkdir()
    shutil.copyfile(bdir / "records.parquet", tmp / "records" / "train-00000-of-00001.parquet")  # byte for byte
    report.shards.append("records/train-00000-of-00001.parquet")
    rows = []
    for r in records[records["status"].isin(["ok", "truncated", "invalid"])].to_dict("records"):
        data, source = _solution_bytes(r, bdir, left_out, runs, commit)
        if data is None:
            report.missing[str(r["key"])] = source
        else:
            report.included[source] = report.included.get(source, 0) + 1
        sha = r.get("solution_sha256")
        rows.append({"key": str(r["key"]), "task": str(r["task"]), "instance": str(r["instance"]), "method": str(r["method"]),
                     "seed": int(r["seed"]), "rep": int(r["rep"]), "status": str(r["status"]),
                     "solution_sha256": sha if isinstance(sha, str) else None, "npz": data,
                     "bytes": len(data) if data is not None else left_out.get(str(r["key"])),
                     "source": source if data is not None else None, "missing": None if data is not None else source})  # fmt: skip
    report.shards += _write_shards(rows, tmp / "solutions", shard_mb * 2**20)
    (tmp / "bundle").mkdir()
    for name in _META_FILES:
        if (bdir / name).exists():
            shutil.copyfile(bdir / name, tmp / "bundle" / name)
    (tmp / "README.md").write_text(_card(manifest, report, len(rows)))
    if output.exists():
        output.rmdir()
    tmp.rename(output)
    return report
