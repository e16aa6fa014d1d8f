"""One-dimensional stationary kernels and their derivatives (shared by SKS and DAKS).

``kernel_matrix(x, y, ls, a, b, kind)`` is the matrix of ``∂^a_x ∂^b_y k(x_i, y_j)``.
For a stationary kernel k(x, y) = κ(r), r = x − y, that is ``(−1)^b κ^{(a+b)}(r)``.

- ``"se"``: κ(r) = exp(−r²/(2ℓ²)) (the official code's Matérn ν = ∞), any order,
  κ^{(n)}(r) = (−1/(√2 ℓ))^n H_n(r/(√2 ℓ)) κ(r) with H_n the physicists' Hermite polynomial.
- ``"matern52"``: κ = (1 + √5 s/ℓ + 5 s²/(3ℓ²)) exp(−√5 s/ℓ), s = |r|; orders a + b ≤ 2.
- ``"matern72"``: κ = (1 + √7 s/ℓ + 7 s²/(5ℓ²) + 7√7 s³/(15ℓ³)) exp(−√7 s/ℓ); orders a + b ≤ 2.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.polynomial.hermite import hermval

__all__ = ["kernel_matrix", "KERNELS"]

KERNELS = ("se", "matern52", "matern72")


def _se(r: np.ndarray, ls: float, n: int) -> np.ndarray:
    z = r / (math.sqrt(2.0) * ls)
    c = np.zeros(n + 1)
    c[n] = 1.0
    return (-1.0 / (math.sqrt(2.0) * ls)) ** n * hermval(z, c) * np.exp(-(z**2))


def _matern52(r: np.ndarray, ls: float, n: int) -> np.ndarray:
    a = math.sqrt(5.0) / ls
    s = np.abs(r)
    e = np.exp(-a * s)
    if n == 0:
        return (1 + a * s + a**2 * s**2 / 3) * e
    if n == 1:
        return -(a**2 / 3) * r * (1 + a * s) * e
    if n == 2:
        return -(a**2 / 3) * (1 + a * s - a**2 * s**2) * e
    raise ValueError(f"matern52 is only twice differentiable; derivative order {n} requested")


def _matern72(r: np.ndarray, ls: float, n: int) -> np.ndarray:
    a = math.sqrt(7.0) / ls
    s = np.abs(r)
    e = np.exp(-a * s)
    if n == 0:
        return (1 + a * s + 2 * a**2 * s**2 / 5 + a**3 * s**3 / 15) * e
    if n == 1:
        return -(a**2 / 15) * r * (3 + 3 * a * s + a**2 * s**2) * e
    if n == 2:
        return -(a**2 / 15) * (3 + 3 * a * s - a**3 * s**3) * e
    raise ValueError(f"matern72 derivatives of order {n} > 2 are not implemented")


def kernel_matrix(x: np.ndarray, y: np.ndarray, ls: float, a: int = 0, b: int = 0, kind: str = "se") -> np.ndarray:
    """``∂^a_x ∂^b_y k(x_i, y_j)``, shape ``(len(x), len(y))``.

    Raises
    ------
    ValueError
        Unknown kernel, non-positive lengthscale, or an order the kernel lacks.
    """
    if not (ls > 0 and math.isfinite(ls)):
        raise ValueError(f"kernel lengthscale must be a finite number > 0, got {ls!r}")
    r = np.subtract.outer(np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64))
    n = a + b
    if kind == "se":
        val = _se(r, ls, n)
    elif kind == "matern52":
        val = _matern52(r, ls, n)
    elif kind == "matern72":
        val = _matern72(r, ls, n)
    else:
        raise ValueError(f"unknown kernel {kind!r}; kernels are {list(KERNELS)}")
    return -val if b % 2 else val
