"""``ambient-ddpm``: Euclidean diffusion in the ambient embedding, then projection onto the manifold.

Embedding: ``(cos, sin)`` of each angle (torus), the unit vector (S^2), the flattened matrix
(SO(n); real and imaginary parts for U(n)). A VP-SDE (``beta`` linear in [0.1, 20]) with
noise-prediction loss (Ho et al. 2020; Song et al. 2021) is trained on the embedded points;
the reverse SDE is integrated with Euler-Maruyama from ``N(0, I)``; each final point is
mapped to the nearest manifold point: angles by ``atan2``, normalisation, the nearest
rotation (SVD, det fixed) or the polar factor. This is the "Euclidean diffusion" of the
paper's runtime comparison, and a quality baseline that ignores the geometry.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

from baselines.manifold_diffusion.geometry import Geometry
from bench.registry import method
from common.manifold_diffusion.models import (
    MLP,
    TrainThenSample,
    VPSchedule,
    make_adam,
    to_numpy_points,
)

__all__ = ["AmbientDDPM"]


class AmbientDDPM(TrainThenSample):
    """VP-SDE noise prediction on the embedding; Euler-Maruyama reverse SDE; projection."""

    def init_model(self) -> None:
        p = self.params
        self.geo = Geometry(self.manifold, self.n)
        self.sched = VPSchedule(float(p.get("beta_min", 0.1)), float(p.get("beta_max", 20.0)))
        m = self.geo.embed_dim
        self.net = MLP(m, m, int(p.get("hidden", 256)), int(p.get("layers", 3)), act="silu")
        self.opt = make_adam(self.net, lr=self.lr)

    def train_tensor(self) -> torch.Tensor:
        return self.geo.embed(self.geo.as_tensor(self.train_np)).float()

    def train_step(self, e0: torch.Tensor) -> float:
        b = e0.shape[0]
        t = 1e-4 + (1 - 1e-4) * torch.rand(b, generator=self.gen)
        a, sd = self.sched.mean_std(t)
        eps = torch.randn(e0.shape, generator=self.gen)
        et = a[:, None] * e0 + sd[:, None] * eps
        loss = ((self.net(et, t) - eps) ** 2).sum(1).mean()
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return float(loss.detach())

    def sample(self, n_points: int, steps: int) -> np.ndarray:
        gen = torch.Generator().manual_seed(self.seed + 1)
        e = torch.randn(n_points, self.geo.embed_dim, generator=gen)
        dt = 1.0 / steps
        for k in range(steps):
            t = 1.0 - k * dt
            tt = torch.full((n_points,), t)
            beta = float(self.sched.beta(torch.tensor(t)))
            _, sd = self.sched.mean_std(torch.tensor(t))
            score = -self.net(e, tt) / float(sd)
            e = e + (0.5 * beta * e + beta * score) * dt
            if k < steps - 1:
                e = e + math.sqrt(beta * dt) * torch.randn(e.shape, generator=gen)
        x = self.geo.project_embedded(e.double())
        return to_numpy_points(self.manifold, x.to(torch.complex128) if self.manifold == "u" else x)


@method(
    name="ambient-ddpm",
    kind="baseline",
    tasks=["manifold-diffusion"],
    reference="Ho, Jain and Abbeel, DDPM (NeurIPS 2020); VP-SDE of Song et al. (ICLR 2021); projection onto the manifold",
    version="1",
    params={"beta_min": 0.1, "beta_max": 20.0, "hidden": 256, "layers": 3, "lr": 5e-4},
    deterministic=False,
    deviations="Same MLP size, optimiser, batch and budget as projected-diffusion; Euler-Maruyama reverse SDE with the task's step count.",
)
class AmbientDDPMMethod(AmbientDDPM):
    """Euclidean DDPM in the ambient space, projected onto the manifold at the end."""

    def __init__(self, instance: Any, *, seed: int, budget: float, **params: Any) -> None:
        super().__init__(instance, seed=seed, budget=budget, **params)
