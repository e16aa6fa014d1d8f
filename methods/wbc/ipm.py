"""wbc-ipm: the paper's interior-point method with the structured normal-equation solve.

Wang, Li, Yang and Ding (ICML 2025) solve the fixed-support WBC LP with a
primal-dual path-following interior-point method whose normal equations
``A D A^T dp = rhs`` are solved by block elimination, which (abstract)
"accelerates the interior point method by O(min(N^2 m, N m^2, m^4)) times".
What we read: the abstract (PMLR v267 wang25be, OpenReview Sa9DluzlXJ) and
the official MATLAB code (github.com/Malik-Wang/Wasserstein-ball-center:
``IPM_WBC.m``, ``doublelow_first_solve0.m``, ``second_solve.m``,
``steplength.m``); the body of the paper could not be read here.

What follows the official code:

- the LP in standard form: variables ``x = (pi_1..pi_N, w, s_1..s_N, r) >= 0``
  (``s_k`` slacks of ``<C, pi_k> + s_k - r = 0``), rows ``pi_k^T 1 = a_k``,
  ``pi_k 1 = w`` with the first row of each block dropped (redundant),
  ``1^T w = 1``, objective ``r``;
- the starting point: ``pi_k = (1/m) 1 a_k^T``, ``w`` uniform,
  ``r = max_k <C, pi_k> + 1``, slacks to match (primal feasible), and the dual
  ``p = (-1 on the a_k rows, 0, -1 on 1^T w, -1/(N+1) on the cost rows)``
  (dual feasible, ``s = c - A^T p > 0``);
- Mehrotra's predictor-corrector: affine step to the boundary, ``mu_aff`` at
  that step, ``sigma = (mu_aff / mu)^3``, corrector ``x s + dx_aff ds_aff -
  sigma mu``, separate primal and dual step lengths with the fraction to the
  boundary ``eta = max(0.95, 1 - mu)``, ``D = min(5e14, x / s)``;
- the elimination order of the normal equations: the ``pi_k^T 1 = a_k`` rows
  first (a diagonal block, ``B_1``), then the ``1^T w = 1`` row (a scalar),
  then the ``pi_k 1 = w`` rows, whose Schur complement is block-diagonal
  (one ``(m-1) x (m-1)`` block per input) plus ``1 1^T (x) BB`` with
  ``BB = diag(d_w') - d_w' d_w'^T / sum(d_w)``, inverted by Woodbury through
  ``BB^{-1} + sum_k A_k^{-1}`` (the code's ``trN``), and last the ``N x N``
  Schur complement of the cost rows (the code's ``T4``). Each iteration
  costs ``O(N m^3)`` (the ``N`` block inverses) against ``O((N m)^3)`` for a
  dense factorisation of ``A D A^T`` (our reading of the complexity; the
  paper's accounting is UNVERIFIED).

Deviations from the official code (each for accuracy: the task asks for the
LP optimum to 1e-6, the code's default tolerance is 5e-4)
---------------------------------------------------------------------------
- Tolerance ``tol = 1e-8`` on the relative gap and on the primal and dual
  residuals (the code: ``5e-4`` unless the caller passes
  ``ipmtol_primal_dual_gap``; which value the paper's experiments used is
  UNVERIFIED).
- The residuals ``b - A x`` and ``c - A^T y - s`` are recomputed and kept in
  the right-hand side each iteration (the code keeps them at 0, trusting the
  feasible start; in floating point they drift).
- Iterative refinement of every normal-equation solve against the exact
  product ``A D A^T`` applied blockwise, up to ``refine = 10`` steps, until a
  relative residual of ``REFINE_TOL`` or until it stops contracting (not in
  the code).
- The Schur-complement entries are formed without cancellation: the diagonal
  of each ``A_k`` from exclusive column sums, and the cost-row terms as
  weighted variances ``sum_ij D_ij (C_ij - cbar_j)^2`` (the code forms
  ``B_1 - B_2 B_3^{-1} B_2^T`` and ``D D^T - (D E^T) B^{-1} (E D^T)``
  directly); LU instead of ``inv`` for the ``m-1`` and ``N`` systems.
- ``eta`` is capped at ``1 - 1e-6`` (with ``mu`` tiny the code's rule takes a
  full step to the boundary, which leaves a zero ``x_i`` or ``s_i``).
- The endgame fallback (version 2; ours, not in the paper or the code). Near
  the optimum the Woodbury step loses accuracy: the structured solve's
  residual grows to 1e-2 where a dense factorisation of the same matrix gives
  1e-16, and iterative refinement stops contracting. In an iteration where a
  refined structured solve leaves a relative residual above ``DENSE_SWITCH``
  (1e-8), that iteration's predictor and corrector are recomputed with a
  dense Cholesky (LU if needed) of the same ``A D A^T`` (``2Nm + 1`` rows,
  built from the sparse constraint matrix). It changes no step where the
  structured solve is accurate, and on the standard instances it is needed
  in 0-9 of the last iterations; without it two of the twelve stopped
  2e-6 and 4e-5 short of the optimum (version 1). Its cost, ``O((Nm)^3)``
  per such iteration, is what the paper's elimination avoids, so it is
  counted in the method's time.
- The code's "cannot be better" stop (no progress in two iterations after 50)
  is kept. When ``max(residuals, |gap|)`` exceeds ``DIVERGE`` times its best
  value, or a factorisation fails, the method stops and returns its best
  iterate (ours).
- The returned ``w`` is clipped at 0 and renormalised (the IPM's ``w`` is
  positive; the clip guards against round-off).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.linalg import LinAlgError, cho_factor, cho_solve, lu_factor, lu_solve

from bench import method

__all__ = ["solve", "wbc_ipm"]

_BLOCKS = 4  # x = (P, w, sl, r); y = (yu, yv, yz, yt)
#: Iterative refinement of a normal-equation solve stops at this relative residual.
REFINE_TOL = 1e-12
#: Stop when max(primal residual, dual residual, |gap|) exceeds this multiple of its best value.
DIVERGE = 100.0
#: A refined structured solve whose relative residual stays above this switches the run to the
#: dense factorisation of the same normal matrix (the endgame fallback, a deviation).
DENSE_SWITCH = 1e-8


class _Ops:
    """``A x`` and ``A^T y`` of the WBC LP in standard form, blockwise."""

    def __init__(self, C: np.ndarray, A: np.ndarray):
        self.C, self.A = C, A
        self.N, self.m = A.shape

    def AT(self, yu, yv, yz, yt):
        vp = np.concatenate([np.zeros((self.N, 1)), yv], axis=1)
        gP = yu[:, None, :] + vp[:, :, None] + yt[:, None, None] * self.C[None]
        return gP, -vp.sum(0) + yz, yt.copy(), -float(yt.sum())

    def Ax(self, P, w, sl, r):
        return (
            P.sum(1),
            P[:, 1:, :].sum(2) - w[None, 1:],
            float(w.sum()),
            np.einsum("ij,kij->k", self.C, P) + sl - r,
        )


def _bmv(M: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Batched matrix-vector product ``M[k] @ x[k]``."""
    return (M @ x[:, :, None])[:, :, 0]


