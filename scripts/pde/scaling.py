"""Scaling study: wall time per Gauss–Newton step against N (SKS dense, SKS matrix-free, DAKS).

One thread; writes ``tasks/pde/scaling.csv`` and ``scaling.png``::

    OMP_NUM_THREADS=1 python scripts/pde/scaling.py [--quick]

Elliptic problem, official kernels (``methods.pde.sks.sks_config``, DAKS defaults).
Two matrix-free series: ``sks-mf`` with its registered weights (v = 1e12, the
penalty limit, ``cg_rtol`` 1e-4) and ``sks-mf-v1e4`` with the dense solver's
official weights (v = 1e4, ``cg_rtol`` 1e-6, sks-mf version 1): the same
objective as ``sks-dense``, so that pair compares the linear algebra alone.
Each point is the median over the measured steps (after the first, which
includes start-up effects) of one solve; the fitted slope is the least-squares
slope of log(time) on log(N).
"""

from __future__ import annotations

import argparse
import csv
import statistics
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from baselines.pde.daks import DaksModel, daks_points, daks_settings, gauss_newton
from methods.pde.sks import GN_WEIGHTS, MF_PENALTY, build_model
from methods.pde.solvers import gauss_newton_dense, gauss_newton_mf
from tasks.pde.problems import Elliptic

TASK_DIR = Path(__file__).resolve().parents[2] / "tasks" / "pde"
"""Where the table and plot go (the task README quotes them)."""


def _median_step(times: list[float]) -> float:
    return statistics.median(times[1:] if len(times) > 1 else times)


def measure(quick: bool) -> list[dict]:
    rows = []
    p = Elliptic()
    dense_n = (324, 625, 1225, 2401) if not quick else (324, 625)
    mf_n = (324, 625, 1225, 2401, 4900, 10000, 19881, 40000) if not quick else (324, 625, 1225)
    daks_n = (324, 625, 1225, 2401) if not quick else (324, 625)
    for n in dense_n:
        m = build_model(p, n)
        r = gauss_newton_dense(m, v=1e4, tau=1e12, max_steps=3, rtol=0)
        rows.append({"solver": "sks-dense", "N": m.shape[0] * m.shape[1], "step_s": _median_step(r.step_times)})
        print(rows[-1], flush=True)
    v0, tau0 = GN_WEIGHTS["elliptic"]
    for name, v, cg_rtol in (("sks-mf", MF_PENALTY, 1e-4), ("sks-mf-v1e4", v0, 1e-6)):
        for n in mf_n:
            m = build_model(p, n)
            r = gauss_newton_mf(m, v=v, tau=v * tau0 / v0, max_steps=4, rtol=0, cg_rtol=cg_rtol)
            rows.append({"solver": name, "N": m.shape[0] * m.shape[1], "step_s": _median_step(r.step_times), "cg_iters": r.cg_iters})
            print(rows[-1], flush=True)
    cfg = daks_settings(p)
    for n in daks_n:
        Xi, Xb = daks_points(p, n, 0)
        t0 = time.perf_counter()
        model = DaksModel(p, Xi, Xb, cfg["ls"], cfg["nugget"])
        setup = time.perf_counter() - t0
        st: list[float] = []
        gauss_newton(model, 3, step_times=st)
        rows.append({"solver": "daks", "N": n, "step_s": _median_step(st), "setup_s": setup})
        print(rows[-1], flush=True)
    return rows


def slopes(rows: list[dict]) -> dict[str, float]:
    out = {}
    for s in sorted({r["solver"] for r in rows}):
        pts = [(r["N"], r["step_s"]) for r in rows if r["solver"] == s]
        if len(pts) >= 2:
            x, y = np.log([a for a, _ in pts]), np.log([b for _, b in pts])
            out[s] = float(np.polyfit(x, y, 1)[0])
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes only (a smoke check of the script)")
    a = ap.parse_args()
    with threadpool_limits(1):
        rows = measure(a.quick)
    sl = slopes(rows)
    with open(TASK_DIR / "scaling.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=["solver", "N", "step_s", "setup_s", "cg_iters"])
        w.writeheader()
        w.writerows(rows)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.5, 4))
    for s, mk in (("sks-dense", "o-"), ("sks-mf", "s-"), ("sks-mf-v1e4", "s--"), ("daks", "^-")):
        pts = [(r["N"], r["step_s"]) for r in rows if r["solver"] == s]
        if pts:
            ax.loglog(*zip(*pts, strict=True), mk, label=f"{s} (slope {sl.get(s, float('nan')):.2f})")
    ax.set_xlabel("N (collocation points)")
    ax.set_ylabel("seconds per Gauss-Newton step (1 thread)")
    ax.set_title("Nonlinear elliptic: cost per GN step")
    ax.legend()
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(TASK_DIR / "scaling.png", dpi=110)
    print("slopes:", sl)


if __name__ == "__main__":
    main()
