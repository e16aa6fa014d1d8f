"""Convex objectives of the NCE family and of the classical baselines, for ``exp(theta^T psi(x))``.

Every estimator here minimises a smooth convex empirical objective in
``theta`` with scipy's L-BFGS-B (analytic gradients, from ``theta = 0``). The
statistics ``psi`` and the base measure come from :mod:`tasks.nce` (public:
the family is declared, only ``theta*`` is hidden).

Noise: the NCE estimators contrast the data with the uniform distribution on
the support (``{-1,+1}^p`` or ``[-1,1]^d``), which the method samples itself;
its log density is a constant and cancels (alpha-centered NCE) or is absorbed
into the free normalising constant (logistic NCE).
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize
from scipy.special import expit, logsumexp, softmax

from tasks.nce import coordinate_nodes, features, support_grid

__all__ = [
    "alpha_centered_nce",
    "conditional_noise",
    "f_conditional_nce",
    "interaction_screening",
    "logistic_nce",
    "mle_exact",
    "pseudo_likelihood",
    "uniform_noise",
]

OPTIONS = {"maxiter": 2000, "gtol": 1e-10, "ftol": 1e-15, "maxcor": 30}


def _fit(fun, k: int) -> np.ndarray:
    res = minimize(fun, np.zeros(k), jac=True, method="L-BFGS-B", options=OPTIONS)
    x = np.asarray(res.x, dtype=float)
    if not np.all(np.isfinite(x)):
        raise FloatingPointError("the optimiser returned a non-finite estimate")
    return x


def uniform_noise(model: str, d: int, m: int, rng: np.random.Generator) -> np.ndarray:
    """``m`` draws of the uniform distribution on the support (spins or the box ``[-1, 1]^d``)."""
    if model == "ising":
        return rng.choice(np.array([-1.0, 1.0]), size=(m, d))
    return rng.uniform(-1.0, 1.0, size=(m, d))


def conditional_noise(
    model: str, X: np.ndarray, sigma: float, rng: np.random.Generator
) -> np.ndarray:
    """One draw ``y ~ pi(. | x)`` per row, from a symmetric kernel (``pi(y|x) = pi(x|y)``).

    Spins: flip one spin chosen uniformly. Box: ``x + sigma * N(0, I)``
    reflected into ``[-1, 1]`` (the reflected Gaussian kernel is symmetric).
    """
    Y = np.array(X, dtype=float)
    n, d = Y.shape
    if model == "ising":
        k = rng.integers(0, d, size=n)
        Y[np.arange(n), k] *= -1.0
        return Y
    Y = Y + sigma * rng.standard_normal((n, d))
    Y = np.mod(Y + 1.0, 4.0)
    Y = np.where(Y > 2.0, 4.0 - Y, Y) - 1.0
    return Y


def alpha_centered_nce(Fd: np.ndarray, Fn: np.ndarray, alpha: float) -> np.ndarray:
    """Minimise ``1/(1-a) log mean_d r^(a-1) + 1/a log mean_n r^a``, ``r = exp(theta^T psi)/q_n``.

    This is the f_alpha-NCE (Bregman) objective evaluated at the alpha-centered
    ratio ``r / (E_qn r^a)^(1/a)`` (our reconstruction, UNVERIFIED against the
    paper's display): ``a -> 1`` gives MC-MLE, ``-mean_d log r + log mean_n r``;
    ``a -> 0`` gives GlobalGISO, ``log mean_d 1/r + mean_n log r``. Both terms
    are convex in ``theta``; a constant ``q_n`` cancels.
    """
    a = float(alpha)
    if not 0.0 <= a <= 1.0:
        raise ValueError("alpha must lie in [0, 1]")
    n, m = len(Fd), len(Fn)

    def fun(th):
        u, v = Fd @ th, Fn @ th
        if a == 1.0:
            val = -u.mean() + logsumexp(v) - np.log(m)
            return val, -Fd.mean(0) + softmax(v) @ Fn
        if a == 0.0:
            val = logsumexp(-u) - np.log(n) + v.mean()
            return val, -(softmax(-u) @ Fd) + Fn.mean(0)
        s, t = -(1.0 - a) * u, a * v
        val = (logsumexp(s) - np.log(n)) / (1.0 - a) + (logsumexp(t) - np.log(m)) / a
        return val, -(softmax(s) @ Fd) + softmax(t) @ Fn

    return _fit(fun, Fd.shape[1])


def f_conditional_nce(Fx: np.ndarray, Fy: np.ndarray, f: str) -> np.ndarray:
    """f-CondNCE with a symmetric conditional noise: data pairs ``(x, y)``, noise pairs ``(y, x)``.

    With ``r = phi(x) pi(y|x) / (phi(y) pi(x|y)) = exp(theta^T (psi(x) - psi(y)))``
    the Bregman objective ``E_noise[g(r')] - E_data[f'(r)]``, ``g(r) = r f'(r) - f(r)``,
    ``r' = 1/r`` on the swapped pair, is

    - ``f = "log"`` (``f(r) = r log r - (1+r) log(1+r)``, the logistic loss of
      NCE): ``2 mean log(1 + exp(-G))``, Ceylan and Gutmann's CondNCE;
    - ``f = "hellinger"`` (``f(r) = (sqrt r - 1)^2``): ``2 mean exp(-G/2)``,
      an interaction-screening-type loss;

    with ``G = theta^T (psi(x) - psi(y))``.
    """
    D = Fx - Fy
    n = len(D)
    if f == "log":

        def fun(th):
            G = D @ th
            return 2.0 * np.logaddexp(0.0, -G).mean(), -2.0 * (expit(-G) @ D) / n
    elif f == "hellinger":

        def fun(th):
            e = np.exp(-0.5 * (D @ th))
            return 2.0 * e.mean(), -(e @ D) / n
    else:
        raise ValueError(f"unknown f {f!r}: 'log' or 'hellinger'")
    return _fit(fun, D.shape[1])


def mle_exact(model: str, Fd: np.ndarray) -> np.ndarray:
    """Maximum likelihood with the exact ``log Z`` (enumeration, or 64^d-node Gauss-Legendre)."""
    pts, wts = support_grid(model)
    Fg, lw = features(model, pts), np.log(wts)
    mean = Fd.mean(0)

    def fun(th):
        s = Fg @ th + lw
        return -mean @ th + logsumexp(s), -mean + softmax(s) @ Fg

    return _fit(fun, Fd.shape[1])


def _replaced(model: str, X: np.ndarray, j: int) -> tuple[np.ndarray, np.ndarray]:
    """``psi`` of each row with coordinate ``j`` set to each node: ``(n, Q, k)``, and log weights ``(Q,)``."""
    t, w = coordinate_nodes(model)
    Xr = np.repeat(X[:, None, :], len(t), axis=1)
    Xr[:, :, j] = t[None, :]
    return features(model, Xr), np.log(w)


def pseudo_likelihood(model: str, X: np.ndarray) -> np.ndarray:
    """Besag's pseudo-likelihood: maximise ``sum_j mean log p(x_j | x_-j)``.

    Each conditional is normalised over one coordinate exactly (two spin
    values) or by Gauss-Legendre quadrature on ``[-1, 1]``.
    """
    Fd = features(model, X)
    blocks = [_replaced(model, X, j) for j in range(X.shape[1])]
    n = len(X)

    def fun(th):
        val = -X.shape[1] * (Fd @ th).mean()
        grad = -X.shape[1] * Fd.mean(0)
        for Fr, lw in blocks:
            s = Fr @ th + lw
            val += logsumexp(s, axis=1).mean()
            grad = grad + np.einsum("nq,nqk->k", softmax(s, axis=1), Fr) / n
        return val, grad

    return _fit(fun, Fd.shape[1])


def interaction_screening(model: str, X: np.ndarray) -> np.ndarray:
    """Interaction screening (Vuffray et al. 2016), generalised to the box (GISO), without l1 penalty.

    For each coordinate ``j`` the statistics that depend on ``x_j`` are
    centred by their average over ``x_j`` under the uniform base measure
    (spins: ``x_j`` itself and ``x_i x_j``, whose averages are 0), and
    ``mean exp(-theta_S^T psi_S_centred)`` is minimised over those
    coordinates ``S``. A parameter seen by several coordinates (a coupling)
    gets the average of its estimates.
    """
    Fd = features(model, X)
    k = Fd.shape[1]
    total, count = np.zeros(k), np.zeros(k)
    t, w = coordinate_nodes(model)
    wn = w / w.sum()
    for j in range(X.shape[1]):
        Fr, _ = _replaced(model, X, j)
        S = np.flatnonzero(np.ptp(Fr, axis=1).max(axis=0) > 0)
        C = Fd[:, S] - np.einsum("q,nqk->nk", wn, Fr[:, :, S])
        n = len(C)

        def fun(th, C=C, n=n):
            e = np.exp(-(C @ th))
            return e.mean(), -(e @ C) / n

        total[S] += _fit(fun, len(S))
        count[S] += 1
    if np.any(count == 0):
        raise ValueError("a statistic depends on no coordinate")
    return total / count


def logistic_nce(Fd: np.ndarray, Fn: np.ndarray) -> np.ndarray:
    """Gutmann and Hyvarinen (2012): logistic regression of data against noise, the log normaliser free.

    ``G(u) = theta^T psi(u) + c - log(nu q_n(u))``, ``nu = m / n``; a constant
    ``q_n`` is absorbed in ``c``. Returns ``theta`` (``c`` is dropped).
    """
    n, m = len(Fd), len(Fn)
    nu = m / n
    A = np.hstack([Fd, np.ones((n, 1))])
    B = np.hstack([Fn, np.ones((m, 1))])

    def fun(z):
        gd, gn = A @ z, B @ z
        val = np.logaddexp(0.0, -gd).sum() / n + np.logaddexp(0.0, gn).sum() / n
        grad = -(expit(-gd) @ A) / n + (expit(gn) @ B) / n
        return val, grad

    del nu  # nu = m / n enters only through the constant, absorbed in c
    return _fit(fun, A.shape[1])[:-1]
