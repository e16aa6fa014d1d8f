"""The paper's method and the baselines, in-process on tiny budgets (the conformance test runs them sandboxed)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from script_modules import load_script

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


# -- issue 7: sample-quality switches of projected-diffusion (defaults = published behaviour) --


def test_pd_lam_scale_multiplies_lambda0_and_its_gaps():
    import torch

    from methods.manifold_diffusion.matrix_geometry import MatrixCoords
    from methods.manifold_diffusion.projected import lam_scale_value

    assert lam_scale_value("3n", 3) == 9.0 and lam_scale_value(2, 5) == 2.0 and lam_scale_value("n", 4) == 4.0
    gen = torch.Generator().manual_seed(0)
    q, _ = torch.linalg.qr(torch.randn(8, 3, 3, generator=gen, dtype=torch.float64))
    base = MatrixCoords(3, False, dtype=torch.float64)
    big = MatrixCoords(3, False, dtype=torch.float64, lam_scale=9.0)
    assert torch.allclose(base.lam0, torch.tensor([1.0, 2 / 3, 1 / 3], dtype=torch.float64))  # official
    lam, _ = big.phi(big.psi(q))
    assert torch.allclose(lam[:, :-1] - lam[:, 1:], torch.full((8, 2), 3.0, dtype=torch.float64), atol=1e-9)


def test_pd_time_grids_run_from_noise_to_data():
    from methods.manifold_diffusion.projected import reverse_grid

    for kind in ("uniform", "quadratic"):
        g = reverse_grid(50, kind)
        assert len(g) == 50 and g[0][:2] == (0.0, 1.0)
        assert abs(sum(dt for *_, dt in g) - 1.0) < 1e-12
        assert all(dt > 0 for *_, dt in g)
        assert all(abs(t + s - 1.0) < 1e-12 for t, s, _ in g)
    q = reverse_grid(50, "quadratic")
    assert abs(q[-1][1] - (1 / 50) ** 2) < 1e-15 and q[-1][2] < q[0][2]  # finer near the data
    assert reverse_grid(4, "uniform") == [(0.0, 1.0, 0.25), (0.25, 0.75, 0.25), (0.5, 0.5, 0.25), (0.75, 0.25, 0.25)]
    with pytest.raises(ValueError, match="time_grid"):
        reverse_grid(4, "cosine")


def test_pd_precondition_keeps_the_loss_minimiser():
    """Both parametrisations are minimised by the same drift, E[target], on a fixed batch."""
    import torch

    gen = torch.Generator().manual_seed(0)
    target = torch.randn(64, 5, generator=gen) * 30.0
    sd, beta = torch.full((64,), 0.05), torch.full((64,), 15.0)
    mean = target.mean(0, keepdim=True)
    inst = _tiny("torus2-smoke", iters=1)
    m = ProjectedDiffusion(inst, seed=0, budget=60.0, hidden=8, layers=1, precondition=True)
    s = 0.4
    sd_s = float(m.sched.mean_std(torch.tensor(s))[1])
    for pre, out_star in ((False, mean), (True, mean * float(sd[0] / beta[0]))):
        out = out_star.expand(64, 5).clone().requires_grad_(True)
        loss = ProjectedDiffusion.drift_loss(out, target, sd, beta, pre).mean()
        (grad,) = torch.autograd.grad(loss, out)
        assert grad.sum(0).abs().max() < 1e-4 * target.abs().max()  # stationary in the shared output
    # the preconditioned weights are balanced: the loss of a zero output no longer scales with beta^2
    zero = torch.zeros(64, 5)
    assert torch.allclose(ProjectedDiffusion.drift_loss(zero, target, sd, beta, False), (sd**2)[:, None].mul(target**2).sum(1))
    assert torch.allclose(ProjectedDiffusion.drift_loss(zero, target, sd, beta, True), ((sd / beta)[:, None] * target).pow(2).sum(1))
    assert abs(m.drift_scale(s, True) - float(m.sched.beta(torch.tensor(s))) / sd_s) < 1e-5 and m.drift_scale(s, False) == 1.0


@pytest.mark.parametrize("iid", ["torus2-smoke", "so3-smoke"])
def test_pd_switch_defaults_reproduce_and_each_switch_acts(iid):
    inst = _tiny(iid, iters=5, n=100)
    base = _run(ProjectedDiffusion, inst)["samples"]
    same = _run(ProjectedDiffusion, inst, lam_scale=1.0, time_grid="uniform", final_noise=True, precondition=False)["samples"]
    assert np.array_equal(base, same)
    switches = [{"time_grid": "quadratic"}, {"final_noise": False}, {"precondition": True}]
    if iid.startswith("so"):
        switches += [{"lam_scale": "3n"}, {"precondition": "torus"}]
    for sw in switches:
        other = _run(ProjectedDiffusion, inst, **sw)["samples"]
        check_points(inst.data["manifold"], inst.data["n"], 100, other)
        assert not np.allclose(base, other), sw
    with pytest.raises(ValueError, match="precondition"):
        _run(ProjectedDiffusion, inst, precondition="sometimes")


@pytest.mark.parametrize("iid", ["torus2-smoke", "so3-smoke", "u3-smoke"])
def test_pd_version3_switches_default_to_the_official_model_and_each_acts(iid):
    inst = _tiny(iid, iters=5, n=100)
    base = _run(ProjectedDiffusion, inst)["samples"]
    official = {"ensemble": "official", "matrix_input": "rows", "torus_lift": "zero", "torus_input": "angle"}
    assert np.array_equal(base, _run(ProjectedDiffusion, inst, **official)["samples"])
    switches = [{"torus_lift": "data"}]
    switches += [{"torus_input": "cossin"}] if iid.startswith("torus") else [{"ensemble": "goe"}, {"matrix_input": "signed"}]
    for sw in switches:
        other = _run(ProjectedDiffusion, inst, **sw)["samples"]
        check_points(inst.data["manifold"], inst.data["n"], 100, other)
        assert not np.allclose(base, other), sw
    for name in official:
        with pytest.raises(ValueError, match=name):
            _run(ProjectedDiffusion, inst, **{name: "bogus"})


def test_torus_seams_put_the_cut_in_the_emptiest_arc():
    from common.manifold_diffusion.models import torus_seams

    rng = np.random.default_rng(0)
    # one mode per coordinate, at 0 (straddling the official cut) and at 3
    x = np.mod(rng.normal(0.0, 0.3, (2000, 2)) + [0.0, 3.0], 2 * np.pi)
    seams = torus_seams(x)
    assert abs(seams[0] - np.pi) < 0.3 and abs(seams[1] - (3.0 + np.pi)) < 0.3
    # SO(n) row signs: angles 0 and pi; the longest empty run is either half, its middle pi/2
    signs = np.where(rng.random((500, 3)) < 0.5, 0.0, np.pi)
    assert np.allclose(torus_seams(signs), np.pi / 2, atol=0.1)
    # the lifted data never straddle the cut: every lifted angle is within pi of its centre
    centre = np.mod(seams + np.pi, 2 * np.pi)
    lifted = np.mod(x - centre + np.pi, 2 * np.pi) - np.pi
    assert np.abs(lifted).max() < 2.0  # a mode is +-4 sigma = 1.2 wide
    assert x[:, 0].min() < 0.1 and x[:, 0].max() > 2 * np.pi - 0.1  # the official lift [0, 2 pi) tears mode 0


@pytest.mark.parametrize("complex_", [False, True])
def test_goe_ensemble_makes_the_eigenvector_noise_isotropic(complex_):
    """``ensemble="goe"``: the forward noise of ``A = Z + Z^H``, read in any orthonormal basis, has the
    variance the sampler's Dyson noise assumes; the official Z does not (its diagonal is too loud)."""
    import torch

    from methods.manifold_diffusion.matrix_geometry import MatrixCoords

    n, draws = 4, 200_000
    inst = _tiny("u3-smoke" if complex_ else "so3-smoke", iters=1)
    mc = MatrixCoords(n, complex_=complex_, dtype=torch.float64)
    gen = torch.Generator().manual_seed(0)
    q = torch.linalg.qr(torch.randn(n, n, dtype=torch.float64, generator=gen))[0]
    if complex_:
        q = torch.linalg.qr(torch.complex(torch.randn(n, n, dtype=torch.float64, generator=gen), torch.randn(n, n, dtype=torch.float64, generator=gen)))[0]
    variances = {}
    for ens in ("official", "goe"):
        m = ProjectedDiffusion(inst, seed=0, budget=60.0, hidden=8, layers=1, ensemble=ens)
        zscale = torch.ones(mc.dim, dtype=torch.float64)
        zscale[:n] = m.zscale[:3][0]  # the diagonal coordinates' scale, for any n
        a = mc.herm(torch.randn(draws, mc.dim, dtype=torch.float64, generator=gen) * zscale)
        c = q.conj() @ a @ q.T  # <u_j, A u_i> for the rows u of q
        off = c[:, ~torch.eye(n, dtype=torch.bool)].abs() ** 2
        variances[ens] = off.mean(0)
    unit = variances["goe"].mean()  # E|<u_j, dA u_i>|^2 in the GOE/GUE normalisation (1 or 2)
    assert torch.allclose(variances["goe"], unit.expand_as(variances["goe"]), rtol=0.03)
    assert (variances["official"] / unit).max() > 1.1  # basis-dependent, louder than assumed


