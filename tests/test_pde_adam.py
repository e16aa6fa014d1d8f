"""sks-adam: the official Adam schedules run and make progress (short runs)."""

from __future__ import annotations

import numpy as np
import pytest

from bench.registry import get_task
from methods.pde.adam import adam_official
from methods.pde.sks import build_model
from tasks.pde.problems import Burgers


def test_burgers_adam_trains_and_weights_drift():
    model = build_model(Burgers(nu=0.02), 588)
    H0 = adam_official(model, 900)  # 800 boundary-only steps, then 100 with the PDE term
    info: dict = {}
    H1 = adam_official(model, 1500, info=info)
    assert info["v"] != 1e15 and info["tau"] != 1e22  # the official trainable weights move
    task = get_task("pde")
    inst = task.load("burgers-nu0.02-N588")
    axes = [np.asarray(a) for a in inst.data["eval_axes"]]
    e0 = task.evaluate(inst, model.predict(H0, axes))["rmse"]
    e1 = task.evaluate(inst, model.predict(H1, axes))["rmse"]
    assert np.isfinite(e1) and e1 < e0 < 1.0


def test_smoke_run_is_deterministic():
    from methods.pde.adam import solve_sks_adam

    inst = get_task("pde").load("elliptic-N324")
    a = solve_sks_adam(inst, seed=0, budget=10, max_steps=500, kernel="se")
    b = solve_sks_adam(inst, seed=1, budget=10, max_steps=500, kernel="se")
    np.testing.assert_array_equal(a, b)


def test_official_step_counts_per_configuration():
    from methods.pde.adam import official_steps
    from tasks.pde.problems import AllenCahn, Elliptic

    assert official_steps(build_model(Burgers(nu=0.02), 588)) == 100_000
    assert official_steps(build_model(Burgers(nu=0.001), 4800)) == 300_000  # 120x40
    assert official_steps(build_model(AllenCahn(a=15.0), 4900)) == 250_000  # 70x70
    assert official_steps(build_model(AllenCahn(a=20.0), 625)) == 10_000  # 25x25
    assert official_steps(build_model(Elliptic(), 324)) == 100_000  # ours: the official elliptic runs use GN


@pytest.mark.long  # probes the method catalogue in a subprocess (about 6 s)
def test_the_full_tier_runs_the_official_step_counts():
    from bench.evaluator import probe_catalog
    from bench.runner import RunOptions, plan

    catalog, _ = probe_catalog(families=("pde",))
    meta = [m for m in catalog if m["name"] == "sks-adam"]
    task = get_task("pde")
    for tier, want in (("smoke", 3000), ("standard", 20_000), ("full", None)):
        (job,) = plan(task, meta, RunOptions(task="pde", tier=tier, instances=["allen-cahn-a15-N4900"]))
        assert job.params["max_steps"] == want
