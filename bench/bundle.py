"""Published result bundles: ``results/<task>/<bundle-id>/``.

A bundle holds whole sweeps (failures included; single runs cannot be picked)::

    records.parquet      one row per job (records_frame columns)
    solutions/<key>.npz  every stored solution, so `bench verify` can re-score
    manifest.json        provenance: who, command, hardware, date, origin, hashes
    task.json            task metadata and instances (params, tags, references)
    claims.json          the task's claims and the paper's reported numbers, as data
    methods.json         metadata of the methods in the bundle (deviations...)

A bundle may *supersede* earlier bundles of its task (``bench publish
--supersedes OLD``), for example a quiet rerun of jobs that first ran on a
loaded machine: for every job key the two share, the new record replaces the
old one; the old bundle's other records still count. The old bundle stays in
the repository as provenance; ``Bundles.superseded`` says which replaced which.

Bundles are read as data only (Parquet and JSON), so the leaderboard never
imports a task or a method. A corrupted or foreign bundle is skipped with a
warning that names it. Each bundle has its own directory, so concurrent
submissions never touch the same file.
"""

from __future__ import annotations

import getpass
import hashlib
import json
import shutil
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from bench import environment
from bench.store import SCHEMA_VERSION, RunRecord, Store, SweepManifest, records_frame

__all__ = [
    "publish", "publish_claims", "trim_bundle", "load_bundles", "Bundles", "task_export", "claims_snapshot",
    "claims_difference", "bundle_bytes", "left_out_solutions", "checked_manifest", "PublishError", "REQUIRED_COLUMNS",
    "MAX_BUNDLE_MB", "DEFAULT_MAX_SOLUTION_MB", "is_development_run",
]  # fmt: skip

# The author recorded on a maintainers' bundle unless --author says otherwise
# (the login name of whoever ran publish says nothing to a reader).
MAINTAINERS_AUTHOR = "bench maintainers"

#: The policy for bundles kept in git (``results/``): at most this many MiB per bundle, every file
#: counted; ``tests/test_results_policy.py`` checks each bundle there.
MAX_BUNDLE_MB = 5.0
#: Solution files over this many MiB are left out of a bundle by default (``--max-solution-mb``);
#: a bundle then holds at least four of its largest solutions.
DEFAULT_MAX_SOLUTION_MB = 1.0

REQUIRED_COLUMNS = ("key", "task", "task_version", "instance", "method", "kind", "seed", "rep", "status", "tier", "params")


class PublishError(ValueError):
    """The sweep cannot be published (incomplete, already published, ...)."""


def task_export(task: Any) -> dict[str, Any]:
    """The task's metadata and instances as plain data (trusted side only)."""
    from bench.task import TIERS

    tiers = {t: [s.id for s in task.instances(t)] for t in TIERS}
    specs = task.all_instances()
    return {
        "meta": task.meta.model_dump(mode="json"),
        "tiers": tiers,
        "instances": {i: {"params": s.params, "tags": list(s.tags)} for i, s in specs.items()},
    }


def claims_snapshot(task: Any) -> dict[str, list[dict[str, Any]]]:
    """The task's claims and the paper's numbers as a bundle's ``claims.json`` holds them (trusted side)."""
    return {
        "claims": [c.model_dump(mode="json") for c in task.claims()],
        "paper_results": [p.model_dump(mode="json") for p in task.paper_results()],
    }


def bundle_bytes(bdir: Path) -> int:
    """Bytes of every regular file under the bundle directory ``bdir`` (what it puts in git)."""
    return sum(p.stat().st_size for p in Path(bdir).rglob("*") if p.is_file() and not p.is_symlink())


def _left_out_table(
    sizes: dict[str, int],
    file_sha256: dict[str, str],
    max_solution_mb: float | None,
    max_bundle_mb: float | None,
    to_fit: list[str],
) -> dict[str, Any]:
    """The manifest's ``solutions_left_out``: empty when every solution is in the bundle.

    ``bytes`` maps each left-out job key to the size of its ``.npz`` file and
    ``sha256`` to the file's sha256, where it is known (as ``files`` would
    have listed it); the record keeps ``solution_sha256``, the digest of the
    decoded solution that ``bench verify`` and ``bench export`` check a copy
    against. ``to_fit_bundle`` lists the keys under the per-file cap that
    were left out, largest first, so that the bundle fits ``max_bundle_mb``.
    """
    if not sizes:
        return {}
    over = len(sizes) - len(to_fit)
    note = f"{over} solution file(s) over {max_solution_mb:g} MB" if over and max_solution_mb is not None else ""
    if to_fit:
        note += (" and " if note else "") + f"{len(to_fit)} more, largest first, so that the bundle fits {max_bundle_mb:g} MB,"
    note += " are not in this bundle; their records keep solution_sha256 (`bench verify` calls them unverifiable, `bench export` reads them from the run store)"
    return {
        "max_solution_mb": max_solution_mb,
        "max_bundle_mb": max_bundle_mb,
        "bytes": dict(sorted(sizes.items())),
        "sha256": {k: file_sha256[k] for k in sorted(sizes) if k in file_sha256},
        "to_fit_bundle": list(to_fit),
        "note": note,
    }


def left_out_solutions(manifest: dict[str, Any]) -> dict[str, int]:
    """Job key -> bytes of every solution the bundle's manifest says was left out (``solutions_left_out``)."""
    table = manifest.get("solutions_left_out") or {}
    sizes = table.get("bytes") if isinstance(table, dict) else None
    return {str(k): int(v) for k, v in sizes.items()} if isinstance(sizes, dict) else {}


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _parquet_safe(df: pd.DataFrame) -> pd.DataFrame:
    """Object columns with mixed Python types become text (Parquet needs one type per column)."""
    df = df.copy()
    for c in df.columns:
        if df[c].dtype == object:
            types = {type(v) for v in df[c].dropna()}
            if len(types) > 1 or (types and not types <= {str}):
                df[c] = df[c].map(lambda v: v if v is None or (isinstance(v, float) and pd.isna(v)) else (v if isinstance(v, str) else json.dumps(v, default=str)))
    return df