def test_pd_sphere_separate_scale_head():
    inst = _tiny("sphere2-smoke", iters=5, n=100)
    base = _run(ProjectedDiffusion, inst)["samples"]
    other = _run(ProjectedDiffusion, inst, sphere_scale="separate", scale_cap=10.0)["samples"]
    check_points("sphere", 2, 100, other)
    assert not np.allclose(base, other)


@pytest.mark.long  # imports the family's baselines (flow_matching's riemannian-fm) for the registry: about 2 s
def test_tuned_variant_is_the_paper_model_with_only_the_declared_switches():
    """``projected-diffusion-tuned`` differs from ``projected-diffusion`` in exactly :data:`TUNED`.

    :data:`TUNED_ONLY` (``sign_ref`` and the version-3 switches) are declared by the tuned variant
    only, so that the paper method's job keys (which hash its parameters) stay those of its
    published runs; the model's defaults for them are the official behaviour.
    """
    from bench.registry import discover_methods
    from methods.manifold_diffusion.projected import TUNED, TUNED_ONLY

    official = {"sign_ref": "first", "ensemble": "official", "matrix_input": "rows", "torus_lift": "zero", "torus_input": "angle",
                "projection": "eigen", "polar_scale": 2.0, "ema": 0.0, "polar_den_min": 1e-2, "polar_noise": 1.0}
    reg = discover_methods(families=["manifold_diffusion"])  # not every family's imports
    paper, tuned = reg.get("projected-diffusion"), reg.get("projected-diffusion-tuned")
    assert paper.kind == tuned.kind == "method"
    assert set(tuned.params) - set(paper.params) == set(TUNED_ONLY) == set(official)
    differ = {k for k in tuned.params if paper.params.get(k, official.get(k)) != tuned.params[k]}
    assert differ == set(TUNED) - {"polar_scale"} and all(tuned.params[k] == v for k, v in TUNED.items())
    inst = _tiny("so3-smoke", iters=5, n=100)
    via_name = _run(tuned.target, inst, **{k: v for k, v in tuned.params.items() if k not in ("hidden", "layers")})
    by_hand = _run(ProjectedDiffusion, inst, **TUNED)
    assert np.array_equal(via_name["samples"], by_hand["samples"])


