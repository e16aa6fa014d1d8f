"""What the leaderboard reads: published bundles or a local run store, as data only.

This module imports pandas, :mod:`bench.bundle` (Parquet and JSON readers) and
:mod:`bench.store` (the run-record schema); never a task, method or baseline
module (``tests/test_leaderboard.py`` checks it in a fresh interpreter).

A local store has no task metadata beside its records. ``python -m bench
leaderboard --store DIR`` (the trusted CLI) writes it to ``DIR/_tasks/<task>.json``
before starting the app; this module only reads those files.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from bench.bundle import load_bundles
from bench.digest import current_records
from bench.store import Store

__all__ = ["Data", "load_results", "load_store", "read_paper_results", "STORE_META_DIR"]

#: Where ``bench leaderboard --store`` puts task metadata inside the store.
STORE_META_DIR = "_tasks"


@dataclass
class Data:
    """Everything the app shows, as plain data.

    ``records`` holds one row per job (all tasks, all versions); ``tasks`` maps
    a task name to its exported metadata (``meta``, ``tiers``, ``instances``);
    ``provenance`` maps a bundle path (or ``store``) to its manifest;
    ``superseded`` maps a bundle whose records were replaced (by job key) to
    the bundles that replaced them.
    """

    source: str
    records: pd.DataFrame
    tasks: dict[str, dict[str, Any]] = field(default_factory=dict)
    claims: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    #: task -> the bundle its claims were read from (published results only)
    claims_source: dict[str, str] = field(default_factory=dict)
    paper_results: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    methods: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    provenance: dict[str, dict[str, Any]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    superseded: dict[str, list[str]] = field(default_factory=dict)
    #: superseded bundle -> its manifest, for the bundles wholly replaced (absent from ``provenance``)
    superseded_manifests: dict[str, dict[str, Any]] = field(default_factory=dict)

    def task_records(self, task: str, tier: str | None = None) -> pd.DataFrame:
        """Records of the task's current version (and one tier, if given)."""
        return current_records(self.records, self.tasks, task, tier)


def load_results(results_dir: str | Path) -> Data:
    """Every bundle under ``results_dir``; unreadable ones become warnings that name them."""
    b = load_bundles(results_dir, warn=False)  # the same messages come back in b.warnings
    counted = {str(m.get("bundle", Path(p).name)) for p, m in b.manifests.items()}
    replaced = {}
    for name in sorted(set(b.superseded) - counted):
        for mpath in Path(results_dir).glob(f"*/{name}/manifest.json"):
            try:
                replaced[name] = json.loads(mpath.read_text())
            except (OSError, ValueError):
                replaced[name] = {"bundle": name, "task": mpath.parent.parent.name}
    return Data(
        source=f"published bundles in {results_dir}",
        records=b.records,
        tasks=b.tasks,
        claims=b.claims,
        paper_results=b.paper_results,
        methods=b.methods,
        provenance=b.manifests,
        warnings=list(b.warnings),
        superseded=dict(b.superseded),
        claims_source=dict(b.claims_source),
        superseded_manifests=replaced,
    )


def read_paper_results(results_dir: str | Path, task: str, bundle: str) -> list[dict[str, Any]] | None:
    """The paper's numbers in ``results_dir/task/bundle/claims.json``, or None when that file is missing, unreadable
    or no longer has the sha256 its bundle's manifest lists.

    A task page whose digest came from its file (:mod:`bench.digest`, which
    leaves the paper's numbers out) reads them here, from the bundle the
    digest names (``claims_source``, as :func:`load_results` picks it),
    without reading a record.
    """
    from bench.bundle import _sha256

    bdir = Path(results_dir) / task / bundle
    try:
        manifest = json.loads((bdir / "manifest.json").read_text())
        if _sha256(bdir / "claims.json") != manifest["files"]["claims.json"]:
            return None
        rows = json.loads((bdir / "claims.json").read_text()).get("paper_results", [])
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    return rows if isinstance(rows, list) else None


def load_store(store_dir: str | Path) -> Data:
    """The records of a local run store, with the task metadata exported beside them.

    Tasks without exported metadata are skipped with a warning that says how
    to export it (``python -m bench leaderboard --store DIR``).
    """
    root = Path(store_dir)
    out = Data(source=f"local run store {root}", records=pd.DataFrame())
    df = Store(root).frame(skipped=out.warnings)  # no warnings.catch_warnings: this runs in a background thread too
    if df.empty:
        return out
    df["origin"] = "local (not published)"
    df["bundle"] = "store"
    keep = []
    for task in sorted(df["task"].unique()):
        path = root / STORE_META_DIR / f"{task}.json"
        try:
            meta = json.loads(path.read_text())
            out.tasks[task] = meta["task"]
            out.claims[task] = list(meta.get("claims", []))
            out.paper_results[task] = list(meta.get("paper_results", []))
            out.methods[task] = {m["name"]: m for m in meta.get("methods", [])}
            keep.append(task)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            out.warnings.append(
                f"{path}: task {task!r} skipped, no readable metadata ({type(exc).__name__}); "
                f"start the app with `python -m bench leaderboard --store {root}`, which exports it"
            )
    out.records = df[df["task"].isin(keep)].reset_index(drop=True)
    sweeps = {}
    for p in sorted((root / "_sweeps").glob("*.json")):
        try:
            sweeps[p.stem] = json.loads(p.read_text())
        except (OSError, ValueError):
            out.warnings.append(f"{p}: unreadable sweep manifest skipped")
    out.provenance = {"store": {"origin": "local (not published)", "bundle": "store", "sweeps": list(sweeps.values())}}
    return out
