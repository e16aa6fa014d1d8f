"""The optimisers of ``dueling-optimization`` as generator programs (see :mod:`common.dueling.driver`).

Every program reads only the public instance data: ``d``, ``p``, ``budget``,
``x0``, ``radius`` (``D >= ||x0 - x*||``), ``beta``, ``alpha`` (0 when ``f``
is not strongly convex), ``gap0`` and ``rho_coef`` (``c`` in
``rho_p(z) = 1/2 + c z^p + ...``).
"""

from __future__ import annotations

import math
from collections.abc import Generator
from typing import Any

import numpy as np

from common.dueling.driver import Program, unit

__all__ = [
    "C_TILDE",
    "epoch_schedule",
    "general_ngd",
    "beta_ngd",
    "es_one_plus_one",
    "random_search",
    "pairs_per_round",
    "rgd_constants",
    "relative_gradient_descent",
    "epoch_rgd_constants",
    "epoch_rgd",
]

#: The universal constant of the paper's Lemma 8 (``E|g . u| = c~ ||g|| / sqrt(d)``, ``c~ in [1/20, 1]``);
#: Theorem 3 and Algorithm 2 use ``c~ = 1/20``.
C_TILDE = 1.0 / 20.0


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


# ---------------------------------------------------------------------------
# The paper's algorithms (Saha, Koren and Mansour, ICML 2025): Algorithm 1
# (Relative-Gradient-Descent, Theorem 3) and Algorithm 2 (Epoch-RGD, Theorem 6).
# Conventions: the paper's comparison bit is o in {-1, +1} with
# E[o] = rho(f(x') - f(y')) for the pair x' = w + gamma u, y' = w - gamma u and
# rho: R -> [-1, 1] anti-symmetric, so o = +1 leans to "x' is worse". The task
# answers 1 when x' wins with probability rho_task(f(y') - f(x')), rho_task in
# [0, 1]; hence o = 1 - 2 bit and rho = 2 rho_task - 1, whose leading series
# coefficient is a_p = 2 rho_coef. Lemma 1 gives rho'(x) >= (1/2) p a_p |x|^(p-1)
# near 0, i.e. the paper's c_rho = a_p / 2 = rho_coef.
# ---------------------------------------------------------------------------


def pairs_per_round(data: dict[str, Any]) -> int:
    """The fewest pairs per round that let the whole budget fit in the task's round cap.

    One comparison per round (the paper's Algorithm 1) would use at most
    ``max_rounds`` comparisons, 30% of the standard budget; so ``m`` pairs go
    in each round, all centred at the round's iterate, and their ``m`` updates
    are then applied one after another (see :func:`_rgd_run`). One round is
    kept free for the final answer.
    """
    N, cap = int(data["budget"]), int(data["max_rounds"])
    return max(1, math.ceil(N / max(1, cap - 1)))


def _project(w: np.ndarray, center: np.ndarray, radius: float) -> np.ndarray:
    """Euclidean projection onto the ball ``||w - center|| <= radius`` (the domain of the runs)."""
    r = w - center
    n = float(np.linalg.norm(r))
    return w if n <= radius else center + r * (radius / n)


def rgd_constants(data: dict[str, Any], eps: float | None = None) -> dict[str, float]:
    """Theorem 3's ``gamma``, ``eta`` and ``T`` for the instance; ``eps`` from the budget when None.

    Domain: the ball of radius ``R = radius`` around ``x0`` (it contains
    ``x*``), so its diameter is ``D = 2 R``. With ``c = c~^(2p-1) c_rho``,
    ``gamma = c~ eps / (beta sqrt(d) D)``,
    ``eta = p c eps^(2p) / (d^((2p+1)/2) beta^p D^(2p-1))`` and
    ``T = d^(2p+1) beta^(2p) D^(4p) / (p^2 c^2 eps^(4p)) + 1``. Without ``eps``
    it is the smallest the budget ``N`` affords: ``T = N``, i.e.
    ``eps = (d^(2p+1) beta^(2p) D^(4p) / (p^2 c^2 (N - 1)))^(1/(4p))`` (then
    ``eta = D / sqrt(N - 1)``).
    """
    d, p, N = int(data["d"]), int(data["p"]), int(data["budget"])
    beta, c_rho = float(data["beta"]), float(data["rho_coef"])
    D = 2.0 * float(data["radius"])
    c = C_TILDE ** (2 * p - 1) * c_rho
    K = d ** (2 * p + 1) * beta ** (2 * p) * D ** (4 * p) / (p**2 * c**2)
    if eps is None:
        eps = (K / max(1, N - 1)) ** (1.0 / (4 * p))
    gamma = C_TILDE * eps / (beta * math.sqrt(d) * D)
    eta = p * c * eps ** (2 * p) / (d ** ((2 * p + 1) / 2) * beta**p * D ** (2 * p - 1))
    T = K / eps ** (4 * p) + 1.0
    return {"eps": float(eps), "gamma": gamma, "eta": eta, "T": T, "D": D, "c_rho": c_rho}


