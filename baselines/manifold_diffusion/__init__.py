"""Baselines for the ``manifold-diffusion`` task, one module per method.

- ``ambient-ddpm`` (:mod:`.ddpm`): Euclidean VP diffusion on the embedding, then projection.
- ``rsgm`` (:mod:`.rsgm`): Riemannian score-based model, heat-kernel DSM.
- ``riemannian-fm`` (:mod:`.rfm`): Riemannian flow matching via Meta's ``flow_matching``
  (torus and S^2 only).
- ``tdm`` (:mod:`.tdm`): trivialized momentum diffusion on Lie groups (torus, SO(n), U(n);
  S^2 skipped).

Shared Riemannian operations: :mod:`.geometry`. See README.md.
"""

from __future__ import annotations

from baselines.manifold_diffusion.ddpm import AmbientDDPMMethod
from baselines.manifold_diffusion.rfm import RiemannianFMMethod
from baselines.manifold_diffusion.rsgm import RSGMMethod
from baselines.manifold_diffusion.tdm import TDMMethod

__all__ = ["AmbientDDPMMethod", "RiemannianFMMethod", "RSGMMethod", "TDMMethod"]