def publish(
    store: Store,
    task: Any,
    sweeps: list[str],
    results_dir: Path,
    *,
    origin: str,
    author: str | None,
    catalog: list[dict[str, Any]],
    supersedes: list[str] | None = None,
    replace_methods: bool = False,
    replace_instances: bool = False,
    max_solution_mb: float | None = DEFAULT_MAX_SOLUTION_MB,
    max_bundle_mb: float | None = MAX_BUNDLE_MB,
) -> Path:
    """Write a bundle of the given sweeps (every job of each, whatever its status).

    Parameters
    ----------
    author
        Recorded in the manifest; default :data:`MAINTAINERS_AUTHOR` for a
        maintainers' bundle, the login name for a submitted one.
    supersedes
        Names of earlier bundles of the same task that this one replaces: each
        of their records whose job key this bundle also holds stops counting
        (it stays on disk as provenance); their other records still count. A
        submitted bundle cannot supersede a maintainers' one.
    replace_methods
        With ``supersedes``: every record of the superseded bundles whose
        *method* this bundle holds stops counting, whatever its job key. For a
        rerun after a method's version or parameters changed, whose job keys
        no longer match. The methods are listed in the manifest's
        ``supersedes_methods``.
    replace_instances
        With ``supersedes``: every record of the superseded bundles whose
        *instance and method* this bundle both holds stops counting, whatever
        its job key. For a rerun of some instances after their generated data
        or references changed (the instance digest is part of the job key).
        The instances are listed in the manifest's ``supersedes_instances``.
    max_solution_mb
        Solutions larger than this (MiB) are not copied into the bundle, to keep
        the repository small: their records keep ``solution_sha256`` (so a kept
        copy can still be checked) and ``bench verify`` reports them as
        unverifiable. The manifest lists them under ``solutions_left_out``
        (sizes, sha256 sums and the reason). Default
        :data:`DEFAULT_MAX_SOLUTION_MB`; None copies solutions of any size.
    max_bundle_mb
        Cap on the whole bundle (every file, MiB): when the solutions under
        ``max_solution_mb`` still do not fit, the largest are left out first
        (ties by job key) until the bundle fits, and the manifest's
        ``solutions_left_out.to_fit_bundle`` names them. Default
        :data:`MAX_BUNDLE_MB`, the policy for bundles in ``results/``; None
        sets no cap.

    Raises
    ------
    PublishError
        If a sweep is unknown, belongs to another task, or has a job with no
        record (an interrupted sweep: rerun it to finish, then publish), or a
        superseded bundle does not exist or may not be replaced, or a record's
        method is not in ``catalog`` (its metadata could not be read), or a
        record ran on one of its method's ``development_seeds``, or the records
        and metadata alone exceed ``max_bundle_mb``.
    """
    if origin not in ("maintainers", "submitted"):
        raise PublishError(f"origin must be 'maintainers' or 'submitted', got {origin!r}")
    if max_solution_mb is not None and not max_solution_mb > 0:
        raise PublishError(f"--max-solution-mb must be positive, got {max_solution_mb}")
    if max_bundle_mb is not None and not max_bundle_mb > 0:
        raise PublishError(f"max_bundle_mb must be positive, got {max_bundle_mb}")
    task_dir = Path(results_dir) / task.meta.name
    supersedes = list(dict.fromkeys(supersedes or []))
    if replace_methods and not supersedes:
        raise PublishError("--replace-methods needs --supersedes: name the bundles whose records of these methods it replaces")
    if replace_instances and not supersedes:
        raise PublishError("--replace-instances needs --supersedes: name the bundles whose records of these instances it replaces")
    for old in supersedes:
        _check_supersedable(task_dir, old, origin)
    manifests: list[SweepManifest] = []
    known = {m.sweep: m for m in store.sweeps()}
    for s in sweeps:
        if s not in known:
            from bench.registry import unknown_message

            raise PublishError(unknown_message("sweep", s, known))
        if known[s].task != task.meta.name:
            raise PublishError(f"sweep {s} ran task {known[s].task!r}, not {task.meta.name!r}")
        manifests.append(known[s])
    keys = list(dict.fromkeys(k for m in manifests for k in m.keys))
    records: list[RunRecord] = []
    missing = []
    for k in keys:
        rec = store.get(task.meta.name, k)
        (missing.append(k) if rec is None else records.append(rec))
    if missing:
        raise PublishError(f"{len(missing)} of {len(keys)} jobs of the sweep have no record (interrupted?); rerun the same `bench run` command to finish it, then publish")
    unknown = sorted({r.method for r in records} - {m.get("name") for m in catalog})
    if unknown:
        raise PublishError(
            f"no metadata for {', '.join(unknown)}: their files do not import here (a plugin the sweep ran with "
            "--plugin that has moved?); pass --plugin PATH to bench publish"
        )
    _check_development_seeds(records, catalog)
    # jobs the sweep reused from the store (run by an earlier sweep) whose record is already
    # published are left out: publishing them again would make duplicate keys
    records, left_out = _drop_already_published(records, task_dir, {m.sweep for m in manifests}, supersedes)
    if not records:
        raise PublishError(f"every job of {', '.join(sweeps)} is already published ({', '.join(sorted(left_out))})")
    # a bundle that replaces others may hold the same jobs again, so its name hashes them too
    bundle_hash = hashlib.sha256(("".join(sorted(keys)) + "".join(f"|{o}" for o in supersedes)).encode()).hexdigest()[:10]
    bundle_id = f"{time.strftime('%Y%m%d', time.gmtime())}-{origin}-{bundle_hash}"
    for existing in task_dir.glob(f"*-{bundle_hash}"):
        raise PublishError(f"these results are already published as {existing}")
    lost = [(r.key, r.solution_file) for r in records if r.solution_file and not (store.root / r.solution_file).exists()]
    if lost:  # a record whose solution is gone cannot be re-verified: say so, never publish it silently without
        key, path = lost[0]
        raise PublishError(
            f"{len(lost)} record(s) name a solution file missing from the store {store.root}, e.g. {path} (job {key[:12]}); "
            "rerun those jobs with `bench run ... --force`, or restore the files"
        )
    out = task_dir / bundle_id
    tmp = task_dir / f".{bundle_id}.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    (tmp / "solutions").mkdir(parents=True)
    # every solution under the per-file cap is a candidate; the bundle cap may leave out more
    candidates: dict[str, int] = {}
    too_big: dict[str, int] = {}
    file_sha: dict[str, str] = {}
    for rec in records:
        src = store.root / rec.solution_file if rec.solution_file else None
        if src is None or not src.exists():
            continue
        size = src.stat().st_size
        file_sha[rec.key] = _sha256(src)
        if max_solution_mb is not None and size > max_solution_mb * 2**20:
            too_big[rec.key] = size
        else:
            candidates[rec.key] = size
            shutil.copyfile(src, tmp / "solutions" / f"{rec.key}.npz")
    exported = task_export(task)
    (tmp / "task.json").write_text(json.dumps(exported, indent=1, default=str))
    (tmp / "claims.json").write_text(json.dumps(claims_snapshot(task), indent=1))
    used = {r.method for r in records}
    (tmp / "methods.json").write_text(json.dumps([m for m in catalog if m["name"] in used], indent=1, default=str))
    hw = sorted({environment.hardware_id(r.environment) for r in records})
    counts: dict[str, int] = {}
    for r in records:
        counts[r.status] = counts.get(r.status, 0) + 1
    manifest: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "bundle": bundle_id,
        "task": task.meta.name,
        "task_version": task.meta.version,
        "origin": origin,
        "author": author or (MAINTAINERS_AUTHOR if origin == "maintainers" else getpass.getuser()),
        "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "sweeps": [{"sweep": m.sweep, "command": m.command, "args": m.args, "started_at": m.started_at, "finished_at": m.finished_at} for m in manifests],
        "hardware": hw,
        "environment": environment.capture(),
        "git_commits": sorted({str(r.environment.get("git_commit")) for r in records}),
        "records": len(records),
        "status_counts": counts,
        "supersedes": supersedes,
        "supersedes_methods": sorted({r.method for r in records}) if replace_methods else [],
        "supersedes_instances": sorted({r.instance for r in records}) if replace_instances else [],
        "left_out_already_published": left_out,
    }
    # leave out the largest kept solutions (ties by key) until the whole bundle fits the cap; the
    # records, whose solution_file depends on what is kept, are rewritten until it does
    kept = sorted(candidates, key=lambda k: (-candidates[k], k))
    to_fit: list[str] = []
    while True:
        published = [rec.model_copy(update={"solution_file": f"solutions/{rec.key}.npz" if rec.key in candidates and rec.key not in to_fit else None}) for rec in records]
        _parquet_safe(records_frame(published)).to_parquet(tmp / "records.parquet", index=False)
        files = {f"solutions/{k}.npz": file_sha[k] for k in sorted(set(kept) - set(to_fit))}
        for name in ("records.parquet", "task.json", "claims.json", "methods.json"):
            files[name] = _sha256(tmp / name)
        gone = {**too_big, **{k: candidates[k] for k in to_fit}}
        manifest["solutions_left_out"] = _left_out_table(
            gone, file_sha, max_solution_mb, max_bundle_mb, to_fit
        )
        manifest["files"] = files
        (tmp / "manifest.json").write_text(json.dumps(manifest, indent=1, default=str))
        excess = bundle_bytes(tmp) - max_bundle_mb * 2**20 if max_bundle_mb is not None else 0
        if excess <= 0:
            break
        left = [k for k in kept if k not in to_fit]
        if not left:
            shutil.rmtree(tmp, ignore_errors=True)
            raise PublishError(
                f"the records and metadata of {', '.join(sweeps)} alone take {(excess + max_bundle_mb * 2**20) / 2**20:.2f} MB, "
                f"over the {max_bundle_mb:g} MB cap of a bundle: publish fewer sweeps per bundle (one --sweep each)"
            )
        freed = 0
        for k in left:  # largest first; a little more than the excess, since the records shrink too
            to_fit.append(k)
            (tmp / "solutions" / f"{k}.npz").unlink()
            freed += candidates[k]
            if freed >= excess:
                break
    tmp.rename(out)
    return out


