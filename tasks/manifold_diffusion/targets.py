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
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.linalg import expm

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
    w = 1.0 + np.log(u + (1.0 - u) * np.exp(-2.0 * kappa)) / kappa
    phi = rng.uniform(0, TWO_PI, size=n)
    r = np.sqrt(np.clip(1.0 - w**2, 0.0, None))
    local = np.stack([r * np.cos(phi), r * np.sin(phi), w], axis=1)
    out = np.empty((n, 3))
    for j in range(mix.k):
        mu = mix.centres[j]
        # an orthonormal frame whose third axis is mu
        a = np.array([1.0, 0.0, 0.0]) if abs(mu[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
        e1 = a - mu * (a @ mu)
        e1 /= np.linalg.norm(e1)
        frame = np.stack([e1, np.cross(mu, e1), mu])
        sel = lab == j
        out[sel] = local[sel] @ frame
    out /= np.linalg.norm(out, axis=1, keepdims=True)
    return out, lab


def skew_from_vector(v: np.ndarray, n: int) -> np.ndarray:
    """Skew-symmetric ``(..., n, n)`` matrices from ``n(n-1)/2`` coordinates (upper triangle)."""
    iu = np.triu_indices(n, 1)
    out = np.zeros((*v.shape[:-1], n, n))
    out[..., iu[0], iu[1]] = v
    return out - np.swapaxes(out, -1, -2)


def _haar_so(n: int, rng: np.random.Generator) -> np.ndarray:
    q, r = np.linalg.qr(rng.standard_normal((n, n)))
    q = q * np.sign(np.diag(r))
    if np.linalg.det(q) < 0:
        q[:, 0] = -q[:, 0]
    return q


def so_mixture_spec(n: int, k: int, var: float, seed: int) -> Mixture:
    """``k`` Haar-random centres in SO(n), redrawn until pairwise Frobenius distance >= 1.5.

    Components are ``M_j expm(skew(v))`` with ``v ~ N(0, var I)`` in the ``n(n-1)/2``
    upper-triangle coordinates, as in the official generator (there ``var = 0.2``).
    """
    rng = np.random.default_rng(seed)
    for _ in range(1000):
        c = np.stack([_haar_so(n, rng) for _ in range(k)])
        dist = np.linalg.norm(c[:, None] - c[None, :], axis=(-1, -2)) + np.eye(k) * 1e9
        if dist.min() >= 1.5:
            return Mixture(c, var)
    raise RuntimeError(f"could not place {k} separated centres in SO({n})")


def sample_so(mix: Mixture, n_points: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """``n_points`` rotations of the mixture (exactly orthogonal up to rounding, det +1)."""
    n = mix.centres.shape[1]
    lab = rng.integers(0, mix.k, size=n_points)
    v = math.sqrt(mix.spread) * rng.standard_normal((n_points, n * (n - 1) // 2))
    s = skew_from_vector(v, n)
    out = np.empty((n_points, n, n))
    for i in range(n_points):
        out[i] = mix.centres[lab[i]] @ expm(s[i])
    # re-orthonormalise away rounding so the check tolerance is far
    u, _, vt = np.linalg.svd(out)
    return u @ vt, lab


def _laplacian_spectral(n: int) -> np.ndarray:
    """Spectral (DFT) Laplacian on the ``n``-point periodic grid of [0, 1)."""
    k = np.fft.fftfreq(n, d=1.0 / n)  # 0, 1, ..., floor(n/2) (or -n/2), ..., -1
    f = np.fft.fft(np.eye(n), axis=0)
    lap = np.fft.ifft((-4.0 * math.pi**2 * k**2)[:, None] * f, axis=0)
    lap = 0.5 * (lap + lap.conj().T)
    return lap


def sample_quantum_oscillator(n: int, n_points: int, rng: np.random.Generator, t: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """Evolution operators ``expm(i t H)`` of random 1-D quantum oscillators, ``complex128 (N, n, n)``.

    ``H = Delta_h - V_h``: ``Delta_h`` the spectral Laplacian on ``x_j = j / n``, ``V_h =
    diag(omega^2 (x_j - x_0)^2 / 2)`` with ``omega ~ U(2, 3)``, ``x_0 ~ N(0, 1)``, as TDM's
    ``Electron1DU`` and the paper's ``generate_data.py`` (research note 3.1).
    """
    lap = _laplacian_spectral(n)
    xs = np.arange(n) / n
    out = np.empty((n_points, n, n), dtype=np.complex128)
    omega = rng.uniform(2.0, 3.0, size=n_points)
    x0 = rng.standard_normal(n_points)
    for i in range(n_points):
        h = lap - np.diag(0.5 * omega[i] ** 2 * (xs - x0[i]) ** 2)
        lam, w = np.linalg.eigh(h)
        out[i] = (w * np.exp(1j * t * lam)) @ w.conj().T
    return out, np.full(n_points, -1)
