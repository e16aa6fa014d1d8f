"""pde performance targets (pytest-benchmark; `make benchmark`; skipped in `make test`).

- Our dense Gauss-Newton SKS reproduces the official elliptic figures (error within
  10% at the same size) in at most half the official time (12.8 s at 18², 105 s at 49²).
- The issue's official 64² row (l = 0.2: 1.8e-5, not converged after 371 s, 7.4 s per GN step):
  our dense Gauss-Newton on the same grid and kernel (outside sks's N <= 2,500 limit, so called
  directly), at most half the official time.
- Our matrix-free SKS: elliptic on a 200×200 grid, RMSE <= 1e-5 in under 120 s and 2 GiB.
- Our matrix-free SKS is at least 10x faster than DAKS at equal or better error at N = 10^4
  (elliptic), side by side in one run (DAKS needs about 8 GB and 8 minutes here).
"""

from __future__ import annotations

import resource
import time

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from baselines.pde.daks import solve_daks
from bench.registry import discover_methods, get_task
from methods.pde.sks import solve_sks, solve_sks_mf


def _mf_params() -> dict:
    return dict(discover_methods().get("sks-mf").params)


@pytest.mark.parametrize(("iid", "official_rmse", "official_s"), [("elliptic-N324", 8.16e-5, 12.8), ("elliptic-N2401", 1.33e-6, 105.0)])
def test_sks_dense_matches_official_in_half_the_time(benchmark, iid, official_rmse, official_s):
    task = get_task("pde")
    inst = task.load(iid)
    with threadpool_limits(1):
        u = benchmark.pedantic(lambda: solve_sks(inst, seed=0, budget=600, max_steps=49, kernel="se"), rounds=3, iterations=1)
    rmse = task.evaluate(inst, u)["rmse"]
    med = benchmark.stats.stats.median
    benchmark.extra_info.update({"rmse": rmse, "median_s": med})
    assert rmse <= 1.1 * official_rmse
    assert med <= official_s / 2


def test_sks_mf_elliptic_200(benchmark):
    task = get_task("pde")
    inst = task.load("elliptic-N40000")
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with threadpool_limits(1):
        u = benchmark.pedantic(
            lambda: solve_sks_mf(inst, seed=0, budget=600, **_mf_params()),
            rounds=1,
            iterations=1,
        )
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    rmse = task.evaluate(inst, u)["rmse"]
    benchmark.extra_info.update({"rmse": rmse, "peak_rss_mb": peak_mb, "rss_before_mb": before / 1024})
    assert np.isfinite(rmse) and rmse <= 1e-5
    assert benchmark.stats.stats.median < 120
    assert peak_mb < 2048


def test_sks_mf_vs_daks_at_n10000(benchmark):
    task = get_task("pde")
    inst = task.load("elliptic-N10000")
    with threadpool_limits(1):
        t0 = time.perf_counter()
        u_daks = solve_daks(inst, seed=0, budget=5400, steps=None, max_gib=8.0)
        daks_s = time.perf_counter() - t0
        u_mf = benchmark.pedantic(lambda: solve_sks_mf(inst, seed=0, budget=600, **_mf_params()), rounds=3, iterations=1)
    rmse_daks, rmse_mf = task.evaluate(inst, u_daks)["rmse"], task.evaluate(inst, u_mf)["rmse"]
    med = benchmark.stats.stats.median
    benchmark.extra_info.update(
        {"rmse_sks_mf": rmse_mf, "rmse_daks": rmse_daks, "daks_s": daks_s, "sks_mf_median_s": med, "speedup": daks_s / med}
    )
    assert rmse_mf <= rmse_daks
    assert daks_s / med >= 10


def test_sks_dense_official_64_grid_lengthscale_02(benchmark):
    from methods.pde.kron import KronModel
    from methods.pde.solvers import gauss_newton_dense
    from tasks.pde.problems import Elliptic

    task = get_task("pde")
    inst = task.load("elliptic-N4096")
    axes = [np.asarray(a) for a in inst.data["eval_axes"]]
    model = KronModel(Elliptic(), [np.linspace(0, 1, 64)] * 2, (0.2, 0.2), 1e-6)
    with threadpool_limits(1):
        res = benchmark.pedantic(lambda: gauss_newton_dense(model, v=1e4, tau=1e12, max_steps=49), rounds=1, iterations=1)
    rmse = task.evaluate(inst, model.predict(res.H, axes))["rmse"]
    med = benchmark.stats.stats.median
    benchmark.extra_info.update({"rmse": rmse, "steps": res.steps, "median_step_s": float(np.median(res.step_times))})
    assert rmse <= 1.1 * 1.8e-5
    assert med <= 371 / 2
