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
    """Fast-diagonalisation preconditioner for the Gauss–Newton Hessian.

    The Hessian is ``K⁻¹ + 2v JᵀJ + 2τ BᵀB``. Its dominant part on the interior
    nodes is ``2v LᵀL`` with L the *constant-coefficient* linearised operator
    (coefficients frozen at their interior means), which on a grid is a
    Kronecker sum ``C₀ ⊗ I + I ⊗ C₁`` (the interpolation factors Sⱼ ≈ I
    are dropped). Restricted to interior nodes, ``Cⱼ = Vⱼ Λⱼ Vⱼ⁻¹`` (1-D
    eigendecompositions, O(n³) once), so ``L⁻¹`` costs four mode products.
    Dirichlet nodes are dominated by ``2τ`` and get that diagonal.
    """

    def __init__(self, model: KronModel, F: dict[str, np.ndarray], v: float, tau: float) -> None:
        P = model.problem.partials(F, model.source)
        inner = ~model.bmask
        self.model = model
        self.v, self.tau = v, tau
        C = [np.zeros((n, n)) for n in model.shape]
        shift = 0.0
        for name, p in P.items():
            c = float(np.mean(p[inner])) if inner.any() else 0.0
            for coef, mi in model.terms[name]:
                if mi == (0, 0):
                    shift += c * coef
                elif mi[1] == 0:
                    C[0] += c * coef * model.ops[(0, mi[0])]
                elif mi[0] == 0:
                    C[1] += c * coef * model.ops[(1, mi[1])]
                else:  # pragma: no cover - no problem here has mixed derivatives
                    raise ValueError("mixed derivatives have no Kronecker-sum form")
        C[0] += shift * np.eye(model.shape[0])
        # interior index sets per axis: drop indices on a Dirichlet side of that axis
        self.idx = []
        for j, n in enumerate(model.shape):
            keep = np.ones(n, dtype=bool)
            for axis, end in model.problem.dirichlet_sides:
                if axis == j:
                    keep[-1 if end else 0] = False
            self.idx.append(np.flatnonzero(keep))
        self.V, self.Vinv, self.lam = [], [], []
        for j in range(2):
            Cj = C[j][np.ix_(self.idx[j], self.idx[j])]
            w, V = np.linalg.eig(Cj)
            self.V.append(V)
            self.Vinv.append(np.linalg.inv(V))
            self.lam.append(w)
        lam = self.lam[0][:, None] + self.lam[1][None, :]
        # guard against (near-)zero eigenvalues of the frozen operator
        floor = 1e-8 * np.max(np.abs(lam))
        lam = np.where(np.abs(lam) < floor, floor, lam)
        self.inv_lam = 1.0 / lam
        self.interior_mask = np.zeros(model.shape, dtype=bool)
        self.interior_mask[np.ix_(self.idx[0], self.idx[1])] = True

    def _linv(self, X: np.ndarray) -> np.ndarray:
        Y = self.Vinv[0] @ X @ self.Vinv[1].T
        return self.V[0] @ (self.inv_lam * Y) @ self.V[1].T

    def _linv_T(self, X: np.ndarray) -> np.ndarray:
        Y = self.V[0].T @ X @ self.V[1]
        return self.Vinv[0].T @ (self.inv_lam * Y) @ self.Vinv[1]

    def __call__(self, r: np.ndarray) -> np.ndarray:
        out = r / (2 * self.tau)
        rI = r[np.ix_(self.idx[0], self.idx[1])].astype(complex)
        zI = self._linv(self._linv_T(rI)).real / (2 * self.v)
        out[np.ix_(self.idx[0], self.idx[1])] = zI
        return out


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
    cg_rtol: float = 1e-10,
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