def _factor(ops: _Ops, DP, Dw, Ds, Dr):
    """Factor ``A D A^T`` by block elimination; return a solver of ``A D A^T dp = rhs``."""
    C, m = ops.C, ops.m
    b1 = DP.sum(1)  # B_1: the a_k rows, diagonal (N, m)
    G = DP[:, 1:, :]  # coupling of the a_k rows and the w rows (N, m-1, m)
    h = (DP * C[None]).sum(1)  # coupling of the a_k rows and the cost rows
    dev = C[None] - (h / b1)[:, None, :]  # C_ij minus its D-weighted mean over i
    pre = np.cumsum(DP, axis=1) - DP
    suf = np.cumsum(DP[:, ::-1], axis=1)[:, ::-1] - DP
    excl = (pre + suf)[:, 1:, :]  # sum over i' != i of D_i'j, without cancellation
    Gs = G / np.sqrt(b1)[:, None, :]
    Ak = -(Gs @ Gs.transpose(0, 2, 1))
    diag = np.arange(m - 1)
    Ak[:, diag, diag] = (G * excl / b1[:, None, :]).sum(2)
    Ainv = np.linalg.inv(Ak)  # N blocks of (m-1) x (m-1)
    W = Ainv.sum(0)  # BB^{-1} + sum_k A_k^{-1}; BB^{-1} = diag(1/d_w') + 1 1^T / d_w0
    W[diag, diag] += 1.0 / Dw[1:]
    W += 1.0 / Dw[0]
    Wf = lu_factor(W)
    cc = float(Dw.sum())
    y = (G * dev[:, 1:, :]).sum(2)  # cost rows against the w rows, after B_1
    tau = (DP * dev**2).sum((1, 2)) + Ds  # cost rows' diagonal, after B_1
    q = _bmv(Ainv, y)
    S = np.diag(tau - (y * q).sum(1)) + Dr + q @ lu_solve(Wf, q.T)  # the N x N Schur complement
    Sf = lu_factor(S)

    def vinv(x):
        ax = _bmv(Ainv, x)
        return ax - Ainv @ lu_solve(Wf, ax.sum(0))

    def ksolve(ru, rv, rz, rt):
        rv = rv - _bmv(G, ru / b1) + Dw[None, 1:] * rz / cc
        rt = rt - (h * ru / b1).sum(1)
        vr = vinv(rv)
        dt = lu_solve(Sf, rt - (y * vr).sum(1))
        dv = vr - vinv(y * dt[:, None])
        dz = (rz + float((Dw[None, 1:] * dv).sum())) / cc
        du = (ru - _bmv(G.transpose(0, 2, 1), dv) - h * dt[:, None]) / b1
        return du, dv, dz, dt

    def residual(dp, rhs):
        t = ops.AT(*dp)
        kd = ops.Ax(DP * t[0], Dw * t[1], Ds * t[2], Dr * t[3])
        return tuple(rhs[i] - kd[i] for i in range(_BLOCKS))

    return _Refined(ksolve, residual)


