"""Nuisance networks, their training loop, partition-level nuisances and the closed-form bounds.

Every network is small (hidden width 10, as in the official code's
``run_main.py``) and trains on the CPU with one thread. Shapes: ``n`` training
points, ``m`` test points, ``K`` partitions; arm index ``a`` is 0 (control) or 1.

The official code (github.com/JSchweisthal/ComplexPartialIdentif, ``src/models.py``,
read, not copied) builds each nuisance as an X tower and a Z tower whose outputs
are concatenated into a shared trunk; the outcome network has one head per arm.
Ours has the same shape with a ReLU after every hidden layer (the official
towers stack some linear layers without a non-linearity between them).
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

__all__ = [
    "TwoTower",
    "bounds_torch",
    "finalize",
    "fit",
    "fit_partition_nuisances",
    "fit_stage1",
    "marginal_nuisances",
    "split",
    "standardize",
]

EPS = 1e-4


def _tower(d_in: int, hidden: int, layers: int) -> nn.Sequential:
    mods: list[nn.Module] = []
    for i in range(layers):
        mods += [nn.Linear(d_in if i == 0 else hidden, hidden), nn.ReLU()]
    return nn.Sequential(*mods)


class TwoTower(nn.Module):
    """``f(x, z)``: an X tower and a Z tower, concatenated into a shared trunk, then ``heads`` outputs.

    Each head is its own small MLP (``hidden -> hidden -> 1``), as the official
    outcome network has one head per treatment arm.
    """

    def __init__(
        self,
        d_x: int,
        d_z: int,
        heads: int,
        hidden: int = 10,
        x_layers: int = 2,
        z_layers: int = 3,
        shared_layers: int = 2,
    ) -> None:
        super().__init__()
        self.x_tower = _tower(d_x, hidden, x_layers)
        self.z_tower = _tower(d_z, hidden, z_layers)
        self.shared = _tower(2 * hidden, hidden, shared_layers)
        self.heads = nn.ModuleList(
            [
                nn.Sequential(nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, 1))
                for _ in range(heads)
            ]
        )

    def forward(self, x: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
        return self._trunk(torch.cat([self.x_tower(x), self.z_tower(z)], dim=1))

    def pairs(self, x: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
        """``f(x_i, z_j)`` for every pair, ``(m, n, heads)``: each tower runs once per point, not per pair."""
        hx, hz = self.x_tower(x), self.z_tower(z)
        m, n = len(hx), len(hz)
        both = torch.cat([hx[:, None, :].expand(m, n, -1), hz[None, :, :].expand(m, n, -1)], dim=2)
        return self._trunk(both.reshape(m * n, -1)).reshape(m, n, -1)

    def _trunk(self, h: torch.Tensor) -> torch.Tensor:
        h = self.shared(h)
        return torch.cat([head(h) for head in self.heads], dim=1)


def standardize(train: np.ndarray, *others: np.ndarray) -> list[np.ndarray]:
    """Centre and scale columns by the training mean and standard deviation (a zero sd counts as 1)."""
    mu, sd = train.mean(axis=0), train.std(axis=0)
    sd = np.where(sd > 0, sd, 1.0)
    return [(a - mu) / sd for a in (train, *others)]


def split(n: int, seed: int, val_frac: float = 0.2) -> tuple[np.ndarray, np.ndarray]:
    """A seeded train/validation split of ``range(n)`` (validation: ``val_frac`` of the points)."""
    perm = np.random.default_rng([seed, 7]).permutation(n)
    n_val = max(1, int(round(val_frac * n)))
    return np.sort(perm[n_val:]), np.sort(perm[:n_val])


def fit(
    net: nn.Module,
    loss_fn,
    n: int,
    *,
    seed: int,
    epochs: int = 100,
    batch: int = 128,
    lr: float = 1e-3,
    patience: int = 10,
) -> nn.Module:
    """Adam on minibatches of the training indices, early stopping on the validation loss.

    ``loss_fn(net, idx)`` returns the mean loss on the points ``idx`` (numpy
    indices into the caller's arrays). The split is :func:`split`; the best
    validation state is restored at the end (the official nuisances keep the
    last state of PyTorch Lightning's early stopping, its partition network the best).
    """
    tr, va = split(n, seed)
    opt = torch.optim.Adam(net.parameters(), lr=lr)
    rng = np.random.default_rng([seed, 11])
    best, best_state, bad = float("inf"), None, 0
    for _ in range(epochs):
        net.train()
        order = rng.permutation(tr)
        for start in range(0, len(order), batch):
            idx = order[start : start + batch]
            loss = loss_fn(net, idx)
            opt.zero_grad()
            loss.backward()
            opt.step()
        net.eval()
        with torch.no_grad():
            val = float(loss_fn(net, va))
        if val < best - 1e-7:
            best, bad = val, 0
            best_state = {k: v.detach().clone() for k, v in net.state_dict().items()}
        else:
            bad += 1
            if bad >= patience:
                break
    if best_state is not None:
        net.load_state_dict(best_state)
    net.eval()
    return net


def _propensity_and_outcome(
    X: np.ndarray, W: np.ndarray, A: np.ndarray, Y: np.ndarray, *, seed: int, epochs: int
) -> tuple[TwoTower, TwoTower]:
    """Fit ``P(A = 1 | x, w)`` (cross-entropy) and ``E[Y | x, a, w]`` (squared error on the factual head)."""
    x, w = torch.as_tensor(X, dtype=torch.float32), torch.as_tensor(W, dtype=torch.float32)
    a, y = torch.as_tensor(A, dtype=torch.float32), torch.as_tensor(Y, dtype=torch.float32)
    a_long = torch.as_tensor(A, dtype=torch.long)
    torch.manual_seed(seed)
    prop = TwoTower(X.shape[1], W.shape[1], heads=1)

    def prop_loss(net, idx):
        return F.binary_cross_entropy_with_logits(net(x[idx], w[idx])[:, 0], a[idx])

    fit(prop, prop_loss, len(X), seed=seed, epochs=epochs)
    torch.manual_seed(seed + 1)
    out = TwoTower(X.shape[1], W.shape[1], heads=2)

    def out_loss(net, idx):
        pred = net(x[idx], w[idx]).gather(1, a_long[idx, None])[:, 0]
        return F.mse_loss(pred, y[idx])

    fit(out, out_loss, len(X), seed=seed + 1, epochs=epochs)
    return prop, out


def fit_stage1(
    X: np.ndarray, Z: np.ndarray, A: np.ndarray, Y: np.ndarray, *, seed: int, epochs: int = 100
) -> tuple[TwoTower, TwoTower]:
    """Stage 1 of the paper: ``P(A = 1 | x, z)`` and ``E[Y | x, a, z]`` on the full instrument."""
    return _propensity_and_outcome(X, Z, A, Y, seed=seed, epochs=epochs)


def pair_nuisances(
    prop: TwoTower, out: TwoTower, x: torch.Tensor, z: torch.Tensor, lo: float, hi: float
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``p1[i, j] = P(A = 1 | x_i, z_j)`` and ``E[Y | x_i, a, z_j]`` for every pair, shapes ``(m, n)``.

    Outcomes are clamped to ``[lo, hi]`` and propensities to ``[EPS, 1 - EPS]`` (as the official code does).
    """
    with torch.no_grad():
        p1 = torch.sigmoid(prop.pairs(x, z)[..., 0]).clamp(EPS, 1 - EPS)
        mu = out.pairs(x, z).clamp(lo, hi)
    return p1, mu[..., 0], mu[..., 1]


def marginal_nuisances(
    p1: torch.Tensor, mu0: torch.Tensor, mu1: torch.Tensor, phi: torch.Tensor, mass: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """Partition-level nuisances from pair-level ones, by averaging over the population of ``z``.

    ``phi`` is ``(n, K)`` (one-hot, or straight-through Gumbel samples), ``mass``
    the ``(K,)`` share of each partition (clamped away from 0 by the caller).
    Because ``Z`` is independent of ``X``:
    ``P(A = a | x, k) = mean_j P(A = a | x, z_j) 1{phi_j = k} / P(k)`` and
    ``E[Y 1{A = a} | x, k] = mean_j E[Y | x, a, z_j] P(A = a | x, z_j) 1{phi_j = k} / P(k)``.
    Returns ``(pimu, pi)``, each ``(m, K, 2)``.
    """
    n = phi.shape[0]
    p0 = 1.0 - p1
    pi = torch.stack([p0 @ phi, p1 @ phi], dim=-1) / (n * mass)[None, :, None]
    pimu = torch.stack([(mu0 * p0) @ phi, (mu1 * p1) @ phi], dim=-1) / (n * mass)[None, :, None]
    return pimu, pi


def bounds_torch(
    pimu: torch.Tensor, pi: torch.Tensor, lo: float, hi: float
) -> tuple[torch.Tensor, torch.Tensor]:
    """The closed-form bounds of ``tasks.iv_bounds.closed_form_bounds``, in torch (differentiable)."""
    low_arm = (pimu + (1.0 - pi) * lo).amax(dim=1)
    up_arm = (pimu + (1.0 - pi) * hi).amin(dim=1)
    return low_arm[:, 1] - up_arm[:, 0], up_arm[:, 1] - low_arm[:, 0]


def fit_partition_nuisances(
    X: np.ndarray,
    labels: np.ndarray,
    k: int,
    A: np.ndarray,
    Y: np.ndarray,
    X_test: np.ndarray,
    lo: float,
    hi: float,
    *,
    seed: int,
    epochs: int = 100,
) -> tuple[np.ndarray, np.ndarray]:
    """Partition-level nuisances of a fixed discretisation, fitted directly on ``(x, onehot(k))``.

    The official naive (k-means) baseline fits its nuisance networks on ``x`` and
    the cluster label. Returns ``(pimu, pi)`` at the test points, ``(m, K, 2)``
    float64, for :func:`tasks.iv_bounds.closed_form_bounds`.
    """
    onehot = np.eye(k)[labels]
    prop, out = _propensity_and_outcome(X, onehot, A, Y, seed=seed, epochs=epochs)
    m = len(X_test)
    xt = torch.as_tensor(X_test, dtype=torch.float32)
    pi = np.empty((m, k, 2))
    pimu = np.empty((m, k, 2))
    with torch.no_grad():
        for j in range(k):
            e = torch.zeros(m, k)
            e[:, j] = 1.0
            p1 = torch.sigmoid(prop(xt, e)[:, 0]).clamp(EPS, 1 - EPS).double().numpy()
            mu = out(xt, e).clamp(lo, hi).double().numpy()
            pi[:, j] = np.stack([1.0 - p1, p1], axis=1)
            pimu[:, j] = pi[:, j] * mu
    return pimu, pi


def finalize(lower: np.ndarray, upper: np.ndarray, lo: float, hi: float) -> dict[str, np.ndarray]:
    """The solution dict: bounds clipped to ``[-(hi - lo), hi - lo]``; where estimated bounds
    cross (``lower > upper``, possible with estimated nuisances), both become their midpoint."""
    scale = hi - lo
    lower = np.clip(np.asarray(lower, dtype=np.float64), -scale, scale)
    upper = np.clip(np.asarray(upper, dtype=np.float64), -scale, scale)
    crossed = lower > upper
    mid = 0.5 * (lower + upper)
    return {"lower": np.where(crossed, mid, lower), "upper": np.where(crossed, mid, upper)}