@pytest.mark.parametrize("dtype", [torch.float32, torch.complex64])
def test_clip_target_shrinks_only_the_samples_above_the_cap(dtype):
    target = torch.zeros(3, 2, 2, dtype=dtype)
    target[0, 0, 0], target[1, 0, 1], target[2, 1, 0] = 0.5, 3.0, 10.0
    k = torch.tensor([1.0, 1.0, 0.1])  # |k target|^2 = 0.25, 9, 1
    out = ProjectedDiffusion.clip_target(target, k, cap=4.0)
    assert torch.equal(out[0], target[0]) and torch.equal(out[2], target[2])
    assert float((out[1].abs() ** 2).sum()) == pytest.approx(4.0)  # shrunk onto the cap, same direction
    assert float(out[1, 0, 1].real) == pytest.approx(2.0)


def test_target_cap_defaults_off_and_acts_on_matrix_groups():
    inst = _tiny("so3-smoke", iters=5, n=100)
    base = _run(ProjectedDiffusion, inst)["samples"]
    assert np.array_equal(base, _run(ProjectedDiffusion, inst, target_cap=0.0)["samples"])
    other = _run(ProjectedDiffusion, inst, target_cap=1e-3)["samples"]
    check_points("so", 3, 100, other)
    assert not np.allclose(base, other)


def test_tail_shares():
    tail_shares = load_script("scripts/manifold_diffusion/target_tails.py").tail_shares

    v = np.ones(1000)
    v[0] = 999.0  # one sample carries half the sum
    r = tail_shares(v)
    assert r["top01"] == pytest.approx(0.5) and r["top1"] == pytest.approx((999 + 9) / 1998)
    assert r["median"] == 1.0 and r["max"] == 999.0


