"""SKS optimisers: dense Gauss–Newton (the paper's), matrix-free Gauss–Newton (ours), official Adam.

All minimise the official soft-constrained objective (float64)::

    J(η) = ½ ηᵀK⁻¹η + v Σ_{all grid nodes} R(η)² + τ Σ_{Dirichlet nodes} (u − g)²

(Burgers' official Adam variant halves the boundary term and makes v and τ
trainable; see :mod:`methods.pde.adam`.)
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import scipy.linalg as sla

from methods.pde.kron import KronModel

__all__ = ["GNResult", "loss_terms", "gauss_newton_dense", "gauss_newton_mf", "FastDiagPreconditioner"]


@dataclass
class GNResult:
    """Final iterate and a trace of the run."""

    H: np.ndarray
    steps: int = 0
    losses: list[float] = field(default_factory=list)
    step_times: list[float] = field(default_factory=list)
    cg_iters: list[int] = field(default_factory=list)
    stopped: str = ""


def loss_terms(model: KronModel, H: np.ndarray, v: float, tau: float) -> tuple[float, dict[str, np.ndarray], np.ndarray, np.ndarray]:
    """``(J, functionals, residual, boundary misfit)`` at ``H``."""
    F = model.functionals(H)
    R = model.problem.residual(F, model.source)
    ub = model.u(H)[model.bmask] - model.bvals
    J = 0.5 * float(np.sum(H * model.kinv(H))) + v * float(np.sum(R**2)) + tau * float(np.sum(ub**2))
    return J, F, R, ub


def _gradient(model: KronModel, H: np.ndarray, F: dict, R: np.ndarray, ub: np.ndarray, v: float, tau: float) -> np.ndarray:
    P = model.problem.partials(F, model.source)
    g = model.kinv(H)
    for name, p in P.items():
        g = g + 2 * v * model.apply_T(name, p * R)
    scat = np.zeros(model.shape)
    scat[model.bmask] = ub
    g = g + 2 * tau * (model.ops[(0, 0)].T @ scat @ model.ops[(1, 0)])
    return g


def _line_search(model, H, d, J0, v, tau, max_halvings=12):
    """Full step if it lowers J, else halve (the official code always takes the full step)."""
    step = 1.0
    for _ in range(max_halvings):
        Hn = H - step * d
        Jn, F, R, ub = loss_terms(model, Hn, v, tau)
        if math.isfinite(Jn) and Jn <= J0:
            return Hn, Jn, F, R, ub
        step *= 0.5
    return H, J0, None, None, None


def gauss_newton_dense(
    model: KronModel,
    *,
    v: float,
    tau: float,
    max_steps: int = 49,
    rtol: float = 1e-12,
    deadline: float = math.inf,
    on_step: Callable[[np.ndarray], None] | None = None,
) -> GNResult:
    """The paper's Gauss–Newton: the dense N×N Hessian of the linearised loss, solved directly.

    Stops after ``max_steps`` steps, when the loss stops decreasing (relative
    change below ``rtol``), or at ``deadline`` (``time.perf_counter()``).
    """
    N = model.shape[0] * model.shape[1]
    H = np.zeros(model.shape)
    A = {name: model.dense(name) for name in model.terms}
    Kinv = np.kron(model.Kinv[0], model.Kinv[1])
    Bfull = np.kron(model.ops[(0, 0)], model.ops[(1, 0)])
    B = Bfull[model.bmask.ravel()]
    del Bfull
    BtB = 2 * tau * (B.T @ B)
    J0, F, R, ub = loss_terms(model, H, v, tau)
    res = GNResult(H=H, losses=[J0])
    for k in range(max_steps):
        if time.perf_counter() > deadline:
            res.stopped = "deadline"
            break
        t0 = time.perf_counter()
        P = model.problem.partials(F, model.source)
        Jm = np.zeros((N, N))
        for name, p in P.items():
            Jm += p.ravel()[:, None] * A[name]
        Hm = Kinv + BtB
        Hm += 2 * v * (Jm.T @ Jm)
        g = _gradient(model, H, F, R, ub, v, tau).ravel()
        del Jm
        try:
            d = sla.cho_solve(sla.cho_factor(Hm, lower=True, check_finite=False), g)
        except np.linalg.LinAlgError:  # SPD in exact arithmetic; rounding can break Cholesky
            d = sla.solve(Hm, g, assume_a="sym")
        H, Jn, F, R, ub = _line_search(model, H, d.reshape(model.shape), J0, v, tau)
        res.step_times.append(time.perf_counter() - t0)
        res.steps = k + 1
        res.losses.append(Jn)
        if on_step:
            on_step(H)
        if F is None or (J0 - Jn) <= rtol * abs(J0):
            res.stopped = "converged"
            break
        J0 = Jn
    res.H = H
    return res


class FastDiagPreconditioner:
    """Kronecker-eigenbasis preconditioner for the Gauss–Newton Hessian, with the boundary exact.

    The Hessian is ``K⁻¹ + 2v JᵀJ + 2τ BᵀB``. With the PDE coefficients frozen
    at their interior means, ``J₀ = Σ c A`` is a sum of Kronecker products of
    1-D operators, and ``K⁻¹`` and the interpolation factors ``Sⱼ`` are diagonal
    in the eigenbasis ``Q₀ ⊗ Q₁`` of ``K = K₀ ⊗ K₁`` (fast diagonalisation).
    ``P₀ = diag_Q(K⁻¹ + 2v J₀ᵀJ₀)`` (the exact diagonal in that basis,
    computed from 1-D quantities in O(Σ nⱼ³)) is inverted with four mode
    products. The boundary penalty ``2τ BᵀB`` (rank = number of Dirichlet
    nodes m) is added exactly by the Woodbury identity, with an m×m Cholesky
    factor built once. The preconditioner depends only on frozen coefficients,
    so one instance serves every Gauss–Newton step.
    """

    def __init__(self, model: KronModel, F: dict[str, np.ndarray], v: float, tau: float) -> None:
        P = model.problem.partials(F, model.source)
        inner = ~model.bmask
        self.model, self.v, self.tau = model, v, tau
        self.Q, kin, svals = [], [], []
        for j in range(2):
            w, Q = np.linalg.eigh(model.K[j])
            self.Q.append(Q)
            kin.append(1.0 / w)
            svals.append((w - model.jitter) / w)
        # J0 = sum_t c_t X_t (x) Y_t; in the Q basis X_t -> Q0^T X_t Q0 (dense n0 x n0), likewise Y_t.
        terms = []
        for name, p in P.items():
            c = float(np.mean(p[inner])) if inner.any() else 0.0
            for coef, mi in model.terms[name]:
                X = self.Q[0].T @ model.ops[(0, mi[0])] @ self.Q[0]
                Y = self.Q[1].T @ model.ops[(1, mi[1])] @ self.Q[1]
                terms.append((c * coef, X, Y))
        # diag of (sum_t c_t X_t (x) Y_t)^T (sum_s c_s X_s (x) Y_s) at (a, b) = sum_{t,s} c_t c_s (X_t^T X_s)_aa (Y_t^T Y_s)_bb
        d = np.outer(kin[0], kin[1])
        for ct, Xt, Yt in terms:
            for cs, Xs, Ys in terms:
                d += 2 * v * ct * cs * np.outer(np.einsum("ia,ia->a", Xt, Xs), np.einsum("ib,ib->b", Yt, Ys))
        self.dinv = 1.0 / d
        # Woodbury for 2 tau B^T B, B = rows of S = Q diag(s) Q^T at the Dirichlet nodes
        ii, kk = np.nonzero(model.bmask)
        Bq = (self.Q[0][ii][:, :, None] * self.Q[1][kk][:, None, :]).reshape(ii.size, -1)  # rows of Q0 (x) Q1
        s2 = np.outer(svals[0], svals[1]).ravel()
        self.Bq, self.bidx, self.s = Bq, (ii, kk), np.outer(svals[0], svals[1])
        small = (Bq * (s2**2 * self.dinv.ravel())) @ Bq.T
        small[np.diag_indices_from(small)] += 1.0 / (2 * tau)
        self.small = sla.cho_factor(small, lower=True)

    def _p0inv(self, R: np.ndarray) -> np.ndarray:
        Q0, Q1 = self.Q
        return Q0 @ (self.dinv * (Q0.T @ R @ Q1)) @ Q1.T

    def __call__(self, r: np.ndarray) -> np.ndarray:
        Q0, Q1 = self.Q
        y = self._p0inv(r)
        By = self.model.u(y)[self.model.bmask]
        z = sla.cho_solve(self.small, By)
        scat = np.zeros(self.model.shape)
        scat[self.model.bmask] = z
        corr = self.model.ops[(0, 0)].T @ scat @ self.model.ops[(1, 0)]
        return y - self._p0inv(corr)


def _pcg(matvec, b, prec, x0, rtol, maxiter):
    x = x0.copy()
    r = b - matvec(x)
    z = prec(r)
    p = z.copy()
    rz = float(np.sum(r * z))
    bn = float(np.linalg.norm(b))
    if bn == 0:
        return x, 0
    for it in range(1, maxiter + 1):
        Ap = matvec(p)
        alpha = rz / float(np.sum(p * Ap))
        x += alpha * p
        r -= alpha * Ap
        if np.linalg.norm(r) <= rtol * bn:
            return x, it
        z = prec(r)
        rz_new = float(np.sum(r * z))
        p = z + (rz_new / rz) * p
        rz = rz_new
    return x, maxiter


def gauss_newton_mf(
    model: KronModel,
    *,
    v: float,
    tau: float,
    max_steps: int = 49,
    rtol: float = 1e-12,
    cg_rtol: float = 1e-6,
    cg_maxiter: int = 2000,
    deadline: float = math.inf,
    on_step: Callable[[np.ndarray], None] | None = None,
) -> GNResult:
    """Matrix-free Gauss–Newton: each step solves the GN system by PCG with Kronecker mat-vecs.

    Same objective, same steps and stopping rule as :func:`gauss_newton_dense`;
    the N×N matrices are never formed. Memory is O(N + Σ nⱼ²).
    """
    H = np.zeros(model.shape)
    J0, F, R, ub = loss_terms(model, H, v, tau)
    res = GNResult(H=H, losses=[J0])
    S0, S1 = model.ops[(0, 0)], model.ops[(1, 0)]
    bm = model.bmask
    prec = None
    for k in range(max_steps):
        if time.perf_counter() > deadline:
            res.stopped = "deadline"
            break
        t0 = time.perf_counter()
        P = model.problem.partials(F, model.source)

        def matvec(X, P=P):
            JX = np.zeros(model.shape)
            for name, p in P.items():
                JX += p * model.apply(name, X)
            out = model.kinv(X)
            for name, p in P.items():
                out += 2 * v * model.apply_T(name, p * JX)
            BX = np.where(bm, S0 @ X @ S1.T, 0.0)
            out += 2 * tau * (S0.T @ BX @ S1)
            return out

        g = _gradient(model, H, F, R, ub, v, tau)
        if prec is None or k == 1:  # rebuilt once, after the first step leaves the zero start
            prec = FastDiagPreconditioner(model, F, v, tau)
        d, its = _pcg(matvec, g, prec, np.zeros(model.shape), cg_rtol, cg_maxiter)
        res.cg_iters.append(its)
        H, Jn, F, R, ub = _line_search(model, H, d, J0, v, tau)
        res.step_times.append(time.perf_counter() - t0)
        res.steps = k + 1
        res.losses.append(Jn)
        if on_step:
            on_step(H)
        if F is None or (J0 - Jn) <= rtol * abs(J0):
            res.stopped = "converged"
            break
        J0 = Jn
    res.H = H
    return res

