"""The paper's method for the ``manifold-diffusion`` task (Mangoubi, He and Vishnoi, ICML 2025).

- ``projected-diffusion`` (:mod:`.projected`): Euclidean OU projected onto the manifold.

What the baselines share with it (protocol, budgets, nets, schedules, row gauges) lives in
``common/manifold_diffusion/models.py``; :mod:`.matrix_geometry` holds the SO(n)/U(n)
projection and analytic eigenvector derivative. torch is imported here so a worker's zygote
imports it once.
"""

from __future__ import annotations

import contextlib

import torch

with contextlib.suppress(ImportError):
    import torch._dynamo  # noqa: F401  (torch.optim imports it lazily; see methods/maxcut)

from methods.manifold_diffusion.projected import ProjectedDiffusionMethod

__all__ = ["ProjectedDiffusionMethod"]
