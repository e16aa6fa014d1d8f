"""interaction-screening: interaction screening (ISO) per coordinate, couplings averaged over their two ends; on the box the generalised form with statistics centred under the uniform base measure. Deviation: no l1 penalty (the models are small and the metric is the l2 error; RISE/ISO with lambda = 0). UNVERIFIED: the exact GISO centring of Shah et al. for the box families.

Reference: Vuffray, Misra, Lokhov and Chertkov (NeurIPS 2016), interaction screening; on the box the generalised ISO of Vuffray et al. (2022) / Shah et al. (2021) with uniform centring; no l1 penalty.
"""

from __future__ import annotations

import numpy as np

from bench import method
from common.nce import estimators


@method(
    name="interaction-screening",
    kind="baseline",
    tasks=["unnormalized-estimation"],
    reference="Vuffray, Misra, Lokhov and Chertkov (NeurIPS 2016), interaction screening; on the box the generalised ISO of Vuffray et al. (2022) / Shah et al. (2021) with uniform centring; no l1 penalty",
    version="1",
    deterministic=True,
)
def solve(instance, *, seed: int, budget: float) -> np.ndarray:
    """theta_hat of the baseline (see the module docstring)."""
    model, X = instance.data["model"], np.asarray(instance.data["X"], dtype=float)
    return estimators.interaction_screening(model, X)
