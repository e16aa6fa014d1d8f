"""The trusted side's models: a stratified Breslow partial likelihood, its Newton fit and brute-force LOO.

Both model families of the task are one objective. With linear scores
``eta = X @ theta``, strata ``g``, times ``t`` and event indicators ``e``, and
per-point weights ``w`` (1 = in the data, 0 = removed),

    L(theta; w) = sum_i w_i e_i [ log sum_{j in R_i} w_j exp(eta_j) - eta_i ] + ridge/2 |theta|^2,

where the risk set ``R_i = {j : g_j = g_i, t_j >= t_i}`` (Breslow's handling
of ties: every tied point is in every tied point's risk set).

- **Cox proportional hazards** (survival data): one stratum, ``t`` the
  observed time, ``e`` the event indicator.
- **ListMLE** (listwise ranking, the Plackett-Luce likelihood of the true
  order): one stratum per query, ``t`` the item's position in the true order
  (0 = most relevant) and every ``e_i = 1``; the risk set of position ``k``
  is the suffix ``k, k+1, ...`` of the list, so the term of item ``i`` is
  ``log sum_{j at or below i} exp(s_j) - s_i``, the ListMLE loss.

Removing point ``i`` sets ``w_i = 0``: its own term goes, and it leaves every
risk set it was in (the other terms of its stratum change: the loss is not a
sum of per-point losses). Gradient and Hessian are analytic (numpy), with the
risk-set sums as cumulative sums in (stratum, time descending) order, so one
evaluation is ``O(n d^2)``. Nothing here is sent to a method.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

__all__ = [
    "Breslow",
    "adam_retrain",
    "fit",
    "loo",
    "test_quantities",
]


@dataclass(frozen=True)
class Breslow:
    """A stratified Breslow objective on fixed data (see the module docstring).

    ``X`` ``(n, d)``, ``t`` ``(n,)``, ``e`` ``(n,)`` (0/1), ``strata`` ``(n,)`` ints, ``ridge`` >= 0.
    """

    X: np.ndarray
    t: np.ndarray
    e: np.ndarray
    strata: np.ndarray
    ridge: float

    def __post_init__(self) -> None:
        order = np.lexsort((-self.t, self.strata))  # by stratum, then time descending
        g, ts = self.strata[order], self.t[order]
        n = len(order)
        new_group = np.ones(n, dtype=bool)
        new_group[1:] = (g[1:] != g[:-1]) | (ts[1:] != ts[:-1])
        new_stratum = np.ones(n, dtype=bool)
        new_stratum[1:] = g[1:] != g[:-1]
        # risk-set sums are cumulative sums along each stratum's row of a padded (strata, longest) layout:
        # one global cumulative sum minus the sum before the stratum would cancel catastrophically
        sid = np.cumsum(new_stratum) - 1
        first = np.flatnonzero(new_stratum)
        pos = np.arange(n) - first[sid]
        gid = np.cumsum(new_group) - 1
        last_of_gid = np.flatnonzero(np.r_[new_group[1:], True])
        end = pos[last_of_gid[gid]]  # position of the last point tied with this one
        object.__setattr__(self, "_order", order)
        object.__setattr__(self, "_sid", sid)
        object.__setattr__(self, "_pos", pos)
        object.__setattr__(self, "_end", end)
        shape = (int(sid[-1]) + 1, int(pos.max()) + 1)
        object.__setattr__(self, "_shape", shape)
        object.__setattr__(self, "_flat_end", sid * shape[1] + end)

    @property
    def n(self) -> int:
        return self.X.shape[0]

    def _risk_sums(self, a: np.ndarray) -> np.ndarray:
        """``sum_{j in R_i} a_j`` for every point ``i`` (in sorted order), ``a`` of shape ``(n, ...)``."""
        S, L = self._shape
        if S * L == self.n:  # strata of equal size (one Cox stratum, ListMLE lists): a reshape
            padded = a[self._order].reshape((S, L) + a.shape[1:])
        else:
            padded = np.zeros(self._shape + a.shape[1:])
            padded[self._sid, self._pos] = a[self._order]
        cs = np.cumsum(padded, axis=1).reshape((S * L,) + a.shape[1:])
        return cs[self._flat_end]

    def evaluate(self, theta: np.ndarray, w: np.ndarray | None = None, *, hessian: bool = True):
        """``(loss, grad, hess)`` of ``L(theta; w)`` (``hess`` None unless asked), ridge included."""
        w = np.ones(self.n) if w is None else w
        eta = self.X @ theta
        shift = float(eta.max())
        r = w * np.exp(eta - shift)
        o = self._order
        X = self.X[o]
        s0 = self._risk_sums(r)
        s1 = self._risk_sums(r[:, None] * self.X)
        coef = (w * self.e)[o]
        act = coef > 0
        # a point with an event is in its own risk set, so s0 > 0 wherever coef > 0
        mu = np.zeros_like(X)
        mu[act] = s1[act] / s0[act, None]
        loss = float(np.sum(coef[act] * (np.log(s0[act]) + shift - eta[o][act])))
        loss += 0.5 * self.ridge * float(theta @ theta)
        grad = (coef[:, None] * (mu - X)).sum(axis=0) + self.ridge * theta
        hess = None
        if hessian:
            s2 = self._risk_sums(r[:, None, None] * self.X[:, :, None] * self.X[:, None, :])
            d = self.X.shape[1]
            c = coef[act] / s0[act]
            hess = (c @ s2[act].reshape(-1, d * d)).reshape(d, d)
            hess -= (mu[act] * coef[act, None]).T @ mu[act]
            hess += self.ridge * np.eye(d)
        return loss, grad, hess

    def terms_loss(self, theta: np.ndarray) -> np.ndarray:
        """Each stratum's unpenalised loss (``(n_strata,)``, strata in ``np.unique`` order)."""
        eta = self.X @ theta
        shift = float(eta.max())
        r = np.exp(eta - shift)
        o = self._order
        s0 = self._risk_sums(r)
        term = self.e[o] * (np.log(s0) + shift - eta[o])
        labels, inv = np.unique(self.strata[o], return_inverse=True)
        return np.bincount(inv, weights=term, minlength=len(labels))