class _Refined:
    """A normal-equation solver with iterative refinement against the exact blockwise product.

    Calling it returns ``dp``; ``last_residual`` is the relative residual
    ``||rhs - A D A^T dp|| / ||rhs||`` of the last solve, ``worst_residual``
    the largest over every solve so far.
    """

    def __init__(self, ksolve, residual):
        self.ksolve, self.residual = ksolve, residual
        self.last_residual = np.nan
        self.worst_residual = 0.0

    def __call__(self, rhs, refine: int):
        dp = self.ksolve(*rhs)
        scale = _norm(rhs) + 1e-300
        prev = np.inf
        for step in range(refine + 1):
            res = self.residual(dp, rhs)
            err = _norm(res)
            if err <= REFINE_TOL * scale or err > 0.5 * prev or step == refine:
                break  # converged, stopped contracting, or out of steps
            prev = err
            e = self.ksolve(*res)
            dp = tuple(dp[i] + e[i] for i in range(_BLOCKS))
        self.last_residual = err / scale
        self.worst_residual = max(self.worst_residual, self.last_residual)
        return dp


def _lp_matrix(C: np.ndarray, N: int, m: int) -> sp.csr_matrix:
    """The constraint matrix of the LP in standard form, rows ``(u, v, z, t)``, columns ``(P, w, sl, r)``."""
    k, i, j = (
        a.ravel() for a in np.meshgrid(np.arange(N), np.arange(m), np.arange(m), indexing="ij")
    )
    col = k * m * m + i * m + j  # P[k, i, j]
    nP, nw = N * m * m, m
    rows_u = k * m + j  # sum_i P[k, i, j] = a_k[j]
    keep = i >= 1
    rows_v = N * m + k[keep] * (m - 1) + i[keep] - 1  # sum_j P[k, i, j] - w_i = 0, i >= 1
    rz = N * (2 * m - 1)
    rows_t = rz + 1 + k  # <C, P_k> + sl_k - r = 0
    wv = np.arange(1, m)
    r_idx = np.concatenate(
        [
            rows_u,
            rows_v,
            N * m + (np.arange(N)[:, None] * (m - 1) + wv[None, :] - 1).ravel(),
            np.full(m, rz),
            rows_t,
            rz + 1 + np.arange(N),
            rz + 1 + np.arange(N),
        ]
    )
    c_idx = np.concatenate(
        [
            col,
            col[keep],
            np.tile(nP + wv, N),
            nP + np.arange(m),
            col,
            nP + nw + np.arange(N),
            np.full(N, nP + nw + N),
        ]
    )
    vals = np.concatenate(
        [
            np.ones(col.size),
            np.ones(int(keep.sum())),
            -np.ones(N * (m - 1)),
            np.ones(m),
            C[i, j],
            np.ones(N),
            -np.ones(N),
        ]
    )
    return sp.csr_matrix((vals, (r_idx, c_idx)), shape=(rz + 1 + N, nP + nw + N + 1))