# --------------------------------------------------------------- the polar projection (version 4)
@pytest.mark.parametrize(("n", "complex_"), [(3, False), (6, False), (3, True)])
def test_polar_decomposition_and_its_derivative(n, complex_):
    """``decompose`` rebuilds ``Z`` with ``X`` in SO(n) / U(n), and ``algebra`` is ``X^H dphi`` (central differences)."""
    from methods.manifold_diffusion.polar_geometry import PolarCoords

    pc = PolarCoords(n, complex_, scale=2.0)
    gen = torch.Generator().manual_seed(0)
    z = pc.gaussian((64, n, n), gen, torch.float64)  # about half with det Z < 0 on SO(n)
    x, q, s = pc.decompose(z)
    eye = torch.eye(n, dtype=x.dtype)
    assert torch.allclose(x.conj().transpose(1, 2) @ x, eye.expand_as(x), atol=1e-10)
    if not complex_:
        assert torch.allclose(torch.linalg.det(x), torch.ones(64, dtype=x.dtype))
        assert (s[:, -1] < 0).any()
    qs = q @ torch.diag_embed(s.to(q.dtype)) @ q.conj().transpose(1, 2)
    assert torch.allclose(x @ qs, z, atol=1e-10)
    dz = pc.gaussian((64, n, n), gen, torch.float64)
    h = 1e-6
    fd = x.conj().transpose(1, 2) @ (pc.phi(z + h * dz) - pc.phi(z - h * dz)) / (2 * h)
    om = pc.algebra(x, q, s, dz, den_min=0.0)
    good = s.abs().min(1).values > 0.05  # away from the jump of SO(n)'s special polar factor
    assert torch.allclose(om[good], fd[good], atol=1e-5)
    assert torch.allclose(om, -om.conj().transpose(1, 2))
    assert torch.allclose(pc.from_coords(pc.coords(om)), om, atol=1e-12)


@pytest.mark.parametrize(("n", "complex_"), [(3, False), (4, True)])
def test_polar_ito_term_has_no_tangent_part(n, complex_):
    """The Laplacian of the polar map is normal to the group: no Ito term in the drift target."""
    from methods.manifold_diffusion.polar_geometry import PolarCoords

    pc = PolarCoords(n, complex_, scale=2.0)
    gen = torch.Generator().manual_seed(1)
    z = 1.5 * torch.eye(n, dtype=torch.float64) + 0.6 * pc.gaussian((32, n, n), gen, torch.float64)
    x, _, s = pc.decompose(z)
    h = 1e-4
    lap = torch.zeros_like(x)
    for k in range(n * n):
        for ph in (1.0, 1j) if complex_ else (1.0,):
            e = torch.zeros(n * n, dtype=x.dtype)
            e[k] = ph
            e = e.reshape(n, n)
            lap = lap + (pc.phi(z + h * e) + pc.phi(z - h * e) - 2 * x) / h**2
    k2 = x.conj().transpose(1, 2) @ lap
    tangent = 0.5 * (k2 - k2.conj().transpose(1, 2))
    normal = 0.5 * (k2 + k2.conj().transpose(1, 2))
    keep = s.abs().min(1).values > 0.2
    assert keep.sum() > 16
    assert float(tangent[keep].abs().max()) < 1e-4
    assert float(normal[keep].abs().amax(dim=(1, 2)).min()) > 1e-2


def test_polar_noise_scale_near_the_data_and_at_the_prior():
    """Near the data every singular value is ``a c``: the noise is ``2 / (2 a c)^2`` per coordinate."""
    from methods.manifold_diffusion.polar_geometry import PolarCoords

    gen = torch.Generator().manual_seed(0)
    for complex_ in (False, True):
        pc = PolarCoords(4, complex_, scale=2.0)
        assert pc.noise_scale(1.0, 1e-4, gen) == pytest.approx(1.0 / (2 * 2.0**2), rel=1e-3)
        assert pc.noise_scale(0.01, 1.0, gen) > 0.1  # singular values of a Gaussian matrix: O(1)


def test_pd_polar_projection_acts_on_so_only_and_ema_defaults_off():
    so = _tiny("so3-smoke", iters=5, n=100)
    base = _run(ProjectedDiffusion, so)["samples"]
    assert np.array_equal(base, _run(ProjectedDiffusion, so, projection="eigen", ema=0.0)["samples"])
    polar = _run(ProjectedDiffusion, so, projection="polar", polar_scale=2.0)
    check_points("so", 3, 100, polar["samples"])
    assert not np.allclose(base, polar["samples"])
    assert np.array_equal(polar["samples"], _run(ProjectedDiffusion, so, projection="polar", polar_scale=2.0)["samples"])
    assert not np.allclose(polar["samples"], _run(ProjectedDiffusion, so, projection="polar", polar_scale=1.0)["samples"])
    averaged = _run(ProjectedDiffusion, so, projection="polar", ema=0.5)["samples"]
    check_points("so", 3, 100, averaged)
    assert not np.allclose(polar["samples"], averaged)
    for iid in ("u3-smoke", "torus2-smoke"):  # U(n) keeps the eigenvector map; the torus has no matrix map
        inst = _tiny(iid, iters=5, n=100)
        assert np.array_equal(_run(ProjectedDiffusion, inst)["samples"], _run(ProjectedDiffusion, inst, projection="polar")["samples"])
    with pytest.raises(ValueError, match="projection"):
        _run(ProjectedDiffusion, so, projection="qr")
    with pytest.raises(ValueError, match="ema"):
        _run(ProjectedDiffusion, so, ema=1.0)


