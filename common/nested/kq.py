"""Kernel quadrature (KQ) weights with closed-form kernel mean embeddings.

Two (kernel, measure) pairs, as in the official code (``utils/kernel_means.py``
of github.com/hudsonchen/nest_kq, read here; not copied):

- ``uniform`` base, U[0, 1]^d: product Matérn-3/2 kernel
  ``k(x, y) = prod_j (1 + sqrt3 |x_j - y_j| / l) exp(-sqrt3 |x_j - y_j| / l)``
  (official ``KQ_Matern_32_Uniform``); its embedding per coordinate is
  ``F(x) + F(1 - x)`` with ``F(t) = 2/a - exp(-a t) (2/a + t)``, ``a = sqrt3 / l``;
- ``normal`` base, N(0, I_d): Gaussian (RBF) kernel ``exp(-|x - y|^2 / (2 l^2))``
  (official ``KQ_RBF_Gaussian``); its embedding is
  ``prod_j l / sqrt(l^2 + 1) exp(-x_j^2 / (2 (l^2 + 1)))``.

The estimate of ``E[h]`` from ``h(x_1..n)`` is ``z^T (K + lam I)^{-1} y``
(regularised KQ, as the official code: ``lam`` added to the Gram matrix,
not ``n lam``). Values are standardised first (official ``finance.py``):
``y = (h - mean) / sd``, the estimate is ``mean + sd * z^T (K + lam I)^{-1} y``.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.linalg import cho_factor, cho_solve

__all__ = ["gram", "embedding", "kq_estimate", "kq_weights"]

SQ3 = math.sqrt(3.0)


def gram(x: np.ndarray, y: np.ndarray, base: str, ls: float) -> np.ndarray:
    """Kernel matrix between rows of ``x`` (n, d) and ``y`` (m, d)."""
    if base == "uniform":
        out = np.ones((x.shape[0], y.shape[0]))
        for j in range(x.shape[1]):
            r = np.abs(x[:, j, None] - y[None, :, j]) * (SQ3 / ls)
            out *= (1.0 + r) * np.exp(-r)
        return out
    if base == "normal":
        d2 = np.sum((x[:, None, :] - y[None, :, :]) ** 2, axis=-1)
        return np.exp(-d2 / (2.0 * ls * ls))
    raise ValueError(f"unknown base {base!r}")


def embedding(x: np.ndarray, base: str, ls: float) -> np.ndarray:
    """``z_i = E_{Y ~ base}[k(x_i, Y)]`` in closed form."""
    if base == "uniform":
        a = SQ3 / ls
        out = np.ones(x.shape[0])
        for j in range(x.shape[1]):
            t0, t1 = x[:, j], 1.0 - x[:, j]
            out *= (2 / a - np.exp(-a * t0) * (2 / a + t0)) + (
                2 / a - np.exp(-a * t1) * (2 / a + t1)
            )
        return out
    if base == "normal":
        s2 = ls * ls + 1.0
        return np.prod(ls / math.sqrt(s2) * np.exp(-(x**2) / (2.0 * s2)), axis=1)
    raise ValueError(f"unknown base {base!r}")


def kq_weights(x: np.ndarray, base: str, ls: float, lam: float) -> np.ndarray:
    """``w = (K + lam I)^{-1} z``; the KQ estimate of ``E[h]`` is ``w @ h(x)``."""
    K = gram(x, x, base, ls)
    z = embedding(x, base, ls)
    jitter = lam
    for _ in range(6):
        try:
            c = cho_factor(K + jitter * np.eye(K.shape[0]), lower=True)
            return cho_solve(c, z)
        except np.linalg.LinAlgError:
            jitter = max(jitter * 10.0, 1e-12)
    return np.linalg.lstsq(K + jitter * np.eye(K.shape[0]), z, rcond=None)[0]


def kq_estimate(x: np.ndarray, h: np.ndarray, base: str, ls: float, lam: float) -> float:
    """Regularised KQ estimate of ``E[h(X)]``, ``X ~ base``, with standardised values."""
    h = np.asarray(h, float)
    if h.size == 1:
        return float(h[0])
    mu, sd = float(h.mean()), float(h.std())
    if not sd > 0:
        return mu
    w = kq_weights(np.asarray(x, float), base, ls, lam)
    return mu + sd * float(w @ ((h - mu) / sd))