def _dense_factor(ops: _Ops, Amat: sp.csr_matrix, DP, Dw, Ds, Dr) -> _Refined:
    """Factor the same ``A D A^T`` densely (Cholesky, LU if it is not numerically positive definite)."""
    N, m = ops.N, ops.m
    d = np.concatenate([DP.ravel(), Dw, Ds, [Dr]])
    K = (Amat.multiply(d[None, :]) @ Amat.T).toarray()
    try:
        f = cho_factor(K)
        solve_flat = lambda v: cho_solve(f, v)  # noqa: E731
    except LinAlgError:
        f = lu_factor(K)
        solve_flat = lambda v: lu_solve(f, v)  # noqa: E731
    cut = (N * m, N * (2 * m - 1), N * (2 * m - 1) + 1)

    def ksolve(ru, rv, rz, rt):
        v = solve_flat(np.concatenate([np.ravel(ru), np.ravel(rv), [rz], np.ravel(rt)]))
        return (
            v[: cut[0]].reshape(N, m),
            v[cut[0] : cut[1]].reshape(N, m - 1),
            float(v[cut[1]]),
            v[cut[2] :],
        )

    def residual(dp, rhs):
        t = ops.AT(*dp)
        kd = ops.Ax(DP * t[0], Dw * t[1], Ds * t[2], Dr * t[3])
        return tuple(rhs[i] - kd[i] for i in range(_BLOCKS))

    return _Refined(ksolve, residual)


def _norm(t) -> float:
    return float(np.sqrt(sum(float(np.sum(np.square(z))) for z in t)))


def _total(t) -> float:
    return sum(float(np.sum(z)) for z in t)


def _max_step(v, dv) -> float:
    worst = min(float(np.min(np.asarray(dv[i]) / np.asarray(v[i]))) for i in range(_BLOCKS))
    return -1.0 / min(worst, -1.0)


