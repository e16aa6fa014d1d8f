"""Sparsemax and entmax-1.5 with their Fenchel–Young losses, from the ``entmax`` package.

Reference: Martins and Astudillo (ICML 2016, sparsemax); Peters, Niculae and
Martins (ACL 2019, entmax); the ``entmax`` package (deep-spin), used as its
README shows: ``SparsemaxLoss`` / ``Entmax15Loss`` on logits during training,
``sparsemax`` / ``entmax15`` (exact, sort-based) at prediction time.
"""

from __future__ import annotations

import numpy as np
from entmax import Entmax15Loss, SparsemaxLoss, entmax15, sparsemax

from bench import method
from tasks.sparse_losses.training import train_and_predict


@method(
    name="sparsemax",
    kind="baseline",
    tasks=["sparse-probability-losses"],
    reference="entmax package: SparsemaxLoss + sparsemax (Martins and Astudillo, ICML 2016)",
    version="1",
    deterministic=True,
)
def solve_sparsemax(instance, *, seed: int, budget: float) -> np.ndarray:
    """Sparsemax loss training; sparsemax of the test logits."""
    loss = SparsemaxLoss(reduction="elementwise_mean")
    return train_and_predict(instance.data, seed=seed, loss=loss, operator=lambda z: sparsemax(z, dim=-1))


@method(
    name="entmax15",
    kind="baseline",
    tasks=["sparse-probability-losses"],
    reference="entmax package: Entmax15Loss + entmax15 (Peters, Niculae and Martins, ACL 2019)",
    version="1",
    deterministic=True,
)
def solve_entmax15(instance, *, seed: int, budget: float) -> np.ndarray:
    """Entmax-1.5 loss training; entmax-1.5 of the test logits."""
    loss = Entmax15Loss(reduction="elementwise_mean")
    return train_and_predict(instance.data, seed=seed, loss=loss, operator=lambda z: entmax15(z, dim=-1))