def trim_bundle(
    bdir: Path,
    *,
    max_solution_mb: float | None = DEFAULT_MAX_SOLUTION_MB,
    max_bundle_mb: float | None = MAX_BUNDLE_MB,
    commit: str | None = None,
) -> list[str]:
    """Bring a published bundle to the size policy by deleting solution files, as publish would have.

    Files over ``max_solution_mb`` go first, then the largest (ties by job
    key) until every file of the bundle, its rewritten manifest included,
    fits ``max_bundle_mb``. ``records.parquet``, ``task.json``,
    ``claims.json`` and ``methods.json`` are not touched, so their manifest
    hashes still hold; the records keep ``solution_file`` (which no longer
    exists) and ``solution_sha256``. The manifest loses the deleted files from
    ``files`` and lists them in ``solutions_left_out`` (with the sha256
    ``files`` held), and ``solutions_left_out.trimmed`` records when,
    and the git ``commit`` that still holds the files.

    Parameters
    ----------
    bdir
        The bundle directory (``results/<task>/<bundle>``).
    commit
        A git commit whose tree holds the files (for ``bench export``).

    Returns
    -------
    list of str
        The bundle-relative paths deleted (``solutions/<key>.npz``); empty when
        the bundle already fits.

    Raises
    ------
    ValueError
        If the bundle's manifest or records cannot be read, or a file its
        manifest lists no longer has the listed sha256, or the metadata alone
        exceed ``max_bundle_mb``.
    """
    bdir = Path(bdir)
    manifest = checked_manifest(bdir)
    files = dict(manifest["files"])
    sizes = {p.stem: p.stat().st_size for p in sorted((bdir / "solutions").glob("*.npz"))}
    for key in sizes:
        name = f"solutions/{key}.npz"
        if files.get(name) != _sha256(bdir / name):
            raise ValueError(f"{bdir / name}: sha256 does not match manifest.json 'files'")
    old = manifest.get("solutions_left_out") or {}
    gone = dict(left_out_solutions(manifest))
    old_sha = dict(old.get("sha256") or {})
    to_fit = list(old.get("to_fit_bundle") or [])
    over = [k for k in sizes if max_solution_mb is not None and sizes[k] > max_solution_mb * 2**20]
    drop = list(over)
    kept = sorted((k for k in sizes if k not in over), key=lambda k: (-sizes[k], k))
    # the per-file cap the bundle now keeps: the smaller of publish's and this one
    caps = [float(c) for c in (old.get("max_solution_mb"), max_solution_mb) if c is not None]
    cap = min(caps) if caps else None
    at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())

    def rewritten() -> dict[str, Any]:
        all_gone = {**gone, **{k: sizes[k] for k in drop}}
        fit = [*to_fit, *(k for k in drop if k not in over)]
        sha = {**old_sha, **{k: files[f"solutions/{k}.npz"] for k in drop}}
        table = _left_out_table(all_gone, sha, cap, max_bundle_mb, fit)
        table["trimmed"] = {
            "at": at,
            "commit": commit,
            "removed": len(drop),
            "note": f"{len(drop)} solution file(s) removed after publishing, to the policy of at most {max_bundle_mb:g} MB per bundle "
            "in git; records.parquet is unchanged and still names them" + (f"; git commit {commit} holds them" if commit else ""),
        }
        return {**manifest, "files": {n: h for n, h in files.items() if n[len("solutions/"):-len(".npz")] not in drop}, "solutions_left_out": table}

    def total(m: dict[str, Any]) -> int:
        others = sum(p.stat().st_size for p in bdir.rglob("*") if p.is_file() and p.name != "manifest.json" and p.parent.name != "solutions")
        return others + sum(sizes[k] for k in kept if k not in drop) + len(json.dumps(m, indent=1, default=str).encode())

    if not drop and (max_bundle_mb is None or bundle_bytes(bdir) <= max_bundle_mb * 2**20):
        return []
    while max_bundle_mb is not None and total(rewritten()) > max_bundle_mb * 2**20:
        rest = [k for k in kept if k not in drop]
        if not rest:
            raise ValueError(f"{bdir}: the records and metadata alone exceed {max_bundle_mb:g} MB")
        drop.append(rest[0])
    new = rewritten()
    for k in drop:
        (bdir / "solutions" / f"{k}.npz").unlink()
    if (bdir / "solutions").is_dir() and not any((bdir / "solutions").iterdir()):
        (bdir / "solutions").rmdir()
    tmp = bdir / ".manifest.json.tmp"
    tmp.write_text(json.dumps(new, indent=1, default=str))
    tmp.replace(bdir / "manifest.json")
    return [f"solutions/{k}.npz" for k in drop]


