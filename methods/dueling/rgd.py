"""The paper's algorithms: Relative-Gradient-Descent (Algorithm 1) and Epoch-RGD (Algorithm 2).

Reference: Saha, Koren and Mansour, "Dueling Convex Optimization with General
Preferences" (ICML 2025, PMLR 267:52552-52564), full text read in the code
index (Sections 3-4, Appendices C-D). No official code exists; the paper has no
experiments.

``rgd-dueling`` (Algorithm 1, Theorem 3, smooth convex ``f``): from ``w_1 = x0``,
each step draws ``u_t`` uniform on the unit sphere, plays the duel
``(w_t + gamma u_t, w_t - gamma u_t)``, reads the bit ``o_t in {-1, +1}``
(``E[o_t] = rho(f(x'_t) - f(y'_t))``, so ``+1`` leans to "``x'_t`` is worse") and
updates ``w_(t+1) = Proj_D(w_t - eta o_t u_t)``, with Theorem 3's
``gamma = c~ eps / (beta sqrt(d) D)``,
``eta = p c_rho c~^(2p-1) eps^(2p) / (d^((2p+1)/2) beta^p D^(2p-1))``,
``T = d^(2p+1) beta^(2p) D^(4p) / (p^2 (c~^(2p-1) c_rho)^2 eps^(4p)) + 1`` and
``c~ = 1/20``. The theorem bounds the best iterate: ``min_t E[f(w_t)] - f* <= eps``.

``epoch-rgd-dueling`` (Algorithm 2, Theorem 6, smooth and ``alpha``-strongly
convex ``f``): ``D_1 = D >= ||w_1 - w*||``,
``B = 2 c_rho p / (alpha + beta) ((alpha^2 / 4 beta)^p c~^(2p-1) / d^((2p+1)/2))``;
epoch ``k`` runs Algorithm 1 from ``w_k`` with ``eta_k = B D_k^(2p+1)``,
``gamma_k = c~ alpha D_k / (2 beta sqrt(d))`` for ``t_k = 1 / (2 B^2 D_k^(4p))``
steps, its last point being ``w_(k+1)``, then ``D_(k+1) = sqrt(3/4) D_k``; after
``k_eps = ceil(log_{4/3}(beta D^2 / (2 eps)))`` epochs it returns ``w_(k_eps + 1)``.

Both are in ``common.dueling.algorithms`` (``relative_gradient_descent``,
``epoch_rgd``); every constant is computed from the instance's public data.

Choices and deviations
----------------------
- Bit convention: the task answers ``1`` when ``x'`` wins, with probability
  ``rho_task(f(y') - f(x'))`` in ``[0, 1]``; the paper's bit is ``o = 1 - 2 bit``
  and its transfer ``rho = 2 rho_task - 1`` (anti-symmetric, values in [-1, 1]).
- ``c_rho``: the task publishes ``rho_coef``, the leading coefficient of
  ``rho_task - 1/2``, so the paper's ``rho`` has leading coefficient
  ``a_p = 2 rho_coef``; Lemma 1 gives ``rho'(x) >= (1/2) p a_p |x|^(p-1)`` near 0,
  i.e. ``c_rho = a_p / 2 = rho_coef`` (for the clipped cubic, ``p = 3``, ``a_p``
  itself would also do: the choice is conservative by 2 there).
- ``beta``, ``alpha``, ``D``: the task's public ``beta`` (for the quartic a bound
  on its sublevel set ``f <= 1``), ``alpha`` and ``radius`` (``||x0 - x*||``). The
  domain is the ball of radius ``radius`` around ``x0`` (the smallest set known
  to contain ``x*``): Algorithm 1 uses its diameter ``D = 2 radius``; Algorithm 2
  uses ``D = radius`` (its ``||w_1 - w*|| <= D``) and its inner runs project on
  the same ball. The query points ``w +- gamma u`` are not projected (the paper
  does not say; the task accepts any point).
- ``eps`` (``eps = None``, the default): the task fixes a comparison budget
  ``N``, not an accuracy. Algorithm 1 takes the smallest ``eps`` whose
  Theorem 3 horizon fits the budget (``T = N``, which makes ``eta = D / sqrt(N - 1)``);
  Algorithm 2 runs epochs until the budget ends, the last one cut at the
  budget (the smallest ``eps`` the budget affords). With the paper's constants
  the budget affords little: on the standard tier Algorithm 1's ``eps`` is 3.7
  to 50 (initial gap 1), and Algorithm 2's first epoch alone needs
  ``t_1 = 1.2e9`` to ``2.5e29`` comparisons (2e5 in the budget), so its runs
  never leave epoch 1. A numeric ``eps`` restores the paper's stopping rules.
- Output: Algorithm 1 names none; Theorem 3 bounds the best iterate, which a
  comparison-only method cannot identify without further comparisons, so the
  last iterate is returned. Algorithm 2 returns the last point, as the paper.
  ``t_k`` is rounded up.
- Rounds: one comparison per round (the paper's loop) would use at most the
  task's round cap (``max_rounds``, 30% of the standard budget). So each
  round sends ``m`` pairs, all centred at the round's iterate with independent
  ``u_i``, and applies their ``m`` updates in order (``m`` = the fewest that fit
  the budget in the cap: 4 in the standard tier, 6 in the full; the smoke tier
  sets ``pairs_per_round = 8`` to keep the family's smoke run short). Pairs
  2..m of a round are thus centred at a point at most ``(m - 1) eta`` away
  from the paper's (``eta`` is 0.0045-0.007 for Algorithm 1 here).
- ``epoch-rgd-dueling`` skips instances with ``alpha = 0`` (the quartic): with
  ``alpha = 0``, ``B = 0`` and Algorithm 2 is undefined.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bench import method
from common.dueling.algorithms import epoch_rgd, relative_gradient_descent
from common.dueling.driver import ProgramDriver

REFERENCE = (
    "Saha, Koren and Mansour, Dueling Convex Optimization with General Preferences "
    "(ICML 2025, PMLR saha25a)"
)


def _strongly_convex(instance: Any) -> bool | str:
    if float(instance.data["alpha"]) > 0.0:
        return True
    return "Algorithm 2 needs a strong-convexity constant alpha > 0 (this instance publishes alpha = 0)"


@method(
    name="rgd-dueling",
    kind="method",
    tasks=["dueling-optimization"],
    reference=REFERENCE + ", Algorithm 1 (Relative-Gradient-Descent) with Theorem 3's constants",
    version="1",
    params={"eps": None, "pairs_per_round": None},
    tier_params={"smoke": {"pairs_per_round": 8}},
    deterministic=True,
    deviations=(
        "eps chosen so that Theorem 3's horizon T equals the comparison budget; m pairs per round "
        "(the task's round cap), centred at the round's iterate, their updates applied in order; "
        "domain = ball of radius ||x0 - x*|| around x0 (D = its diameter); c_rho = rho_coef (Lemma 1); "
        "the last iterate is returned (Theorem 3 bounds the best one)"
    ),
)
class RelativeGradientDescent:
    """Algorithm 1: one comparison per step, ``w <- Proj(w - eta o u)``, Theorem 3's ``gamma`` and ``eta``."""

    def __init__(self, instance, *, seed: int, budget: float, eps, pairs_per_round):
        data = instance.data
        prog = relative_gradient_descent(
            data,
            np.random.default_rng(seed),
            eps=None if eps is None else float(eps),
            m=None if pairs_per_round is None else int(pairs_per_round),
        )
        self.driver = ProgramDriver(prog, data["x0"])

    def select(self, state):
        return self.driver.select(state)


