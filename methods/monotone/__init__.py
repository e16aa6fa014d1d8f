"""The paper's two monotone constructions for the ``monotone-regression`` task (see tasks/monotone/README.md).

``monotone_mlp.py`` registers ``monotonic-mlp`` (the sign-adaptive layer, no
reparametrisation) and ``constrained-mlp`` (``abs`` weights, switched ReLU). torch is
imported here so a worker's zygote imports it once.
"""

from __future__ import annotations

import contextlib

import torch

with contextlib.suppress(ImportError):
    import torch._dynamo  # noqa: F401  (torch.optim imports it lazily; see methods/maxcut)
