"""``tsp``: two-sided smoothed primal-dual method on the Moreau-envelope reformulation (Lu, ICML 2025).

UNVERIFIED: the update rule below is **our reading** of the abstract and of
the reformulation the paper builds on, not the paper's algorithm box, which
could not be read here (only the PMLR and OpenReview abstract pages were
reachable; no official code was found). Read: https://proceedings.mlr.press/v267/lu25k.html,
https://openreview.net/forum?id=TiEsk0mf7r. The reformulation is that of
Gao et al. (2023) and Liu et al. (MEHA, ICML 2024, arXiv 2405.09927)::

    min_{x, y} f(x, y)  s.t.  h(x, y) = g(x, y) - v_gamma(x, y) <= 0,
    v_gamma(x, y) = min_theta g(x, theta) + ||theta - y||^2 / (2 gamma)      (Moreau envelope of g(x, .))

TSP is, by the abstract, a primal-dual method on this constraint with
smoothing on both sides (a proximal anchor on the primal variables, one on
the dual variable) whose dual variable weighs the lower-level problem
dynamically. Our reading, one round of three calls per iteration
(``f(x, y)``, ``g(x, y)``, ``g(x, theta)``)::

    v    = g(x, theta) + ||theta - y||^2 / (2 gamma);   h = g(x, y) - v
    dh_x = grad_x g(x, y) - grad_x g(x, theta);         dh_y = grad_y g(x, y) - (y - theta) / gamma
    x     <- x - a_x (grad_x f + lam dh_x) - kappa (x - z_x)                 (primal step, primal smoothing)
    y     <- y - a_y (grad_y f + lam dh_y) - kappa (y - z_y),   a_y = lr_y / (L (1 + lam (1 + 1/(gamma L))))
    theta <- theta - (grad_y g(x, theta) + (theta - y) / gamma) / (L + 1/gamma)   (one step on the envelope's inner problem)
    z     <- z + beta ((x, y) - z)                                            (primal anchor)
    lam   <- max(0, lam + a_lam h - rho (lam - lam_bar))                     (dual ascent with dual smoothing)
    lam_bar <- lam_bar + beta (lam - lam_bar)                                 (dual anchor)

``a_x = lr_x n`` (family units, ``common/bilevel/program.py``). The
``y`` step shrinks as ``lam`` grows: the lower level's weight in the
Lagrangian is ``lam``, and the step follows its curvature (our reading of
"dynamically weigh the lower-level problems").

Parameters
----------
gamma_L
    ``gamma L`` (Moreau parameter in units of ``1/L``).
lam0, lr_lam, rho
    Initial dual variable, dual step, dual smoothing weight.
kappa, beta
    Primal smoothing pull and anchor averaging (both sides use ``beta``).
lr_x, lr_y
    Primal steps, chosen like the baselines' (smallest validation loss on
    development seeds 100-101 of digits-p40, ``scripts/bilevel/tune.py``).

Deviations
----------
- The whole update is UNVERIFIED (above); the paper's stochastic setting is
  run here with exact full-batch oracles.
- Step sizes and smoothing weights are ours (the paper's values are
  UNVERIFIED), chosen on development seeds by the upper objective.
"""

from __future__ import annotations

import numpy as np

from bench import method
from common.bilevel.program import OracleProgram, Program

__all__ = ["TSP"]


@method(
    name="tsp",
    kind="method",
    tasks=["bilevel-hypercleaning"],
    reference=(
        "S. Lu, TSP: A Two-Sided Smoothed Primal-Dual Method for Nonconvex Bilevel Optimization, ICML 2025 "
        "(PMLR 267:40665-40708); update rule UNVERIFIED (our reading of the abstract)"
    ),
    version="1",
    params={
        "gamma_L": 1.0,
        "lam0": 1.0,
        "lr_lam": 100.0,
        "rho": 0.01,
        "kappa": 0.05,
        "beta": 0.1,
        "lr_x": 300.0,
        "lr_y": 1.0,
    },
    deterministic=True,
    deviations=(
        "UNVERIFIED update rule (the algorithm box could not be read): primal-dual on the Moreau-envelope "
        "constraint with proximal anchors on (x, y) and on the dual variable, one inner step on the envelope "
        "per iteration; full-batch oracles; step sizes ours"
    ),
)
class TSP(OracleProgram):
    """Our reading of TSP: smoothed primal-dual on g - v_gamma <= 0 with a dynamic lower-level weight."""

    def program(self) -> Program:
        P = self.params
        lam = float(P["lam0"])
        lam_bar = lam
        a_lam, rho = float(P["lr_lam"]), float(P["rho"])
        kappa, beta = float(P["kappa"]), float(P["beta"])
        ax = float(P["lr_x"]) * self.n
        theta = self.y.copy()
        zx, zy = self.x.copy(), self.y.copy()
        while self.budget_left >= 3:
            L = self.smoothness
            gamma = float(P["gamma_L"]) / L
            rf, rg, rt = yield [
                self.f(self.x, self.y),
                self.g(self.x, self.y),
                self.g(self.x, theta),
            ]
            diff = theta - self.y
            h = rg["value"] - rt["value"] - float(np.sum(diff * diff)) / (2.0 * gamma)
            dhx = rg["gx"] - rt["gx"]
            dhy = rg["gy"] + diff / gamma
            ay = float(P["lr_y"]) / (L * (1.0 + lam * (1.0 + 1.0 / (gamma * L))))
            x_new = self.x - ax * (rf["gx"] + lam * dhx) - kappa * (self.x - zx)
            y_new = self.y - ay * (rf["gy"] + lam * dhy) - kappa * (self.y - zy)
            theta = theta - (rt["gy"] + diff / gamma) / (L + 1.0 / gamma)
            self.x, self.y = x_new, y_new
            zx = zx + beta * (self.x - zx)
            zy = zy + beta * (self.y - zy)
            lam = max(0.0, lam + a_lam * h - rho * (lam - lam_bar))
            lam_bar = lam_bar + beta * (lam - lam_bar)
        return self.x, self.y
