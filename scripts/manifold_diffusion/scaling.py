"""Seconds per training iteration against manifold dimension, for every model, side by side.

``python scripts/manifold_diffusion/scaling.py --out DIR`` times ``train_step`` at batch 32,
one thread, on the torus (d up to 1,000), SO(n) (n up to 46, d = 1,035) and U(n) (n up to 32,
d = 1,024), for ``projected-diffusion`` (analytic eigenvector derivative), the same model with
the official code's ``jacrev`` + ``vmap`` Jacobian, ``rsgm``, ``ambient-ddpm`` and ``tdm``
(whose SO(n)/U(n) steps draw from a pool of simulated trajectories: the median excludes the
pool's simulation, which costs ``interval`` matrix exponentials of ``pool`` matrices once
every ``resample_every`` steps). It writes
``scaling.csv`` (median of the timed repeats after warm-up), fits log-log slopes over the
largest sizes, and draws ``scaling.png``. The training points are Haar/uniform samples: the
cost of a step does not depend on the data.
"""

from __future__ import annotations

import argparse
import csv
import math
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from baselines.manifold_diffusion.ddpm import AmbientDDPM
from baselines.manifold_diffusion.rsgm import RSGM
from baselines.manifold_diffusion.tdm import TDM
from bench.task import Instance
from methods.manifold_diffusion.projected import ProjectedDiffusion

__all__ = ["time_per_iteration", "fit_slope", "main"]

SIZES = {
    "torus": [2, 10, 100, 300, 1000],
    "so": [3, 5, 10, 20, 30, 46],
    "u": [3, 5, 10, 20, 32],
}
MODELS: dict[str, tuple[type, dict[str, Any]]] = {
    "projected-diffusion": (ProjectedDiffusion, {}),
    "projected-diffusion[jacrev]": (ProjectedDiffusion, {"jacobian": "jacrev"}),
    "rsgm": (RSGM, {}),
    "ambient-ddpm": (AmbientDDPM, {}),
    "tdm": (TDM, {}),
}


def _points(manifold: str, n: int, count: int, rng: np.random.Generator) -> np.ndarray:
    if manifold == "torus":
        return rng.uniform(0, 2 * math.pi, size=(count, n))
    g = rng.standard_normal((count, n, n))
    if manifold == "u":
        g = g + 1j * rng.standard_normal((count, n, n))
    q, r = np.linalg.qr(g)
    d = np.diagonal(r, axis1=1, axis2=2)
    q = q * (d / np.abs(d))[:, None, :]
    if manifold == "so":
        neg = np.linalg.det(q) < 0
        q[neg, :, 0] *= -1
    return q


def dimension(manifold: str, n: int) -> int:
    return {"torus": n, "so": n * (n - 1) // 2, "u": n * n}[manifold]


def time_per_iteration(model: str, manifold: str, n: int, batch: int = 32, repeats: int = 5, warmup: int = 2, cap_s: float = 20.0) -> float:
    """Median seconds of one ``train_step`` (fewer repeats when one step exceeds ``cap_s / repeats``)."""
    cls, extra = MODELS[model]
    rng = np.random.default_rng(0)
    train = _points(manifold, n, 256, rng)
    data = {"manifold": manifold, "n": n, "dim": dimension(manifold, n), "train": train}
    inst = Instance(id=f"{manifold}{n}", params={}, data=data, digest="scaling")
    m = cls(inst, seed=0, budget=float("inf"), **extra)
    x = m.train_tensor()
    times = []
    for i in range(warmup + repeats):
        idx = torch.randint(0, x.shape[0], (batch,), generator=m.gen)
        t0 = time.perf_counter()
        m.train_step(x[idx])
        dt = time.perf_counter() - t0
        if i >= warmup:
            times.append(dt)
        if dt * (warmup + repeats) > cap_s and i >= 1:
            times.append(dt)
            break
    return statistics.median(times)


def fit_slope(dims: list[float], secs: list[float]) -> float:
    """Least-squares slope of ``log(seconds)`` against ``log(d)``."""
    return float(np.polyfit(np.log(dims), np.log(secs), 1)[0])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, required=True, help="folder for scaling.csv and scaling.png")
    ap.add_argument("--manifolds", default="torus,so,u")
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--max-n", type=int, default=10**6, help="skip sizes above this n (quick runs)")
    ap.add_argument("--n", default="", help="comma-separated sizes n replacing the default lists")
    ap.add_argument("--repeats", type=int, default=5, help="timed iterations per point (median)")
    ap.add_argument("--jacrev-max-n", type=int, default=30, help="largest n for the jacrev path")
    a = ap.parse_args(argv)
    torch.set_num_threads(1)
    a.out.mkdir(parents=True, exist_ok=True)
    rows = []
    for manifold in a.manifolds.split(","):
        for model in a.models.split(","):
            if model.endswith("[jacrev]") and manifold == "torus":
                continue
            for n in [int(v) for v in a.n.split(",")] if a.n else SIZES[manifold]:
                if n > a.max_n or (model.endswith("[jacrev]") and n > a.jacrev_max_n):
                    continue
                s = time_per_iteration(model, manifold, n, repeats=a.repeats)
                rows.append({"manifold": manifold, "n": n, "d": dimension(manifold, n), "model": model, "s_per_iter": s})
                print(f"{manifold:5s} n={n:5d} d={dimension(manifold, n):5d} {model:28s} {s * 1e3:10.2f} ms", flush=True)
    with open(a.out / "scaling.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    _report(rows, a.out)
    return 0


def _report(rows: list[dict[str, Any]], out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    manifolds = sorted({r["manifold"] for r in rows}, key=["torus", "so", "u"].index)
    fig, axes = plt.subplots(1, len(manifolds), figsize=(5 * len(manifolds), 4), squeeze=False)
    lines = []
    for ax, man in zip(axes[0], manifolds, strict=True):
        for model in MODELS:
            pts = sorted((r["d"], r["s_per_iter"]) for r in rows if r["manifold"] == man and r["model"] == model)
            if not pts:
                continue
            d, s = zip(*pts, strict=True)
            top = [p for p in pts if p[0] >= 100] or pts
            slope = fit_slope([p[0] for p in top], [p[1] for p in top]) if len(top) >= 2 else float("nan")
            ax.loglog(d, s, "o-", label=f"{model} (slope {slope:.2f}, d>=100)")
            lines.append(f"{man},{model},{slope:.3f},{len(top)}")
        ax.set_title({"torus": "torus T^d", "so": "SO(n)", "u": "U(n)"}[man])
        ax.set_xlabel("dimension d")
        ax.set_ylabel("s / training iteration (batch 32, 1 thread)")
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out / "scaling.png", dpi=110)
    (out / "slopes.csv").write_text("manifold,model,slope_d_ge_100,points\n" + "\n".join(lines) + "\n")


if __name__ == "__main__":
    sys.exit(main())
