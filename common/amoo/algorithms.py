"""The optimisers of ``aligned-multiobjective`` as generator programs, and the driver that runs them.

A program yields ``(x (n, d), obj (n,), hess, point)`` and receives the
task's reply ``{"values", "grads", "hessians"}``; it returns its final point.
Every program reads only the public data: ``d, m, x0, beta (m,), f_star (m,),
grad_budget, hess_budget``.

Weighted-GD step rule shared by the fixed-step methods: ``x <- x - eta_w
sum_i w_i grad f_i(x)`` with ``eta_w = 1 / sum_i w_i beta_i`` (the weighted
objective is ``sum_i w_i beta_i``-smooth).
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import numpy as np
import scipy.optimize

__all__ = [
    "Program",
    "Driver",
    "max_min_eig_weights",
    "polyak_weights",
    "min_norm_weights",
    "camoo",
    "pamoo",
    "equal_weights",
    "equal_weights_polyak",
    "mgda",
    "random_single",
    "best_single",
    "ProgramMethod",
]

Program = Generator[tuple[np.ndarray, np.ndarray, bool, np.ndarray], dict[str, Any], np.ndarray]


class Driver:
    """Turns a :data:`Program` into ``select(state)`` answers."""

    def __init__(self, program: Program) -> None:
        self.program, self.started = program, False

    def select(self, state: dict[str, Any]) -> dict[str, Any]:
        try:
            if not self.started:
                self.started = True
                x, obj, hess, point = next(self.program)
            else:
                x, obj, hess, point = self.program.send(state["reply"])
        except StopIteration as stop:
            return {"done": np.asarray(stop.value, dtype=np.float64)}
        return {
            "x": np.ascontiguousarray(x, dtype=np.float64),
            "obj": np.asarray(obj, dtype=np.int64),
            "hess": bool(hess),
            "point": np.asarray(point, dtype=np.float64).copy(),
        }


def _all(x: np.ndarray, m: int) -> tuple[np.ndarray, np.ndarray]:
    return np.tile(x, (m, 1)), np.arange(m)


def max_min_eig_weights(
    H: np.ndarray, w0: np.ndarray | None = None, iters: int = 200
) -> np.ndarray:
    """``argmax_{w in simplex} lambda_min(sum_i w_i H_i)`` by entropic mirror ascent on the concave ``lambda_min``.

    Supergradient ``v^T H_i v`` (``v`` a unit eigenvector of the smallest
    eigenvalue); step ``1 / (G sqrt(t))`` with ``G`` the largest entry; the best
    iterate is returned. (The solver is ours; the paper's is UNVERIFIED.)
    """
    m = H.shape[0]
    w = np.full(m, 1.0 / m) if w0 is None else np.asarray(w0, dtype=np.float64).copy()
    best, best_val = w.copy(), -np.inf
    for t in range(1, iters + 1):
        ev, V = np.linalg.eigh(np.tensordot(w, H, axes=1))
        if ev[0] > best_val:
            best, best_val = w.copy(), ev[0]
        v = V[:, 0]
        g = np.einsum("i,mij,j->m", v, H, v)
        scale = max(float(np.abs(g).max()), 1e-300)
        w = w * np.exp(np.clip(g / scale / np.sqrt(t), -50, 50))
        w /= w.sum()
    return best


def _qp_simplex_cone(G: np.ndarray, a: np.ndarray | None) -> np.ndarray:
    """``argmin ||G^T w||^2`` over ``w >= 0`` with ``sum w = 1`` (``a is None``) or ``a^T w = 1`` (SLSQP)."""
    m = G.shape[0]
    K = G @ G.T
    c = np.ones(m) if a is None else np.asarray(a, dtype=np.float64)
    w0 = np.full(m, 1.0 / max(float(c.sum()), 1e-300))
    res = scipy.optimize.minimize(
        lambda w: float(w @ K @ w),
        w0,
        jac=lambda w: 2.0 * K @ w,
        constraints=[{"type": "eq", "fun": lambda w: float(c @ w) - 1.0, "jac": lambda w: c}],
        bounds=[(0.0, None)] * m,
        method="SLSQP",
        options={"ftol": 1e-15, "maxiter": 200},
    )
    w = np.clip(res.x, 0.0, None)
    return w / w.sum() if w.sum() > 0 else np.full(m, 1.0 / m)


def polyak_weights(G: np.ndarray, gaps: np.ndarray) -> np.ndarray:
    """``argmax_{w in simplex} (sum_i w_i gap_i)^2 / ||sum_i w_i grad_i||^2``: the weights whose Polyak step
    shrinks ``||x - x*||^2`` the most (a scale-invariant ratio: solved as ``min ||G^T w||^2``, ``gap^T w = 1``)."""
    return _qp_simplex_cone(G, np.maximum(gaps, 0.0))


def min_norm_weights(G: np.ndarray) -> np.ndarray:
    """MGDA: the minimum-norm point of the convex hull of the gradients (Desideri 2012; Sener and Koltun 2018)."""
    return _qp_simplex_cone(G, None)


def _budget_iters(data: dict[str, Any], per_iter: int) -> int:
    return int(data["grad_budget"]) // per_iter


def camoo(data: dict[str, Any], rng: np.random.Generator, *, mirror_iters: int = 40) -> Program:
    """CAMOO: weights maximising the curvature ``lambda_min(sum w_i Hess f_i(x))``, then a weighted-GD step."""
    m, beta = int(data["m"]), np.asarray(data["beta"], dtype=np.float64)
    x = np.asarray(data["x0"], dtype=np.float64).copy()
    w = np.full(m, 1.0 / m)
    for _ in range(min(_budget_iters(data, m), int(data["hess_budget"]) // m)):
        X, idx = _all(x, m)
        rep = yield X, idx, True, x
        w = max_min_eig_weights(rep["hessians"], w0=0.9 * w + 0.1 / m, iters=mirror_iters)
        x = x - (w @ rep["grads"]) / float(w @ beta)
    return x


def pamoo(data: dict[str, Any], rng: np.random.Generator) -> Program:
    """PAMOO: Polyak-step weights from values and gradients only, then the Polyak step on the weighted objective."""
    m, fs = int(data["m"]), np.asarray(data["f_star"], dtype=np.float64)
    x = np.asarray(data["x0"], dtype=np.float64).copy()
    for _ in range(_budget_iters(data, m)):
        X, idx = _all(x, m)
        rep = yield X, idx, False, x
        gaps = np.maximum(rep["values"] - fs, 0.0)
        if gaps.max() <= 0.0:
            break
        w = polyak_weights(rep["grads"], gaps)
        g = w @ rep["grads"]
        nn = float(g @ g)
        if nn <= 0.0:
            break
        x = x - (float(w @ gaps) / nn) * g
    return x


def equal_weights(data: dict[str, Any], rng: np.random.Generator) -> Program:
    """Equal weights ``1/m`` with the weighted-GD step ``1 / mean(beta)``."""
    m, beta = int(data["m"]), np.asarray(data["beta"], dtype=np.float64)
    x = np.asarray(data["x0"], dtype=np.float64).copy()
    for _ in range(_budget_iters(data, m)):
        X, idx = _all(x, m)
        rep = yield X, idx, False, x
        x = x - rep["grads"].mean(axis=0) / float(beta.mean())
    return x


def equal_weights_polyak(data: dict[str, Any], rng: np.random.Generator) -> Program:
    """Equal weights with the Polyak step of the averaged objective (a tuned step for the naive weighting)."""
    m, fs = int(data["m"]), np.asarray(data["f_star"], dtype=np.float64)
    x = np.asarray(data["x0"], dtype=np.float64).copy()
    for _ in range(_budget_iters(data, m)):
        X, idx = _all(x, m)
        rep = yield X, idx, False, x
        g = rep["grads"].mean(axis=0)
        nn = float(g @ g)
        if nn <= 0.0:
            break
        x = x - float(np.mean(rep["values"] - fs)) / nn * g
    return x


def mgda(data: dict[str, Any], rng: np.random.Generator) -> Program:
    """MGDA: the min-norm convex combination of the gradients, weighted-GD step ``1 / sum w_i beta_i``."""
    m, beta = int(data["m"]), np.asarray(data["beta"], dtype=np.float64)
    x = np.asarray(data["x0"], dtype=np.float64).copy()
    for _ in range(_budget_iters(data, m)):
        X, idx = _all(x, m)
        rep = yield X, idx, False, x
        w = min_norm_weights(rep["grads"])
        x = x - (w @ rep["grads"]) / float(w @ beta)
    return x


def random_single(data: dict[str, Any], rng: np.random.Generator) -> Program:
    """One objective drawn uniformly per step, one gradient call, step ``1 / beta_i``."""
    m, beta = int(data["m"]), np.asarray(data["beta"], dtype=np.float64)
    x = np.asarray(data["x0"], dtype=np.float64).copy()
    for _ in range(_budget_iters(data, 1)):
        i = int(rng.integers(m))
        rep = yield x[None, :], np.array([i]), False, x
        x = x - rep["grads"][0] / beta[i]
    return x


def best_single(data: dict[str, Any], rng: np.random.Generator) -> Program:
    """GD on each objective alone (``m`` chains in parallel, step ``1 / beta_j``, ``(budget - m^2) / m`` steps each),
    then the chain whose final point has the smallest ``max_i (f_i - f_i*)`` (``m^2`` value calls) is returned.

    The iterate reported during the run is chain 0's (the selection is only
    known at the end), so this baseline's calls-to-eps curve is not meaningful.
    """
    m, beta = int(data["m"]), np.asarray(data["beta"], dtype=np.float64)
    fs = np.asarray(data["f_star"], dtype=np.float64)
    X = np.tile(np.asarray(data["x0"], dtype=np.float64), (m, 1))
    steps = (int(data["grad_budget"]) - m * m) // m
    for _ in range(max(steps, 0)):
        rep = yield X, np.arange(m), False, X[0]
        X = X - rep["grads"] / beta[:, None]
    rep = yield np.repeat(X, m, axis=0), np.tile(np.arange(m), m), False, X[0]
    gaps = (rep["values"] - np.tile(fs, m)).reshape(m, m).max(axis=1)
    return X[int(np.argmin(gaps))].copy()


class ProgramMethod:
    """Base of the method classes: subclasses set ``program`` (one of the functions above) and may pass params."""

    program: Any = None

    def __init__(self, instance, *, seed: int, budget: float, **params: Any) -> None:
        prog = type(self).program
        self.driver = Driver(prog(instance.data, np.random.default_rng(seed), **params))

    def select(self, state: dict[str, Any]) -> dict[str, Any]:
        return self.driver.select(state)
