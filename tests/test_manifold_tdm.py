"""The ``tdm`` baseline: its forward process, the torus closed form, the DSM target, the sampler."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import tasks.manifold_diffusion as md
from baselines.manifold_diffusion.geometry import Geometry
from baselines.manifold_diffusion.tdm import (
    TDM,
    ScoreResNet,
    _supports,
    forward_process,
    to_algebra,
    torus_bridge,
    torus_dsm_pair,
)
from bench.task import Instance
from tasks.manifold_diffusion import metrics as M
from tasks.manifold_diffusion import targets as T
from tasks.manifold_diffusion.manifolds import check_points, features

TASK = md.ManifoldDiffusion()
SMALL = {"hidden": 32, "blocks": 1, "pool": 64, "interval": 20}


def _haar(manifold: str, n: int, count: int, seed: int) -> torch.Tensor:
    g = Geometry(manifold, n).uniform(count, torch.Generator().manual_seed(seed))
    u, _, vh = torch.linalg.svd(g.to(torch.complex128 if manifold == "u" else torch.float64))
    return u @ vh


@pytest.mark.parametrize(("manifold", "n"), [("so", 4), ("u", 3)])
def test_algebra_elements_are_skew_and_the_forward_process_stays_on_the_group(manifold, n):
    gen = torch.Generator().manual_seed(0)
    m = n * (n - 1) // 2 if manifold == "so" else n * n
    xi = torch.randn(5, m, generator=gen, dtype=torch.float64)
    a = to_algebra(xi, manifold, n)
    assert torch.allclose(a, -a.conj().transpose(-1, -2))
    assert torch.linalg.matrix_rank(a.reshape(5, -1).T.to(torch.complex128)) == 5  # coordinates are used, not dropped
    g0 = _haar(manifold, n, 64, 1)
    gs, _, _ = forward_process(g0, torch.randn(64, m, generator=gen, dtype=torch.float64), 200, 0.05, manifold, n, gen)
    g = gs[:, -1]
    eye = torch.eye(n, dtype=g.dtype)
    assert (g.conj().transpose(-1, -2) @ g - eye).abs().max() < 1e-11
    if manifold == "so":
        assert torch.allclose(torch.linalg.det(g), torch.ones(64, dtype=torch.float64), atol=1e-11)
    assert (gs[:, -1] - g0).abs().max() > 0.5  # it moved


def test_momentum_follows_its_ornstein_uhlenbeck_law():
    """Given xi_0, xi_t ~ N(e^{-t} xi_0, 1 - e^{-2t}), whatever the group part does."""
    gen = torch.Generator().manual_seed(2)
    count, steps, dt = 4000, 40, 0.05
    xi0 = torch.full((count, 3), 1.5, dtype=torch.float64)
    _, xis, _ = forward_process(_haar("so", 3, count, 3), xi0, steps, dt, "so", 3, gen)
    t = steps * dt
    mean, var = 1.5 * math.exp(-t), -math.expm1(-2 * t)
    x = xis[:, -1]
    se = math.sqrt(var / count)
    assert (x.mean(0) - mean).abs().max() < 4 * se
    assert (x.var(0) / var - 1).abs().max() < 4 * math.sqrt(2 / count)
    assert abs(float(torch.corrcoef(x.T)[0, 1])) < 4 / math.sqrt(count)


def test_torus_closed_form_matches_a_fine_simulation():
    """theta_t - theta_0 given (xi_0, xi_t) is Gaussian: mean tanh(t/2)(xi_0 + xi_t), var 2t - 4 tanh(t/2)."""
    gen = torch.Generator().manual_seed(4)
    count, steps, dt, x0 = 20000, 500, 0.002, 0.7
    xi0 = torch.full((count, 1), x0, dtype=torch.float64)
    g0 = torch.zeros(count, 1, dtype=torch.float64)
    _, xis, _ = forward_process(g0, xi0, steps, dt, "torus", 1, gen)
    inc = dt * xis[:, :, 0].sum(1)  # the unwrapped angle increment of the splitting integrator
    xit = xis[:, -1, 0]
    c, var_g, _ = torus_bridge(torch.tensor([steps * dt]))
    design = torch.stack([torch.ones(count, dtype=torch.float64), xit], 1)
    coef = torch.linalg.lstsq(design, inc[:, None]).solution[:, 0]
    resid = inc - design @ coef
    assert abs(float(coef[1]) - float(c)) < 0.01  # slope on xi_t
    assert abs(float(coef[0]) - float(c) * x0) < 0.01  # intercept c xi_0
    assert abs(float(resid.var()) / float(var_g) - 1) < 0.05


def test_torus_bridge_series_joins_the_closed_form():
    t = torch.tensor([0.0499, 0.0501, 1e-3], dtype=torch.float64)
    _, v, _ = torus_bridge(t)
    assert v[0] < v[1] and abs(float(v[1] / v[0]) - (0.0501 / 0.0499) ** 3) < 1e-4
    assert abs(float(v[2]) - 1e-9 / 6) < 1e-15


def test_dsm_target_is_the_score_of_the_conditional_density():
    """Autograd of log p(theta_t, xi_t | theta_0, xi_0), written out with many wrap images."""
    gen = torch.Generator().manual_seed(5)
    geo = Geometry("torus", 2)
    b = 64
    theta0 = 2 * math.pi * torch.rand(b, 2, generator=gen, dtype=torch.float64)
    xi0 = torch.randn(b, 2, generator=gen, dtype=torch.float64)
    t = 0.05 + 3 * torch.rand(b, generator=gen, dtype=torch.float64)
    theta, xit, target = torus_dsm_pair(theta0, t, gen, geo, wraps=6, xi0=xi0)
    c, var_g, var_xi = (v[:, None] for v in torus_bridge(t))
    x = xit.clone().requires_grad_(True)
    k = torch.arange(-12, 13, dtype=torch.float64) * 2 * math.pi
    resid = (theta - theta0 - c * (xi0 + x))[..., None] + k
    logp = -((x - torch.exp(-t)[:, None] * xi0) ** 2) / (2 * var_xi) + torch.logsumexp(-(resid**2) / (2 * var_g[..., None]), -1)
    (grad,) = torch.autograd.grad(logp.sum(), x)
    assert torch.allclose(target, grad, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("hidden", [32, 64, 256])
def test_narrow_score_network_still_sees_its_input(hidden):
    """GroupNorm(32) on a 32-wide layer would normalise single channels to 0 and output a constant."""
    net = ScoreResNet(6, 3, hidden=hidden, blocks=2)
    x = torch.randn(8, 6, generator=torch.Generator().manual_seed(0))
    out = net(x, torch.full((8,), 5.0))
    assert out.std(0).min() > 1e-4


def _tiny(iid: str, iters: int = 15, n: int = 150) -> Instance:
    inst = TASK.load(iid)
    data = {**inst.data, "train_iters": iters, "n_samples": n, "sample_steps": 10, "batch_size": 32}
    return Instance(id=inst.id, params=inst.params, data=data, private=inst.private, tags=inst.tags, digest="t")


def _run(inst: Instance, seed: int = 0, **params) -> dict:
    model = TDM(inst, seed=seed, budget=60.0, **{**SMALL, **params})
    sess = md.TrainSampleSession(inst)
    while (st := sess.state()) is not None:
        sess.apply(model.select(st))
    return sess.solution()


@pytest.mark.parametrize("iid", ["torus2-smoke", "so3-smoke", "u3-smoke"])
def test_samples_are_valid_group_elements_and_reproducible(iid):
    inst = _tiny(iid)
    a, b = _run(inst), _run(inst)
    assert np.array_equal(a["samples"], b["samples"])
    _, viol = check_points(inst.data["manifold"], inst.data["n"], 150, a["samples"])
    assert viol < 1e-10
    assert not np.array_equal(_run(inst, seed=1)["samples"], a["samples"])


def test_supports_lie_groups_only():
    assert _supports(TASK.load("so3-smoke")) is True
    assert _supports(TASK.load("u3-smoke")) is True
    assert _supports(TASK.load("torus2-smoke")) is True
    assert "not a Lie group" in _supports(TASK.load("sphere2-smoke"))
    with pytest.raises(ValueError, match="Lie group"):
        TDM(TASK.load("sphere2-smoke"), seed=0, budget=1.0)


def test_pool_is_resampled_on_schedule():
    model = TDM(_tiny("so3-smoke"), seed=0, budget=60.0, **SMALL, resample_every=3)
    model.fit(3, 16, 60.0)
    first = model.pool[0]
    model.fit(1, 16, 60.0)
    assert model.pool[0] is not first and model.pool[0].shape == (64, 20, 9)


@pytest.mark.long  # a few seconds: CI step 2 (make test keeps each family under 20 s)
def test_training_on_a_concentrated_so3_target_beats_the_untrained_sampler():
    """A single wrapped Gaussian on SO(3) (var 0.05): MMD^2 to held-out data must drop well below the untrained model's."""
    rng = np.random.default_rng(0)
    mix = T.so_mixture_spec(3, 1, 0.05, seed=7)
    train, held = T.sample_so(mix, 1000, rng)[0], T.sample_so(mix, 400, rng)[0]
    data = {"manifold": "so", "n": 3, "dim": 3, "train": train}
    inst = Instance(id="so3-conc", params={}, data=data, digest="t")
    fh = features("so", held)
    bw = M.median_bandwidth(fh)

    def mmd(iters: int) -> float:
        model = TDM(inst, seed=0, budget=60.0, hidden=64, blocks=1, pool=256, interval=50)
        model.fit(iters, 64, 60.0)
        with torch.no_grad():
            x = model.sample(400, 50)
        check_points("so", 3, 400, x)
        return M.mmd2(fh, features("so", x), bw)

    untrained, trained = mmd(0), mmd(1500)
    assert trained < 0.5 * untrained, (trained, untrained)
