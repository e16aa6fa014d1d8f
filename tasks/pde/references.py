"""Reference solutions on the evaluation grids, and their error floors.

- Elliptic and Allen–Cahn: closed form (floor 0).
- Burgers: the Cole–Hopf integral. The official code uses 80-point
  Gauss–Hermite quadrature; we integrate with composite Gauss–Legendre in log
  space on a window of ±40 standard deviations of the heat kernel, and record
  as the floor the largest difference from the same rule on twice as many
  panels. For ν = 0.001 the 80-point Gauss–Hermite rule is off by far more
  than that (see :func:`burgers_gauss_hermite`; the README gives the figure).
- Eikonal: the Hopf–Cole transform u = −ε log v, v − ε²Δv = 0, v = 1 on ∂Ω,
  solved exactly (by a type-I discrete sine transform) for the 5-point
  Laplacian on grids of h = 1/500, 1/1000, 1/2000, then Richardson-extrapolated.
  The floor is the RMSE between the extrapolations from (500, 1000) and (1000, 2000).

Computed references are cached as ``.npz`` under :func:`bench.cache.cache_dir`
``/ "pde"`` (``$BENCH_CACHE_DIR/pde``, default ``~/.cache/bench/pde``); they are deterministic, so deleting the cache only
costs the time to recompute them (seconds).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from scipy.fft import dstn, idstn

from bench.cache import cache_dir as bench_cache_dir
from bench.cache import cached_npz, source_digest
from tasks.pde.problems import AllenCahn, Burgers, Eikonal, Elliptic, PDEProblem

__all__ = [
    "reference",
    "elliptic_exact",
    "burgers_cole_hopf",
    "burgers_gauss_hermite",
    "eikonal_hopf_cole",
    "cache_dir",
    "REFERENCE_VERSION",
]

#: Bump when any reference computation changes (part of every instance digest).
REFERENCE_VERSION = "1"


def cache_dir() -> Path:
    """Where computed references are cached: :func:`bench.cache.cache_dir` ``/ "pde"``."""
    return bench_cache_dir("pde")


def _mesh(axes: list[np.ndarray]) -> np.ndarray:
    grids = np.meshgrid(*axes, indexing="ij")
    return np.stack([g.ravel() for g in grids], axis=1)


def elliptic_exact(X: np.ndarray) -> np.ndarray:
    """u* = sin(πx) sin(πy) + 2 sin(4πx) sin(4πy)."""
    x, y = X[:, 0], X[:, 1]
    return np.sin(np.pi * x) * np.sin(np.pi * y) + 2 * np.sin(4 * np.pi * x) * np.sin(4 * np.pi * y)


def burgers_gauss_hermite(x: np.ndarray, t: np.ndarray, nu: float, n: int = 80) -> np.ndarray:
    """The official code's reference: Cole–Hopf with ``n``-point Gauss–Hermite quadrature.

    ``x`` and ``t`` are flat arrays of equal length. Kept to measure how far it
    is from the converged reference (it is not used for scoring).
    """
    z, w = np.polynomial.hermite.hermgauss(n)
    out = np.empty_like(x, dtype=np.float64)
    for i, (xi, ti) in enumerate(zip(x, t, strict=True)):
        if ti == 0:
            out[i] = -np.sin(np.pi * xi)
            continue
        y = xi - np.sqrt(4 * nu * ti) * z
        e = -np.cos(np.pi * y) / (2 * np.pi * nu)
        e = np.exp(e - e.max())
        out[i] = -np.sum(w * np.sin(np.pi * y) * e) / np.sum(w * e)
    return out


def burgers_cole_hopf(x: np.ndarray, t: np.ndarray, nu: float, panels: int = 600, order: int = 10) -> np.ndarray:
    """u(x, t) for Burgers with u(x, 0) = −sin(πx) by the Cole–Hopf integral.

    u = −∫ sin(π(x−η)) φ(x−η) G(η) dη / ∫ φ(x−η) G(η) dη with φ(y) = exp(−cos(πy)/(2πν))
    and G the heat kernel of variance 2νt, integrated over η ∈ ±40·sqrt(2νt) (the Gaussian must beat φ's dynamic range, exp(1/(πν))) by
    composite Gauss–Legendre (``panels`` panels of ``order`` nodes), in log space.
    """
    g, gw = np.polynomial.legendre.leggauss(order)
    out = np.empty_like(x, dtype=np.float64)
    s = np.linspace(-1.0, 1.0, panels + 1)
    mid, half = (s[1:] + s[:-1]) / 2, (s[1:] - s[:-1]) / 2
    nodes = (mid[:, None] + half[:, None] * g[None, :]).ravel()
    weights = (half[:, None] * gw[None, :]).ravel()
    for i, (xi, ti) in enumerate(zip(x, t, strict=True)):
        if ti == 0:
            out[i] = -np.sin(np.pi * xi)
            continue
        sd = np.sqrt(2 * nu * ti)
        eta = 40 * sd * nodes
        y = xi - eta
        e = -np.cos(np.pi * y) / (2 * np.pi * nu) - eta**2 / (4 * nu * ti)
        e = np.exp(e - e.max()) * weights
        out[i] = -np.sum(np.sin(np.pi * y) * e) / np.sum(e)
    return out


def _eikonal_fd(eps: float, n_cells: int) -> np.ndarray:
    """u = −ε log v on the (n_cells+1)² grid of [0,1]² (boundary included), exact 5-point solve."""
    h = 1.0 / n_cells
    m = n_cells - 1
    k = np.arange(1, m + 1)
    lam = (4 / h**2) * np.sin(k * np.pi / (2 * n_cells)) ** 2  # eigenvalues of −Δ_h (1-D)
    # w = v − 1 solves (I − ε²Δ_h) w = −1 with w = 0 on the boundary.
    rhs = -np.ones((m, m))
    wh = dstn(rhs, type=1) / (1 + eps**2 * (lam[:, None] + lam[None, :]))
    w = idstn(wh, type=1)
    v = np.ones((n_cells + 1, n_cells + 1))
    v[1:-1, 1:-1] += w
    return -eps * np.log(v)


def eikonal_hopf_cole(eps: float, n_eval: int = 101) -> tuple[np.ndarray, float]:
    """Reference on the ``n_eval``² grid (linspace(0, 1, n_eval)) and its error estimate (RMSE).

    ``n_eval - 1`` must divide 500.
    """
    cells = (500, 1000, 2000)
    if 500 % (n_eval - 1):
        raise ValueError(f"n_eval - 1 = {n_eval - 1} must divide 500")
    sub = [_eikonal_fd(eps, c)[:: c // (n_eval - 1), :: c // (n_eval - 1)] for c in cells]
    r1 = (4 * sub[1] - sub[0]) / 3
    r2 = (4 * sub[2] - sub[1]) / 3
    floor = float(np.sqrt(np.mean((r2 - r1) ** 2)))
    return r2, floor


def _cached(name: str, compute) -> tuple[np.ndarray, float]:
    def arrays() -> dict[str, np.ndarray]:
        u, floor = compute()
        return {"u": u, "floor": np.asarray(floor)}

    key = f"{name}-v{REFERENCE_VERSION}-{source_digest(__name__)}"
    z = cached_npz(cache_dir() / f"{key}.npz", arrays)
    return np.array(z["u"]), float(z["floor"])


def reference(problem: PDEProblem, axes: list[np.ndarray]) -> tuple[np.ndarray, float, str]:
    """``(u_ref on the grid, floor, source)`` for ``problem`` on the tensor grid ``axes``."""
    shape = tuple(a.size for a in axes)
    X = _mesh(axes)
    if isinstance(problem, Elliptic):
        return elliptic_exact(X).reshape(shape), 0.0, "exact solution"
    if isinstance(problem, AllenCahn):
        return problem.exact(X).reshape(shape), 0.0, "exact solution"
    if isinstance(problem, Burgers):
        tag = f"burgers-nu{problem.nu:g}-{shape[0]}x{shape[1]}"

        def compute() -> tuple[np.ndarray, float]:
            u1 = burgers_cole_hopf(X[:, 0], X[:, 1], problem.nu, panels=600)
            u2 = burgers_cole_hopf(X[:, 0], X[:, 1], problem.nu, panels=1200)
            return u2.reshape(shape), float(np.max(np.abs(u2 - u1)))

        u, floor = _cached(tag, compute)
        return u, floor, "Cole-Hopf integral, composite Gauss-Legendre (1200 panels x 10 nodes), floor = max change from 600 panels"
    if isinstance(problem, Eikonal):
        n = shape[0]
        tag = f"eikonal-eps{problem.eps:g}-{n}"
        u, floor = _cached(tag, lambda: eikonal_hopf_cole(problem.eps, n))
        return u, floor, "Hopf-Cole + exact 5-point solves (h = 1/1000, 1/2000), Richardson-extrapolated; floor = RMSE vs (1/500, 1/1000)"
    raise TypeError(f"no reference for {type(problem).__name__}")
