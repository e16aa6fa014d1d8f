"""Riemannian operations (torch, batched) for the baselines: embeddings, projections, exp/log, noise.

Points: torus angles ``(B, d)``; sphere unit vectors ``(B, 3)``; SO(n)/U(n) matrices ``(B, n, n)``
(float32 / complex64 while training). Metrics: flat on the torus, round on S^2, Frobenius
(``Re tr(A^H B)``) on SO(n) and U(n).
"""

from __future__ import annotations

import numpy as np
import torch

from common.manifold_diffusion.models import TWO_PI, batched_polar

__all__ = ["Geometry"]


class Geometry:
    """Operations on one manifold (``torus``, ``sphere``, ``so``, ``u``) of size ``n``."""

    def __init__(self, manifold: str, n: int) -> None:
        self.manifold, self.n = manifold, n
        self.is_matrix = manifold in ("so", "u")
        self.cdtype = torch.complex64

    # -- embedding in R^m (features for networks, the Euclidean baseline's space) --------
    @property
    def embed_dim(self) -> int:
        return {"torus": 2 * self.n, "sphere": 3, "so": self.n**2, "u": 2 * self.n**2}[self.manifold]

    @property
    def tangent_dim(self) -> int:
        """Size of the flattened ambient tangent vectors (network outputs)."""
        return {"torus": self.n, "sphere": 3, "so": self.n**2, "u": 2 * self.n**2}[self.manifold]

    def embed(self, x: torch.Tensor) -> torch.Tensor:
        if self.manifold == "torus":
            return torch.cat([torch.cos(x), torch.sin(x)], dim=1)
        if self.manifold == "sphere":
            return x
        f = x.reshape(x.shape[0], -1)
        return torch.cat([f.real, f.imag], dim=1) if self.manifold == "u" else f

    def project_embedded(self, e: torch.Tensor) -> torch.Tensor:
        """Nearest manifold point of an embedded vector (the Euclidean baseline's last step)."""
        if self.manifold == "torus":
            d = self.n
            return torch.remainder(torch.atan2(e[:, d:], e[:, :d]), TWO_PI)
        if self.manifold == "sphere":
            return e / e.norm(dim=1, keepdim=True).clamp_min(1e-12)
        m = self.unflat(e)
        if self.manifold == "u":
            return batched_polar(m)
        u, _, vh = torch.linalg.svd(m)
        det = torch.linalg.det(u @ vh)
        # nearest rotation: flip the direction of the smallest singular value if det = -1
        flip = torch.ones(m.shape[0], self.n, dtype=m.dtype)
        flip[:, -1] = torch.where(det < 0, -1.0, 1.0)
        return (u * flip[:, None, :]) @ vh

    def unflat(self, f: torch.Tensor) -> torch.Tensor:
        n2 = self.n * self.n
        if self.manifold == "u":
            return torch.complex(f[:, :n2], f[:, n2:]).reshape(-1, self.n, self.n)
        return f.reshape(-1, self.n, self.n)

    def flat(self, v: torch.Tensor) -> torch.Tensor:
        f = v.reshape(v.shape[0], -1)
        return torch.cat([f.real, f.imag], dim=1) if self.manifold == "u" else f

    # -- tangent spaces ------------------------------------------------------------------
    def proj(self, x: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        """Orthogonal projection of ambient ``v`` onto ``T_x M``."""
        if self.manifold == "torus":
            return v
        if self.manifold == "sphere":
            return v - x * (v * x).sum(1, keepdim=True)
        b = v @ x.conj().transpose(-1, -2)
        return 0.5 * (b - b.conj().transpose(-1, -2)) @ x

    def noise(self, x: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
        """Standard Gaussian in ``T_x M`` (projection of an isotropic ambient Gaussian)."""
        if self.manifold == "u":
            g = torch.complex(torch.randn(x.shape, generator=gen), torch.randn(x.shape, generator=gen))
        else:
            g = torch.randn(x.shape, generator=gen)
        return self.proj(x, g)

    def exp(self, x: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        if self.manifold == "torus":
            return torch.remainder(x + v, TWO_PI)
        if self.manifold == "sphere":
            nv = v.norm(dim=1, keepdim=True)
            y = torch.cos(nv) * x + torch.sin(nv) * v / nv.clamp_min(1e-12)
            return y / y.norm(dim=1, keepdim=True)
        om = v @ x.conj().transpose(-1, -2)
        om = 0.5 * (om - om.conj().transpose(-1, -2))
        return batched_polar(torch.linalg.matrix_exp(om) @ x)

    def log(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """``log_x(y)``, the tangent vector at ``x`` of the shortest geodesic to ``y``."""
        if self.manifold == "torus":
            return torch.atan2(torch.sin(y - x), torch.cos(y - x))
        if self.manifold == "sphere":
            c = (x * y).sum(1, keepdim=True).clamp(-1 + 1e-7, 1 - 1e-7)
            th = torch.acos(c)
            return th * (y - c * x) / torch.sin(th)
        w = (x.conj().transpose(-1, -2) @ y).to(torch.complex128)
        lam, vec = torch.linalg.eig(w)
        ang = torch.angle(lam)
        logw = vec @ torch.diag_embed(1j * ang) @ torch.linalg.inv(vec)
        logw = logw if self.manifold == "u" else logw.real
        logw = 0.5 * (logw - logw.conj().transpose(-1, -2))
        return x @ logw.to(x.dtype)

    def uniform(self, count: int, gen: torch.Generator) -> torch.Tensor:
        """Uniform (Haar) points: the terminal distribution of Brownian motion."""
        if self.manifold == "torus":
            return TWO_PI * torch.rand(count, self.n, generator=gen)
        if self.manifold == "sphere":
            z = torch.randn(count, 3, generator=gen)
            return z / z.norm(dim=1, keepdim=True)
        shape = (count, self.n, self.n)
        g = torch.randn(shape, generator=gen, dtype=torch.float64)
        if self.manifold == "u":
            g = torch.complex(g, torch.randn(shape, generator=gen, dtype=torch.float64))
        q, r = torch.linalg.qr(g)
        d = torch.diagonal(r, dim1=-2, dim2=-1)
        q = q * (d / d.abs())[:, None, :]
        if self.manifold == "so":
            det = torch.linalg.det(q)
            q[:, :, 0] = q[:, :, 0] * torch.where(det < 0, -1.0, 1.0)[:, None]
            return q.float()
        return q.to(self.cdtype)

    def sqnorm(self, v: torch.Tensor) -> torch.Tensor:
        return (v.abs() ** 2).reshape(v.shape[0], -1).sum(1)

    def as_tensor(self, x_np) -> torch.Tensor:
        t = torch.from_numpy(np.array(x_np))
        return t.to(self.cdtype) if self.manifold == "u" else t.float()

    def wrapped_score(self, x0: torch.Tensor, xt: torch.Tensor, var: torch.Tensor, images: int = 3) -> torch.Tensor:
        """Exact score of the torus heat kernel (wrapped Gaussian, ``2 images + 1`` terms per axis)."""
        k = torch.arange(-images, images + 1, dtype=xt.dtype) * TWO_PI
        diff = (xt - x0)[..., None] + k
        v = var.reshape(-1, *([1] * (diff.ndim - 1)))
        logw = -(diff**2) / (2 * v)
        w = torch.softmax(logw, dim=-1)
        return -(w * diff).sum(-1) / var.reshape(-1, 1)