def _check_development_seeds(records: list[RunRecord], catalog: list[dict[str, Any]]) -> None:
    """Refuse runs on a master seed that chose the method's settings (its ``development_seeds``).

    Only runs of the version the catalog describes are checked: an older
    version's development seeds are not recorded.
    """
    bad: dict[tuple[str, str, int], list[str]] = {}
    for r in records:
        if is_development_run(catalog, r.method, r.method_version, r.master_seed, r.instance):
            bad.setdefault((r.method, r.method_version, r.master_seed), []).append(r.instance)
    if bad:
        (name, version, seed), insts = next(iter(sorted(bad.items())))
        raise PublishError(
            f"{len(insts)} record(s) of {name} version {version} ran on master seed {seed} (e.g. {sorted(insts)[0]}), "
            "where its development runs chose its settings (development_seeds): publish runs of another master "
            "seed (`bench run --seed N`)"
        )


def is_development_run(catalog: list[dict[str, Any]], method: str, version: Any, master_seed: Any, instance: str) -> bool:
    """Whether a run of ``method`` at ``version`` lies in the catalog's declared ``development_seeds``."""
    meta = next((m for m in catalog if m.get("name") == method), None)
    if meta is None or str(meta.get("version")) != str(version):
        return False
    for d in meta.get("development_seeds") or []:
        if int(d["master_seed"]) == int(master_seed) and (d.get("instances") is None or instance in d["instances"]):
            return True
    return False


def _drop_already_published(
    records: list[RunRecord], task_dir: Path, sweeps: set[str], supersedes: list[str]
) -> tuple[list[RunRecord], dict[str, int]]:
    """Split off records reused from an earlier sweep that a bundle (not being superseded) already holds.

    Returns the records to publish and ``{bundle: number left out}``.
    """
    reused = {r.key for r in records if r.sweep not in sweeps}
    if not reused:
        return records, {}
    where: dict[str, str] = {}
    for mpath in sorted(task_dir.glob("*/manifest.json")):
        name = mpath.parent.name
        if name in supersedes or not (mpath.parent / "records.parquet").exists():
            continue
        cols = pd.read_parquet(mpath.parent / "records.parquet", columns=["key", "sweep"])
        for k, sw in zip(cols["key"], cols["sweep"], strict=True):
            if k in reused:
                where.setdefault(f"{k}|{sw}", name)
    keep, left_out = [], {}
    for r in records:
        b = where.get(f"{r.key}|{r.sweep}") if r.key in reused else None
        if b is None:
            keep.append(r)
        else:
            left_out[b] = left_out.get(b, 0) + 1
    return keep, left_out


