"""sks-adam: the official Adam schedules run and make progress (short runs)."""

from __future__ import annotations

import numpy as np

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
