"""randomized-midpoint: the randomized midpoint discretisation of overdamped Langevin; two rounds a step.

Per step of length ``h``, with ``u ~ U(0, 1)`` per particle and the Brownian path ``W``:
``x_mid = x - u h grad V(x) + sqrt(2) W(u h)``, then
``x <- x - h grad V(x_mid) + sqrt(2) W(h)``, ``W(h) = W(u h) + N(0, (1 - u) h)``.

Shen and Lee (NeurIPS 2019) introduced the randomized midpoint method for the *underdamped*
Langevin diffusion; this is its overdamped form (as used, we believe, by He, Balasubramanian and
Erdogdu 2020 and by Anari, Chewi and Vuong 2024; UNVERIFIED). Deviation: overdamped, not
underdamped. Step: ``h = min(1 / (2 beta), (delta beta)^(2/3) / beta)`` with the shared ULA step
``delta`` (the midpoint's bias is of higher order; the 2/3 power is our choice, not tuned per
instance), ``ceil(T / h)`` steps.
"""

from __future__ import annotations

import math

import numpy as np

from bench import method
from common.sampling.driver import OracleSampler, schedule


@method(
    name="randomized-midpoint",
    kind="baseline",
    tasks=["log-concave-sampling"],
    reference="Shen and Lee, The Randomized Midpoint Method for Log-Concave Sampling, NeurIPS 2019 (overdamped form)",
    version="1",
    params={},
    deterministic=True,
    deviations=(
        "Overdamped randomized midpoint (Shen and Lee's is underdamped); step min(1/(2 beta), (delta beta)^(2/3)/beta) "
        "with the shared ULA step delta (our choice)."
    ),
)
class RandomizedMidpoint(OracleSampler):
    """Two sequential gradient rounds per step (at ``x``, then at the random midpoint)."""

    def run(self):
        s = schedule(self.info)
        beta = float(self.info["beta"])
        h = min(0.5 / beta, (s.delta * beta) ** (2.0 / 3.0) / beta)
        x = self.x0
        n, d = x.shape
        steps = max(1, math.ceil(s.T / h - 1e-9))
        period = self.every(steps)
        for t in range(steps):
            u = self.rng.random((n, 1))
            w1 = self.rng.standard_normal(x.shape) * np.sqrt(u * h)
            w2 = self.rng.standard_normal(x.shape) * np.sqrt((1.0 - u) * h)
            g = yield from self.grad(x)
            mid = x - u * h * g + math.sqrt(2.0) * w1
            gm = yield from self.grad(mid)
            x = x - h * gm + math.sqrt(2.0) * (w1 + w2)
            if (t + 1) % period == 0:
                yield from self.snapshot(x)
        yield {"samples": x}
