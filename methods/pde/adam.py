"""``sks-adam``: SKS with the official code's Adam schedules (float64, numpy, hand-written gradients).

Per problem, as in github.com/XZT008/PDE-GP-Solver @ bd638f1:

- Burgers: whitened parameters η = (L₀ ⊗ L₁) a with Lⱼ = chol(Kⱼ), norm ½‖a‖²,
  boundary term ½τ·Σ(u − g)²; trainable ``log_v`` and ``log_tau`` (both 0 at the
  start) multiply v = 1e15 and τ = 1e22, so the weights drift; 800 Adam steps
  (lr 1e-3) with the PDE term off, then a fresh Adam (lr 1e-4) with it on.
- Eikonal: η directly, v = 1e30, τ = 1e36; 800 steps boundary-only at lr 1e-3,
  then the PDE term on. The official code re-initialises the Adam state at
  step 800 but keeps lr 1e-3 (its switch to 1e-4 is a no-op); we reproduce that.
- Allen–Cahn: η directly, v = 1e4, τ = 1e12, Adam lr 1e-4, PDE term on throughout.
- Elliptic (the official config uses Gauss–Newton; its "GD" path): AdamW
  (weight decay 1e-4, optax's default) with lr 1e-3 · 0.9^(t/3000), floored at
  1e-5 (``optax.exponential_decay`` with its default ``staircase=False``: a
  smooth decay; version 1 decayed in steps of 3000, a deviation now fixed).

Step counts (:func:`official_steps`) are the official code's per configuration
(read at commit b4d6dc9 of the same repository, the version held by the public
code index; grids, lengthscales and jitters there match ``sks.OFFICIAL``).
The elliptic "GD" path has no real count (``epochs = 10000000``, never run by
the shipped configurations), so its 100,000 is ours.

Adam follows optax (b1 = 0.9, b2 = 0.999, eps = 1e-8, bias correction).
The final iterate is returned.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from bench.registry import method
from bench.sandbox import time_left, truncated
from methods.pde.kron import KronModel
from methods.pde.sks import REFERENCE, _param, build_model
from tasks.pde.problems import problem_from_data

__all__ = ["solve_sks_adam", "adam_official", "OFFICIAL_STEPS", "official_steps"]

#: Step count per problem kind where the official code has no configuration for the grid
#: (elliptic: ours, see the module docstring).
OFFICIAL_STEPS = {"burgers": 100_000, "eikonal": 50_000, "allen-cahn": 100_000, "elliptic": 100_000}

#: The official code's step counts where they differ from ``OFFICIAL_STEPS``:
#: (kind, parameter, grid) -> steps (``burgers.py`` and ``allen_cahn.py`` config lists).
_OFFICIAL_STEPS_BY_CONFIG: dict[tuple[str, float, tuple[int, int]], int] = {
    ("burgers", 0.001, (120, 40)): 300_000,
    **{("burgers", 0.001, g): 50_000 for g in ((450, 150), (540, 180), (600, 200))},
    **{("allen-cahn", a, (n, n)): 10_000 for a in (15.0, 20.0) for n in (25, 35)},
    **{("allen-cahn", a, (70, 70)): 250_000 for a in (15.0, 20.0)},
    ("allen-cahn", 20.0, (80, 80)): 200_000,
    **{("allen-cahn", a, (90, 90)): 300_000 for a in (15.0, 20.0)},
    **{("allen-cahn", a, (n, n)): 500_000 for a in (15.0, 20.0) for n in (150, 200)},
}


def official_steps(model: KronModel) -> int:
    """The official Adam step count of ``model``'s problem and grid (``OFFICIAL_STEPS`` off the table)."""
    key = (model.problem.kind, _param(model.problem), tuple(int(n) for n in model.shape))
    return _OFFICIAL_STEPS_BY_CONFIG.get(key, OFFICIAL_STEPS[model.problem.kind])


class _Adam:
    def __init__(self, lr, wd: float = 0.0) -> None:
        self.lr, self.wd, self.t, self.m, self.s = lr, wd, 0, None, None

    def step(self, params: list, grads: list) -> None:
        if self.m is None:
            self.m = [np.zeros_like(g) for g in grads]
            self.s = [np.zeros_like(g) for g in grads]
        self.t += 1
        lr = self.lr(self.t - 1) if callable(self.lr) else self.lr
        c1, c2 = 1 - 0.9**self.t, 1 - 0.999**self.t
        for p, g, m, s in zip(params, grads, self.m, self.s, strict=True):
            m *= 0.9
            m += 0.1 * g
            s *= 0.999
            s += 0.001 * g * g
            upd = (m / c1) / (np.sqrt(s / c2) + 1e-8)
            if self.wd:
                upd = upd + self.wd * p
            p -= lr * upd


