"""gptq: GPTQ (Frantar, Ashkboos, Hoefler and Alistarh, ICLR 2023) on each row's uniform grid.

The strongest uniform-grid baseline, and the one the GANQ paper compares
with first. Columns are quantized left to right on the per-channel min-max
grid of :func:`tasks.lut_quantization.rtn_codebook`; each column's rounding
error is spread over the columns not yet quantized through the upper Cholesky
factor of ``H^-1`` (Optimal Brain Quantization with a fixed order), in lazy
blocks of 128 columns. As in the official code (github.com/IST-DASLab/gptq,
``gptq.py``, read, not copied):

- ``H = 2/p X X^T``; dead inputs (``H_jj = 0``) get ``H_jj = 1`` and weight 0;
- damping ``percdamp = 0.01`` of the mean diagonal;
- the grid is fixed from the full row before any update (per channel, no
  groups), and ``act_order`` is off (the paper's setting; ``act_order=True``
  orders the columns by decreasing ``H_jj``).

No maintained CPU library implements it (AutoGPTQ and GPTQModel need CUDA
kernels), so it is written here in numpy, float64.
"""

from __future__ import annotations

import numpy as np

from bench import method
from tasks.lut_quantization import rtn_codebook

__all__ = ["gptq_layer", "solve"]


def gptq_layer(
    W: np.ndarray,
    X: np.ndarray,
    bits: int,
    *,
    percdamp: float = 0.01,
    blocksize: int = 128,
    act_order: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """GPTQ on one layer: ``(codebook (m, 2**bits), codes (m, n) uint8)``; ``X`` is ``(n, p)``."""
    W = np.array(W, dtype=np.float64)
    X = np.asarray(X, dtype=np.float64)
    m, n = W.shape
    H = (2.0 / X.shape[1]) * (X @ X.T)
    T = rtn_codebook(W, bits)  # from the untouched row, as the reference code's find_params
    scale, low = T[:, 1] - T[:, 0], T[:, 0]
    dead = np.diag(H) == 0
    H[dead, dead] = 1.0
    W[:, dead] = 0.0
    perm = np.argsort(-np.diag(H), kind="stable") if act_order else np.arange(n)
    W, H = W[:, perm], H[np.ix_(perm, perm)]
    H[np.diag_indices(n)] += percdamp * np.mean(np.diag(H))
    Hinv = np.linalg.cholesky(np.linalg.inv(H)).T  # upper factor of H^-1
    codes = np.empty((m, n), dtype=np.uint8)
    top = 2**bits - 1
    for i1 in range(0, n, blocksize):
        i2 = min(i1 + blocksize, n)
        W1, E1, Hb = W[:, i1:i2].copy(), np.zeros((m, i2 - i1)), Hinv[i1:i2, i1:i2]
        for i in range(i2 - i1):
            w = W1[:, i]
            q = np.clip(np.rint((w - low) / scale), 0, top)
            codes[:, i1 + i] = q.astype(np.uint8)
            err = (w - (low + scale * q)) / Hb[i, i]
            W1[:, i:] -= np.outer(err, Hb[i, i:])
            E1[:, i] = err
        W[:, i2:] -= E1 @ Hinv[i1:i2, i2:]
    out = np.empty_like(codes)
    out[:, perm] = codes
    return T, out


@method(
    name="gptq",
    kind="baseline",
    tasks=["lut-quantization"],
    reference="Frantar et al., GPTQ: Accurate Post-Training Quantization for Generative Pre-trained Transformers (ICLR 2023); github.com/IST-DASLab/gptq",
    version="1",
    deterministic=True,
    params={"percdamp": 0.01, "blocksize": 128, "act_order": False},
    description="GPTQ's error feedback on each row's uniform min-max grid (per channel, 1% damping)",
)
def solve(
    instance, *, seed: int, budget: float, percdamp: float, blocksize: int, act_order: bool
) -> dict:
    """GPTQ, layer by layer, on the task's calibration inputs."""
    bits = int(instance.data["bits"])
    out = {}
    for name in instance.data["layers"]:
        T, codes = gptq_layer(
            instance.data["W/" + name], instance.data["X/" + name], bits,
            percdamp=percdamp, blocksize=blocksize, act_order=act_order,
        )  # fmt: skip
        out[name] = {"codebook": T, "codes": codes}
    return out
