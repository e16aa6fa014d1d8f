"""``riemannian-fm``: Riemannian flow matching (Chen and Lipman, ICLR 2024, arXiv 2302.03660).

Through Meta's ``flow_matching`` package (``GeodesicProbPath`` with ``CondOTScheduler``,
``RiemannianODESolver``), which provides the ``FlatTorus`` and ``Sphere`` manifolds only;
``supports()`` skips SO(n) and U(n). Source: uniform distribution; target: the training data;
the velocity MLP's output is projected onto the tangent space; midpoint ODE steps.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from baselines.manifold_diffusion.geometry import Geometry
from bench.registry import method
from common.manifold_diffusion.models import MLP, TrainThenSample, make_adam, to_numpy_points

try:  # flow_matching is an optional dependency of this baseline
    from flow_matching.path import GeodesicProbPath
    from flow_matching.path.scheduler import CondOTScheduler
    from flow_matching.solver import RiemannianODESolver
    from flow_matching.utils import ModelWrapper
    from flow_matching.utils.manifolds import FlatTorus, Sphere
except ImportError:  # pragma: no cover - reported by supports()
    GeodesicProbPath = None

__all__ = ["RiemannianFM"]


def _supports(instance: Any) -> bool | str:
    if GeodesicProbPath is None:
        return "the flow_matching package is not installed (pip install flow_matching)"
    if instance.data["manifold"] not in ("torus", "sphere"):
        return "flow_matching provides only FlatTorus and Sphere manifolds, not SO(n) or U(n)"
    return True


class _Velocity(ModelWrapper if GeodesicProbPath is not None else object):  # type: ignore[misc]
    def __init__(self, net: torch.nn.Module, geo: Geometry, manifold: Any) -> None:
        super().__init__(net)
        self.geo, self.manifold = geo, manifold

    def forward(self, x: torch.Tensor, t: torch.Tensor, **extras: Any) -> torch.Tensor:
        t = t.reshape(-1).expand(x.shape[0]) if t.numel() == 1 else t
        return self.manifold.proju(x, self.model(self.geo.embed(x), t))


class RiemannianFM(TrainThenSample):
    """Conditional geodesic flow matching from the uniform distribution."""

    def init_model(self) -> None:
        p = self.params
        self.geo = Geometry(self.manifold, self.n)
        self.mf = FlatTorus() if self.manifold == "torus" else Sphere()
        self.path = GeodesicProbPath(scheduler=CondOTScheduler(), manifold=self.mf)
        act = "sin" if self.manifold == "torus" else "silu"
        self.net = MLP(self.geo.embed_dim, self.geo.tangent_dim, int(p.get("hidden", 256)), int(p.get("layers", 3)), act=act)
        self.vel = _Velocity(self.net, self.geo, self.mf)
        self.opt = make_adam(self.net, lr=self.lr)

    def train_step(self, x1: torch.Tensor) -> float:
        b = x1.shape[0]
        x0 = self.geo.uniform(b, self.gen).float()
        t = torch.rand(b, generator=self.gen) * (1 - 1e-3)
        ps = self.path.sample(x_0=x0, x_1=x1, t=t)
        loss = ((self.vel(ps.x_t, ps.t.reshape(-1)) - ps.dx_t) ** 2).sum(1).mean()
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return float(loss.detach())

    def sample(self, n_points: int, steps: int) -> np.ndarray:
        gen = torch.Generator().manual_seed(self.seed + 1)
        x0 = self.geo.uniform(n_points, gen).float()
        solver = RiemannianODESolver(manifold=self.mf, velocity_model=self.vel)
        x = solver.sample(x0, step_size=1.0 / max(steps // 2, 1), method="midpoint", time_grid=torch.tensor([0.0, 1.0]))
        return to_numpy_points(self.manifold, x.double())


@method(
    name="riemannian-fm",
    kind="baseline",
    tasks=["manifold-diffusion"],
    reference="Chen and Lipman, Flow Matching on General Geometries, ICLR 2024 (arXiv 2302.03660); Meta's flow_matching 1.0.10",
    version="1",
    params={"hidden": 256, "layers": 3, "lr": 5e-4},
    deterministic=False,
    supports=_supports,
    deviations="Midpoint ODE with steps/2 steps (about the same network evaluations as the diffusion samplers); MLP 3 x 256.",
)
class RiemannianFMMethod(RiemannianFM):
    """Riemannian flow matching behind the task's two-round protocol."""

    def __init__(self, instance: Any, *, seed: int, budget: float, **params: Any) -> None:
        super().__init__(instance, seed=seed, budget=budget, **params)