def _may_supersede(new_origin: str | None, old_origin: str | None) -> bool:
    """Only a maintainers' bundle may replace the maintainers' records (a submitted bundle, or one
    that names no origin, may not); every other pair may."""
    return not (old_origin == "maintainers" and new_origin != "maintainers")


def _check_supersedable(task_dir: Path, old: str, origin: str) -> None:
    if not old or old in (".", "..") or Path(old).name != old:
        raise PublishError(f"--supersedes {old!r}: give the bundle's directory name (for example 20261202-maintainers-0123456789), not a path")
    mpath = task_dir / old / "manifest.json"
    if not mpath.exists():
        have = sorted(p.parent.name for p in task_dir.glob("*/manifest.json"))
        raise PublishError(f"--supersedes {old}: no such bundle under {task_dir} (published: {', '.join(have) or 'none'})")
    try:
        manifest = json.loads(mpath.read_text())
    except ValueError as exc:
        raise PublishError(f"--supersedes {old}: {mpath} is not valid JSON ({exc})") from None
    if manifest.get("kind") == CLAIMS_KIND:
        raise PublishError(f"--supersedes {old}: a claims-only bundle holds no records to replace")
    if not _may_supersede(origin, manifest.get("origin")):
        raise PublishError(f"--supersedes {old}: a submitted bundle cannot replace the maintainers' bundle {old}")


# ----------------------------------------------------------------------------- claims snapshots

#: ``manifest.json`` ``kind`` of a claims-only bundle (results bundles have no ``kind``)
CLAIMS_KIND = "claims"


def _read_claims_only(bdir: Path, manifest: dict[str, Any]) -> dict[str, Any]:
    """The ``claims.json`` of a claims-only bundle, checked against its manifest's sha256."""
    files = manifest.get("files")
    if not isinstance(files, dict) or set(files) != {"claims.json"}:
        raise ValueError("manifest.json of a claims-only bundle must list exactly claims.json in 'files'")
    _check_hashes(bdir, manifest)
    cjson = _read_json(bdir / "claims.json")
    if not isinstance(cjson, dict) or not isinstance(cjson.get("claims"), list) or not isinstance(cjson.get("paper_results"), list):
        raise ValueError("claims.json: not a table with 'claims' and 'paper_results' lists")
    return cjson


def _normalised(rows: list[Any], model: Any) -> list[Any]:
    """Rows as the current schema reads them (defaults filled in); an unreadable row stays as it is."""
    out = []
    for r in rows:
        try:
            out.append(model.model_validate(r).model_dump(mode="json"))
        except ValueError:
            out.append(r)
    return out


def claims_difference(task: Any, bundles: Bundles) -> str | None:
    """Where the task's claims snapshot in ``bundles`` differs from its ``claims.toml`` and
    ``paper_results.csv``, in one sentence naming the task, the bundle and the first differing
    claim (or paper number); None when they agree, or when the task has no bundle.

    Both sides are read through the current schema (:class:`bench.claims.Claim`,
    :class:`bench.task.PaperResult`), so a field that a later schema added with
    its default does not count as a difference, and a claim the schema cannot
    read does.
    """
    diff = _claims_difference(task, bundles)
    fix = f"; run `python -m bench publish --claims-only --task {task.meta.name}` and commit the bundle it writes"
    return None if diff is None else diff + fix


def _claims_difference(task: Any, bundles: Bundles) -> str | None:
    from bench.claims import Claim
    from bench.task import PaperResult

    name = task.meta.name
    if name not in bundles.claims_source:
        return None
    where = f"task {name}: the claims snapshot of bundle {bundles.claims_source[name]}"
    want = claims_snapshot(task)
    for field_name, model, what, ident in (
        ("claims", Claim, "claim", lambda r: r.get("id", "?")),
        ("paper_results", PaperResult, "paper result", lambda r: "/".join(str(r.get(f, "?")) for f in ("instance", "method", "metric"))),
    ):
        snap = _normalised(getattr(bundles, field_name).get(name, []), model)
        now = want[field_name]
        for i in range(max(len(snap), len(now))):
            a = snap[i] if i < len(snap) else None
            b = now[i] if i < len(now) else None
            if a == b:
                continue
            if a is None or b is None or not isinstance(a, dict):
                row = b if a is None else a
                state = "is missing from the snapshot" if a is None else "is not in the task's files" if b is None else "cannot be read"
                return f"{where}: {what} {ident(row) if isinstance(row, dict) else row!r} {state}"
            path, x, y = _first_difference(a, b)
            return f"{where} differs at {what} {ident(b)} ({path}: snapshot {x!r}, claims files now {y!r})"
    return None


def _first_difference(a: dict[str, Any], b: dict[str, Any], prefix: str = "") -> tuple[str, Any, Any]:
    """The dotted path of the first field where two tables differ, and both values there."""
    for k in dict.fromkeys([*b, *a]):
        x, y = a.get(k), b.get(k)
        if x != y:
            if isinstance(x, dict) and isinstance(y, dict):
                return _first_difference(x, y, f"{prefix}{k}.")
            return f"{prefix}{k}", x, y
    return prefix.rstrip(".") or "?", a, b


