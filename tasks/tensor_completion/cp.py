"""CP kernels on the observed entries of a tensor: the task's reference (exact ALS) and the ALS variants.

Shapes: ``idx`` is ``(m, N)`` int64 (the observed multi-indices), ``y`` is
``(m,)``, ``factors`` is a list of ``N`` arrays ``(I_n, r)``. Nothing here
forms the full tensor: every kernel costs ``O(m r)`` or ``O(m r^2)``.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

#: Entries of the outer products ``Z_e Z_e^T`` formed at once by :func:`exact_mode_update` (32 MB of float64).
GRAM_CHUNK = 4_000_000

__all__ = [
    "row_selector",
    "cp_at",
    "exact_mode_update",
    "gram_hadamard",
    "khatri_rao_rows",
    "lifted_mode_update",
    "mttkrp_observed",
]


def khatri_rao_rows(
    factors: list[np.ndarray], idx: np.ndarray, skip: int | None = None
) -> np.ndarray:
    """``Z[e] = prod_{m != skip} factors[m][idx[e, m]]``: the rows of the Khatri-Rao design, ``(m, r)``."""
    Z = None
    for mode, A in enumerate(factors):
        if mode == skip:
            continue
        rows = A[idx[:, mode]]
        Z = rows.copy() if Z is None else Z * rows
    return Z


def cp_at(factors: list[np.ndarray], idx: np.ndarray) -> np.ndarray:
    """The CP model's values at the multi-indices ``idx``, ``(m,)``."""
    return khatri_rao_rows(factors, idx).sum(axis=1)


def gram_hadamard(factors: list[np.ndarray], skip: int) -> np.ndarray:
    """``*_{m != skip} A_m^T A_m`` (Hadamard product), the Gram of the full Khatri-Rao design, ``(r, r)``."""
    r = factors[0].shape[1]
    G = np.ones((r, r))
    for mode, A in enumerate(factors):
        if mode != skip:
            G *= A.T @ A
    return G


def row_selector(rows: np.ndarray, size: int) -> sp.csr_matrix:
    """The ``(size, m)`` 0/1 matrix with a one at ``(rows[e], e)``: sums over each row's observed entries."""
    m = rows.size
    return sp.csr_matrix((np.ones(m), (rows, np.arange(m))), shape=(size, m))


def mttkrp_observed(S: sp.csr_matrix, Z: np.ndarray, w: np.ndarray) -> np.ndarray:
    """``sum_e w[e] Z[e] e_{rows[e]}^T`` (``S`` from :func:`row_selector`): the MTTKRP of a tensor on the observed entries."""
    return np.asarray(S @ (w[:, None] * Z))


def exact_mode_update(
    factors: list[np.ndarray],
    idx: np.ndarray,
    y: np.ndarray,
    n: int,
    S: sp.csr_matrix | None = None,
) -> np.ndarray:
    """Exact masked least squares for factor ``n``: each row's normal equations over its observed entries.

    Row ``i`` solves ``min_a sum_{e: idx[e, n] = i} (y_e - <a, Z_e>)^2`` with
    ``Z_e`` the Khatri-Rao row of the other factors, by the pseudo-inverse of
    its ``r x r`` Gram (as the official code's direct solver does, one row at
    a time); the Grams are summed by a sparse product with the row selector
    ``S`` (built when not given), so the cost is ``O(m r^2 + I_n r^3)``. A row
    with no observation keeps its value.
    """
    A = factors[n]
    size, r = A.shape
    rows = idx[:, n]
    if S is None:
        S = row_selector(rows, size)
    Z = khatri_rao_rows(factors, idx, skip=n)
    G = np.zeros((size, r * r))
    step = max(1, GRAM_CHUNK // (r * r))
    for s in range(0, Z.shape[0], step):
        Zc = Z[s : s + step]
        G += S[:, s : s + step] @ (Zc[:, :, None] * Zc[:, None, :]).reshape(-1, r * r)
    G = G.reshape(size, r, r)
    b = mttkrp_observed(S, Z, y)
    seen = np.diff(S.indptr) > 0
    out = A.copy()
    out[seen] = np.einsum("ikl,il->ik", np.linalg.pinv(G[seen], hermitian=True), b[seen])
    return out


def lifted_mode_update(
    factors: list[np.ndarray],
    idx: np.ndarray,
    y: np.ndarray,
    n: int,
    *,
    epsilon: float,
    max_steps: int,
    S: sp.csr_matrix | None = None,
) -> tuple[np.ndarray, int]:
    """Approximate Richardson iteration on the lifted problem for factor ``n``; returns ``(A_n, steps)``.

    One step fills the unobserved entries with the current model and solves
    the full-tensor CP regression ``min_A ||A Z^T - X_fill_(n)||_F`` exactly
    with the structured normal equations ``A = X_fill_(n) Z G^{-1}``,
    ``G = *_{m != n} A_m^T A_m``. Since ``X_fill = model + P_Omega(X - model)``
    and ``model_(n) Z = A G``, the step is ``A <- A + MTTKRP_Omega(residual) G^+``:
    the same iterate as the dense lifted solve, at ``O(m r + I_n r^2)`` a step.

    Stopping rule (official code, ``run_lifted_cp_completion``): after each
    step, stop once the observed loss's relative decrease
    ``1 - loss_j / loss_{j-1}`` is below ``epsilon``, or after ``max_steps`` steps.
    """
    A = factors[n].copy()
    size = A.shape[0]
    rows = idx[:, n]
    if S is None:
        S = row_selector(rows, size)
    Z = khatri_rao_rows(factors, idx, skip=n)
    G_pinv = np.linalg.pinv(gram_hadamard(factors, n), hermitian=True)
    res = y - np.einsum("er,er->e", A[rows], Z)
    loss = float(res @ res)
    steps = 0
    while steps < max_steps:
        delta = mttkrp_observed(S, Z, res) @ G_pinv
        A += delta
        res -= np.einsum("er,er->e", delta[rows], Z)
        steps += 1
        new = float(res @ res)
        decrease = 1.0 - new / loss if loss > 0 else 0.0
        loss = new
        if decrease < epsilon:
            break
    return A, steps
