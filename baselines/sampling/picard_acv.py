"""picard-lmc-acv: parallel Picard LMC after Anari, Chewi and Vuong, "Fast parallel sampling under
isoperimetry" (COLT 2024, arXiv 2401.09016): windows one after another, ``K`` Picard sweeps each.

The paper was not read here (UNVERIFIED): we implement the scheme as Zhou and Sugiyama's abstract
and our card describe it, ``O~(log d)`` windows times ``O~(log d)`` Picard sweeps per window,
hence ``O~(log^2 d)`` adaptive rounds. Each window ``[0, h]`` is cut into ``M`` Euler sub-steps
(``common/sampling/picard.py``); the first guess is the window's start held constant; each
sweep queries the ``M`` gradients of all particles in one batch.

Deviations and UNVERIFIED points
--------------------------------
- Anari, Chewi and Vuong discretise with randomized midpoints inside a window, we believe
  (UNVERIFIED); Euler sub-steps here, as in picard-parallel, so the comparison isolates the
  schedule.
- Schedule shared with every method (``common/sampling/driver.py``): ``h = 1 / (2 beta)``,
  ``K = ceil(log2(sqrt(d) / eps)) + 2`` sweeps per window (each halves the window error, since
  ``beta h = 1/2``), ``N = ceil(T / h)`` windows.
"""

from __future__ import annotations

import numpy as np

from bench import method
from common.sampling.driver import OracleSampler, schedule
from common.sampling.picard import brownian, picard_sweep


@method(
    name="picard-lmc-acv",
    kind="baseline",
    tasks=["log-concave-sampling"],
    reference="Anari, Chewi and Vuong, Fast parallel sampling under isoperimetry, COLT 2024 (arXiv 2401.09016)",
    version="1",
    params={},
    deterministic=True,
    deviations=(
        "Paper not read (UNVERIFIED): sequential windows with K = ceil(log2(sqrt(d)/eps)) + 2 Picard sweeps each "
        "(N K rounds); Euler sub-steps instead of (we believe) randomized midpoints; shared schedule."
    ),
)
class PicardLMCACV(OracleSampler):
    """``N`` windows one after another, ``K`` Picard sweeps each (``N * K`` rounds)."""

    def run(self):
        s = schedule(self.info)
        x = self.x0
        n, d = x.shape
        period = self.every(s.N)
        for w in range(s.N):
            noise = brownian(self.rng, s.M, n, d, s.delta)
            traj = np.broadcast_to(x, (s.M + 1, n, d))
            for _ in range(s.K):
                G = yield from self.grad(np.ascontiguousarray(traj[: s.M]).reshape(-1, d))
                traj = picard_sweep(x, G.reshape(s.M, n, d), noise, s.delta)
            x = traj[s.M].copy()
            if w % period == 0 or w == s.N - 1:
                yield from self.snapshot(x)
        yield {"samples": x}
