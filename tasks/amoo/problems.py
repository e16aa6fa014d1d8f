"""Aligned objectives of ``aligned-multiobjective``: m convex objectives with one shared minimiser ``x*``.

Every objective is normalised so that ``f_i(x*) = f_i* = 0`` and
``f_i(x0) = 1`` at the public start ``x0 = 0`` (``||x*|| = 1``), so the
metric ``max_i (f_i(x) - f_i*)`` is 1 at the start on every instance.

Kinds:

- ``block``: ``f_i = 1/2 (x - x*)^T H_i (x - x*)``; the rotated coordinates are
  split into ``m`` blocks, objective ``i`` has curvature 1 on block ``i`` and
  ``1/k`` elsewhere: each objective is ill-conditioned in a different
  subspace, their sum is well-conditioned;
- ``onegood``: objective 0 has eigenvalues log-spaced over ``[mu, 1]``
  (``mu = 0.1``) in a random basis: moderately conditioned in every direction; objectives ``1..m-1`` have curvature 1 except on a shared random
  subspace of dimension ``d / 2`` where it is ``1/k`` (the case where equal
  weights dilute the one informative objective ``m`` times);
- ``logreg``: cross-entropy of ``m`` logistic models against the soft labels
  ``sigmoid(a^T x*)`` of one ``x*`` on ``m`` data sets whose features are
  concentrated on different random subspaces; the gradient of every objective
  vanishes at ``x*`` exactly (well-specified soft labels), so the minimiser is
  shared, and each objective is strongly convex only where its features are.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["N_POINTS", "MU_GOOD", "Aligned", "build"]

#: Points per logistic data set.
N_POINTS = 100
#: Smallest curvature (relative to the largest) of the one well-conditioned objective of ``onegood``.
MU_GOOD = 0.1


def _sig(z: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * z))


@dataclass(frozen=True)
class Aligned:
    """The m objectives of one instance (private to the task)."""

    kind: str
    d: int
    m: int
    x_star: np.ndarray
    H: np.ndarray | None = None  # (m, d, d) Hessians (quadratic kinds)
    A: np.ndarray | None = None  # (m, n, d) features (logreg)
    p: np.ndarray | None = None  # (m, n) soft labels
    scale: np.ndarray | None = None  # (m,) normalisers (logreg)
    offset: np.ndarray | None = None  # (m,) raw f_i* (logreg)

    def value_grad_hess(self, X: np.ndarray, idx: np.ndarray, hess: bool = False):
        """``f_i(x)``, ``grad f_i(x)`` (and the Hessian) for each row ``x`` of ``X`` and objective ``idx``."""
        X = np.asarray(X, dtype=np.float64)
        idx = np.asarray(idx, dtype=np.int64)
        n, d = X.shape
        vals, grads = np.empty(n), np.empty((n, d))
        hs = np.empty((n, d, d)) if hess else None
        for r in range(n):
            i, x = int(idx[r]), X[r]
            if self.kind == "logreg":
                A, p = self.A[i], self.p[i]
                z = A @ x
                s = _sig(z)
                raw = float(np.mean(np.logaddexp(0.0, z) - p * z))
                vals[r] = (raw - self.offset[i]) / self.scale[i]
                grads[r] = A.T @ (s - p) / len(p) / self.scale[i]
                if hess:
                    hs[r] = (A.T * (s * (1 - s))) @ A / len(p) / self.scale[i]
            else:
                e = x - self.x_star
                He = self.H[i] @ e
                vals[r] = 0.5 * float(e @ He)
                grads[r] = He
                if hess:
                    hs[r] = self.H[i]
        return np.maximum(vals, 0.0), grads, hs

    def gaps(self, x: np.ndarray) -> np.ndarray:
        """``f_i(x) - f_i*`` for every objective."""
        v, _, _ = self.value_grad_hess(np.tile(x, (self.m, 1)), np.arange(self.m))
        return v

    def smoothness(self) -> np.ndarray:
        """``beta_i``: the largest Hessian eigenvalue of each objective (logreg: its bound ``||A^T A|| / 4n``)."""
        if self.kind == "logreg":
            return (
                np.array([np.linalg.eigvalsh(a.T @ a)[-1] / (4 * len(a)) for a in self.A])
                / self.scale
            )
        return np.array([np.linalg.eigvalsh(h)[-1] for h in self.H])


def _rotation(rng: np.random.Generator, d: int) -> np.ndarray:
    q, r = np.linalg.qr(rng.standard_normal((d, d)))
    return q * np.sign(np.diag(r))[None, :]


def build(kind: str, d: int, m: int, k: float, seed: int) -> Aligned:
    """One instance; the stream is ``default_rng([seed, d, m, k, code(kind)])``."""
    code = {"block": 0, "onegood": 1, "logreg": 2}[kind]
    rng = np.random.default_rng([seed, d, m, int(k), code])
    x_star = rng.standard_normal(d)
    x_star /= np.linalg.norm(x_star)
    Q = _rotation(rng, d)
    if kind in ("block", "onegood"):
        H = np.empty((m, d, d))
        if kind == "block":
            blocks = np.array_split(rng.permutation(d), m)
            for i in range(m):
                lam = np.full(d, 1.0 / k)
                lam[blocks[i]] = 1.0
                H[i] = (Q * lam) @ Q.T
        else:
            flat = rng.permutation(d)[: d // 2]
            lam0 = np.logspace(0.0, np.log10(MU_GOOD), d)  # condition number 1 / MU_GOOD everywhere
            Q0 = _rotation(rng, d)
            H[0] = (Q0 * lam0) @ Q0.T
            for i in range(1, m):
                lam = np.exp(rng.uniform(np.log(0.5), 0.0, d))  # curvature in [0.5, 1] ...
                lam[flat] = 1.0 / k  # ... except on the shared flat subspace
                Qi = Q @ _block_rotation(rng, d, flat)
                H[i] = (Qi * lam) @ Qi.T
        for i in range(m):  # normalise: f_i(0) = 1/2 x*^T H_i x* = 1
            H[i] /= 0.5 * x_star @ H[i] @ x_star
        return Aligned(kind, d, m, x_star, H=H)
    # logreg: data set i has features of scale 1 on a random subspace of dimension ~ d/2 and 1/sqrt(k) elsewhere
    A = np.empty((m, N_POINTS, d))
    for i in range(m):
        lam = np.full(d, 1.0 / np.sqrt(k))
        lam[rng.permutation(d)[: max(1, d // 2)]] = 1.0
        A[i] = (rng.standard_normal((N_POINTS, d)) * lam[None, :]) @ Q.T
    w = 3.0 * x_star
    p = _sig(np.einsum("mnd,d->mn", A, w))
    offset = np.array([np.mean(np.logaddexp(0.0, A[i] @ w) - p[i] * (A[i] @ w)) for i in range(m)])
    f0 = np.log(2.0)
    scale = f0 - offset
    return Aligned(kind, d, m, w, A=A, p=p, scale=scale, offset=offset)


def _block_rotation(rng: np.random.Generator, d: int, keep: np.ndarray) -> np.ndarray:
    """A random rotation that maps the coordinate subspace ``keep`` onto itself (so the flat subspace is shared)."""
    R = np.eye(d)
    rest = np.setdiff1d(np.arange(d), keep)
    for S in (keep, rest):
        if S.size:
            R[np.ix_(S, S)] = _rotation(rng, S.size)
    return R