def _newton(
    model: Breslow, theta: np.ndarray, w: np.ndarray | None, *, tol: float, max_iter: int
) -> tuple[np.ndarray, int]:
    """Damped Newton from ``theta`` until the step's max-norm is below ``tol``; returns ``(theta, iterations)``."""
    loss, g, H = model.evaluate(theta, w)
    for it in range(1, max_iter + 1):
        step = np.linalg.solve(H, g)
        size = 1.0
        while True:  # backtracking keeps every step a descent step (the objective is convex)
            cand = theta - size * step
            new_loss, new_g, new_H = model.evaluate(cand, w)
            if new_loss <= loss + 1e-12 * abs(loss) or size < 1e-8:
                break
            size *= 0.5
        theta, loss, g, H = cand, new_loss, new_g, new_H
        if np.max(np.abs(size * step)) < tol:
            return theta, it
    raise RuntimeError(
        f"Newton did not converge in {max_iter} iterations (last step {np.max(np.abs(step)):.3g})"
    )


def fit(model: Breslow, *, tol: float = 1e-12, max_iter: int = 100) -> np.ndarray:
    """The unique minimiser of ``L(theta; 1)`` by damped Newton from zero (``tol`` on the step)."""
    theta, _ = _newton(model, np.zeros(model.X.shape[1]), None, tol=tol, max_iter=max_iter)
    return theta


def test_quantities(kind: str, theta: np.ndarray, test: dict[str, np.ndarray]) -> np.ndarray:
    """The task's test quantities at ``theta`` (``(n_test,)``).

    ``relative_hazard``: ``exp(x_j . theta)`` for each test point (the official
    code's Cox target); ``query_loss``: each test query's ListMLE loss.
    """
    if kind == "relative_hazard":
        return np.exp(test["X"] @ theta)
    if kind == "query_loss":
        m = Breslow(test["X"], test["t"], test["e"], test["strata"], 0.0)
        return m.terms_loss(theta)
    raise ValueError(f"unknown test quantity {kind!r}")


