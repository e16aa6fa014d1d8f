"""ganq: GPU-Adaptive Non-Uniform Quantization (Zhao and Yuan, ICML 2025), layer by layer.

GANQ minimises ``||W X - W_hat X||_F^2`` with ``W_hat[i] = T_i S_i``: a
codebook ``T_i`` of ``2**b`` values per row and a one-hot selection ``S_i``
(``2**b x n``). With ``H = X X^T`` the objective splits into one problem per
row, ``(W_i - T_i S_i) H (W_i - T_i S_i)^T``, and GANQ alternates, for
``max_epoch`` rounds and for all rows at once:

- **S-step.** With ``H = L L^T`` (Cholesky), the columns are visited from the
  last to the first; column ``j`` takes the code whose value is nearest to
  ``(W L)_ij - sum_{u > j} W_hat_iu L_uj``, divided by ``L_jj``. This is the
  nearest-plane (Babai) rounding of the row in the lattice ``L^T``: GPTQ's
  error feedback in reverse column order, with the codebook as the grid.
- **T-step.** The codebook is the least-squares fit for the new codes,
  ``T_i = W_i H S_i^T (S_i H S_i^T)^+`` (pseudo-inverse: a code no weight uses
  gets 0).

The iterate with the smallest objective (on the unregularised ``H``) is kept.

Read (never copied): the paper (arXiv 2501.12956, PMLR 267:77911-77925) and the
official code as published in two copies, ``PrunaAI/pruna``
(``src/pruna/algorithms/quantization/backends/ganq/lut_quant.py`` and
``utils.py`` at 30aa1ea / 7cac401) and ``wangshiwen-ai-hku/HSVDQ``
(``lut_quant.py`` at f73fb4b), which agree line for line; the original,
github.com/Evans-Z/GANQ, had no snapshot we could read. What this follows from
that code:

- ``H = sum_x x x^T``, unscaled, in float32 accumulation; 10 rounds;
- each row is normalised first by its median and inter-quartile range (plus
  1e-8) and the codebook mapped back at the end (``pre_process=True``, the
  default): a change of variables, since codebook entries are free;
- the initial codebook: 3 bits, the row's quantiles at 0, .2, .35, .5, .65,
  .8, .9 and 1 (linear interpolation); 4 bits, four linear grids of 3, 5, 5
  and 3 levels over the quarters of the row's range (16 entries, 13 distinct:
  a repeated entry is never chosen and ends at 0 after the first T-step);
- the Cholesky factor: of ``H`` itself where it exists (the LLaMA branch);
  where it fails, of ``H + diag(max(sum_k |H_jk| - 2 H_jj, 1e-8))``, which is
  diagonally dominant (``damping="fallback"``). The OPT branch always adds that
  term and first sets dead inputs (``H_jj = 0``) to ``H_jj = 1`` with the row
  mean as their weight (``damping="always"``, registered as ``ganq-opt``);
- ties in the nearest code go to the lowest index (``torch.argmin``).

The LLaMA branch assumes a well-conditioned ``H`` (RMSNorm inputs). A LayerNorm
with unit gain and zero bias, as in a freshly initialised GPT-2, puts its
outputs in the hyperplane ``sum_j x_j = 0``: ``H`` is singular, the Cholesky
factorisation still succeeds in float64 with a last pivot about 1e-6 of the
largest, and the alternation diverges after its first round (kept as the best).
``ganq-damped`` (ours, registered separately so that the paper's method stays
visible) uses GPTQ's damping instead.

Deviations from the reference
-----------------------------
- float64 throughout, on the CPU (the official code runs float32 on a GPU,
  with the pseudo-inverse in float64); ``numpy.linalg.pinv`` with torch's
  default cut-off (``2**b * eps``).
- The sparse outlier split (``sparsity > 0``, GANQ*) is not implemented: the
  paper's headline GANQ has none.
- The T-step's small ``2**b x 2**b`` systems are built in chunks of rows to
  bound memory; the arithmetic is the same.
- The task hands over every layer's calibration inputs taken from the
  full-precision model; the official pipeline quantizes block by block and
  feeds each block the outputs of the already quantized ones (see the
  family README).
"""

