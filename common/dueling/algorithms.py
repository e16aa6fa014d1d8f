"""The optimisers of ``dueling-optimization`` as generator programs (see :mod:`common.dueling.driver`).

Every program reads only the public instance data: ``d``, ``p``, ``budget``,
``x0``, ``radius`` (``D >= ||x0 - x*||``), ``beta``, ``alpha`` (0 when ``f``
is not strongly convex), ``gap0`` and ``rho_coef`` (``c`` in
``rho_p(z) = 1/2 + c z^p + ...``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from common.dueling.driver import Program, unit

__all__ = ["epoch_schedule", "general_ngd", "beta_ngd", "es_one_plus_one", "random_search"]


def epoch_schedule(data: dict[str, Any], k: int) -> dict[str, float]:
    """Target gap, gradient-norm floor, step, perturbation and signal of epoch ``k`` (halving the gap).

    ``eps_k = gap0 2^-k``. While the gap is above ``eps_k / 2``, ``||grad f||``
    is at least ``g_k = sqrt(alpha eps_k)`` (strongly convex) or
    ``eps_k / (2 D)`` (convex). The normalised step is ``eta_k = g_k / (beta
    sqrt(d))`` (the step that a sign-correct move along a random direction
    ``u`` with ``|<grad, u>| ~ g_k / sqrt(d)`` can afford under
    ``beta``-smoothness) and the comparison bias a pair ``x +- gamma u``
    shows is ``c (2 gamma g_k / sqrt(d))^p``.
    """
    d, beta, alpha, D = (
        int(data["d"]),
        float(data["beta"]),
        float(data["alpha"]),
        float(data["radius"]),
    )
    eps = float(data["gap0"]) * 2.0**-k
    g = math.sqrt(alpha * eps) if alpha > 0 else eps / (2.0 * max(D, 1e-12))
    eta = g / (beta * math.sqrt(d))
    return {"eps": eps, "g": g, "eta": eta, "steps_unit": beta * d * eps / g**2}


def general_ngd(
    data: dict[str, Any],
    rng: np.random.Generator,
    *,
    c_eta: float,
    c_gamma: float,
    c_batch: float,
    c_steps: float,
    max_batch: int,
) -> Program:
    """Normalised gradient descent with a batched sign estimate whose batch grows with ``p`` (see methods/dueling)."""
    d, p, N = int(data["d"]), int(data["p"]), int(data["budget"])
    coef = float(data["rho_coef"])
    x = np.asarray(data["x0"], dtype=np.float64).copy()
    used, k = 0, 0
    while True:
        s = epoch_schedule(data, k)
        eta, gamma = c_eta * s["eta"], c_gamma * c_eta * s["eta"]
        bias = min(0.5, coef * (2.0 * gamma * s["g"] / math.sqrt(d)) ** p)
        B = int(min(max_batch, max(1, math.ceil(c_batch / bias**2))))
        T = max(1, math.ceil(c_steps * s["steps_unit"]))
        for _ in range(T):
            if used + B > N:
                return x
            u = unit(rng, d)
            bits = yield (
                np.repeat((x + gamma * u)[None, :], B, axis=0),
                np.repeat((x - gamma * u)[None, :], B, axis=0),
                x,
            )
            used += B
            m = float(np.mean(bits)) - 0.5
            if m != 0.0:
                x = x + eta * math.copysign(1.0, m) * u  # x + gamma u won more often: move along u
        k += 1


def beta_ngd(
    data: dict[str, Any],
    rng: np.random.Generator,
    *,
    c_eta: float,
    c_gamma: float,
    c_steps: float,
    batch: int,
) -> Program:
    """beta-NGD (Saha, Koren & Mansour 2021): one sign bit per direction, ``batch`` directions per round.

    Each comparison ``x + gamma u_i`` vs ``x - gamma u_i`` gives ``o_i in
    {-1, +1}``; the step is ``x <- x - eta * normalise(mean_i(-o_i u_i))``
    (the batch-``m`` version of Saha, Feldman, Koren & Mansour 2023; ``m = 1``
    is the 2021 algorithm). Epochs halve the target gap as in
    :func:`epoch_schedule`; the batch does not grow with ``p``.
    """
    d, N = int(data["d"]), int(data["budget"])
    x = np.asarray(data["x0"], dtype=np.float64).copy()
    used, k = 0, 0
    while True:
        s = epoch_schedule(data, k)
        eta, gamma = c_eta * s["eta"], c_gamma * c_eta * s["eta"]
        T = max(1, math.ceil(c_steps * s["steps_unit"]))
        for _ in range(T):
            if used + batch > N:
                return x
            U = unit(rng, d, batch)
            bits = yield x[None, :] + gamma * U, x[None, :] - gamma * U, x
            used += batch
            o = 2.0 * np.asarray(bits, dtype=np.float64) - 1.0  # +1: x + gamma u_i won
            g = -(o[:, None] * U).mean(axis=0)  # points uphill
            n = float(np.linalg.norm(g))
            if n > 0:
                x = x - eta * g / n
        k += 1


def es_one_plus_one(
    data: dict[str, Any], rng: np.random.Generator, *, repeats: int, sigma0: float
) -> Program:
    """Comparison-based (1+1)-ES with the 1/5th success rule.

    Offspring ``x' = x + sigma z`` (``z`` standard normal / sqrt(d)); ``x'`` replaces ``x``
    when it wins the majority of ``repeats`` comparisons against ``x`` (ties:
    ``x`` stays); ``sigma`` is multiplied by ``exp(0.8 / 3)`` on success and by
    ``exp(-0.2 / 3)`` on failure (Kern et al. 2004's 1/5th rule, damping 3).
    """
    d, N = int(data["d"]), int(data["budget"])
    x = np.asarray(data["x0"], dtype=np.float64).copy()
    sigma = sigma0 * float(data["radius"])
    used = 0
    while used + repeats <= N:
        cand = x + sigma * rng.standard_normal(d) / math.sqrt(d)
        bits = yield (
            np.repeat(cand[None, :], repeats, axis=0),
            np.repeat(x[None, :], repeats, axis=0),
            x,
        )
        used += repeats
        if 2 * int(np.sum(bits)) > repeats:
            x = cand
            sigma *= math.exp(0.8 / 3.0)
        else:
            sigma *= math.exp(-0.2 / 3.0)
    return x


def random_search(
    data: dict[str, Any], rng: np.random.Generator, *, repeats: int, per_round: int
) -> Program:
    """Pure random search: candidates uniform in the ball of radius ``D`` around ``x0``, each duelled
    ``repeats`` times against the incumbent (majority wins); ``per_round`` candidates per round, all
    against the same incumbent, the best-scoring winner (most wins) replaces it."""
    d, N = int(data["d"]), int(data["budget"])
    x0 = np.asarray(data["x0"], dtype=np.float64)
    D = float(data["radius"])
    x = x0.copy()
    used = 0
    while True:
        c = max(0, min(per_round, (N - used) // repeats))
        if c == 0:
            return x
        U = unit(rng, d, c) * (rng.random(c) ** (1.0 / d))[:, None] * D + x0[None, :]
        X = np.repeat(U, repeats, axis=0)
        bits = yield X, np.repeat(x[None, :], c * repeats, axis=0), x
        used += c * repeats
        wins = np.asarray(bits, dtype=np.int64).reshape(c, repeats).sum(axis=1)
        best = int(np.argmax(wins))
        if 2 * wins[best] > repeats:
            x = U[best].copy()
