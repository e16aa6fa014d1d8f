"""The paper's SO(n)/U(n) projection: psi/phi round trip and the analytic eigenvector derivative."""

from __future__ import annotations

import pytest
import torch
from script_modules import load_script

from common.manifold_diffusion.models import canonical_rows
from methods.manifold_diffusion.matrix_geometry import MatrixCoords


def _random_points(mc: MatrixCoords, b: int, gen: torch.Generator) -> torch.Tensor:
    shape = (b, mc.n, mc.n)
    g = torch.randn(shape, generator=gen, dtype=torch.float64)
    if mc.complex:
        g = torch.complex(g, torch.randn(shape, generator=gen, dtype=torch.float64))
    q, _ = torch.linalg.qr(g)
    return q


@pytest.mark.parametrize(("n", "complex_"), [(3, False), (5, False), (3, True), (4, True)])
def test_phi_inverts_psi_up_to_row_phases(n, complex_):
    mc = MatrixCoords(n, complex_, dtype=torch.float64)
    gen = torch.Generator().manual_seed(0)
    x = _random_points(mc, 16, gen)
    lam, u = mc.phi(mc.psi(x))
    assert torch.allclose(lam, mc.lam0.expand(16, n), atol=1e-10)
    xc, _ = canonical_rows(x)
    assert torch.allclose(u, xc, atol=1e-8)


@pytest.mark.parametrize(("n", "complex_"), [(4, False), (6, False), (3, True), (5, True)])
def test_analytic_eigenvector_derivative_matches_finite_differences(n, complex_):
    mc = MatrixCoords(n, complex_, dtype=torch.float64)
    gen = torch.Generator().manual_seed(1)
    z = torch.randn(8, mc.dim, generator=gen, dtype=torch.float64)
    v = torch.randn(8, mc.dim, generator=gen, dtype=torch.float64)
    lam, u = mc.phi(z)
    analytic = mc.dphi(lam, u, v)
    h = 1e-6
    fd = (mc.phi(z + h * v)[1] - mc.phi(z - h * v)[1]) / (2 * h)
    assert torch.allclose(analytic, fd, atol=1e-5), float((analytic - fd).abs().max())
    # and it is a tangent vector: U^H dU is skew-Hermitian
    k = u.conj().transpose(1, 2) @ analytic
    assert torch.allclose(k, -k.conj().transpose(1, 2), atol=1e-10)


def test_analytic_derivative_matches_jacrev_of_the_full_jacobian():
    """The official code builds the full Jacobian with jacrev; the analytic formula gives the same product."""
    mc = MatrixCoords(4, False, dtype=torch.float64)
    gen = torch.Generator().manual_seed(2)
    z = torch.randn(1, mc.dim, generator=gen, dtype=torch.float64)
    v = torch.randn(1, mc.dim, generator=gen, dtype=torch.float64)
    lam, u = mc.phi(z)
    jac = torch.func.jacrev(lambda zz: mc.phi(zz[None])[1][0])(z[0])  # (n, n, dim)
    assert torch.allclose(mc.dphi(lam, u, v)[0], jac @ v[0], atol=1e-8)


@pytest.mark.parametrize("complex_", [False, True])
def test_official_style_jacrev_path_gives_the_same_target(complex_):
    mc = MatrixCoords(3, complex_, dtype=torch.float64)
    gen = torch.Generator().manual_seed(3)
    z = torch.randn(4, mc.dim, generator=gen, dtype=torch.float64)
    v = torch.randn(4, mc.dim, generator=gen, dtype=torch.float64)
    lam, u = mc.phi(z)
    assert torch.allclose(mc.dphi_jacrev(z, v), mc.dphi(lam, u, v), atol=1e-8)


def _random_ref(mc: MatrixCoords, gen: torch.Generator) -> torch.Tensor:
    return _random_points(mc, 1, gen)[0]


