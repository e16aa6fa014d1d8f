"""gp-ngd: our earlier sign-NGD reading of the paper's abstract; NOT the paper's algorithm.

Reference: "Dueling Convex Optimization with General Preferences" (ICML 2025,
PMLR 267:52552-52564). This method was written when only the abstract was
readable. The full text has since been read (see ``methods/dueling/rgd.py``):
the paper's algorithms are Relative-Gradient-Descent (Algorithm 1,
``rgd-dueling``) and Epoch-RGD (Algorithm 2, ``epoch-rgd-dueling``), which use
one comparison per step and the raw +-1 bit, with no majority votes and no
batch that grows with ``p``. gp-ngd differs from them in the estimator (a
majority vote over a batch of repeated comparisons of one pair), the step
(normalised, ``eta_k sign(.) u``, with a gap-halving epoch schedule of ours)
and every constant (tuned by us). It stays registered as a tuned sign-NGD
variant in the spirit of beta-NGD (Saha, Koren and Mansour, ICML 2021), kept
for comparison as a baseline. Version 2 (session 41) only moved it from
``methods/`` to ``baselines/`` and changed its kind to ``baseline``: the
algorithm and its numbers are version 1's. Its rate claims in
``tasks/dueling/claims.toml`` ask whether a comparison-based normalised
descent reaches the rates the paper proves for its own algorithm.

What it does (``common.dueling.algorithms.general_ngd``): epochs ``k = 0, 1, ...``
halve a target gap ``eps_k = 2^-k``. In epoch ``k`` each step draws a uniform
direction ``u``, sends ``B_k`` copies of the pair ``(x + gamma_k u, x - gamma_k u)``
in one round, and moves ``x <- x + eta_k sign(mean(bits) - 1/2) u`` (a
normalised step along the direction whose sign the batch estimates). The
comparison bias of that pair is ``c (2 gamma_k g_k / sqrt(d))^p`` with
``g_k`` the gradient-norm floor of the epoch, so ``B_k = c_batch / bias^2``
grows like ``eps_k^-p`` (strongly convex) or ``eps_k^-2p`` (convex): our
guess, from the abstract alone, at where the ``eps^-2p`` and ``eps^-4p`` rates
come from (the paper's proofs get them differently, from Theorem 3's and
Algorithm 2's step sizes).

Deviations (from the paper's Algorithms 1-2, now known)
-------------------------------------------------------
- Not the paper's estimator or schedule (see above).
- The schedule constants. ``c_eta = 2``, ``c_gamma = 64``,
  ``c_batch = 0.25``, ``c_steps = 1`` were tuned by us on
  ``quad-d5-k10-p1``, ``quad-d5-k10-p3`` and ``quad-d20-k10-p3`` (a grid
  over ``c_eta in {1, 3}``, ``c_gamma in {1, 4, 16, 64}``, ``c_batch in {0.1,
  0.5}``, ``c_steps in {0.5, 2}``); the theoretical ``gamma <= eta`` (which
  keeps the ``beta gamma^2`` bias of a non-quadratic below the signal) gave
  batches of 10^4-10^5 and no progress within the budget.
- The transfer function's leading coefficient ``c`` is given to the method
  (``rho_coef``); the paper, too, assumes ``p``, ``r`` and ``c_rho`` known
  (Section 2.1).
- The last iterate is returned (no final selection among iterates).
"""

from __future__ import annotations

import numpy as np

from bench import method
from common.dueling.algorithms import general_ngd
from common.dueling.driver import ProgramDriver


@method(
    name="gp-ngd",
    kind="baseline",
    tasks=["dueling-optimization"],
    reference="our sign-NGD reading of the abstract of Dueling Convex Optimization with General Preferences (ICML 2025, PMLR saha25a); not the paper's algorithm (that is rgd-dueling / epoch-rgd-dueling)",
    version="2",  # 2: a baseline (was kind "method"); the algorithm is unchanged
    params={"c_eta": 2.0, "c_gamma": 64.0, "c_batch": 0.25, "c_steps": 1.0, "max_batch": 100_000},
    deterministic=True,
    deviations="not the paper's algorithm: majority votes over batches and a normalised step (the paper: one raw bit per step, Algorithms 1-2); schedule constants tuned by us; gamma = 64 eta",
)
class GeneralPreferenceNGD:
    """Batched-sign normalised gradient descent, the batch scaled to the degree p."""

    def __init__(
        self,
        instance,
        *,
        seed: int,
        budget: float,
        c_eta: float,
        c_gamma: float,
        c_batch: float,
        c_steps: float,
        max_batch: int,
    ):
        data = instance.data
        prog = general_ngd(
            data,
            np.random.default_rng(seed),
            c_eta=c_eta,
            c_gamma=c_gamma,
            c_batch=c_batch,
            c_steps=c_steps,
            max_batch=int(max_batch),
        )
        self.driver = ProgramDriver(prog, data["x0"])

    def select(self, state):
        return self.driver.select(state)
