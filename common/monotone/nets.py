"""Networks and the one training loop of the ``monotone-regression`` task's neural predictors.

Every network has the official code's shape (davidesartor/inverseCDF, ``exp_auto.ipynb``
at 027941b, model ``ReLUMonoModel``): the free columns go through ``free_layers`` plain
ReLU layers of ``width`` units; their output is concatenated with the monotone columns
(each multiplied by its direction, so every network is non-decreasing in its input);
then a monotone stack maps ``width -> width`` (``mono_hidden`` times) ``-> 1``. Only the
layer type of the stack differs between the predictors (:data:`STACKS`):

- ``"monotonic"``: the paper's sign-adaptive layer, no reparametrisation;
- ``"constrained"``: weights through ``abs`` with ReLU/"switched" ReLU activations;
- ``"sigmoid"``: weights through ``abs`` with sigmoid activations (the classical one);
- ``"free"``: plain ``nn.Linear`` and ReLU (not monotone).

Training (:func:`fit`): standardised inputs (training mean and standard deviation),
standardised regression targets, MSE (regression) or binary cross-entropy on the logit
(classification), Adam at the recipe's learning rate, the recipe's batch size and
epochs, reshuffled every epoch, the last epoch's weights (no early stopping, no model
selection on any held-out data). float32, one thread.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F
from torch.nn.utils import parametrize

__all__ = [
    "MonotonicLinear",
    "AbsWeight",
    "SwitchConvexity",
    "MonoNet",
    "STACKS",
    "fit",
    "fit_tuned",
    "Fitted",
]


class MonotonicLinear(nn.Linear):
    """The paper's sign-adaptive layer: ``y = act(x) W+^T + act(-x) W-^T + b``.

    ``W+ = clamp(W, min=0)``, ``W- = clamp(W, max=0)``; the activation ``act`` (ReLU, or the
    identity for the first layer) is applied *before* the product, to ``x`` for the
    positive part and to ``-x`` for the negative part, so a negative weight meets the
    reflected activation ``-act(-x)`` (saturating on the other side) and the layer is
    non-decreasing in ``x`` whatever the sign of ``W``. The weights are free parameters
    (no reparametrisation). The official layer passes the bias to both halves, i.e. adds
    ``2 b``; we add ``b`` once (the same family of functions; only the bias's
    initial scale differs).
    """

    def __init__(
        self,
        in_features: int,
        out_features: int,
        pre_activation: Callable[[torch.Tensor], torch.Tensor] | None,
    ) -> None:
        super().__init__(in_features, out_features)
        self.act = pre_activation if pre_activation is not None else (lambda x: x)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        w_pos, w_neg = self.weight.clamp(min=0.0), self.weight.clamp(max=0.0)
        return F.linear(self.act(x), w_pos, self.bias) + F.linear(self.act(-x), w_neg)


class AbsWeight(nn.Module):
    """Parametrisation ``W = |V|`` (the official ``Positive('abs')``); initialised at ``V = W``."""

    def forward(self, v: torch.Tensor) -> torch.Tensor:
        return v.abs()

    def right_inverse(self, w: torch.Tensor) -> torch.Tensor:
        return w


def _abs_linear(i: int, o: int) -> nn.Linear:
    layer = nn.Linear(i, o)
    parametrize.register_parametrization(layer, "weight", AbsWeight())
    return layer


class SwitchConvexity(nn.Module):
    """Per unit either ``relu(x)`` (convex) or ``-relu(-x)`` (concave), a fixed random half each.

    The official ``SwitchConvexity(activation, dim, learnable=False)``: a buffer
    ``a = (rand(dim) > 0.5)`` and ``a * act(x) + (1 - a) * (-act(-x))``. With
    non-negative weights, a concave unit is the same as a ReLU unit behind non-positive
    weights (the paper's equivalence between the saturation side and the weight sign).
    """

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.register_buffer("a", (torch.rand(dim) > 0.5).float())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.a * F.relu(x) + (1 - self.a) * (-F.relu(-x))


def _stack(kind: str, n_in: int, width: int, hidden: int) -> nn.Module:
    if kind == "monotonic":
        # identity pre-activation on the first layer (so it sees the inputs themselves), ReLU after
        layers = [MonotonicLinear(n_in, width, None)]
        layers += [MonotonicLinear(width, width, F.relu) for _ in range(hidden)]
        layers += [MonotonicLinear(width, 1, F.relu)]
        return nn.Sequential(*layers)
    sizes = [n_in] + [width] * (hidden + 1) + [1]
    mods: list[nn.Module] = []
    for k in range(len(sizes) - 1):
        last = k == len(sizes) - 2
        mods.append(
            nn.Linear(sizes[k], sizes[k + 1])
            if kind == "free"
            else _abs_linear(sizes[k], sizes[k + 1])
        )
        if not last:
            if kind == "constrained":
                mods.append(SwitchConvexity(sizes[k + 1]))
            elif kind == "sigmoid":
                mods.append(nn.Sigmoid())
            else:
                mods.append(nn.ReLU())
    return nn.Sequential(*mods)


STACKS = ("monotonic", "constrained", "sigmoid", "free")


class MonoNet(nn.Module):
    """Free ReLU layers on the free columns, then the chosen stack on [their output, signed monotone columns]."""

    def __init__(
        self,
        kind: str,
        d: int,
        mono: list[int],
        direction: list[int],
        width: int,
        free_layers: int,
        mono_hidden: int,
    ) -> None:
        super().__init__()
        if kind not in STACKS:
            raise ValueError(f"unknown stack {kind!r}; stacks are {STACKS}")
        self.mono = torch.tensor(mono, dtype=torch.long)
        self.free = torch.tensor([j for j in range(d) if j not in mono], dtype=torch.long)
        self.register_buffer("sign", torch.tensor(direction, dtype=torch.float32))
        pre: list[nn.Module] = []
        n = len(self.free)
        for _ in range(free_layers if n else 0):
            pre += [nn.Linear(n, width), nn.ReLU()]
            n = width
        self.pre = nn.Sequential(*pre)
        self.stack = _stack(kind, n + len(mono), width, mono_hidden)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.pre(x[:, self.free]) if len(self.free) else x[:, :0]
        return self.stack(torch.cat([h, x[:, self.mono] * self.sign], dim=1)).squeeze(1)


class Fitted:
    """A trained network with its input and output scalings; ``predict`` returns float64."""

    def __init__(
        self,
        net: MonoNet,
        mu: np.ndarray,
        sd: np.ndarray,
        y_mu: float,
        y_sd: float,
        classification: bool,
    ) -> None:
        self.net, self.mu, self.sd, self.y_mu, self.y_sd, self.classification = (
            net,
            mu,
            sd,
            y_mu,
            y_sd,
            classification,
        )

    @torch.no_grad()
    def predict(self, X: np.ndarray) -> np.ndarray:
        self.net.eval()
        z = self.net(torch.as_tensor((X - self.mu) / self.sd, dtype=torch.float32)).double().numpy()
        if self.classification:
            return 1.0 / (1.0 + np.exp(-z))
        return z * self.y_sd + self.y_mu  # in float64, after the network


def fit(data: dict[str, Any], kind: str, seed: int) -> Fitted:
    """Train the network ``kind`` on ``data`` (the instance's public part) with its recipe."""
    torch.manual_seed(seed)
    r = data["recipe"]
    X, y = (
        np.asarray(data["X_train"], dtype=np.float64),
        np.asarray(data["y_train"], dtype=np.float64),
    )
    classification = data["task_type"] == "classification"
    mu, sd = X.mean(0), X.std(0)
    sd = np.where(sd > 0, sd, 1.0)
    y_mu, y_sd = (0.0, 1.0) if classification else (float(y.mean()), float(y.std() or 1.0))
    net = MonoNet(
        kind,
        X.shape[1],
        list(data["mono"]),
        list(data["direction"]),
        int(r["width"]),
        int(r["free_layers"]),
        int(r["mono_hidden"]),
    )
    xt = torch.as_tensor((X - mu) / sd, dtype=torch.float32)
    yt = torch.as_tensor((y - y_mu) / y_sd, dtype=torch.float32)
    opt = torch.optim.Adam(net.parameters(), lr=float(r["lr"]))
    loss_fn = F.binary_cross_entropy_with_logits if classification else F.mse_loss
    gen = torch.Generator().manual_seed(seed)
    bs = int(r["batch_size"])
    net.train()
    for _ in range(int(r["epochs"])):
        order = torch.randperm(len(xt), generator=gen)
        for k in range(0, len(xt), bs):
            idx = order[k : k + bs]
            opt.zero_grad()
            loss_fn(net(xt[idx]), yt[idx]).backward()
            opt.step()
    return Fitted(net, mu, sd, y_mu, y_sd, classification)


def fit_tuned(
    data: dict[str, Any], kind: str, seed: int, lrs: tuple[float, ...], val_fraction: float
) -> tuple[Fitted, float]:
    """Choose the learning rate among ``lrs`` on a validation split carved from the training rows, refit on all.

    The split (``val_fraction`` of the rows, drawn with ``seed``) is the only held-out data
    used; the score is the validation MSE (regression, in the target's units) or log-loss
    (classification). Returns the network refitted on every training row with the chosen
    rate, and that rate. Everything else is the task's recipe.
    """
    X, y = (
        np.asarray(data["X_train"], dtype=np.float64),
        np.asarray(data["y_train"], dtype=np.float64),
    )
    perm = np.random.default_rng(seed).permutation(len(y))
    n_val = max(1, round(val_fraction * len(y)))
    va, tr = perm[:n_val], perm[n_val:]
    classification = data["task_type"] == "classification"
    losses = {}
    for lr in lrs:
        sub = {**data, "X_train": X[tr], "y_train": y[tr], "recipe": {**data["recipe"], "lr": lr}}
        p = fit(sub, kind, seed).predict(X[va])
        if classification:
            p = np.clip(p, 1e-12, 1 - 1e-12)
            losses[lr] = float(-np.mean(y[va] * np.log(p) + (1 - y[va]) * np.log(1 - p)))
        else:
            losses[lr] = float(np.mean((p - y[va]) ** 2))
    best = min(lrs, key=lambda lr: losses[lr])
    return fit({**data, "recipe": {**data["recipe"], "lr": best}}, kind, seed), best
