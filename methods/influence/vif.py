"""vif: the Versatile Influence Function of Deng, Tang and Ma (ICML 2025), with autodiff.

For a trained ``theta_hat`` and a loss that is not a sum of per-point losses,
VIF estimates the effect of removing training point ``i`` on a test quantity
``f`` as ``grad f(theta_hat)^T H^{-1} (grad L(theta_hat; D) - grad L(theta_hat; D - {i}))``,
``H`` the Hessian of the full objective, every derivative by automatic
differentiation. This is the official code's ``cox/score_cox.py``
(TRAIS-Lab/Versatile-Influence-Function at 519e0cd, read, not copied): the
``hessian`` and ``grad`` of ``torch.func``, the Hessian inverted once, one
gradient of the objective without point ``i`` per training point, and the
test quantity's gradient (the relative hazard ``exp(x . theta)`` for Cox).

Two registrations:

- ``vif``: one autodiff gradient per removed point in a Python loop, as the
  official code does;
- ``vif-batched``: the same gradients, 256 removals at a time through
  ``torch.func.vmap`` (same numbers up to rounding; tests check it). Ours,
  not the paper's: registered separately so that both costs stay visible.

Deviations
----------
- The objective is the task's (a sum over points with ridge 1, Breslow ties),
  where the official code uses pycox's ``cox_ph_loss`` (a mean over events,
  no ridge; its handling of tied times differs). The influence formula is
  the same; the ridge cancels in the gradient difference.
- Point ``i`` is removed by giving it weight 0 in every term, which equals
  deleting its row (what the official code does) and keeps the data's shape.
- ``H^{-1} grad f`` by ``torch.linalg.solve`` rather than ``torch.linalg.inv``
  then a product (the same quantity; better conditioned).
- The model is the task's trained ``theta_hat`` (a converged Newton fit)
  rather than 200 Adam epochs; the paper's ranking experiment removes labels
  from multi-label lists (Mediamill, Delicious), here items of synthetic
  query lists under ListMLE (issue 32).
"""

from __future__ import annotations

import numpy as np
import torch

from bench import method
from common.influence.autodiff import Problem
from common.influence.scores import vif

_REFERENCE = (
    "Deng, Tang and Ma, A Versatile Influence Function for Data Attribution with Non-Decomposable Loss "
    "(ICML 2025, arXiv 2412.01335); official code TRAIS-Lab/Versatile-Influence-Function (cox/score_cox.py)"
)
_DEVIATIONS = (
    "The task's objective (sum over points, ridge 1, Breslow ties) instead of pycox's mean cox_ph_loss; removal as "
    "weight 0 (equal to deleting the row); H^{-1} grad f by linalg.solve instead of inv; the model is the task's "
    "converged Newton fit; ListMLE items of synthetic queries instead of labels of multi-label lists."
)


def _scores(instance, batch: int) -> np.ndarray:
    torch.set_num_threads(1)
    return vif(Problem(instance.data), batch=batch).numpy().astype(np.float64)


@method(
    name="vif",
    kind="method",
    tasks=["influence-attribution"],
    reference=_REFERENCE,
    version="1",
    params={"batch": 0},
    deterministic=False,  # the scores are (tests); the session's solution also holds the task's clock
    deviations=_DEVIATIONS
    + " One autodiff gradient per removed point in a loop, as the official code.",
)
def solve(instance, *, seed: int, budget: float, batch: int) -> np.ndarray:
    """VIF scores ``(n, n_test)``, the leave-out gradients one at a time (``batch = 0``)."""
    return _scores(instance, batch)


@method(
    name="vif-batched",
    kind="method",
    tasks=["influence-attribution"],
    reference=_REFERENCE + "; batching through torch.func.vmap is ours",
    version="1",
    params={"batch": 256},
    deterministic=False,
    deviations=_DEVIATIONS
    + " The leave-out gradients 256 at a time through vmap (ours; same numbers).",
)
def solve_batched(instance, *, seed: int, budget: float, batch: int) -> np.ndarray:
    """VIF scores ``(n, n_test)``, the leave-out gradients ``batch`` at a time through ``vmap``."""
    return _scores(instance, batch)
