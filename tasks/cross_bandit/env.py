"""The environments of ``cross-learning-bandit``: context distributions, oblivious loss tables, regret.

Everything here is trusted-side and deterministic in its arguments. Shapes: a loss table is
``float32 (H, K, C)`` with ``table[t, a, c] = loss of action a in context c at round t``, in
``[0, 1]``; contexts of one horizon are ``int16 (R, H)`` (one row per replication); actions the
same shape and any integer dtype.

Two adversaries, both oblivious (the table is fixed before the first round, from the instance's
fields and the horizon alone):

- ``switch`` ("switching best action"): in every context two designated actions ``b1(c)`` and
  ``b2(c)`` trade places once, at :data:`SWITCH_AT` of the horizon. ``b1`` is clearly best before
  the switch and clearly worst after; ``b2`` is the best fixed action over the whole horizon. The
  other actions sit at 0.5. Losses are Bernoulli draws around these means. A learner that locks
  onto ``b1`` early must unlearn it.
- ``auction`` (first-price auction bidding, the paper's motivating example): context ``c`` is the
  bidder's value ``v_c = (c + 1) / C``, action ``k`` the bid ``b_k = k / K``; the bidder wins when
  ``b_k >= m_t``, the highest competing bid, and then gains ``v_c - b_k``. The loss is
  ``(1 - (v_c - b_k) 1[b_k >= m_t]) / 2`` in ``[0, 1]``. The sequence ``m_t`` is oblivious and
  switches between three regimes (a third of the horizon each) with uniform jitter. Seeing the
  outcome of one bid reveals its loss at every value: cross-learning.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = [
    "ENVS",
    "SWITCH_AT",
    "HORIZON_FRACTIONS",
    "horizons",
    "context_distribution",
    "loss_table",
    "contexts",
    "best_policy",
    "regret",
    "hindsight_regret",
    "uniform_expected_regret",
    "loglog_slope",
]

ENVS = ("switch", "auction")
#: The switch happens at this fraction of the horizon (``switch`` env).
SWITCH_AT = 0.3
#: Mean losses of ``(b1, b2)`` before and after the switch; every other action has mean :data:`OTHER_MEAN`.
SWITCH_MEANS = ((0.35, 0.55), (0.6, 0.4))
#: Mean loss of every other action (``switch`` env).
OTHER_MEAN = 0.7
#: Regimes of the competing bid (``auction`` env): centre of ``m_t`` in each third of the horizon.
AUCTION_REGIMES = (0.3, 0.6, 0.45)
AUCTION_JITTER = 0.15
#: Each instance plays these fractions of its horizon ``T`` (shortest first), for the slope in T.
HORIZON_FRACTIONS = (8, 4, 2, 1)


def horizons(T: int) -> list[int]:
    """The horizons an instance plays: ``T/8, T/4, T/2, T`` (``T`` divisible by 8)."""
    return [T // d for d in HORIZON_FRACTIONS]


def _rng(*key: int | str) -> np.random.Generator:
    words = [
        int.from_bytes(k.encode(), "little") % 2**32 if isinstance(k, str) else int(k) for k in key
    ]
    return np.random.default_rng(words)


def context_distribution(env: str, C: int, seed: int) -> np.ndarray:
    """``float64 (C,)``, the context distribution ``nu`` (positive, sums to 1).

    ``switch``: a Dirichlet(1) draw (uneven, so per-context learners see some contexts rarely);
    ``auction``: values spread as a discretised Beta(2, 3) on ``(c + 1) / C``.
    """
    if env == "switch":
        p = _rng("nu", seed, C).dirichlet(np.ones(C))
        p = np.maximum(p, 1e-3)
    else:
        v = (np.arange(C) + 0.5) / C
        p = v * (1 - v) ** 2
    return p / p.sum()


def loss_table(env: str, C: int, K: int, H: int, seed: int) -> np.ndarray:
    """The oblivious loss table ``float32 (H, K, C)`` of one horizon (see the module docstring)."""
    rng = _rng("table", env, seed, C, K, H)
    t = np.arange(H)
    if env == "switch":
        pick = np.stack([rng.choice(K, size=2, replace=False) for _ in range(C)])  # (C, 2): b1, b2
        before = t < int(round(SWITCH_AT * H))
        mean = np.full((H, K, C), OTHER_MEAN, dtype=np.float64)
        cs = np.arange(C)
        for phase, rows in ((0, np.flatnonzero(before)), (1, np.flatnonzero(~before))):
            for j in range(2):
                mean[rows[:, None], pick[:, j][None, :], cs[None, :]] = SWITCH_MEANS[phase][j]
        return (rng.random((H, K, C)) < mean).astype(np.float32)
    if env == "auction":
        third = np.minimum(3 * t // H, 2)
        m = np.asarray(AUCTION_REGIMES)[third] + AUCTION_JITTER * (2 * rng.random(H) - 1)
        bids = np.arange(K) / K
        values = (np.arange(C) + 1) / C
        win = bids[None, :] >= m[:, None]  # (H, K)
        gain = (values[None, None, :] - bids[None, :, None]) * win[:, :, None]
        return ((1.0 - gain) / 2.0).astype(np.float32)
    raise ValueError(f"unknown env {env!r}; envs are {', '.join(ENVS)}")


def contexts(nu: np.ndarray, R: int, H: int, job_seed: int, horizon_index: int) -> np.ndarray:
    """``int16 (R, H)``: iid contexts from ``nu`` for ``R`` replications of one horizon of one job."""
    rng = _rng("contexts", job_seed, horizon_index, R, H)
    return rng.choice(len(nu), size=(R, H), p=nu).astype(np.int16)


def best_policy(table: np.ndarray) -> np.ndarray:
    """``int64 (C,)``: the best fixed policy, ``argmin_a sum_t table[t, a, c]`` in every context.

    With iid contexts, ``E_c sum_t l_t(pi(c), c) = sum_c nu(c) sum_t l_t(pi(c), c)`` is minimised
    context by context, so the best fixed policy in expectation does not depend on ``nu``.
    """
    return np.argmin(table.sum(axis=0, dtype=np.float64), axis=0)


def _played(table: np.ndarray, acts: np.ndarray, ctx: np.ndarray) -> np.ndarray:
    t = np.arange(table.shape[0])[None, :]
    return table[t, acts, ctx].astype(np.float64)


def regret(table: np.ndarray, ctx: np.ndarray, acts: np.ndarray) -> np.ndarray:
    """``float64 (R,)``: ``sum_t l_t(a_t, c_t) - l_t(pi*(c_t), c_t)`` per replication, ``pi*`` = :func:`best_policy`."""
    pi = best_policy(table)
    return (_played(table, acts, ctx) - _played(table, pi[ctx], ctx)).sum(axis=1)


def hindsight_regret(table: np.ndarray, ctx: np.ndarray, acts: np.ndarray) -> np.ndarray:
    """``float64 (R,)``: regret against the best policy in hindsight on each replication's own contexts."""
    R = ctx.shape[0]
    C = table.shape[2]
    best = np.zeros(R)
    for c in range(C):
        mask = (ctx == c).astype(np.float64)  # (R, H)
        best += (mask @ table[:, :, c].astype(np.float64)).min(axis=1)
    return _played(table, acts, ctx).sum(axis=1) - best


def uniform_expected_regret(table: np.ndarray, nu: np.ndarray) -> float:
    """The expected regret of uniform play against :func:`best_policy` (exact, no sampling)."""
    sums = table.sum(axis=0, dtype=np.float64)  # (K, C)
    return float(nu @ (sums.mean(axis=0) - sums.min(axis=0)))


def loglog_slope(x: list[float] | np.ndarray, y: list[float] | np.ndarray) -> float:
    """Least-squares slope of ``log y`` on ``log x``; NaN if any ``y <= 0``."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if np.any(y <= 0) or not np.all(np.isfinite(y)):
        return math.nan
    return float(np.polyfit(np.log(x), np.log(y), 1)[0])