def publish_claims(task: Any, results_dir: Path, *, author: str | None = None) -> tuple[Path | None, str]:
    """Refresh a task's claims snapshot without a rerun: write a claims-only bundle.

    The bundle ``results/<task>/<date>-claims-<hash>/`` holds ``claims.json``
    (the task's ``claims.toml`` and ``paper_results.csv`` as publish writes
    them) and a manifest with its sha256, the author, the date and the git
    commit of the checkout. Being newer than every results bundle of the task,
    it becomes the holder :func:`load_bundles` reads the claims from; published
    results bundles are never edited. The task's earlier claims-only bundles
    are removed (nothing else is in them; git history keeps them).

    Returns
    -------
    (path, message)
        The new bundle (None when the snapshot already agrees with the task's
        files) and a line saying what was done.

    Raises
    ------
    PublishError
        If the task has no published results bundle under ``results_dir``.
    """
    name = task.meta.name
    task_dir = Path(results_dir) / name
    current = load_bundles(results_dir, name, warn=False)
    if name not in current.tasks:
        raise PublishError(f"no published results bundle of {name} under {results_dir}: publish its results first (the claims come with them)")
    diff = _claims_difference(task, current)
    if diff is None:
        return None, f"the claims snapshot of {name} ({current.claims_source[name]}) agrees with its claims.toml and paper_results.csv: nothing to refresh"
    text = json.dumps(claims_snapshot(task), indent=1)
    digest = hashlib.sha256(text.encode()).hexdigest()
    bundle_id = f"{time.strftime('%Y%m%d', time.gmtime())}-{CLAIMS_KIND}-{digest[:10]}"
    older = sorted(Path(k) for k, m in current.claims_bundles.items() if m.get("task", Path(k).parent.name) == name)
    tmp = task_dir / f".{bundle_id}.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    (tmp / "claims.json").write_text(text)
    commit, dirty = environment.git_commit()
    manifest = {
        "schema_version": SCHEMA_VERSION,
        "kind": CLAIMS_KIND,
        "bundle": bundle_id,
        "task": name,
        "task_version": task.meta.version,
        "author": author or getpass.getuser(),
        "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "git_commit": commit,
        "git_dirty": dirty,
        "replaces_claims_of": current.claims_source[name],
        "reason": diff,
        "files": {"claims.json": _sha256(tmp / "claims.json")},
    }
    (tmp / "manifest.json").write_text(json.dumps(manifest, indent=1))
    out = task_dir / bundle_id
    if out.exists():
        shutil.rmtree(tmp)
        raise PublishError(f"{out} already exists: the same claims snapshot was written today; commit it")
    tmp.rename(out)
    for old in older:
        shutil.rmtree(old)
    removed = f"; removed the earlier claims-only bundle(s) {', '.join(o.name for o in older)}" if older else ""
    return out, f"wrote {out}: the claims snapshot of {name}, newer than {current.claims_source[name]}'s{removed}"


# ----------------------------------------------------------------------------- reading


@dataclass
class Bundles:
    """Everything read from a results directory, as data."""

    records: pd.DataFrame
    manifests: dict[str, dict[str, Any]] = field(default_factory=dict)
    tasks: dict[str, dict[str, Any]] = field(default_factory=dict)
    claims: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    paper_results: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    methods: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    #: superseded bundle name -> the bundles that replace (some of) its records
    superseded: dict[str, list[str]] = field(default_factory=dict)
    #: task -> the bundle whose ``claims.json`` is used: the newest bundle holding one, a results
    #: bundle (which also gives ``task.json``) or a claims-only one (``bench publish --claims-only``)
    claims_source: dict[str, str] = field(default_factory=dict)
    #: claims-only bundles read (path -> manifest); they hold no records, so they are not in ``manifests``
    claims_bundles: dict[str, dict[str, Any]] = field(default_factory=dict)


#: Files whose sha256 is checked against the manifest on every load (the solutions,
#: which are large, are checked per record by ``bench verify``).
_HASHED_ON_LOAD = ("records.parquet", "task.json", "claims.json", "methods.json")


def _read_json(path: Path) -> Any:
    """``path`` parsed as JSON; a syntax error names the file."""
    try:
        return json.loads(path.read_text())
    except ValueError as exc:
        raise ValueError(f"{path.name}: not valid JSON ({exc})") from None


def _check_hashes(bdir: Path, manifest: dict[str, Any]) -> None:
    files = manifest.get("files")
    if not isinstance(files, dict):
        raise ValueError("manifest.json has no 'files' table of sha256 sums")
    for name in _HASHED_ON_LOAD:
        want = files.get(name)
        if want is None:
            if (bdir / name).exists():
                raise ValueError(f"{name} is not listed in manifest.json 'files'")
            continue
        if not (bdir / name).exists():
            raise ValueError(f"missing {name}")
        got = _sha256(bdir / name)
        if got != want:
            raise ValueError(
                f"{name}: sha256 {got[:12]}... does not match manifest.json ({str(want)[:12]}...): "
                "the file was changed after publishing"
            )


def checked_manifest(bdir: Path) -> dict[str, Any]:
    """The bundle's ``manifest.json``, once its files match the sha256 sums it lists.

    Raises
    ------
    ValueError
        Naming the file: the manifest is not JSON, not of this schema version,
        or a file it lists was changed after publishing or is missing.
    """
    manifest = _read_json(Path(bdir) / "manifest.json")
    if not isinstance(manifest, dict) or manifest.get("schema_version") != SCHEMA_VERSION:
        raise ValueError(f"{Path(bdir) / 'manifest.json'}: not a bench bundle manifest of schema version {SCHEMA_VERSION}")
    try:
        _check_hashes(Path(bdir), manifest)
    except ValueError as exc:
        raise ValueError(f"{bdir}: {exc}") from None
    return manifest


