"""dsm-fisher: denoising score matching with a linear RBF score model, ``J = E s(Y)^2``.

A score model ``s_theta(y) = theta_0 + theta_1 y + sum_k theta_k psi_k(y)``
(Gaussian bumps ``psi_k`` of width equal to their spacing, spacing
``min(sqrt(t) / 2, range / MAX_BUMPS)``, centred on a grid over
``[min X - 3 sqrt(t), max X + 3 sqrt(t)]``) is fitted by denoising score
matching (Vincent 2011): with ``Y = X_i + sqrt(t) Z``, the least-squares
regression of the target ``(X_i - Y) / t`` on the features (ridge
``RIDGE`` times the mean diagonal of the Gram matrix), over ``TRAIN_ROWS``
noisy copies of the samples (the samples recycled ``ceil(TRAIN_ROWS / n)``
times, fresh noise each time). Then ``J_hat`` is the mean of
``s_theta(Y)^2`` over ``EVAL_ROWS`` fresh noisy copies.

A linear model fitted in closed form keeps the baseline cheap and
deterministic (seeded noise); a neural score network (the usual DSM
estimator) is the obvious stronger variant, not run here (cost).
"""

from __future__ import annotations

import math

import numpy as np

from bench import method

TRAIN_ROWS = 100_000
EVAL_ROWS = 100_000
MAX_BUMPS = 80
RIDGE = 1e-8


def features(y: np.ndarray, centres: np.ndarray, width: float) -> np.ndarray:
    """``[1, y, psi_1(y), ..., psi_K(y)]``."""
    d = (y[:, None] - centres[None, :]) / width
    return np.hstack([np.ones((len(y), 1)), y[:, None], np.exp(-0.5 * d * d)])


def dsm_fisher(x: np.ndarray, t: float, rng: np.random.Generator) -> float:
    """The DSM estimate of ``J(P * phi_t)`` from samples ``x``."""
    x = np.asarray(x, dtype=float)
    sigma = math.sqrt(t)
    lo, hi = float(x.min()) - 3 * sigma, float(x.max()) + 3 * sigma
    spacing = max(sigma / 2, (hi - lo) / MAX_BUMPS)
    centres = np.arange(lo, hi + 0.5 * spacing, spacing)
    reps = math.ceil(TRAIN_ROWS / len(x))
    xt = np.tile(x, reps)
    z = rng.standard_normal(len(xt))
    y = xt + sigma * z
    phi = features(y, centres, spacing)
    gram = phi.T @ phi
    gram[np.diag_indices_from(gram)] += RIDGE * np.trace(gram) / len(gram)
    theta = np.linalg.solve(gram, phi.T @ (-z / sigma))
    xe = x[rng.integers(0, len(x), EVAL_ROWS)]
    ye = xe + sigma * rng.standard_normal(EVAL_ROWS)
    s = features(ye, centres, spacing) @ theta
    return float(np.mean(s * s))


@method(
    name="dsm-fisher",
    kind="baseline",
    tasks=["fisher-information"],
    reference="denoising score matching (Vincent 2011) with a linear RBF score model, J = E s(Y)^2",
    version="1",
    deterministic=True,
    params={},
)
def solve(instance, *, seed: int, budget: float) -> np.ndarray:
    """Per replicate: fit the score by DSM on noisy copies of the sample, then average its square."""
    t = float(instance.data["t"])
    rows = instance.data["x"]
    return np.array(
        [dsm_fisher(x, t, np.random.default_rng([seed, 7, r])) for r, x in enumerate(rows)]
    )
