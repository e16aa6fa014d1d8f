"""Baselines of the ``monotone-regression`` task (see tasks/monotone/README.md).

``neural.py``: the classical non-negative-weight sigmoid MLP and a free (not monotone)
MLP, both trained by the task's recipe; ``sklearn_models.py``: HistGradientBoosting with
``monotonic_cst`` and isotonic regression (one-column instances only).
"""

from __future__ import annotations

import contextlib

import torch

with contextlib.suppress(ImportError):
    import torch._dynamo  # noqa: F401  (torch.optim imports it lazily; see methods/maxcut)