def _superseded(loaded: list[tuple[Any, ...]], messages: list[str], warn: bool = True) -> dict[str, list[str]]:
    """Old bundle name -> the names of the bundles (same task) that replace it."""
    by_name = {bdir.name: (bdir, manifest) for bdir, manifest, *_ in loaded}
    out: dict[str, list[str]] = {}
    for bdir, manifest, *_ in loaded:
        for old in manifest.get("supersedes") or []:
            if old not in by_name:
                continue  # already removed from the repository: nothing to hide
            old_dir, old_manifest = by_name[old]
            if old_dir.parent != bdir.parent:
                msg = f"{bdir}: 'supersedes' names {old}, a bundle of another task; ignored"
            elif not _may_supersede(manifest.get("origin"), old_manifest.get("origin")):
                msg = f"{bdir}: a submitted bundle cannot supersede the maintainers' bundle {old}; ignored"
            else:
                out.setdefault(old, []).append(bdir.name)
                continue
            messages.append(msg)
            if warn:
                warnings.warn(msg, stacklevel=3)
    return out


def _replacements(name: str, superseded: dict[str, list[str]]) -> set[str]:
    """Every bundle that supersedes ``name``, directly or through a chain."""
    out: set[str] = set()
    todo = list(superseded.get(name, []))
    while todo:
        b = todo.pop()
        if b not in out and b != name:
            out.add(b)
            todo += superseded.get(b, [])
    return out


def load_bundles(results_dir: str | Path, task: str | None = None, *, warn: bool = True) -> Bundles:
    """Read every bundle under ``results_dir`` (optionally one task's).

    Records get a ``bundle`` column and the bundle's ``origin``. A bundle that
    cannot be read, or whose ``records.parquet``, ``task.json``, ``claims.json``
    or ``methods.json`` no longer has the sha256 its manifest lists, is skipped,
    and the reason is in ``warnings`` (and emitted as a Python warning) with
    the bundle's path. Bundles are read in path order (oldest date first); a
    record whose job key an earlier bundle already holds is dropped, with a
    warning, so a job never counts twice. Before that, a record of a bundle
    named in another bundle's ``supersedes`` (same task; a submitted bundle
    cannot supersede a maintainers' one) is dropped when the superseding
    bundle, or one superseding it in turn, holds the same job key, or lists
    the record's method in its ``supersedes_methods`` (a rerun of a method
    whose version changed), or lists the record's instance in its
    ``supersedes_instances`` and holds a record of its method (a rerun of an
    instance whose data changed); ``superseded`` maps each old bundle to its
    replacements. A task's ``tasks`` come from its newest bundle by the
    manifest's ``created_at`` (name to break ties), its ``claims`` and
    ``paper_results`` from the newest bundle holding them (a claims-only
    bundle of ``bench publish --claims-only`` counts when it is newer than
    the task's newest results bundle), and each method's ``methods`` entry
    from the newest bundle holding it.

    With ``warn=False`` the messages are only kept in ``warnings``. Callers
    that print those themselves pass it rather than wrapping the call in
    :class:`warnings.catch_warnings`, which swaps process-wide state and is
    not thread-safe: the leaderboard reads bundles in a background thread.
    """
    root = Path(results_dir)
    frames = []
    out = Bundles(records=pd.DataFrame())
    pattern = f"{task}/*/manifest.json" if task else "*/*/manifest.json"
    loaded = []
    claims_only: list[tuple[Path, dict[str, Any], dict[str, Any]]] = []
    for mpath in sorted(root.glob(pattern)):
        bdir = mpath.parent
        if bdir.name.startswith("."):  # a publish in progress (``.<bundle>.tmp``), not a bundle yet
            continue
        try:
            manifest = json.loads(mpath.read_text())
            if not isinstance(manifest, dict) or manifest.get("schema_version") != SCHEMA_VERSION:
                raise ValueError("not a bench bundle manifest of this schema version")
            if manifest.get("kind") == CLAIMS_KIND:
                claims_only.append((bdir, manifest, _read_claims_only(bdir, manifest)))
                continue
            for name in ("records.parquet", "task.json", "claims.json"):
                if not (bdir / name).exists():
                    raise ValueError(f"missing {name}")
            _check_hashes(bdir, manifest)
            df = pd.read_parquet(bdir / "records.parquet")
            absent = [c for c in REQUIRED_COLUMNS if c not in df.columns]
            if absent:
                raise ValueError(f"records.parquet lacks columns {absent}")
            tjson = _read_json(bdir / "task.json")
            cjson = _read_json(bdir / "claims.json")
            mjson = _read_json(bdir / "methods.json") if (bdir / "methods.json").exists() else []
            if not isinstance(tjson, dict) or not isinstance(tjson.get("meta"), dict):
                raise ValueError("task.json: no 'meta' table")
            if not isinstance(cjson, dict) or not isinstance(cjson.get("claims", []), list) or not isinstance(cjson.get("paper_results", []), list):
                raise ValueError("claims.json: not a table with 'claims' and 'paper_results' lists")
            if not isinstance(mjson, list) or not all(isinstance(m, dict) and isinstance(m.get("name"), str) for m in mjson):
                raise ValueError("methods.json: not a list of method entries with a 'name'")
            for field_name, what in (("supersedes", "bundle names"), ("supersedes_methods", "method names"), ("supersedes_instances", "instance ids")):
                value = manifest.get(field_name) or []
                if not isinstance(value, list) or not all(isinstance(x, str) for x in value):
                    raise ValueError(f"manifest.json '{field_name}' is not a list of {what}")
        except Exception as exc:
            msg = f"{bdir}: bundle skipped ({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''})"
            out.warnings.append(msg)
            if warn:
                warnings.warn(msg, stacklevel=2)
            continue
        loaded.append((bdir, manifest, df, tjson, cjson, mjson))
    out.superseded = _superseded(loaded, out.warnings, warn)
    keys = {bdir.name: set(df["key"]) for bdir, _, df, *_ in loaded}
    methods = {bdir.name: set(manifest.get("supersedes_methods") or []) for bdir, manifest, *_ in loaded}
    # (instance, method) pairs a bundle replaces: its listed instances x the methods it holds
    pairs = {
        bdir.name: {(i, m) for i in manifest.get("supersedes_instances") or [] for m in set(df["method"])}
        for bdir, manifest, df, *_ in loaded
    }
    meta_sources = []
    for bdir, manifest, df, tjson, cjson, mjson in loaded:
        by = _replacements(bdir.name, out.superseded)
        replaced = set().union(*(keys[b] for b in by))
        replaced_methods = set().union(*(methods[b] for b in by))
        replaced_pairs = set().union(*(pairs[b] for b in by))
        if replaced or replaced_methods or replaced_pairs:
            pair = pd.Series(list(zip(df["instance"], df["method"], strict=True)), index=df.index, dtype=object)
            df = df[~(df["key"].isin(replaced) | df["method"].isin(replaced_methods) | pair.isin(replaced_pairs))].copy()
            if df.empty:
                continue  # wholly replaced: provenance only
        name = manifest.get("task", bdir.parent.name)
        df["bundle"] = manifest.get("bundle", bdir.name)
        df["bundle_path"] = str(bdir)
        df["origin"] = manifest.get("origin", "?")
        frames.append(df)
        out.manifests[str(bdir)] = manifest
        meta_sources.append((str(manifest.get("created_at") or ""), bdir.name, name, tjson, cjson, mjson))
    # a task's metadata (task.json, claims.json) comes from its newest bundle by creation time, and
    # each method's entry from the newest bundle that holds it: not from whichever name sorts last
    for _, bname, name, tjson, cjson, mjson in sorted(meta_sources, key=lambda m: (m[0], m[1])):
        out.tasks[name] = tjson
        out.claims[name] = cjson.get("claims", [])
        out.claims_source[name] = bname
        out.paper_results[name] = cjson.get("paper_results", [])
        out.methods.setdefault(name, {}).update({m["name"]: m for m in mjson})
    # a claims-only bundle (``bench publish --claims-only``) holds a newer snapshot of the claims
    # and nothing else; it counts for a task that has results, when it is the newest holder
    newest = {name: created for created, _, name, *_ in sorted(meta_sources, key=lambda m: (m[0], m[1]))}
    for bdir, manifest, cjson in sorted(claims_only, key=lambda c: (str(c[1].get("created_at") or ""), c[0].name)):
        name = str(manifest.get("task", bdir.parent.name))
        out.claims_bundles[str(bdir)] = manifest
        if name in newest and str(manifest.get("created_at") or "") >= newest[name]:
            out.claims[name] = cjson.get("claims", [])
            out.paper_results[name] = cjson.get("paper_results", [])
            out.claims_source[name] = bdir.name
    if frames:
        records = pd.concat(frames, ignore_index=True, sort=False)
        # of a job published twice, the maintainers' copy wins over a submitted one, then the first
        # published (manifest created_at), whatever the bundles' names
        created = {str(m.get("bundle", Path(k).name)): str(m.get("created_at") or "") for k, m in out.manifests.items()}
        rank = pd.DataFrame({"_o": (records["origin"] != "maintainers").astype(int), "_c": records["bundle"].map(created).fillna(""),
                             "_b": records["bundle"].astype(str)})  # fmt: skip
        order = rank.sort_values(["_o", "_c", "_b"], kind="stable").index
        dup = pd.Series(records.loc[order, "key"].duplicated(keep="first").to_numpy(), index=order).reindex(records.index)
        if dup.any():  # the same job published twice would count twice in every mean and CI
            first = records[~dup].set_index("key")["bundle"]
            for bundle, rows in records[dup].groupby("bundle", sort=True):
                kept = sorted(set(first.loc[rows["key"]]))
                msg = (
                    f"{bundle}: {len(rows)} records repeat jobs (same job key) already published in "
                    f"{', '.join(kept)}; that copy is kept (the maintainers', else the first published; to "
                    "replace it, publish the rerun with `bench publish --supersedes <old bundle>`)"
                )
                out.warnings.append(msg)
                if warn:
                    warnings.warn(msg, stacklevel=2)
            records = records[~dup].reset_index(drop=True)
        out.records = records
    return out