@pytest.mark.parametrize(("n", "complex_"), [(4, False), (3, True), (5, True)])
def test_reference_gauge_round_trip_and_derivative(n, complex_):
    """With a reference gauge (``sign_ref="data"``) phi still inverts psi up to row phases,
    the rows satisfy the gauge, and the gauge-corrected analytic derivative matches finite differences."""
    gen = torch.Generator().manual_seed(4)
    ref = _random_ref(MatrixCoords(n, complex_, dtype=torch.float64), gen)
    mc = MatrixCoords(n, complex_, dtype=torch.float64, ref=ref)
    x = _random_points(mc, 16, gen)
    lam, u = mc.phi(mc.psi(x))
    xc, _ = canonical_rows(x, ref)
    assert torch.allclose(u, xc, atol=1e-8)
    c = (u * ref.conj()).sum(-1)
    assert bool((c.real >= 0).all())
    if complex_:
        assert torch.allclose(c.imag, torch.zeros_like(c.real), atol=1e-10)
    z = torch.randn(8, mc.dim, generator=gen, dtype=torch.float64)
    v = torch.randn(8, mc.dim, generator=gen, dtype=torch.float64)
    lam, u = mc.phi(z)
    h = 1e-6
    fd = (mc.phi(z + h * v)[1] - mc.phi(z - h * v)[1]) / (2 * h)
    analytic = mc.dphi(lam, u, v)
    assert torch.allclose(analytic, fd, atol=1e-5), float((analytic - fd).abs().max())


def test_data_reference_keeps_signs_consistent_inside_a_component():
    """On the task's SO(6) mixture the first-entry gauge splits a component's row signs nearly
    50/50 on some rows; the data reference keeps every row's minority share far lower."""
    import numpy as np

    from common.manifold_diffusion.models import data_reference
    from tasks.manifold_diffusion import targets as T

    mix = T.so_mixture_spec(6, 2, 0.2, seed=2006)
    x, lab = T.sample_so(mix, 3000, np.random.default_rng(0))
    xt = torch.from_numpy(x)
    ref = torch.from_numpy(data_reference(x))

    def worst_minority(r):
        _, th = canonical_rows(xt, r)
        neg = (th > 1).numpy()
        shares = [neg[lab == k].mean(0) for k in range(2)]
        return max(float(np.minimum(s, 1 - s).max()) for s in shares)

    assert worst_minority(None) > 0.4
    assert worst_minority(ref) < 0.2


def test_sign_diagnostic_oracle_undoes_row_sign_flips_and_keeps_det_one():
    import numpy as np

    from tasks.manifold_diffusion import targets as T

    diagnostic = load_script("scripts/manifold_diffusion/sign_diagnostic.py")
    minority_shares, oracle_signs = diagnostic.minority_shares, diagnostic.oracle_signs

    mix = T.so_mixture_spec(4, 2, 0.2, seed=2004)
    x, lab = T.sample_so(mix, 200, np.random.default_rng(3))
    flips = np.array([1.0, -1.0, -1.0, 1.0])  # det +1 pattern
    back = oracle_signs(flips[None, :, None] * x, mix.centres)
    assert np.allclose(np.linalg.det(back), 1.0)
    assert np.allclose(back, oracle_signs(x, mix.centres))
    shares = minority_shares(x, lab, None)
    assert shares.shape == (2, 4) and float(shares.max()) <= 0.5


@pytest.mark.long  # trains the classifier: ~5 s
def test_sign_classifier_draws_only_det_one_patterns_and_learns_the_components():
    """``scripts/manifold_diffusion/sign_classifier.py``: a classifier of row signs given the canonical rows, drawn among det = +1 patterns."""
    import numpy as np
    import torch

    from common.manifold_diffusion.models import canonical_rows, data_reference
    from tasks.manifold_diffusion import targets as T

    classifier = load_script("scripts/manifold_diffusion/sign_classifier.py")
    draw_signs, fit_sign_classifier = classifier.draw_signs, classifier.fit_sign_classifier

    mix = T.so_mixture_spec(4, 2, 0.2, seed=2004)
    x, _ = T.sample_so(mix, 1500, np.random.default_rng(3))
    ref = torch.from_numpy(data_reference(x))
    rows, th = canonical_rows(torch.from_numpy(x), ref)
    signs = np.where(np.cos(th.numpy()) >= 0, 1.0, -1.0)
    clf = fit_sign_classifier(rows.numpy()[:1000], signs[:1000], max_iter=200)
    y = draw_signs(clf, rows.numpy()[1000:], np.random.default_rng(0))
    assert np.allclose(np.linalg.det(y), 1.0)
    # the drawn signs are mostly the held-out samples' own (the components fix them up to ~15 %)
    assert (np.abs(y - x[1000:]).max((1, 2)) < 1e-9).mean() > 0.6
