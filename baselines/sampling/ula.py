"""ula: the unadjusted Langevin algorithm, ``x <- x - delta grad V(x) + sqrt(2 delta) xi``; one round a step.

Step ``delta`` and horizon ``T`` from the schedule every method here shares
(``common/sampling/driver.py``): ``delta <= 2 eps / (sqrt(d) beta)`` (stationary W2 bias about
``eps / 2`` on a Gaussian), ``ceil(T / delta)`` steps. Not tuned per instance beyond that rule.
"""

from __future__ import annotations

import math

from bench import method
from common.sampling.driver import OracleSampler, schedule


@method(
    name="ula",
    kind="baseline",
    tasks=["log-concave-sampling"],
    reference="unadjusted Langevin algorithm (Roberts and Tweedie 1996; Dalalyan 2017; Durmus and Moulines 2017)",
    version="1",
    params={},
    deterministic=True,
    deviations="none: step and horizon from the shared schedule (ours)",
)
class ULA(OracleSampler):
    """ULA with the shared step ``delta`` for ``ceil(T / delta)`` steps."""

    def run(self):
        s = schedule(self.info)
        x = self.x0
        steps = max(1, math.ceil(s.T / s.delta - 1e-9))
        period = self.every(steps)
        sq = math.sqrt(2.0 * s.delta)
        for t in range(steps):
            g = yield from self.grad(x)
            x = x - s.delta * g + sq * self.rng.standard_normal(x.shape)
            if (t + 1) % period == 0:
                yield from self.snapshot(x)
        yield {"samples": x}
