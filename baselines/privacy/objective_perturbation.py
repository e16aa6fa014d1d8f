"""objective-perturbation-lr: private logistic regression by objective perturbation, diffprivlib's mechanism.

Reference: Chaudhuri, Monteleoni and Sarwate, "Differentially Private Empirical
Risk Minimization", JMLR 12 (2011), Algorithm 2; the mechanism of
``diffprivlib.models.LogisticRegression`` (IBM, its ``Vector`` mechanism), with
the library's defaults ``C = 1`` (regulariser ``lambda = 1 / (C n)``) and
``data_norm = 1``, no intercept (the task's classifiers are homogeneous).

Minimise ``mean(log(1 + exp(-y <w, x>))) + (lambda + Delta) / 2 ||w||^2 + <b, w> / n``
with L-BFGS, where ``epsilon' = epsilon - 2 log(1 + c / (n lambda))`` (``c = 1/4``,
the logistic loss's curvature bound); if ``epsilon' <= 0`` then
``Delta = c / (n (e^(epsilon/4) - 1)) - lambda`` and ``epsilon' = epsilon / 2``; ``b``
has a uniform direction and a ``Gamma(d, 2 / epsilon')`` norm. Pure
``epsilon``-DP for replace-one neighbours (``delta = 0``).

Deviations (also in tasks/privacy/README.md)
--------------------------------------------
- diffprivlib itself is not used: version 0.6.6 fails to import with
  scikit-learn 1.9 (installed here). This is our implementation of the same
  mechanism from the paper and the library's documented behaviour; the gamma
  draw is one ``Gamma(d, scale)`` (the library sums four ``Gamma(d/4, scale)``,
  the same law).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import minimize

from bench import method
from common.privacy.learner import PrivateLearner

__all__ = ["ObjectivePerturbation", "objective_perturbation_fit"]

#: Curvature bound of the logistic loss (|l''| <= 1/4).
C_LOGISTIC = 0.25


def objective_perturbation_fit(
    X: np.ndarray, y: np.ndarray, epsilon: float, rng: np.random.Generator, C: float = 1.0
) -> np.ndarray:
    """``w`` of the epsilon-DP objective-perturbation logistic regression (rows of ``X`` in the unit ball)."""
    n, d = X.shape
    X = X / np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True))
    lam = 1.0 / (C * n)
    eps_p = epsilon - 2.0 * math.log(1.0 + C_LOGISTIC / (n * lam))
    extra = 0.0
    if eps_p <= 0:
        extra = C_LOGISTIC / (n * (math.exp(epsilon / 4.0) - 1.0)) - lam
        eps_p = epsilon / 2.0
    direction = rng.standard_normal(d)
    direction /= np.linalg.norm(direction)
    b = direction * rng.gamma(d, 2.0 / eps_p)
    reg = lam + extra

    def fun(w: np.ndarray) -> tuple[float, np.ndarray]:
        m = y * (X @ w)
        loss = np.mean(np.logaddexp(0.0, -m))
        s = -y * 0.5 * (1.0 - np.tanh(m / 2.0))  # -y * sigmoid(-m), stable
        grad = X.T @ s / n
        return (
            float(loss + 0.5 * reg * (w @ w) + (b @ w) / n),
            grad + reg * w + b / n,
        )

    res = minimize(
        fun, np.zeros(d), jac=True, method="L-BFGS-B", options={"maxiter": 500, "gtol": 1e-8}
    )
    return np.asarray(res.x, dtype=np.float64)


@method(
    name="objective-perturbation-lr",
    kind="baseline",
    tasks=["private-classification"],
    reference="Chaudhuri, Monteleoni and Sarwate (JMLR 2011), Algorithm 2, as in diffprivlib's LogisticRegression (C=1, data_norm=1)",
    version="1",
    params={"mechanism": "objective-perturbation", "accountant": "pure-dp", "C": 1.0},
    description="diffprivlib's LogisticRegression mechanism (objective perturbation, Chaudhuri et al. 2011), pure epsilon-DP, L-BFGS.",
    deviations="Own implementation of diffprivlib's mechanism (diffprivlib 0.6.6 does not import with scikit-learn 1.9); no intercept.",
)
class ObjectivePerturbation(PrivateLearner):
    """Objective perturbation at the instance's epsilon; declares ``(epsilon, 0)``."""

    def __init__(
        self, instance, *, seed: int, budget: float, mechanism: str, accountant: str, C: float
    ) -> None:
        super().__init__(instance, seed=seed, budget=budget)
        self.C = float(C)

    def train(self, X, y, epsilon, delta, rng):
        return objective_perturbation_fit(X, y, epsilon, rng, self.C), epsilon, 0.0