@method(
    name="epoch-rgd-dueling",
    kind="method",
    tasks=["dueling-optimization"],
    reference=REFERENCE + ", Algorithm 2 (Epoch-RGD) with its constants",
    version="1",
    params={"eps": None, "pairs_per_round": None},
    tier_params={"smoke": {"pairs_per_round": 8}},
    deterministic=True,
    supports=_strongly_convex,
    deviations=(
        "epochs run until the comparison budget ends (the first epoch needs 1e9-1e29 comparisons "
        "with the paper's B, so runs stay in epoch 1); m pairs per round as rgd-dueling; "
        "D = ||x0 - x*||, projection on that ball around x0; c_rho = rho_coef (Lemma 1); t_k rounded up; "
        "instances with alpha = 0 skipped"
    ),
)
class EpochRGD:
    """Algorithm 2: warm-started Relative-Gradient-Descent epochs, ``D_(k+1) = sqrt(3/4) D_k``."""

    def __init__(self, instance, *, seed: int, budget: float, eps, pairs_per_round):
        data = instance.data
        prog = epoch_rgd(
            data,
            np.random.default_rng(seed),
            eps=None if eps is None else float(eps),
            m=None if pairs_per_round is None else int(pairs_per_round),
        )
        self.driver = ProgramDriver(prog, data["x0"])

    def select(self, state):
        return self.driver.select(state)
