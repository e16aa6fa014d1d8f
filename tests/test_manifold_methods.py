"""The paper's method and the baselines, in-process on tiny budgets (the conformance test runs them sandboxed)."""

from __future__ import annotations

import numpy as np
import pytest

import tasks.manifold_diffusion as md
from baselines.manifold_diffusion.ddpm import AmbientDDPM
from baselines.manifold_diffusion.rfm import _supports
from baselines.manifold_diffusion.rsgm import RSGM
from bench.task import Instance, InvalidSolution
from methods.manifold_diffusion.projected import ProjectedDiffusion
from tasks.manifold_diffusion.manifolds import check_points

TASK = md.ManifoldDiffusion()


def _tiny(iid: str, iters: int = 20, n: int = 200) -> Instance:
    inst = TASK.load(iid)
    data = {**inst.data, "train_iters": iters, "n_samples": n, "sample_steps": 10}
    return Instance(id=inst.id, params=inst.params, data=data, private=inst.private, tags=inst.tags, digest="t")


def _run(cls, inst: Instance, seed: int = 0, **params) -> dict:
    model = cls(inst, seed=seed, budget=60.0, hidden=32, layers=2, **params)
    sess = md.TrainSampleSession(inst)
    while (st := sess.state()) is not None:
        sess.apply(model.select(st))
    return sess.solution()


@pytest.mark.parametrize("iid", ["torus2-smoke", "sphere2-smoke", "so3-smoke", "u3-smoke"])
@pytest.mark.parametrize("cls", [ProjectedDiffusion, AmbientDDPM, RSGM])
def test_models_return_valid_points_reproducibly(cls, iid):
    inst = _tiny(iid)
    a, b = _run(cls, inst), _run(cls, inst)
    assert np.array_equal(a["samples"], b["samples"])
    pts = a["samples"]
    assert pts.shape[0] == 200
    check_points(inst.data["manifold"], inst.data["n"], 200, pts)


def test_faithful_so_sampler_returns_reflections_that_the_task_rejects():
    """keep_flaws=["det"]: det = -1 samples come back; the verifier names them."""
    inst = _tiny("so3-smoke", n=300)
    sol = _run(ProjectedDiffusion, inst, keep_flaws=["det"])
    dets = np.linalg.det(sol["samples"])
    assert (dets < 0).any()
    full = TASK.load("so3-smoke")
    with pytest.raises(InvalidSolution, match="det = -1"):
        TASK.evaluate(full, sol)
    fixed = _run(ProjectedDiffusion, inst)
    assert np.allclose(np.linalg.det(fixed["samples"]), 1.0)


def test_each_flaw_is_a_switch():
    inst = _tiny("u4", iters=5)  # n > 3: the 3-row noise bug shows
    base = _run(ProjectedDiffusion, inst)["samples"]
    for flaw in ("score", "terminal", "beta", "noise3", "phase"):
        other = _run(ProjectedDiffusion, inst, keep_flaws=[flaw])["samples"]
        assert not np.allclose(base, other), flaw
    with pytest.raises(ValueError, match="unknown"):
        _run(ProjectedDiffusion, inst, keep_flaws=["nope"])


def test_training_budget_is_obeyed():
    inst = _tiny("torus2-smoke", iters=7)
    model = ProjectedDiffusion(inst, seed=0, budget=60.0, hidden=16, layers=1)
    assert model.fit(7, 16, 60.0) == 7
    assert model.fit(10**9, 16, 0.2) < 10**9


def test_rfm_supports_only_torus_and_sphere():
    pytest.importorskip("flow_matching")
    assert _supports(TASK.load("torus2-smoke")) is True
    assert "SO(n)" in _supports(TASK.load("so3-smoke"))
