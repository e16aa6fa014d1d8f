"""Neural baselines of ``monotone-regression``, same architecture and recipe as the paper's methods.

- ``sigmoid-mlp``: the traditional construction, non-negative weights (through ``abs``)
  with sigmoid activations (bounded, saturating on both sides); monotone by construction.
- ``sigmoid-mlp-tuned``: the same network, its learning rate chosen in {1e-3, 3e-3, 1e-2}
  on a 20% validation split carved from the training rows (then refitted on all rows):
  the classical construction is sensitive to the rate, and at the shared recipe's 1e-3
  it can fail to train in the budget, so this is the fair strong version of it.
- ``free-mlp``: the same network with plain weights and ReLU: an accuracy reference,
  *not* monotone (declares ``monotone = False``; its violation rate is reported, never
  refused).
"""

from __future__ import annotations

from bench import method
from common.monotone.nets import fit, fit_tuned
from common.monotone.protocol import Predictor


@method(
    name="sigmoid-mlp",
    kind="baseline",
    tasks=["monotone-regression"],
    reference="non-negative weights + sigmoid (the classical monotone MLP; e.g. Daniels and Velikova 2010)",
    version="1",
    params={"monotone": True},
    deterministic=True,
)
class SigmoidMLP(Predictor):
    """Non-negative (abs) weights and sigmoid activations in the monotone stack; the task's recipe."""

    def fit(self):
        return fit(self.data, "sigmoid", self.seed).predict


@method(
    name="sigmoid-mlp-tuned",
    kind="baseline",
    tasks=["monotone-regression"],
    reference="non-negative weights + sigmoid, learning rate chosen on a validation split of the training rows",
    version="1",
    params={"monotone": True, "lrs": [1e-3, 3e-3, 1e-2], "val_fraction": 0.2},
    deterministic=True,
)
class SigmoidMLPTuned(Predictor):
    """The classical sigmoid MLP with its Adam learning rate picked on a validation split, then refitted on all rows."""

    def fit(self):
        net, _ = fit_tuned(
            self.data,
            "sigmoid",
            self.seed,
            tuple(self.params["lrs"]),
            float(self.params["val_fraction"]),
        )
        return net.predict


@method(
    name="free-mlp",
    kind="baseline",
    tasks=["monotone-regression"],
    reference="unconstrained ReLU MLP of the same size (not monotone)",
    version="1",
    params={"monotone": False},
    deterministic=True,
)
class FreeMLP(Predictor):
    """Unconstrained ReLU MLP of the same shape and recipe; not monotone, so it is never refused."""

    def fit(self):
        return fit(self.data, "free", self.seed).predict
