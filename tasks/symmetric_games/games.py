"""n-player symmetric constant-sum normal-form games in count form, and their expected payoffs.

A symmetric game gives a player's payoff as a function of its own action and
of the *multiset* of the other ``n - 1`` players' actions. With ``A`` actions
that multiset is a composition ``m`` of ``n - 1`` into ``A`` parts (counts per
action), so the whole game is a table ``U[a, j]``: the payoff of a player who
plays ``a`` while the others' counts are ``comps[j]``. ``n = 30`` players with
two actions is a 2 x 30 table, not a 2**30 tensor.

Constant sum: for every full profile ``k`` (a composition of ``n``),
``sum_a k_a * U[a, index(k - e_a)] = C``. Every game here has ``C = 1`` and
payoffs in ``[0, 1]``; equal share is ``C / n``.

Games:

- :func:`plurality`: the players on the most popular action share ``C``
  (ties: the tied groups share it); everyone else gets 0. With ``n = 3`` and
  two actions it is the paper's three-player Majority Vote (payoff values
  UNVERIFIED: we read the game's name and role, not its table). Every pure
  profile "all play a" is a symmetric equilibrium, so self-play settles on one
  of them, and a learner that plays it against opponents who settled on
  another gets 0: the coordination trap where equilibrium play is exploitable.
- :func:`random_game`: random positive weights per (profile, action),
  normalised so that the profile's payoffs sum to ``C``.
"""

from __future__ import annotations

import functools
import itertools
import math

import numpy as np

__all__ = [
    "compositions",
    "opponent_probs",
    "expected_payoffs",
    "others_probs",
    "plurality",
    "random_game",
    "build_table",
    "constant_sum_residual",
    "GAMES",
]

TOTAL = 1.0


@functools.cache
def _comps(total: int, parts: int) -> tuple[tuple[int, ...], ...]:
    out = []
    for cut in itertools.combinations(range(total + parts - 1), parts - 1):
        prev, row = -1, []
        for c in (*cut, total + parts - 1):
            row.append(c - prev - 1)
            prev = c
        out.append(tuple(row))
    return tuple(sorted(out, reverse=True))


def compositions(total: int, parts: int) -> np.ndarray:
    """All count vectors of ``parts`` non-negative ints summing to ``total`` (``int64 (M, parts)``), a fixed order."""
    return np.array(_comps(total, parts), dtype=np.int64).reshape(-1, parts)


def _log_coef(comps: np.ndarray) -> np.ndarray:
    total = int(comps[0].sum())
    return math.lgamma(total + 1) - np.array(
        [sum(math.lgamma(c + 1) for c in row) for row in comps]
    )


def opponent_probs(y: np.ndarray, comps: np.ndarray) -> np.ndarray:
    """Multinomial probabilities of each composition when every opponent plays ``y`` independently.

    ``y``: ``(..., A)`` mixed strategies; returns ``(..., M)``.
    """
    y = np.asarray(y, dtype=float)
    lc = _log_coef(comps)
    # log 0 as a huge finite negative number: a zero count then gives 0 * (-1e200) = 0
    # (0 ** 0 = 1) and a positive count gives exp(-huge) = 0.
    logy = np.log(np.maximum(y, 1e-300))
    logy = np.where(y > 0, logy, -1e200)
    terms = comps[None, :, :] * logy.reshape(-1, 1, y.shape[-1])
    p = np.exp(lc[None, :] + terms.sum(-1))
    return p.reshape(*y.shape[:-1], comps.shape[0])


def expected_payoffs(table: np.ndarray, comps: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``u(a; y)`` for every action ``a`` when all ``n - 1`` opponents play ``y``: ``(..., A)``."""
    return opponent_probs(y, comps) @ table.T


@functools.cache
def _shift_index(n_players: int, n_actions: int) -> np.ndarray:
    """``idx[j, a]``: index in ``compositions(n-2)`` of ``comps(n-1)[j] - e_a``, or -1."""
    big = compositions(n_players - 1, n_actions)
    small = {tuple(r): i for i, r in enumerate(compositions(n_players - 2, n_actions).tolist())}
    idx = -np.ones((big.shape[0], n_actions), dtype=np.int64)
    for j, row in enumerate(big.tolist()):
        for a in range(n_actions):
            if row[a] > 0:
                r = list(row)
                r[a] -= 1
                idx[j, a] = small[tuple(r)]
    return idx


def others_probs(x: np.ndarray, y: np.ndarray, n_players: int) -> np.ndarray:
    """Distribution of the other ``n - 1`` players' counts seen by one *opponent*.

    The others are ``n - 2`` fellow opponents playing ``y`` and the learner
    playing ``x``. ``x, y``: ``(K, A)``; returns ``(K, M)`` over
    ``compositions(n - 1, A)``.
    """
    A = y.shape[-1]
    small = compositions(n_players - 2, A)
    ps = opponent_probs(y, small)  # (K, Ms)
    idx = _shift_index(n_players, A)  # (M, A)
    gathered = np.where(idx[None] >= 0, ps[:, np.maximum(idx, 0)], 0.0)  # (K, M, A)
    return np.einsum("kma,ka->km", gathered, x)


def build_table(n_players: int, n_actions: int, pay) -> np.ndarray:
    """``U[a, j] = pay(k, a)`` with ``k = comps[j] + e_a``: the table of a profile payoff rule."""
    comps = compositions(n_players - 1, n_actions)
    U = np.zeros((n_actions, comps.shape[0]))
    for j, m in enumerate(comps.tolist()):
        for a in range(n_actions):
            k = list(m)
            k[a] += 1
            U[a, j] = pay(tuple(k), a)
    return U


def constant_sum_residual(table: np.ndarray, n_players: int) -> float:
    """``max_k |sum_a k_a U[a, k - e_a] - C|`` over full profiles ``k`` (0 for a constant-sum game)."""
    A = table.shape[0]
    index = {tuple(r): i for i, r in enumerate(compositions(n_players - 1, A).tolist())}
    worst = 0.0
    for k in compositions(n_players, A).tolist():
        s = 0.0
        for a in range(A):
            if k[a] > 0:
                m = list(k)
                m[a] -= 1
                s += k[a] * table[a, index[tuple(m)]]
        worst = max(worst, abs(s - TOTAL))
    return worst


def plurality(n_players: int, n_actions: int) -> np.ndarray:
    """The plurality game (Majority Vote for ``n = 3``, two actions): the largest group(s) share ``C``."""

    def pay(k: tuple[int, ...], a: int) -> float:
        top = max(k)
        winners = sum(c for c in k if c == top)
        return TOTAL / winners if k[a] == top else 0.0

    return build_table(n_players, n_actions, pay)


def random_game(n_players: int, n_actions: int, g: int) -> np.ndarray:
    """A random symmetric constant-sum game: log-normal weights ``exp(1.5 z)`` per (profile, action), normalised.

    The stream is ``numpy.random.default_rng([g, n_players, n_actions])``.
    """
    rng = np.random.default_rng([g, n_players, n_actions])
    weights: dict[tuple[tuple[int, ...], int], float] = {}
    for k in compositions(n_players, n_actions).tolist():
        for a in range(n_actions):
            if k[a] > 0:
                weights[(tuple(k), a)] = float(np.exp(1.5 * rng.standard_normal()))

    def pay(k: tuple[int, ...], a: int) -> float:
        z = sum(k[b] * weights[(k, b)] for b in range(n_actions) if k[b] > 0)
        return TOTAL * weights[(k, a)] / z

    return build_table(n_players, n_actions, pay)


GAMES = ("plurality", "random")