def _rgd_run(
    ctx: dict[str, Any], w: np.ndarray, eta: float, gamma: float, steps: float
) -> Generator[tuple[np.ndarray, np.ndarray, np.ndarray], np.ndarray, tuple[np.ndarray, bool]]:
    """Algorithm 1's loop for ``steps`` comparisons from ``w`` (or until the budget ends).

    Each round sends ``m`` pairs ``(w + gamma u_i, w - gamma u_i)`` with
    ``u_i`` uniform on the sphere, all at the round's iterate ``w``; the bits
    come back as ``o_i = 1 - 2 bit_i`` and the updates
    ``w <- Proj(w - eta o_i u_i)`` are applied in order. Returns the last
    point and whether all ``steps`` were made.
    """
    rng, d, m, N = ctx["rng"], ctx["d"], ctx["m"], ctx["N"]
    center, R = ctx["center"], ctx["R"]
    done = 0
    while done < steps:
        n = int(min(m, steps - done, N - ctx["used"]))
        if n <= 0:
            return w, False
        U = unit(rng, d, n)
        bits = yield w[None, :] + gamma * U, w[None, :] - gamma * U, w
        ctx["used"] += n
        done += n
        o = 1.0 - 2.0 * np.asarray(bits, dtype=np.float64)
        for i in range(n):
            w = _project(w - eta * o[i] * U[i], center, R)
    return w, True


def relative_gradient_descent(
    data: dict[str, Any], rng: np.random.Generator, *, eps: float | None, m: int | None
) -> Program:
    """Algorithm 1 (Relative-Gradient-Descent) with Theorem 3's ``gamma`` and ``eta``; returns the last iterate."""
    x0 = np.asarray(data["x0"], dtype=np.float64)
    c = rgd_constants(data, eps)
    ctx = {
        "rng": rng,
        "d": int(data["d"]),
        "m": int(m or pairs_per_round(data)),
        "N": int(data["budget"]),
        "used": 0,
        "center": x0,
        "R": float(data["radius"]),
    }
    w, _ = yield from _rgd_run(ctx, x0.copy(), c["eta"], c["gamma"], math.ceil(c["T"]))
    return w


def epoch_rgd_constants(data: dict[str, Any]) -> dict[str, float]:
    """Algorithm 2's ``B`` and ``D_1 = D = radius`` (``||x0 - x*|| <= D``).

    ``B = 2 c_rho p / (alpha + beta) * (alpha^2 / (4 beta))^p * c~^(2p-1) / d^((2p+1)/2)``;
    epoch ``k``: ``eta_k = B D_k^(2p+1)``, ``gamma_k = c~ alpha D_k / (2 beta sqrt(d))``,
    ``t_k = 1 / (2 B^2 D_k^(4p))``, ``D_(k+1) = sqrt(3/4) D_k``.
    """
    d, p = int(data["d"]), int(data["p"])
    alpha, beta, c_rho = float(data["alpha"]), float(data["beta"]), float(data["rho_coef"])
    B = (
        2.0
        * c_rho
        * p
        / (alpha + beta)
        * ((alpha**2 / (4.0 * beta)) ** p * C_TILDE ** (2 * p - 1) / d ** ((2 * p + 1) / 2))
    )
    return {"B": B, "D": float(data["radius"]), "alpha": alpha, "beta": beta}


def epoch_rgd(
    data: dict[str, Any], rng: np.random.Generator, *, eps: float | None, m: int | None
) -> Program:
    """Algorithm 2 (Epoch-RGD): warm-started Relative-Gradient-Descent runs with the paper's schedule.

    With ``eps``: ``k_eps = ceil(log_{4/3}(beta D^2 / (2 eps)))`` epochs, then
    the last point. Without: epochs until the budget ends (the smallest
    ``eps`` the budget affords), the last epoch cut at the budget. ``t_k`` is
    rounded up.
    """
    x0 = np.asarray(data["x0"], dtype=np.float64)
    c = epoch_rgd_constants(data)
    B, Dk, alpha, beta = c["B"], c["D"], c["alpha"], c["beta"]
    d, p = int(data["d"]), int(data["p"])
    if B <= 0.0:
        raise ValueError("Epoch-RGD needs a strong-convexity constant alpha > 0")
    k_eps = math.inf
    if eps is not None:
        k_eps = max(1, math.ceil(math.log(beta * Dk**2 / (2.0 * eps)) / math.log(4.0 / 3.0)))
    ctx = {
        "rng": rng,
        "d": d,
        "m": int(m or pairs_per_round(data)),
        "N": int(data["budget"]),
        "used": 0,
        "center": x0,
        "R": float(data["radius"]),
    }
    w, k = x0.copy(), 1
    while k <= k_eps:
        eta = B * Dk ** (2 * p + 1)
        gamma = C_TILDE * alpha * Dk / (2.0 * beta * math.sqrt(d))
        t_k = math.ceil(1.0 / (2.0 * B**2 * Dk ** (4 * p)))
        w, complete = yield from _rgd_run(ctx, w, eta, gamma, t_k)
        if not complete:
            return w
        Dk *= math.sqrt(0.75)
        k += 1
    return w
