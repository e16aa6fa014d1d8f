"""Baselines of ``equivariant-regression``: MLP, KAN and an EMLP-style torch re-implementation. torch is imported here
so that a worker's zygote imports it once."""

from __future__ import annotations

import contextlib

import torch

with contextlib.suppress(ImportError):
    import torch._dynamo  # noqa: F401  (torch.optim imports it lazily; see methods/maxcut)
