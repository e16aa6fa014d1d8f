"""Scatter plots of generated points next to the held-out sample, from a run store or a bundle.

``python -m tasks.manifold_diffusion.plot_samples --store .bench/runs --instance torus2-smoke --out f.png``
(or ``--bundle results/manifold-diffusion/<bundle-id>`` for a published bundle) draws, for each
method with an ``ok`` record on the instance, its points: angle pairs on the torus (first two
angles), longitude/latitude on S^2, the first two rotation-angle features (``X_00``, ``X_01``)
on SO(n). It imports no method; it reads the stored solutions.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import numpy as np

from bench import wire
from bench.store import Store

__all__ = ["main"]


def _xy(manifold: str, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, str, str]:
    if manifold == "torus":
        return x[:, 0], x[:, 1], "theta_1", "theta_2"
    if manifold == "sphere":
        return np.arctan2(x[:, 1], x[:, 0]), np.arcsin(np.clip(x[:, 2], -1, 1)), "longitude", "latitude"
    x = x.reshape(len(x), -1)
    return np.real(x[:, 0]), np.real(x[:, 1]), "Re X_00", "Re X_01"


def _records(a: argparse.Namespace) -> list[tuple[str, int, float, Any]]:
    if a.bundle is not None:
        import pandas as pd

        df = pd.read_parquet(a.bundle / "records.parquet")
        df = df[(df["instance"] == a.instance) & (df["status"] == "ok")]
        if a.sweep:
            df = df[df["sweep"] == a.sweep]
        return [
            (r.method, int(r.seed), float(r["metric.c2st"]), lambda f=r.solution_file: wire.load_npz((a.bundle / f).read_bytes()))
            for _, r in df.iterrows()
        ]
    store = Store(a.store)
    return [
        (r.method, int(r.seed), float(r.metrics.get("c2st", float("nan"))),
         lambda r=r: wire.load_npz(store.solution_path(r.task, r.key).read_bytes()))
        for r in store.iter_records("manifold-diffusion")
        if r.instance == a.instance and r.status == "ok" and (a.sweep is None or r.sweep == a.sweep)
    ]  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--store", type=Path, help="a run store")
    src.add_argument("--bundle", type=Path, help="a published bundle directory (results/manifold-diffusion/<id>)")
    ap.add_argument("--instance", required=True)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--sweep", help="only this sweep's records (default: every sweep in the store)")
    a = ap.parse_args(argv)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from tasks.manifold_diffusion import ManifoldDiffusion

    inst = ManifoldDiffusion().load(a.instance)
    man = inst.data["manifold"]
    rows = _records(a)  # (method, seed, c2st, load-solution) of the ok records of the instance
    if not rows:
        print(f"no ok record of {a.instance} in {a.store or a.bundle}", file=sys.stderr)
        return 2
    rows.sort(key=lambda r: (r[0] != "projected-diffusion", r[0], r[1]))
    seen, panels = set(), []
    for method, _seed, c2st, load in rows:
        if method in seen:
            continue
        seen.add(method)
        panels.append((f"{method}\nC2ST {c2st:.3f}", np.asarray(load()["samples"])))
    panels.insert(0, ("held-out target", np.asarray(inst.private["held_out"])))
    fig, axes = plt.subplots(1, len(panels), figsize=(3.2 * len(panels), 3.3), squeeze=False)
    for ax, (title, pts) in zip(axes[0], panels, strict=True):
        x, y, xl, yl = _xy(man, pts)
        ax.scatter(x, y, s=3, alpha=0.5)
        ax.set_title(title, fontsize=9)
        ax.set_xlabel(xl)
        ax.set_ylabel(yl)
        if man == "torus":
            ax.set_xlim(0, 2 * np.pi)
            ax.set_ylim(0, 2 * np.pi)
    fig.suptitle(f"{a.instance}: generated points ({'bundle ' + a.bundle.name if a.bundle else 'runner store'})", fontsize=10)
    fig.tight_layout()
    a.out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(a.out, dpi=100)
    print(a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
