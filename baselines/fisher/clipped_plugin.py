"""clipped-plugin: the smoothed plug-in with the density clipped below in the denominator.

``J_hat = integral p_n'^2 / max(p_n, delta_n)`` with
``p_n = (1/n) sum_i phi_t(y - X_i)`` (the method's density) and the floor
``delta_n = phi_t(0) / n``: the height of one sample's bump, the level below
which ``p_n`` is made of isolated kernels and its score carries no
information about ``f``. Clipping the denominator is the device of
Bhattacharya-type estimators to control the score where the estimated
density is small (Cao, Dytso, Fauß, Feng and Poor, Entropy 23(5):545, 2021,
clip the estimated score; UNVERIFIED whether they clip the density or the
score, and with which threshold: the paper's body was not read). The
threshold rule is ours.
"""

from __future__ import annotations

import math

import numpy as np

from bench import method
from common.fisher import mixture_fisher


def floor_for(n: int, t: float) -> np.ndarray:
    """``delta_n = phi_t(0) / n``."""
    return 1.0 / (n * math.sqrt(2.0 * math.pi * t))


@method(
    name="clipped-plugin",
    kind="baseline",
    tasks=["fisher-information"],
    reference="plug-in with a density floor (Bhattacharya-type clipping; Cao et al., Entropy 2021); floor phi_t(0)/n is ours",
    version="1",
    deterministic=True,
)
def solve(instance, *, seed: int, budget: float) -> float:
    """``integral p_n'^2 / max(p_n, phi_t(0) / n)``."""
    t = float(instance.data["t"])
    return np.array([mixture_fisher(x, t, floor=floor_for(len(x), t)) for x in instance.data["x"]])
