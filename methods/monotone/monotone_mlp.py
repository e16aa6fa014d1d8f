"""The paper's two monotone-by-construction MLPs (Sartor, Sinigaglia and Susto, ICML 2025).

Both use the official code's architecture (davidesartor/inverseCDF at 027941b,
``monotonic.py`` and ``exp_auto.ipynb``): three free ReLU layers of 16 units on the free
columns, then a monotone stack of width 16 with three hidden layers on
[free embedding, signed monotone columns]; the task's fixed recipe trains them
(:func:`common.monotone.nets.fit`).

- ``monotonic-mlp``: the paper's proposal, ``MonotonicLinear`` layers
  ``y = act(x) W+^T + act(-x) W-^T + b`` with free weights (identity pre-activation on
  the first layer, ReLU after).
- ``constrained-mlp``: the constrained construction the paper proves universal:
  ``ConstrainedLinear`` (weights through ``abs``, the official default
  parametrisation) with the official ``SwitchConvexity(ReLU)`` activation (per unit,
  a fixed random half ``relu(x)``, the other half ``-relu(-x)``; equivalent to ReLU
  behind non-positive weights for those units).

Deviations from the paper and its official code
-----------------------------------------------
- Recipe: the task's (Adam 1e-3, batch 32, 100 epochs, last epoch kept) for every neural
  predictor; the official notebooks train batch 8 for 20 epochs and report the best
  epoch *on the test set*, which a benchmark cannot do.
- ``MonotonicLinear`` adds its bias once; the official layer adds it to both halves
  (``2 b``): the same family of functions.
- The last partial batch of an epoch is kept (the official loader drops it).
- The official repository of the paper (AMCO-UniPD/monotonic) was not readable here;
  the layers follow the first author's code (davidesartor/inverseCDF). Which stack
  (depth, switch fraction, parametrisation) the paper's tables use is UNVERIFIED.
"""

from __future__ import annotations

from bench import method
from common.monotone.nets import fit
from common.monotone.protocol import Predictor

REFERENCE = "Sartor, Sinigaglia and Susto, Advancing Constrained Monotonic Neural Networks (ICML 2025, arXiv 2505.02537)"


@method(
    name="monotonic-mlp",
    kind="method",
    tasks=["monotone-regression"],
    reference=REFERENCE + "; MonotonicLinear of davidesartor/inverseCDF",
    version="1",
    params={"monotone": True},
    deterministic=True,
    deviations="the task's fixed recipe (last epoch, no test-set epoch selection); bias added once instead of twice; last partial batch kept",
)
class MonotonicMLP(Predictor):
    """The paper's sign-adaptive MonotonicLinear stack: activations chosen by the weight's sign, no reparametrisation."""

    def fit(self):
        return fit(self.data, "monotonic", self.seed).predict


@method(
    name="constrained-mlp",
    kind="method",
    tasks=["monotone-regression"],
    reference=REFERENCE + "; ConstrainedLinear + SwitchConvexity of davidesartor/inverseCDF",
    version="1",
    params={"monotone": True},
    deterministic=True,
    deviations="the task's fixed recipe; the official layers with abs weights and a fixed random half of concave -relu(-x) units; the stack the paper's tables use is UNVERIFIED",
)
class ConstrainedMLP(Predictor):
    """Sign-constrained weights (abs) with convex/concave ReLU units: the paper's constrained universal construction."""

    def fit(self):
        return fit(self.data, "constrained", self.seed).predict