def test_polar_denominator_floor_shrinks_only_the_targets_near_the_jump():
    """``polar_den_min`` floors ``s_i + s_j``: targets far from the jump of the special polar factor
    are unchanged, those next to it are bounded."""
    from methods.manifold_diffusion.polar_geometry import PolarCoords

    gen = torch.Generator().manual_seed(0)
    pc = PolarCoords(4, False, scale=2.0)
    xi = torch.randn(4000, 4, 4, generator=gen, dtype=torch.float64)
    z = 0.3 * torch.eye(4, dtype=torch.float64) + xi  # mid time: many flipped special polar factors
    x, q, s = pc.decompose(z)
    exact, floored = (pc.coords(pc.algebra(x, q, s, xi, den_min=d)) for d in (1e-2, 0.3))
    den = (s[:, :, None] + s[:, None, :]).abs()
    den = den + torch.eye(4, dtype=den.dtype) * 1e9  # the diagonal is not a pair
    far = den.amin(dim=(1, 2)) >= 0.3
    near = den.amin(dim=(1, 2)) < 0.1
    assert far.sum() > 500 and near.sum() > 10
    assert torch.allclose(exact[far], floored[far])
    assert float((floored[near] ** 2).sum(1).max()) < float((exact[near] ** 2).sum(1).max())


def test_polar_noise_is_a_sampling_temperature_only():
    """``polar_noise`` leaves training alone (same weights) and changes only the sampler's noise;
    ``polar_den_min`` changes the training target; neither acts off SO(n)."""
    so = _tiny("so3-smoke", iters=5, n=100)
    base = _run(ProjectedDiffusion, so, projection="polar")["samples"]
    assert np.array_equal(base, _run(ProjectedDiffusion, so, projection="polar", polar_noise=1.0, polar_den_min=1e-2)["samples"])
    cold = _run(ProjectedDiffusion, so, projection="polar", polar_noise=0.0)["samples"]
    check_points("so", 3, 100, cold)
    assert not np.allclose(base, cold)
    m1 = ProjectedDiffusion(so, seed=0, budget=60.0, hidden=32, layers=2, projection="polar")
    m2 = ProjectedDiffusion(so, seed=0, budget=60.0, hidden=32, layers=2, projection="polar", polar_noise=0.5)
    for m in (m1, m2):
        m.fit(5, 64, 60.0)
    assert all(torch.equal(a, b) for a, b in zip(m1.drift.parameters(), m2.drift.parameters(), strict=True))
    u3 = _tiny("u3-smoke", iters=5, n=100)
    assert np.array_equal(_run(ProjectedDiffusion, u3)["samples"], _run(ProjectedDiffusion, u3, polar_noise=0.5, polar_den_min=0.3)["samples"])


@pytest.mark.long  # two trainings and a temperature search (about 2 s)
def test_polar_noise_auto_picks_the_temperature_closest_to_the_training_points():
    """``polar_noise="auto"`` samples at the temperature of ``POLAR_TEMPERATURES`` whose trial points
    have the smallest MMD to the training points: the same points as that fixed temperature gives."""
    from methods.manifold_diffusion.projected import POLAR_TEMPERATURES

    so = _tiny("so3-smoke", iters=30, n=100)
    m = ProjectedDiffusion(so, seed=0, budget=60.0, hidden=32, layers=2, projection="polar", polar_noise="auto")
    m.fit(30, 64, 60.0)
    auto = m.sample(100, 10)
    assert m.polar_temperature in POLAR_TEMPERATURES
    check_points("so", 3, 100, auto)
    fixed = ProjectedDiffusion(so, seed=0, budget=60.0, hidden=32, layers=2, projection="polar", polar_noise=m.polar_temperature)
    fixed.fit(30, 64, 60.0)
    assert np.array_equal(auto, fixed.sample(100, 10))
    with pytest.raises(ValueError, match="polar_noise"):
        _run(ProjectedDiffusion, so, projection="polar", polar_noise="hot")
    with pytest.raises(ValueError, match="polar_den_min"):
        _run(ProjectedDiffusion, so, projection="polar", polar_den_min=0.0)
