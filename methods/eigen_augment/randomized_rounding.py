"""randomized-rounding: the relaxation, then repeated independent rounding (our reading of the paper).

Lamperski, Yang and Prokopyev (ICML 2025) solve the concave relaxation
``max lambda_min(M + sum_i x_i A_i)  s.t.  sum_i x_i <= k, 0 <= x <= 1`` and
round its solution by "a simple randomized rounding method"; their guarantee
(a constant factor when ``OPT - lambda_min(M) = Omega(R ln k)``, ``R`` the
largest trace of an ``A_i``) rests on a new lower-tail matrix Chernoff bound
for "the minimum eigenvalue of a sum of independent random positive
semidefinite matrices". Only the abstract (PMLR v267 lamperski25a, OpenReview
q4cNdrwKAk) could be read; no official code was found.

Two readings of the rounding are registered, both sums of independent random
PSD matrices as the abstract requires:

- ``randomized-rounding``: keep candidate ``i`` with probability ``x_i``,
  independently (``E sum = sum x_i A_i``); a draw with more than ``k``
  indices is infeasible and discarded;
- ``randomized-rounding-sampling``: ``k`` independent draws of an index with
  probability ``x_i / sum x``; the set is their union (at most ``k``, never
  infeasible).

Each repeats ``reps`` draws and keeps the feasible set with the largest
``lambda_min`` (a draw is cheap next to the relaxation).

Deviations from the reference
-----------------------------
- UNVERIFIED: which of the two schemes the paper uses, whether it scales ``x``
  first, and its repetition rule (``reps = 100`` is ours).
- If no Bernoulli draw is feasible (rare: ``sum x <= k`` keeps the overshoot
  probability near 1/2), the best draw is cut to the ``k`` indices with the
  largest ``x`` (ours).
- The relaxation is solved with cvxpy and SCS (the task's own
  :func:`tasks.eigen_augment.solve_relaxation`); the paper's solver is unknown.
"""

from __future__ import annotations

import numpy as np

from bench import method
from tasks.eigen_augment import augmented, lambda_min, solve_relaxation

__all__ = ["round_bernoulli", "round_sampling", "solve", "solve_sampling"]


def _best(M, F, sets) -> np.ndarray:
    m = len(F)
    best, best_val = None, -np.inf
    for s in sets:
        w = np.zeros(m)
        w[s] = 1.0
        val = lambda_min(augmented(M, F, w))
        if val > best_val:
            best, best_val = s, val
    return np.asarray(best, dtype=np.int64)


def round_bernoulli(x: np.ndarray, k: int, reps: int, rng: np.random.Generator) -> list[np.ndarray]:
    """``reps`` independent Bernoulli(x) draws, the feasible ones (``|I| <= k``) kept.

    If none is feasible, the first draw cut to its ``k`` largest ``x`` is returned alone.
    """
    draws = [np.flatnonzero(rng.random(len(x)) < x) for _ in range(reps)]
    feasible = [d for d in draws if len(d) <= k]
    if feasible:
        return feasible
    d = draws[0]
    return [np.sort(d[np.argsort(-x[d], kind="stable")[:k]])]


def round_sampling(x: np.ndarray, k: int, reps: int, rng: np.random.Generator) -> list[np.ndarray]:
    """``reps`` sets, each the union of ``k`` draws with probabilities ``x / sum x``."""
    p = x / x.sum()
    return [np.unique(rng.choice(len(x), k, replace=True, p=p)) for _ in range(reps)]


def _solve(instance, seed: int, reps: int, scheme) -> np.ndarray:
    M, F, k = (
        np.asarray(instance.data["M"]),
        np.asarray(instance.data["F"]),
        int(instance.data["k"]),
    )
    x = solve_relaxation(M, F, k)["x"]
    rng = np.random.default_rng(seed)
    return _best(M, F, scheme(x, k, reps, rng))


@method(
    name="randomized-rounding",
    kind="method",
    tasks=["eigenvalue-augmentation"],
    reference="Lamperski, Yang and Prokopyev, Simple Randomized Rounding for Max-Min Eigenvalue Augmentation (ICML 2025); abstract only, no official code",
    version="1",
    deterministic=True,
    params={"reps": 100},
    deviations="UNVERIFIED rounding scheme (independent Bernoulli(x_i)) and repetition rule (best of 100); SCS for the relaxation",
)
def solve(instance, *, seed: int, budget: float, reps: int) -> np.ndarray:
    """Relaxation, then the best feasible of ``reps`` independent Bernoulli(x) roundings."""
    return _solve(instance, seed, reps, round_bernoulli)


@method(
    name="randomized-rounding-sampling",
    kind="method",
    tasks=["eigenvalue-augmentation"],
    reference="Lamperski, Yang and Prokopyev, Simple Randomized Rounding for Max-Min Eigenvalue Augmentation (ICML 2025); abstract only, no official code",
    version="1",
    deterministic=True,
    params={"reps": 100},
    deviations="UNVERIFIED rounding scheme (k draws with replacement, probabilities x / sum x) and repetition rule (best of 100); SCS for the relaxation",
)
def solve_sampling(instance, *, seed: int, budget: float, reps: int) -> np.ndarray:
    """Relaxation, then the best of ``reps`` unions of ``k`` draws proportional to ``x``."""
    return _solve(instance, seed, reps, round_sampling)
