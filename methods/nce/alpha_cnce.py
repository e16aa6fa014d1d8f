"""alpha-cnce: alpha-centered NCE (alpha-CentNCE) of Ryu, Shah and Wornell, with uniform noise.

Reference: Ryu, Shah and Wornell, A Unified View on Learning Unnormalized Distributions via Noise-Contrastive Estimation (ICML 2025; arXiv 2409.18209); no official code found.

The estimator (our reconstruction, see below): draw ``m = nu n`` noise
samples from the uniform distribution on the support, and minimise the
f_alpha-NCE objective at the alpha-centered model ratio
``r_theta / (E_qn[r_theta^alpha])^(1/alpha)``, ``r_theta = exp(theta^T psi)/q_n``,
which reduces to the convex
``1/(1-alpha) log mean_data r^(alpha-1) + 1/alpha log mean_noise r^alpha``
(:func:`common.nce.estimators.alpha_centered_nce`). Its ends are MC-MLE
(alpha = 1: log-likelihood with an importance-sampling normaliser) and
GlobalGISO (alpha = 0), the two estimators the paper says alpha-CentNCE
unifies; the default alpha = 1/2 is a member strictly between them.

Deviations from the reference
-----------------------------
- UNVERIFIED: the paper's exact display of the alpha-CentNCE objective and of
  its f_alpha could not be read (only its abstract and third-party summaries:
  "alpha-CentNCE unifies MLE, MC-MLE and GlobalGISO"); the objective above is
  derived from the f-NCE (Bregman) principle and checked only at its two ends.
- Noise: uniform on the support (spins or the box), ``nu = m / n = 1``, drawn
  by the method from its seed (ours; the paper's experiments, if any, were not
  read). The noise is public and carries no information about theta*, so it
  is not counted as oracle cost.
- Optimiser: L-BFGS-B from theta = 0 to tight tolerances (the objective is
  convex); no regularisation and no projection onto a bounded parameter set
  (the theory assumes a bounded set: UNVERIFIED radius).
"""

from __future__ import annotations

import numpy as np

from bench import method
from common.nce.estimators import alpha_centered_nce, uniform_noise
from tasks.nce import features


@method(
    name="alpha-cnce",
    kind="method",
    tasks=["unnormalized-estimation"],
    reference="Ryu, Shah and Wornell, A Unified View on Learning Unnormalized Distributions via Noise-Contrastive Estimation (ICML 2025; arXiv 2409.18209); no official code found",
    version="1",
    params={"alpha": 0.5, "nu": 1.0},
    deterministic=False,
    deviations="objective reconstructed from the f-NCE principle (UNVERIFIED display); uniform noise, nu = 1; L-BFGS-B",
)
def solve(instance, *, seed: int, budget: float, alpha: float, nu: float) -> np.ndarray:
    """theta_hat minimising the alpha-centered NCE objective against uniform noise."""
    model, X = instance.data["model"], np.asarray(instance.data["X"], dtype=float)
    rng = np.random.default_rng(seed)
    noise = uniform_noise(model, X.shape[1], max(1, int(round(nu * len(X)))), rng)
    return alpha_centered_nce(features(model, X), features(model, noise), alpha)