def wbc_ipm(
    C: np.ndarray,
    A: np.ndarray,
    *,
    tol: float = 1e-8,
    itmax: int = 500,
    max_diag: float = 5e14,
    eta_min: float = 0.95,
    refine: int = 10,
    stall: bool = True,
    dense: bool = True,
    verbose: bool = False,
) -> dict:
    """Solve the WBC LP; returns ``w``, ``r`` (the primal objective), ``iterations``, ``status``, ``gap`` and ``dense_from``.

    With ``dense``, once a refined structured solve leaves a relative residual
    above ``DENSE_SWITCH``, that iteration and every later one solve the same
    normal equations by a dense factorisation (``dense_from`` is that
    iteration; 0 when the structured solve sufficed throughout).
    """
    ops = _Ops(C, A)
    N, m = A.shape
    n_col = N * m * m + m + N + 1
    b = (A, np.zeros((N, m - 1)), 1.0, np.zeros(N))
    c = (np.zeros((N, m, m)), np.zeros(m), np.zeros(N), 1.0)
    P = np.broadcast_to(A[:, None, :] / m, (N, m, m)).copy()
    w = np.full(m, 1.0 / m)
    cost = np.einsum("ij,kij->k", C, P)
    r = float(cost.max()) + 1.0
    x = [P, w, r - cost, r]
    y = [-np.ones((N, m)), np.zeros((N, m - 1)), -1.0, -np.ones(N) / (N + 1)]
    g = ops.AT(*y)
    s = [c[i] - g[i] for i in range(_BLOCKS)]
    bnorm = 1.0 + float(np.sqrt((A**2).sum() + 1.0))
    Amat = _lp_matrix(C, N, m) if dense else None
    dense_from, dense_iters = 0, 0  # the first iteration solved densely (0: none), and how many
    status, history = "itmax", []
    best = (np.inf, x, np.nan, 0)
    it = 0
    for it in range(1, itmax + 1):
        ax = ops.Ax(*x)
        rp = tuple(b[i] - ax[i] for i in range(_BLOCKS))
        g = ops.AT(*y)
        rd = tuple(c[i] - g[i] - s[i] for i in range(_BLOCKS))
        xs = tuple(x[i] * s[i] for i in range(_BLOCKS))
        mu = _total(xs) / n_col
        pobj, dobj = float(x[3]), float((A * y[0]).sum() + y[2])
        gap = (pobj - dobj) / (abs(pobj) + abs(dobj) + 1.0)
        pres = float(np.sqrt(sum(float(np.sum(np.square(z))) for z in rp))) / bnorm
        dres = float(np.sqrt(sum(float(np.sum(np.square(z))) for z in rd))) / 2.0
        if pres <= tol and dres <= tol and abs(gap) <= tol:
            status = "optimal"
            break
        merit = max(pres, dres, abs(gap))
        if merit < best[0]:
            best = (merit, x, float(gap), it)
        elif merit > DIVERGE * best[0]:
            status = "diverging"  # the structured solve lost accuracy: keep the best iterate
            break
        history.append((max(pres, dres), abs(gap)))
        if verbose:
            print(it, pobj, dobj, mu, gap, pres, dres, flush=True)
        if (
            stall
            and it > 50
            and history[-3][0] / max(history[-1][0], 1e-300) <= 1.005
            and history[-3][1] / max(history[-1][1], 1e-300) <= 1.005
        ):
            status = "stalled"  # the official code's "Cannot be better!"
            break
        D = [np.minimum(max_diag, x[i] / s[i]) for i in range(_BLOCKS)]
        try:
            sol = _factor(ops, *D)
        except (np.linalg.LinAlgError, ValueError):
            status = "factorisation failed"
            break

        def direction(rc, x=x, s=s, rp=rp, rd=rd, D=D, sol=sol):
            xr = [(rc[i] - x[i] * rd[i]) / s[i] for i in range(_BLOCKS)]
            a = ops.Ax(*xr)
            dp = sol(tuple(rp[i] - a[i] for i in range(_BLOCKS)), refine)
            t = ops.AT(*dp)
            return (
                [xr[i] + D[i] * t[i] for i in range(_BLOCKS)],
                dp,
                [rd[i] - t[i] for i in range(_BLOCKS)],
            )

        def predictor_corrector(sol, x=x, s=s, xs=xs, mu=mu, direction=direction):
            dx, dp, ds = direction(tuple(-z for z in xs), sol=sol)
            ap, ad = _max_step(x, dx), _max_step(s, ds)
            mu_aff = (
                _total(tuple((x[i] + ap * dx[i]) * (s[i] + ad * ds[i]) for i in range(_BLOCKS)))
                / n_col
            )
            sigma = (mu_aff / mu) ** 3
            return direction(
                tuple(-xs[i] - dx[i] * ds[i] + sigma * mu for i in range(_BLOCKS)), sol=sol
            )

        try:
            dx, dp, ds = predictor_corrector(sol)
            if dense and sol.worst_residual > DENSE_SWITCH:
                # the structured solve lost accuracy (the endgame): this iteration's matrix, densely
                dense_iters += 1
                dense_from = dense_from or it
                dx, dp, ds = predictor_corrector(_dense_factor(ops, Amat, *D))
        except (np.linalg.LinAlgError, ValueError):
            status = "factorisation failed"
            break
        if not all(np.all(np.isfinite(z)) for z in (*dx, *ds, *dp)):
            status = "non-finite step"
            break
        eta = min(max(eta_min, 1.0 - mu), 1.0 - 1e-6)
        ap = min(1.0, eta * _max_step(x, dx))
        ad = min(1.0, eta * _max_step(s, ds))
        x = [x[i] + ap * dx[i] for i in range(_BLOCKS)]
        s = [s[i] + ad * ds[i] for i in range(_BLOCKS)]
        y = [y[i] + ad * dp[i] for i in range(_BLOCKS)]
    if status != "optimal":
        _, x, gap, _ = best
    w = np.clip(np.asarray(x[1], dtype=np.float64), 0.0, None)
    return {
        "w": w / w.sum(),
        "r": float(x[3]),
        "iterations": it,
        "status": status,
        "gap": gap,
        "dense_from": dense_from,
        "dense_iters": dense_iters,
    }


@method(
    name="wbc-ipm",
    kind="method",
    tasks=["wasserstein-ball-center"],
    reference=(
        "Wang, Li, Yang and Ding, Finding Wasserstein Ball Center (ICML 2025); official MATLAB code "
        "github.com/Malik-Wang/Wasserstein-ball-center (IPM_WBC.m, doublelow_first_solve0.m)"
    ),
    version="2",
    deterministic=True,
    params={"tol": 1e-8},
    deviations=(
        "tol 1e-8 (code default 5e-4); residuals kept in the right-hand side; iterative refinement; "
        "cancellation-free Schur entries; LU instead of inv; eta capped at 1 - 1e-6; a dense solve of "
        "the same normal equations in the iterations where the structured one loses accuracy (v2); "
        "divergence stop returning the best iterate"
    ),
)
def solve(instance, *, seed: int, budget: float, tol: float) -> np.ndarray:
    """The official code's predictor-corrector IPM on the instance's LP; returns ``w``."""
    C = np.asarray(instance.data["C"], dtype=np.float64)
    A = np.asarray(instance.data["A"], dtype=np.float64)
    return wbc_ipm(C, A, tol=tol)["w"]
