"""Scatter plots of generated points next to the held-out sample, from a run store (data only).

``python -m tasks.manifold_diffusion.plot_samples --store .bench/runs --instance torus2-smoke --out f.png``
draws, for each method with an ``ok`` record on the instance, its points: angle pairs on the
torus (first two angles), longitude/latitude on S^2, the first two rotation-angle features
(``X_00``, ``X_01``) on SO(n). It imports no method; it reads the stored solutions.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--store", type=Path, required=True)
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
    store = Store(a.store)
    recs = [r for r in store.iter_records("manifold-diffusion") if r.instance == a.instance and r.status == "ok" and (a.sweep is None or r.sweep == a.sweep)]
    if not recs:
        print(f"no ok record of {a.instance} in {a.store}", file=sys.stderr)
        return 2
    recs.sort(key=lambda r: (r.method != "projected-diffusion", r.method, r.seed))
    seen, panels = set(), []
    for r in recs:
        if r.method in seen:
            continue
        seen.add(r.method)
        sol = wire.load_npz(store.solution_path(r.task, r.key).read_bytes())
        panels.append((f"{r.method}\nC2ST {r.metrics.get('c2st', float('nan')):.3f}", np.asarray(sol["samples"])))
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
    fig.suptitle(f"{a.instance}: generated points (runner store)", fontsize=10)
    fig.tight_layout()
    a.out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(a.out, dpi=100)
    print(a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