def loo(
    model: Breslow,
    theta_hat: np.ndarray,
    quantity: str,
    test: dict[str, np.ndarray],
    *,
    tol: float = 1e-10,
    cold_sample: int = 20,
    adam_sample: int = 5,
    seed: int = 0,
) -> dict[str, np.ndarray]:
    """Brute-force leave-one-out: refit without each point, warm-started Newton from ``theta_hat``.

    Returns ``delta`` ``(n, n_test)``: ``f_j(theta_{-i}) - f_j(theta_hat)``;
    ``thetas`` ``(n, d)``; ``seconds`` (the warm LOO's wall time); ``iters``
    (Newton iterations per refit); and, on ``cold_sample`` points drawn with
    ``seed``, ``cold_seconds_per_point`` (a refit from zero, as retraining from
    scratch would) and ``cold_max_diff`` (its largest distance to the warm one);
    on the first ``adam_sample`` of those points, ``adam_seconds_per_point``: a
    retraining as the official code's LOO does it (:func:`adam_retrain`), and
    ``adam_max_diff``, its largest distance to the exact refit.
    """
    n = model.n
    f_hat = test_quantities(quantity, theta_hat, test)
    thetas = np.empty((n, theta_hat.size))
    iters = np.empty(n)
    w = np.ones(n)
    start = time.perf_counter()
    for i in range(n):
        w[i] = 0.0
        thetas[i], iters[i] = _newton(model, theta_hat.copy(), w, tol=tol, max_iter=50)
        w[i] = 1.0
    delta = np.stack([test_quantities(quantity, th, test) for th in thetas]) - f_hat
    seconds = time.perf_counter() - start
    pick = np.random.default_rng(seed).choice(n, size=min(cold_sample, n), replace=False)
    cold_diff = 0.0
    start = time.perf_counter()
    for i in pick:
        w[i] = 0.0
        th, _ = _newton(model, np.zeros_like(theta_hat), w, tol=tol, max_iter=100)
        w[i] = 1.0
        cold_diff = max(cold_diff, float(np.max(np.abs(th - thetas[i]))))
    cold_per_point = (time.perf_counter() - start) / len(pick)
    adam_diff = 0.0
    start = time.perf_counter()
    for i in pick[:adam_sample]:
        w[i] = 0.0
        th = adam_retrain(model, w)
        w[i] = 1.0
        adam_diff = max(adam_diff, float(np.max(np.abs(th - thetas[i]))))
    adam_per_point = (time.perf_counter() - start) / len(pick[:adam_sample])
    return {
        "delta": delta,
        "thetas": thetas,
        "seconds": np.array(seconds),
        "iters": iters,
        "cold_seconds_per_point": np.array(cold_per_point),
        "cold_max_diff": np.array(cold_diff),
        "adam_seconds_per_point": np.array(adam_per_point),
        "adam_max_diff": np.array(adam_diff),
    }


def adam_retrain(
    model: Breslow, w: np.ndarray, *, epochs: int = 200, lr: float = 0.01
) -> np.ndarray:
    """Retrain from zero as the official code's LOO does: Adam (lr 0.01, 200 full-batch epochs).

    The official ``cox/train_cox.py`` trains a bias-free linear Cox model with
    pycox (``tt.optim.Adam``, lr 0.01, batch larger than the data, 200 epochs
    on METABRIC). Here Adam runs on the task's objective divided by the number
    of events (pycox's loss is a mean over events), with the analytic gradient:
    the cost of that retraining without pycox's data loaders and callbacks.
    """
    scale = 1.0 / max(float(np.sum(w * model.e)), 1.0)
    theta = np.zeros(model.X.shape[1])
    m = np.zeros_like(theta)
    v = np.zeros_like(theta)
    b1, b2, eps = 0.9, 0.999, 1e-8
    for k in range(1, epochs + 1):
        _, g, _ = model.evaluate(theta, w, hessian=False)
        g = g * scale
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        theta = theta - lr * (m / (1 - b1**k)) / (np.sqrt(v / (1 - b2**k)) + eps)
    return theta
