"""The ``manifold-diffusion`` task: targets, membership checks, metrics, the two-round protocol."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tasks.manifold_diffusion as md
from bench.registry import UnknownNameError
from bench.task import InvalidSolution
from tasks.manifold_diffusion import metrics as M
from tasks.manifold_diffusion import targets as T
from tasks.manifold_diffusion.manifolds import check_points, features

TASK = md.ManifoldDiffusion()


def _solution(inst, pts):
    return {"samples": pts, "train_s": 1.0, "sample_s": 0.5}


def test_tiers_and_budgets():
    smoke = [s.id for s in TASK.instances("smoke")]
    assert smoke == ["torus2-smoke", "sphere2-smoke", "so3-smoke", "u3-smoke"]
    std = {s.id for s in TASK.instances("standard")}
    assert std == {"torus2", "torus10", "sphere2", "so3", "so6", "u4", "u9"}
    for s in TASK.instances("standard"):
        assert s.params["train_iters"] == 5000 and s.params["train_seconds"] == 60.0
        assert TASK.budget("standard", s) == 100.0 == TASK.meta.budgets["standard"]
    with pytest.raises(UnknownNameError, match="torus2"):
        TASK.load("torus3")


def test_instances_are_deterministic_and_hold_out_data():
    a = md._load.__wrapped__("so3-smoke")
    b = md._load.__wrapped__("so3-smoke")
    assert a.digest == b.digest
    assert "held_out" not in a.data and "held_out" in a.private
    assert not np.allclose(a.data["train"][:10], a.private["held_out"][:10])


def test_targets_lie_on_their_manifolds():
    for iid in ("torus2-smoke", "sphere2-smoke", "so3-smoke", "u3-smoke"):
        inst = TASK.load(iid)
        d = inst.data
        _, viol = check_points(d["manifold"], d["n"], len(d["train"]), np.array(d["train"]))
        assert viol < 1e-10


def test_so_mixture_components_are_distinct():
    """The official generator's two centres coincide (research note 3.1); ours must not."""
    mix = T.so_mixture_spec(3, 2, 0.2, seed=2003)
    assert np.linalg.norm(mix.centres[0] - mix.centres[1]) >= 1.5
    x, lab = T.sample_so(mix, 400, np.random.default_rng(0))
    assert set(lab.tolist()) == {0, 1}
    assert np.allclose(np.linalg.det(x), 1.0)
    assert np.abs(np.swapaxes(x, 1, 2) @ x - np.eye(3)).max() < 1e-14


def test_quantum_oscillator_is_unitary_and_varied():
    x, _ = T.sample_quantum_oscillator(5, 50, np.random.default_rng(0))
    assert x.dtype == np.complex128
    eye = np.eye(5)
    assert np.abs(np.conj(np.swapaxes(x, 1, 2)) @ x - eye).max() < 1e-13
    assert np.abs(x[0] - x[1]).max() > 1e-2


def test_the_blas_free_generators_agree_with_lapack():
    """reproducible.py's expm, Haar QR and exp(iH) against scipy/LAPACK on the same draws."""
    import scipy.linalg as sla

    from tasks.manifold_diffusion import reproducible as R

    rng = np.random.default_rng(3)
    a = T.skew_from_vector(rng.standard_normal((20, 15)), 6) * 3.0
    np.testing.assert_allclose(R.expm(a), np.stack([sla.expm(m) for m in a]), atol=1e-13)
    g = rng.standard_normal((7, 7))
    q, r = np.linalg.qr(g)
    q = q * np.sign(np.diag(r))
    if np.linalg.det(q) < 0:
        q[:, 0] = -q[:, 0]
    np.testing.assert_allclose(R.haar_so(g), q, atol=1e-13)
    h = T._laplacian_spectral(9) - np.diag(rng.uniform(0, 5, 9))
    lam, w = np.linalg.eigh(h)
    want = (w * np.exp(1j * lam)) @ w.conj().T
    got = R.unitarise(R.cexpm((np.zeros((1, 9, 9)), h[None])))
    np.testing.assert_allclose(got[0][0] + 1j * got[1][0], want, atol=1e-11)
    k = np.fft.fftfreq(9, d=1.0 / 9)
    f = np.fft.fft(np.eye(9), axis=0)
    np.testing.assert_allclose(T._laplacian_spectral(9), np.fft.ifft((-4 * math.pi**2 * k**2)[:, None] * f, axis=0).real, atol=1e-9)