def adam_official(model: KronModel, steps: int, deadline: float = math.inf, info: dict | None = None) -> np.ndarray:
    """Run the official Adam schedule for ``model.problem.kind``; returns η (grid-shaped).

    ``info``, if given, receives the final effective weights ``v`` and ``tau``, the steps run
    and ``stopped``: ``"steps"``, or ``"deadline"`` when ``deadline`` (``time.perf_counter()``)
    cut the schedule short.
    """
    kind = model.problem.kind
    S0, S1 = model.ops[(0, 0)], model.ops[(1, 0)]
    bm = model.bmask
    whiten = kind == "burgers"
    if kind == "burgers":
        v, tau, half, warm, lr1, lr2, reset_lr = 1e15, 1e22, 0.5, 800, 1e-3, 1e-4, True
    elif kind == "eikonal":
        v, tau, half, warm, lr1, lr2, reset_lr = 1e30, 1e36, 1.0, 800, 1e-3, 1e-3, True
    elif kind == "allen-cahn":
        v, tau, half, warm, lr1, lr2, reset_lr = 1e4, 1e12, 1.0, 0, 1e-4, 1e-4, False
    else:
        v, tau, half, warm, lr1, lr2, reset_lr = 1e4, 1e12, 1.0, 0, None, None, False
    L = [np.linalg.cholesky(k) for k in model.K] if whiten else None
    X = np.zeros(model.shape)
    logs = np.zeros(2)  # log_v, log_tau (trained for Burgers only)
    if lr1 is None:
        opt = _Adam(lambda t: max(1e-3 * 0.9 ** (t / 3000), 1e-5), wd=1e-4)
    else:
        opt = _Adam(lr1)
    stopped = "steps"
    for it in range(steps):
        if it == warm and warm and reset_lr:
            opt = _Adam(lr2)
        if it % 256 == 0 and time.perf_counter() > deadline:
            stopped = "deadline"
            break
        H = L[0] @ X @ L[1].T if whiten else X
        coef = 1.0 if it >= warm else 0.0
        ve = v * math.exp(logs[0]) if whiten else v
        te = tau * math.exp(logs[1]) if whiten else tau
        ub = np.where(bm, S0 @ H @ S1.T, 0.0)
        ub[bm] -= model.bvals
        gH = 2 * half * te * (S0.T @ ub @ S1)
        if coef:
            F = model.functionals(H)
            R = model.problem.residual(F, model.source)
            for name, p in model.problem.partials(F, model.source).items():
                gH += 2 * ve * model.apply_T(name, p * R)
            rr = float(np.sum(R * R))
        else:
            rr = 0.0
        if whiten:
            gX = X + L[0].T @ gH @ L[1]
            glog = np.array([coef * ve * rr, half * te * float(np.sum(ub * ub))])
            opt.step([X, logs], [gX, glog])
        else:
            gX = model.kinv(H) + gH
            opt.step([X], [gX])
    if info is not None:
        scale = np.exp(logs) if whiten else np.ones(2)
        info.update({"v": v * float(scale[0]), "tau": tau * float(scale[1]), "steps": opt.t if warm == 0 else it + 1, "stopped": stopped})
    return L[0] @ X @ L[1].T if whiten else X


def _supports(instance: Any) -> bool | str:
    n = int(instance.data["N"])
    if n > 10_000:
        return f"N={n}: one Adam step costs O(N sqrt(N)) and the official schedules run 5e4-5e5 steps; the limit here is N <= 10000"
    return True


@method(
    name="sks-adam",
    kind="method",
    tasks=["pde"],
    reference=REFERENCE + " (the official Adam configurations)",
    # 3: a run that the time budget cuts short ends truncated instead of ok; the smoke tier's
    # 3,000-step cap is a smoke parameter instead of a rule on the budget (same solutions)
    version="3",
    params={"max_steps": 20_000, "kernel": "se"},
    tier_params={"smoke": {"max_steps": 3000}, "full": {"max_steps": None}},
    deterministic=True,
    supports=_supports,
    deviations=(
        "numpy float64 with hand-written gradients instead of JAX autodiff; the final iterate is returned, "
        "not the minimum test error over checkpoints; steps = min(official count, max_steps): max_steps is "
        "3,000 in the smoke tier, 20,000 in the standard tier (its 'moderate Adam budget') and None, the "
        "official count of each configuration (10,000 to 500,000), in the full tier; training stops at 85% of "
        "the job's time budget (such a run is recorded as truncated, never ranked); grid and kernel from sks_config; the elliptic Adam count (100,000) is ours "
        "(the official elliptic runs use Gauss-Newton)."
    ),
)
def solve_sks_adam(instance: Any, *, seed: int, budget: float, max_steps: int | None, kernel: str) -> np.ndarray:
    """SKS trained with the official Adam schedule of each problem.

    ``max_steps=None`` runs the official step count of the configuration
    (:func:`official_steps`), as the full tier does.
    """
    deadline = time.perf_counter() + 0.85 * time_left()
    problem = problem_from_data(instance.data)
    model = build_model(problem, int(instance.data["N"]), kernel)
    steps = official_steps(model) if max_steps is None else min(official_steps(model), int(max_steps))
    info: dict[str, Any] = {}
    H = adam_official(model, steps, deadline, info)
    if info["stopped"] == "deadline":
        # where the clock lands depends on the machine's speed: never rank this run as finished
        truncated(f"sks-adam: stopped at 85% of the time budget after {info['steps']} of {steps} Adam steps")
    axes = [np.asarray(a, dtype=np.float64) for a in instance.data["eval_axes"]]
    return model.predict(H, axes)