from __future__ import annotations

import numpy as np

from bench import method

__all__ = ["ganq_layer", "initial_codebook", "solve", "solve_damped", "solve_opt"]

#: Rows handled at once in the T-step (bounds the (rows, 2**b, n) one-hot block).
CHUNK = 128


def initial_codebook(W: np.ndarray, bits: int) -> np.ndarray:
    """The official initialisation (see the module docstring), per row of ``W``."""
    if bits == 3:
        fracs = np.array([0.0, 0.2, 0.35, 0.5, 0.65, 0.8, 0.9, 1.0])
        return np.quantile(W, fracs, axis=1, method="linear").T
    if bits == 4:
        lo, hi = W.min(axis=1, keepdims=True), W.max(axis=1, keepdims=True)
        parts = [
            np.linspace(a, b, k)
            for a, b, k in ((0.0, 0.25, 3), (0.25, 0.5, 5), (0.5, 0.75, 5), (0.75, 1.0, 3))
        ]
        return lo + (hi - lo) * np.concatenate(parts)[None, :]
    raise ValueError(f"GANQ's initialisation is defined for 3 and 4 bits, not {bits}")


def _factor(H: np.ndarray, damping: str, percdamp: float = 0.01) -> np.ndarray:
    if damping == "percdamp":
        return np.linalg.cholesky(H + percdamp * np.mean(np.diag(H)) * np.eye(len(H)))
    offset = np.clip(np.abs(H).sum(axis=1) - 2 * np.diag(H), 1e-8, None)
    if damping == "fallback":
        try:
            return np.linalg.cholesky(H)
        except np.linalg.LinAlgError:
            pass
    return np.linalg.cholesky(H + np.diag(offset))