@pytest.mark.slow
@pytest.mark.long  # a few seconds: CI step 2 (make test keeps each family under 20 s)
def test_instance_digests_do_not_depend_on_the_blas_kernels():
    """The same seed, the same bytes, whichever kernels OpenBLAS picks for this CPU.

    With numpy/scipy's BLAS and LAPACK the SO(n), U(n) and S^2 instances came out
    last-bit different on an Intel and an AMD machine (and under OPENBLAS_CORETYPE).
    """
    import json
    import os
    import subprocess
    import sys

    ids = ["sphere2-smoke", "so3-smoke", "u3-smoke", "so6", "u4"]
    script = f"import json; from tasks.manifold_diffusion import _load; print(json.dumps({{i: _load(i).digest for i in {ids!r}}}))"
    here = {i: md._load(i).digest for i in ids}
    for core in ("Prescott", "Sandybridge"):
        env = {**os.environ, "OPENBLAS_CORETYPE": core}
        out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True, timeout=300)
        assert json.loads(out.stdout.strip().splitlines()[-1]) == here, core


def test_vmf_sampler_concentration():
    mix = T.sphere_mixture_spec(1, 20.0)
    x, _ = T.sample_sphere(mix, 20000, np.random.default_rng(0))
    # E[mu . x] = coth(kappa) - 1 / kappa for vMF on S^2
    assert abs((x @ mix.centres[0]).mean() - (1 / math.tanh(20.0) - 1 / 20.0)) < 2e-3


@pytest.mark.parametrize(
    ("iid", "mutate", "message"),
    [
        ("torus2-smoke", lambda x: x + 2 * math.pi, "reduced mod 2 pi"),
        ("sphere2-smoke", lambda x: x * 1.01, "norm"),
        ("so3-smoke", lambda x: x * np.array([1.0, 1.0, -1.0])[None, :, None], "det = -1"),
        ("so3-smoke", lambda x: x + 1e-3, "not orthogonal"),
        ("u3-smoke", lambda x: x * 1.001, "not unitary"),
        ("u3-smoke", lambda x: x.astype(np.complex64), "complex128"),
        ("torus2-smoke", lambda x: x[:-1], "shape"),
        ("torus2-smoke", lambda x: np.where(np.arange(x.size).reshape(x.shape) == 5, np.nan, x), "NaN"),
    ],
)
def test_off_manifold_points_are_rejected_with_the_worst_violation(iid, mutate, message):
    inst = TASK.load(iid)
    good = np.array(inst.private["held_out"])
    with pytest.raises(InvalidSolution, match=message):
        TASK.evaluate(inst, _solution(inst, mutate(good)))


def test_a_fresh_target_sample_scores_well_and_a_collapsed_one_badly():
    inst = TASK.load("torus2-smoke")
    mix = md._mixture(md.spec("torus2-smoke"))
    fresh, _ = T.sample_torus(mix, 300, np.random.default_rng(123))
    good = TASK.evaluate(inst, _solution(inst, fresh))
    collapsed = np.mod(mix.centres[0] + 0.01 * np.random.default_rng(1).standard_normal((300, 2)), 2 * np.pi)
    bad = TASK.evaluate(inst, _solution(inst, collapsed))
    assert good["c2st"] < 0.62 < 0.95 < bad["c2st"]
    assert abs(good["mmd2"]) < 0.01 < bad["mmd2"]
    assert good["mode_coverage"] == 1.0 and bad["mode_coverage"] == 0.25
    assert good["nll"] < bad["nll"]
    uniform = np.random.default_rng(2).uniform(0, 2 * np.pi, size=(300, 2))
    cf = features("torus", mix.centres)
    assert M.mode_coverage(features("torus", uniform), cf, inst.private["mode_radius"]) == 0.0
    assert good["train_s"] == 1.0 and good["sample_s"] == 0.5


