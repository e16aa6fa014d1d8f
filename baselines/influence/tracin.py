"""tracin-grad: TracIn-style gradient similarity at the trained model.

Pruthi, Liu, Kale and Sundararajan (NeurIPS 2020) score a training point by
the sum over checkpoints of the learning rate times the dot product of its
loss gradient with the test gradient. The task's model is trained by
Newton's method, so there is one checkpoint (the trained model) and no
learning rate (a positive factor, which no correlation sees): the score is
``grad term_i(theta_hat) . grad f_j(theta_hat)`` with the per-point terms of
``naive-if``. No Hessian: it shows what the curvature adds.
"""

from __future__ import annotations

import numpy as np
import torch

from bench import method
from common.influence.autodiff import Problem
from common.influence.scores import tracin


@method(
    name="tracin-grad",
    kind="baseline",
    tasks=["influence-attribution"],
    reference="Pruthi, Liu, Kale and Sundararajan, Estimating Training Data Influence by Tracing Gradient Descent (NeurIPS 2020), one checkpoint",
    version="1",
    deterministic=False,  # the scores are; the session's solution also holds the task's clock
    deviations="One checkpoint (the Newton-trained model), no learning-rate factor; per-point terms of the loss.",
)
def solve(instance, *, seed: int, budget: float) -> np.ndarray:
    """``grad term_i . grad f_j`` for every point and test quantity (``(n, n_test)``)."""
    torch.set_num_threads(1)
    return tracin(Problem(instance.data)).numpy().astype(np.float64)
