"""duel-es: a comparison-based (1+1)-ES with the 1/5th success rule.

The (1+1)-ES needs only the comparison "is the offspring better than the
parent", so it runs on dueling feedback unchanged; under noisy comparisons the
offspring must win the majority of ``repeats`` duels against the parent. Step
size: the 1/5th success rule (Kern, Müller, Hansen, Büche, Ocenasek and
Koumoutsakos 2004, multiplicative form with damping 3). Initial step
``sigma0 * radius``. ``repeats = 64`` and ``sigma0 = 0.3`` tuned by us over
``repeats in {8, 16, 32, 64}`` on four standard instances.
"""

from __future__ import annotations

import numpy as np

from bench import method
from common.dueling.algorithms import es_one_plus_one
from common.dueling.driver import ProgramDriver


@method(
    name="duel-es",
    kind="baseline",
    tasks=["dueling-optimization"],
    reference="(1+1)-ES with the 1/5th success rule (Rechenberg 1973; Kern et al. 2004), majority of repeated comparisons",
    version="1",
    params={"repeats": 64, "sigma0": 0.3},
    deterministic=True,
)
class DuelES:
    """(1+1)-ES on majority-of-``repeats`` comparisons."""

    def __init__(self, instance, *, seed: int, budget: float, repeats: int, sigma0: float):
        data = instance.data
        self.driver = ProgramDriver(
            es_one_plus_one(data, np.random.default_rng(seed), repeats=int(repeats), sigma0=sigma0),
            data["x0"],
        )

    def select(self, state):
        return self.driver.select(state)