@pytest.mark.long  # a few seconds: CI step 2 (make test keeps each family under 20 s)
def test_official_torus_loglik_rewards_collapse_and_ours_does_not():
    """The research note's sanity values: perfect -0.615, collapse to the mean -0.114."""
    rng = np.random.default_rng(0)
    perfect = np.mod(np.sqrt(0.2) * rng.standard_normal((200000, 2)), 2 * np.pi)
    collapse = np.zeros((1000, 2))
    assert M.official_torus_loglik(perfect) == pytest.approx(-0.615, abs=0.005)
    assert M.official_torus_loglik(collapse) == pytest.approx(-0.114, abs=0.005)
    held = np.mod(np.sqrt(0.2) * rng.standard_normal((500, 2)), 2 * np.pi)
    fp, fc, fh = features("torus", perfect[:500]), features("torus", collapse[:500] + 1e-3 * rng.standard_normal((500, 2)) % (2 * np.pi)), features("torus", held)
    h = M.median_bandwidth(fh)
    assert M.mmd2(fh, fp, h) < M.mmd2(fh, fc, h)
    assert M.c2st(fh, fp) < 0.6 < 0.9 < M.c2st(fh, fc)


def test_kde_nll_so3_normaliser_integrates_to_one():
    rng = np.random.default_rng(0)
    from scipy.stats import special_ortho_group

    haar = special_ortho_group.rvs(3, size=20000, random_state=1).reshape(20000, 9)
    centre = np.eye(3).reshape(1, 9)
    for kappa in (1.0, 10.0):
        vals = np.exp(M._kernel_logs("so", haar, centre, kappa))
        assert vals.mean() == pytest.approx(1.0, rel=0.05)
    assert rng is not None


@pytest.mark.long  # two full evaluations (C2ST, MMD, NLL; about 3 s); the long conformance sweep scores every smoke run twice
def test_evaluation_is_deterministic():
    inst = TASK.load("sphere2-smoke")
    pts = np.array(inst.data["train"][:300])
    assert TASK.evaluate(inst, _solution(inst, pts)) == TASK.evaluate(inst, _solution(inst, pts))


def test_training_past_the_equal_budget_is_invalid():
    inst = TASK.load("sphere2-smoke")  # train_seconds 3
    pts = np.array(inst.data["train"][:300])
    assert "c2st" in TASK.evaluate(inst, {"samples": pts, "train_s": 4.5, "sample_s": 0.5})  # within the slack
    with pytest.raises(InvalidSolution, match=r"train_s: the training round took 6.0 s, over .* of 3 s"):
        TASK.evaluate(inst, {"samples": pts, "train_s": 6.0, "sample_s": 0.5})


def test_solution_must_come_from_the_protocol():
    inst = TASK.load("sphere2-smoke")
    with pytest.raises(InvalidSolution, match="two-round"):
        TASK.evaluate(inst, np.array(inst.data["train"][:300]))


def test_sample_plots_come_from_a_published_bundle(tmp_path):
    """The README's figures are made from the published bundle, not from a local run store."""
    from pathlib import Path

    from tasks.manifold_diffusion.plot_samples import main

    bundle = sorted((Path(__file__).resolve().parent.parent / "results" / "manifold-diffusion").glob("*-2247a37056"))
    assert bundle, "the standard-tier bundle the README plots is missing"
    out = tmp_path / "so3.png"
    assert main(["--bundle", str(bundle[0]), "--instance", "so3", "--out", str(out)]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert main(["--bundle", str(bundle[0]), "--instance", "so3-smoke", "--out", str(out)]) == 2