def task_records(
    task: str,
    *,
    results: str | Path | None = None,
    store: str | Path | None = None,
    tier: str | None = None,
    ok_only: bool = True,
    version: str | None = "current",
) -> pd.DataFrame:
    """One task's records, from a run store or published bundles, for analysis scripts.

    Parameters
    ----------
    task
        The task's registered name.
    results
        A results directory of published bundles (the default, ``results``, when
        ``store`` is not given either).
    store
        A local run store (``bench run --store``); read instead of ``results``.
    tier
        Keep only this tier's records (all tiers when ``None``).
    ok_only
        Keep only records with ``status == "ok"``.
    version
        Keep only the records of this task version; ``"current"`` (the default)
        is the registered task's version, so that the runs of an earlier version
        kept as history in ``results/`` are not counted twice beside their reruns;
        ``None`` keeps every version.

    Returns
    -------
    pandas.DataFrame
        One row per job (see :func:`bench.store.records_frame`), a copy.

    Raises
    ------
    SystemExit
        When the source holds no record of ``task`` at all, with a one-line
        message naming the source (scripts turn it into a non-zero exit).
    """
    if store:
        df = Store(store).frame(task)
        where = str(store)
    else:
        where = str(results or "results")
        df = load_bundles(where, task).records
    if df.empty:
        raise SystemExit(f"no {task} records in {where}")
    keep = pd.Series(True, index=df.index)
    if ok_only:
        keep &= df["status"] == "ok"
    if tier is not None:
        keep &= df["tier"] == tier
    if version is not None:
        if version == "current":
            from bench.registry import get_task

            version = get_task(task).meta.version
        keep &= df["task_version"].astype(str) == str(version)
    return df[keep].copy()
