"""Target distributions that can be sampled exactly (numpy, seeded).

- :func:`torus_mixture`: wrapped Gaussian mixture on ``T^d`` with well-separated modes;
- :func:`torus_official`: the official code's single wrapped ``N(0, 0.2 I)`` (kept to show
  why its "log-likelihood" rewards collapse; not a mixture);
- :func:`vmf_mixture`: von Mises-Fisher mixture on ``S^2`` (Wood's exact sampler);
- :func:`so_mixture`: ``M_k expm(skew(v))`` with distinct Haar-random centres ``M_k``
  (the official generator's two centres are identical, see the research note);
- :func:`quantum_oscillator`: ``U = expm(i t H)``, ``H = Delta_h - V_h`` (the paper's and
  TDM's ``Electron1DU`` data).

Each sampler takes a ``numpy.random.Generator`` and returns ``(points, labels)``,
``labels`` being the mixture component of each point (``-1`` where there are none).

The linear algebra and the transcendental functions come from
:mod:`tasks.manifold_diffusion.reproducible`, not from BLAS/LAPACK or numpy's
SIMD paths, so that a seed gives the same bytes on every CPU (instance digests
are part of every job key; see that module).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from tasks.manifold_diffusion import reproducible as R

__all__ = [
    "Mixture",
    "torus_mixture_spec",
    "sphere_mixture_spec",
    "so_mixture_spec",
    "sample_torus",
    "sample_sphere",
    "sample_so",
    "sample_quantum_oscillator",
    "skew_from_vector",
]

TWO_PI = 2.0 * math.pi


@dataclass(frozen=True)
class Mixture:
    """Equal-weight mixture: ``centres`` in the ambient representation, one spread parameter."""

    centres: np.ndarray
    spread: float

    @property
    def k(self) -> int:
        return int(self.centres.shape[0])


def torus_mixture_spec(d: int, k: int, sigma: float, seed: int) -> Mixture:
    """Centres of a ``k``-mode wrapped Gaussian mixture on ``T^d`` (per-coordinate std ``sigma``).

    d = 2: the ``k <= 4`` corners of the grid ``{pi/2, 3pi/2}^2`` (geodesic separation pi,
    about 5 sigma for sigma = 0.3). d > 2: uniform random centres, redrawn until every pair is at
    least ``8 sigma`` apart in geodesic distance (easy in high dimension).
    """
    if d == 2 and k <= 4:
        grid = np.array([[0.5, 0.5], [1.5, 1.5], [0.5, 1.5], [1.5, 0.5]]) * math.pi
        return Mixture(grid[:k].copy(), sigma)
    rng = np.random.default_rng(seed)
    for _ in range(1000):
        c = rng.uniform(0, TWO_PI, size=(k, d))
        diff = np.abs(c[:, None, :] - c[None, :, :])
        diff = np.minimum(diff, TWO_PI - diff)
        dist = np.sqrt((diff**2).sum(-1)) + np.eye(k) * 1e9
        if dist.min() >= 8 * sigma:
            return Mixture(c, sigma)
    raise RuntimeError(f"could not place {k} separated modes on T^{d}")


def sample_torus(mix: Mixture, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """``n`` points of the wrapped Gaussian mixture, angles in ``[0, 2 pi)``."""
    lab = rng.integers(0, mix.k, size=n)
    x = mix.centres[lab] + mix.spread * rng.standard_normal((n, mix.centres.shape[1]))
    return np.mod(x, TWO_PI), lab


def sphere_mixture_spec(k: int, kappa: float) -> Mixture:
    """``k <= 4`` vMF centres at the vertices of a regular tetrahedron (pairwise angle 109.5 deg)."""
    v = np.array([[1, 1, 1], [1, -1, -1], [-1, 1, -1], [-1, -1, 1]], dtype=float) / math.sqrt(3)
    return Mixture(v[:k].copy(), kappa)


def sample_sphere(mix: Mixture, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """``n`` points of the vMF mixture on ``S^2`` (Wood 1994, exact for p = 3)."""
    kappa = mix.spread
    lab = rng.integers(0, mix.k, size=n)
    u = rng.uniform(size=n)
    w = 1.0 + R.vmap_math(math.log, u + (1.0 - u) * math.exp(-2.0 * kappa)) / kappa
    phi = rng.uniform(0, TWO_PI, size=n)
    r = np.sqrt(np.clip(1.0 - w**2, 0.0, None))
    local = np.stack([r * R.vmap_math(math.cos, phi), r * R.vmap_math(math.sin, phi), w], axis=1)
    out = np.empty((n, 3))
    for j in range(mix.k):
        mu = mix.centres[j]
        # an orthonormal frame whose third axis is mu
        a = np.array([1.0, 0.0, 0.0]) if abs(mu[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
        e1 = a - mu * R.dot(a, mu)
        e1 = e1 / R.row_norms(e1)
        frame = np.stack([e1, np.cross(mu, e1), mu])
        sel = lab == j
        out[sel] = R.matmul(local[sel], frame)
    out = out / R.row_norms(out)[:, None]
    return out, lab


def skew_from_vector(v: np.ndarray, n: int) -> np.ndarray:
    """Skew-symmetric ``(..., n, n)`` matrices from ``n(n-1)/2`` coordinates (upper triangle)."""
    iu = np.triu_indices(n, 1)
    out = np.zeros((*v.shape[:-1], n, n))
    out[..., iu[0], iu[1]] = v
    return out - np.swapaxes(out, -1, -2)


def _haar_so(n: int, rng: np.random.Generator) -> np.ndarray:
    return R.haar_so(rng.standard_normal((n, n)))


def so_mixture_spec(n: int, k: int, var: float, seed: int) -> Mixture:
    """``k`` Haar-random centres in SO(n), redrawn until pairwise Frobenius distance >= 1.5.

    Components are ``M_j expm(skew(v))`` with ``v ~ N(0, var I)`` in the ``n(n-1)/2``
    upper-triangle coordinates, as in the official generator (there ``var = 0.2``).
    """
    rng = np.random.default_rng(seed)
    for _ in range(1000):
        c = np.stack([_haar_so(n, rng) for _ in range(k)])
        flat = c.reshape(k, -1)
        dist = np.sqrt(R.sq_dists(flat, flat)) + np.eye(k) * 1e9
        if dist.min() >= 1.5:
            return Mixture(c, var)
    raise RuntimeError(f"could not place {k} separated centres in SO({n})")


def sample_so(mix: Mixture, n_points: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """``n_points`` rotations of the mixture (exactly orthogonal up to rounding, det +1)."""
    n = mix.centres.shape[1]
    lab = rng.integers(0, mix.k, size=n_points)
    v = math.sqrt(mix.spread) * rng.standard_normal((n_points, n * (n - 1) // 2))
    s = skew_from_vector(v, n)
    out = R.matmul(mix.centres[lab], R.expm(s))
    # re-orthonormalise away rounding so the check tolerance is far
    return R.orthonormalise(out), lab


def _laplacian_spectral(n: int) -> np.ndarray:
    """Spectral (DFT) Laplacian on the ``n``-point periodic grid of [0, 1), real symmetric.

    ``F^-1 diag(-4 pi^2 k^2) F`` with ``k`` the DFT frequencies 0, 1, ..., -1 (``-n/2`` for
    even ``n``), i.e. the circulant ``L[j, l] = c((j - l) mod n)`` with ``c(m) = (1/n)
    sum_k -4 pi^2 k^2 cos(2 pi k m / n)``; summed in a fixed order (the Hermitian part of the
    FFT construction, which the sine terms cancel out of).
    """
    ks = [k if k <= n // 2 and not (n % 2 == 0 and k == n // 2) else k - n for k in range(n)]
    c = [sum(-4.0 * math.pi**2 * k * k * math.cos(2.0 * math.pi * k * m / n) for k in ks) / n for m in range(n)]
    idx = (np.arange(n)[:, None] - np.arange(n)[None, :]) % n
    return np.asarray(c, dtype=np.float64)[idx]


def sample_quantum_oscillator(n: int, n_points: int, rng: np.random.Generator, t: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """Evolution operators ``expm(i t H)`` of random 1-D quantum oscillators, ``complex128 (N, n, n)``.

    ``H = Delta_h - V_h``: ``Delta_h`` the spectral Laplacian on ``x_j = j / n``, ``V_h =
    diag(omega^2 (x_j - x_0)^2 / 2)`` with ``omega ~ U(2, 3)``, ``x_0 ~ N(0, 1)``, as TDM's
    ``Electron1DU`` and the paper's ``generate_data.py`` (research note 3.1).
    """
    lap = _laplacian_spectral(n)
    xs = np.arange(n) / n
    omega = rng.uniform(2.0, 3.0, size=n_points)
    x0 = rng.standard_normal(n_points)
    h = np.broadcast_to(lap, (n_points, n, n)).copy()
    diag = np.arange(n)
    h[:, diag, diag] -= 0.5 * omega[:, None] ** 2 * (xs[None, :] - x0[:, None]) ** 2
    re, im = R.unitarise(R.cexpm((np.zeros_like(h), t * h)))
    out = np.empty((n_points, n, n), dtype=np.complex128)
    out.real, out.imag = re, im
    return out, np.full(n_points, -1)
