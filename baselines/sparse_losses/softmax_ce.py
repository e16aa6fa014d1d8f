"""Softmax cross-entropy and label-smoothed cross-entropy, trained with the task's recipe.

Reference: ``torch.nn.functional.cross_entropy`` (its ``label_smoothing``
argument, Szegedy et al. 2016) and ``torch.softmax``. Label smoothing 0.1 is
the value most papers and torch's documentation examples use.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from bench import method
from tasks.sparse_losses.training import train_and_predict


@method(
    name="softmax-ce",
    kind="baseline",
    tasks=["sparse-probability-losses"],
    reference="torch.nn.functional.cross_entropy + torch.softmax (the logistic loss)",
    version="1",
    deterministic=True,
)
def solve(instance, *, seed: int, budget: float) -> np.ndarray:
    """Cross-entropy training; softmax of the test logits."""
    return train_and_predict(
        instance.data, seed=seed, loss=F.cross_entropy, operator=lambda z: torch.softmax(z, dim=-1)
    )


@method(
    name="label-smoothing-ce",
    kind="baseline",
    tasks=["sparse-probability-losses"],
    reference="torch.nn.functional.cross_entropy(label_smoothing=0.1) + torch.softmax",
    version="1",
    params={"smoothing": 0.1},
    deterministic=True,
)
def solve_smoothed(instance, *, seed: int, budget: float, smoothing: float) -> np.ndarray:
    """Label-smoothed cross-entropy training; softmax of the test logits."""
    return train_and_predict(
        instance.data,
        seed=seed,
        loss=lambda z, y: F.cross_entropy(z, y, label_smoothing=smoothing),
        operator=lambda z: torch.softmax(z, dim=-1),
    )