def _s_step(WL: np.ndarray, L: np.ndarray, T: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    m, n = WL.shape
    Wq = np.zeros((m, n))
    codes = np.empty((m, n), dtype=np.uint8)
    rows = np.arange(m)
    for j in range(n - 1, -1, -1):
        r = WL[:, j] - Wq[:, j + 1 :] @ L[j + 1 :, j]
        idx = np.abs(T * L[j, j] - r[:, None]).argmin(axis=1)
        codes[:, j] = idx
        Wq[:, j] = T[rows, idx]
    return codes, Wq


def _t_step(codes: np.ndarray, WH: np.ndarray, H: np.ndarray, levels: int) -> np.ndarray:
    m, n = codes.shape
    T = np.empty((m, levels))
    eye = np.eye(levels)
    for i0 in range(0, m, CHUNK):
        S = eye[codes[i0 : i0 + CHUNK]].transpose(0, 2, 1)  # (rows, levels, n) one-hot
        A = (S @ H) @ S.transpose(0, 2, 1)  # S_i H S_i^T
        b = np.einsum("rn,rkn->rk", WH[i0 : i0 + CHUNK], S)  # W_i H S_i^T
        T[i0 : i0 + CHUNK] = np.einsum(
            "rk,rkl->rl", b, np.linalg.pinv(A, rtol=levels * np.finfo(float).eps, hermitian=True)
        )
    return T


def ganq_layer(
    W: np.ndarray,
    X: np.ndarray,
    bits: int,
    *,
    max_epoch: int = 10,
    damping: str = "fallback",
    pre_process: bool = True,
    percdamp: float = 0.01,
) -> tuple[np.ndarray, np.ndarray, list[float]]:
    """GANQ on one layer: ``(codebook (m, 2**bits), codes (m, n) uint8, objective per round)``.

    ``W`` is ``(m, n)``, ``X`` the calibration inputs ``(n, p)``. ``damping``: ``"fallback"``
    (the official LLaMA branch), ``"always"`` (the OPT branch) or ``"percdamp"`` (ours:
    ``H + percdamp * mean(diag H) I``, GPTQ's damping, in the S- and T-steps).
    """
    W = np.array(W, dtype=np.float64)
    X = np.asarray(X, dtype=np.float64)
    H = X @ X.T
    if damping == "always":  # the OPT branch: dead inputs first
        dead = np.diag(H) == 0
        H[dead, dead] = 1.0
        if dead.any() and (~dead).any():
            W[:, dead] = W[:, ~dead].mean(axis=1, keepdims=True)
    if pre_process:
        median = np.median(W, axis=1, keepdims=True)
        iqr = (
            np.quantile(W, 0.75, axis=1, keepdims=True)
            - np.quantile(W, 0.25, axis=1, keepdims=True)
            + 1e-8
        )
        W = (W - median) / iqr
    L = _factor(H, damping, percdamp)
    LLt = L @ L.T
    WL, WLLt = W @ L, W @ LLt
    T = initial_codebook(W, bits)
    best, best_T, best_codes, history = np.inf, T, None, []
    for _ in range(max_epoch):
        codes, _ = _s_step(WL, L, T)
        T = _t_step(codes, WLLt, LLt, 2**bits)
        R = W - np.take_along_axis(T, codes.astype(np.intp), axis=1)
        value = float(np.einsum("ij,ij->", R @ H, R))
        history.append(value)
        if value < best:
            best, best_T, best_codes = value, T, codes
    if best_codes is None:  # max_epoch == 0: the initial codebook, rounded to nearest
        best_codes = np.abs(W[:, :, None] - T[:, None, :]).argmin(axis=2).astype(np.uint8)
    if pre_process:
        best_T = best_T * iqr + median
    return best_T, best_codes, history


def _solve(
    instance, max_epoch: int, damping: str, pre_process: bool, percdamp: float = 0.01
) -> dict:
    bits = int(instance.data["bits"])
    out = {}
    for name in instance.data["layers"]:
        T, codes, _ = ganq_layer(
            instance.data["W/" + name], instance.data["X/" + name], bits,
            max_epoch=max_epoch, damping=damping, pre_process=pre_process, percdamp=percdamp,
        )  # fmt: skip
        out[name] = {"codebook": T, "codes": codes}
    return out


_REFERENCE = (
    "Zhao and Yuan, GANQ: GPU-Adaptive Non-Uniform Quantization for Large Language Models (ICML 2025); "
    "official code github.com/Evans-Z/GANQ, read in the PrunaAI/pruna and HSVDQ copies"
)


@method(
    name="ganq",
    kind="method",
    tasks=["lut-quantization"],
    reference=_REFERENCE,
    version="1",
    deterministic=True,
    params={"max_epoch": 10, "pre_process": True},
    deviations="float64 on the CPU; no outlier split (GANQ*); calibration inputs from the full-precision model, not block by block",
)
def solve(instance, *, seed: int, budget: float, max_epoch: int, pre_process: bool) -> dict:
    """GANQ with the official code's LLaMA branch: Cholesky of ``H``, the diagonal-dominance term only if it fails."""
    return _solve(instance, max_epoch, "fallback", pre_process)


@method(
    name="ganq-opt",
    kind="method",
    tasks=["lut-quantization"],
    reference=_REFERENCE,
    version="1",
    deterministic=True,
    params={"max_epoch": 10, "pre_process": True},
    deviations="as ganq, with the official code's OPT branch: dead inputs fixed, diagonal-dominance term always added",
)
def solve_opt(instance, *, seed: int, budget: float, max_epoch: int, pre_process: bool) -> dict:
    """GANQ with the official code's OPT branch (dead inputs fixed, ``H + diag(offset)`` always)."""
    return _solve(instance, max_epoch, "always", pre_process)


@method(
    name="ganq-damped",
    kind="method",
    tasks=["lut-quantization"],
    reference=_REFERENCE + "; with GPTQ's damping (ours)",
    version="1",
    deterministic=True,
    params={"max_epoch": 10, "pre_process": True, "percdamp": 0.01},
    deviations="ours, not the paper's: H + 1% of its mean diagonal in the S- and T-steps (GPTQ's damping) instead of "
    "the official branches; the objective and the choice of the best round stay on H",
)
def solve_damped(
    instance, *, seed: int, budget: float, max_epoch: int, pre_process: bool, percdamp: float
) -> dict:
    """GANQ with GPTQ's 1% damping: a well-posed S-step where ``H`` is singular (LayerNorm inputs)."""
    return _solve(instance, max_epoch, "percdamp", pre_process, percdamp)
