"""picard-parallel: the parallel Picard method of Zhou and Sugiyama (ICML 2025) for overdamped Langevin.

Reference: Huanjian Zhou and Masashi Sugiyama, "Parallel Simulation for Log-concave Sampling and
Score-based Diffusion Models", ICML 2025 (arXiv 2412.07435). Only the abstract, the introduction's
opening and the caption of the paper's illustration ("each rectangle represents an update, and the
number within each rectangle indicates the index of the Picard iteration. The approximate time
complexity is N + J = O~(log d)") were readable here; no official code was found. Everything
below the abstract's level is our reading and UNVERIFIED.

The scheme as implemented: the horizon ``[0, T]`` is cut into ``N`` windows of length ``h``,
each into ``M`` Euler sub-steps (``common/sampling/picard.py``). Window ``n`` (0-based) runs
Picard iteration ``k`` at round ``n + k``; its start is window ``n - 1``'s endpoint at the same
iteration ``k``, computed one round earlier. Every active window's ``M`` gradient queries go in
one batch, so all ``N`` windows finish after ``N + J - 1`` rounds (the "diagonal" schedule of the
paper's figure), instead of the ``N * K`` of running windows one after another.

Schedule (``common/sampling/driver.py``, shared with every method here): ``T = log(4 w0 / eps)
/ alpha``, ``h = 1 / (2 beta)``, sub-step ``delta <= 2 eps / (sqrt(d) beta)``, and
``J = ceil(e * beta * T) + K`` iterations, ``K = ceil(log2(sqrt(d) / eps)) + 2``.

Deviations and UNVERIFIED points
--------------------------------
- The paper's exact update rule, window length, number of Picard iterations and processor
  count were not read (UNVERIFIED). ``J`` here is our choice: the diagonal schedule is Picard
  over the whole horizon once the start values propagate, whose error after ``J`` sweeps is
  about ``(beta T)^J / J!``, below 1 once ``J >= e beta T``; ``K`` more sweeps give the
  per-window accuracy that picard-lmc-acv gets. A smaller ``J`` diverged in our scalar tests.
- Euler sub-steps (no randomized midpoints inside the windows) for both Picard methods, so that
  the comparison with picard-lmc-acv isolates the schedule.
- The paper also treats the underdamped dynamics and diffusion models; only overdamped
  Langevin is implemented.
"""

from __future__ import annotations

import math

import numpy as np

from bench import method
from common.sampling.driver import OracleSampler, schedule
from common.sampling.picard import brownian, picard_sweep

DEVIATIONS = (
    "Paper body and official code not read (UNVERIFIED beyond the abstract and the figure caption "
    "'N + J'): diagonal (wavefront) schedule of Picard sweeps over N windows, window n runs sweep k at "
    "round n + k from window n-1's sweep-k endpoint; J = ceil(j_factor * beta * T) + K sweeps (our choice); "
    "Euler sub-steps as in picard-lmc-acv; overdamped Langevin only."
)


@method(
    name="picard-parallel",
    kind="method",
    tasks=["log-concave-sampling"],
    reference="Zhou and Sugiyama, Parallel Simulation for Log-concave Sampling and Score-based Diffusion Models, ICML 2025 (arXiv 2412.07435)",
    version="1",
    params={"j_factor": math.e},
    deterministic=True,
    deviations=DEVIATIONS,
)
class PicardParallel(OracleSampler):
    """Diagonal-schedule parallel Picard iterations over ``N`` windows (``N + J - 1`` rounds)."""

    def run(self):
        s = schedule(self.info)
        beta = float(self.info["beta"])
        J = math.ceil(float(self.params.get("j_factor", math.e)) * beta * s.T) + s.K
        x0 = self.x0
        n, d = x0.shape
        M, N = s.M, s.N
        period = self.every(N)
        noise: dict[int, np.ndarray] = {}
        traj: dict[int, np.ndarray] = {}
        ends: dict[int, np.ndarray] = {}  # window -> endpoint at its latest sweep
        for r in range(1, N + J):
            active = [w for w in range(max(0, r - J), min(N, r))]
            starts, olds = {}, []
            for w in active:
                k = r - w
                start = x0 if w == 0 else ends[w - 1]
                starts[w] = start
                if k == 1:
                    noise[w] = brownian(self.rng, M, n, d, s.delta)
                    olds.append(np.broadcast_to(start, (M, n, d)))
                else:
                    olds.append(traj[w][:M])
            G = yield from self.grad(np.concatenate(olds, axis=0).reshape(-1, d))
            G = G.reshape(len(active), M, n, d)
            for i, w in enumerate(active):
                traj[w] = picard_sweep(starts[w], G[i], noise[w], s.delta)
            for w in active:
                ends[w] = traj[w][M].copy()
                if r - w == J:  # window w is final
                    del traj[w], noise[w]
                    ends.pop(w - 1, None)
                    if w % period == 0 or w == N - 1:
                        yield from self.snapshot(ends[w])
        yield {"samples": ends[N - 1]}
