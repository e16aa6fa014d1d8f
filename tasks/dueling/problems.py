"""Objectives, transfer functions and the comparison oracle of ``dueling-optimization``.

Every objective is normalised on the trusted side so that ``f* = 0`` and
``f(x0) - f* = 1`` at the public start ``x0 = 0``: suboptimality levels
``eps`` mean the same fraction of the initial gap on every instance.

- ``quad``: ``f(x) = 1/2 (x - x*)^T H (x - x*)`` with ``H = Q diag(lam) Q^T``,
  ``lam`` log-spaced in ``[1/k, 1]`` times a scale (smooth, strongly convex,
  condition number ``k``);
- ``quartic``: ``f(x) = sum_i a_i ((Q^T (x - x*))_i)^4``, ``a`` log-spaced in
  ``[1/k, 1]`` times a scale (smooth on bounded sets, convex, *not* strongly
  convex: the smooth convex case of the paper);
- ``logreg``: ``l2``-regularised logistic loss on ``n = 200`` points drawn from
  a logistic model with one ``w_true``, ``lambda`` set so that the condition
  number at the optimum is about ``k``; ``f*`` by Newton's method to machine
  precision.

The oracle answers a pair ``(x, y)`` with a bit ``1`` ("x wins") drawn with
probability ``rho(f(y) - f(x))``, ``rho`` a transfer function whose series at
0 has minimal degree ``p``: ``p = 1`` the logistic ``sigmoid(z / TAU[1])``,
``p = 3`` the clipped cubic ``clip(1/2 + (z / TAU[3])^3, 0, 1)``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["TAU", "N_LOGREG", "Problem", "build", "transfer"]

#: Temperature of the transfer function for each degree p (the scale at which a gap becomes visible).
TAU = {1: 0.25, 3: 0.25}
#: Points of the logistic-regression instances.
N_LOGREG = 200


def transfer(z: np.ndarray, p: int) -> np.ndarray:
    """``rho_p(z)``: the probability that the point with the lower value by ``z`` wins."""
    s = np.asarray(z, dtype=np.float64) / TAU[p]
    if p == 1:
        return 0.5 * (1.0 + np.tanh(0.5 * s))  # the logistic sigmoid, without overflow
    if p == 3:
        return np.clip(0.5 + s**3, 0.0, 1.0)
    raise ValueError(f"transfer degree p must be 1 or 3, got {p}")


@dataclass(frozen=True)
class Problem:
    """One objective, normalised so that ``f* = 0`` and ``f(0) = 1``; private to the task."""

    fn: str
    d: int
    x_star: np.ndarray
    Q: np.ndarray  # rotation (quad, quartic)
    coef: np.ndarray  # eigenvalues (quad) or quartic coefficients
    X: np.ndarray | None = None  # logreg design (n, d)
    y: np.ndarray | None = None  # logreg labels in {-1, +1}
    lam: float = 0.0
    offset: float = 0.0  # raw f* (logreg)
    scale: float = 1.0  # raw f(0) - f* (logreg)
    beta: float = 1.0  # smoothness bound on the ball of radius 2 ||x*|| around x*
    alpha: float = 0.0  # strong-convexity bound (0: none)

    def values(self, x: np.ndarray) -> np.ndarray:
        """``f`` at each row of ``x`` (``(m, d)``), or at ``x`` (``(d,)``) as a 0-d array."""
        x = np.asarray(x, dtype=np.float64)
        one = x.ndim == 1
        X = x[None, :] if one else x
        if self.fn == "logreg":
            m = (X @ self.X.T) * self.y[None, :]
            loss = np.logaddexp(0.0, -m).mean(axis=1) + 0.5 * self.lam * np.einsum("ij,ij->i", X, X)
            out = (loss - self.offset) / self.scale
        else:
            r = (X - self.x_star[None, :]) @ self.Q
            out = 0.5 * (r**2) @ self.coef if self.fn == "quad" else (r**4) @ self.coef
        out = np.maximum(out, 0.0)  # rounding below f* = 0 (logreg) is clipped
        return out[0] if one else out


def _rotation(rng: np.random.Generator, d: int) -> np.ndarray:
    q, r = np.linalg.qr(rng.standard_normal((d, d)))
    return q * np.sign(np.diag(r))[None, :]


def _logreg_raw(
    w: np.ndarray, X: np.ndarray, y: np.ndarray, lam: float
) -> tuple[float, np.ndarray, np.ndarray]:
    m = (X @ w) * y
    s = 0.5 * (1.0 - np.tanh(0.5 * m))  # sigmoid(-m)
    f = float(np.logaddexp(0.0, -m).mean() + 0.5 * lam * w @ w)
    g = -(X.T @ (s * y)) / len(y) + lam * w
    h = (X.T * (s * (1 - s))) @ X / len(y) + lam * np.eye(len(w))
    return f, g, h


def build(fn: str, d: int, k: float, seed: int) -> Problem:
    """The objective of one instance; the stream is ``default_rng([seed, d, k, code(fn)])``."""
    code = {"quad": 0, "quartic": 1, "logreg": 2}[fn]
    rng = np.random.default_rng([seed, d, int(k), code])
    Q = _rotation(rng, d)
    x_star = rng.standard_normal(d)
    x_star /= np.linalg.norm(x_star)
    spread = np.logspace(0.0, -np.log10(k), d)  # 1 ... 1/k
    if fn == "quad":
        r = x_star @ Q
        c = spread / (0.5 * (r**2) @ spread)  # f(0) = 1
        return Problem(fn, d, x_star, Q, c, beta=float(c.max()), alpha=float(c.min()))
    if fn == "quartic":
        r = x_star @ Q
        c = spread / ((r**4) @ spread)
        # Hessian 12 a_i r_i^2 <= 12 sqrt(a_i) on the sublevel set f <= f(0) = 1 (a_i r_i^4 <= 1)
        return Problem(fn, d, x_star, Q, c, beta=float(12 * np.sqrt(c.max())), alpha=0.0)
    # logreg: features with a spread of scales, labels from a logistic model with w_true
    Xd = rng.standard_normal((N_LOGREG, d)) * np.sqrt(spread)[None, :] @ Q.T
    w_true = 3.0 * x_star
    y = np.where(rng.random(N_LOGREG) < 0.5 * (1 + np.tanh(0.5 * Xd @ w_true)), 1.0, -1.0)
    top = float(np.linalg.eigvalsh(Xd.T @ Xd / N_LOGREG)[-1]) / 4.0
    lam = top / (k - 1.0)
    w = np.zeros(d)
    for _ in range(100):  # Newton's method; converges quadratically
        f, g, h = _logreg_raw(w, Xd, y, lam)
        step = np.linalg.solve(h, g)
        w = w - step
        if np.linalg.norm(step) < 1e-15 * max(1.0, np.linalg.norm(w)):
            break
    f_star, g, h = _logreg_raw(w, Xd, y, lam)
    f0 = float(np.log(2.0))
    ev = np.linalg.eigvalsh(h)
    scale = f0 - f_star
    return Problem(
        fn,
        d,
        w,
        Q,
        spread,
        X=Xd,
        y=y,
        lam=lam,
        offset=f_star,
        scale=scale,
        beta=float((top + lam) / scale),
        alpha=float(lam / scale) if ev[0] > 0 else 0.0,
    )
