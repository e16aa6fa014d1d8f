"""iv-2sls: a two-stage least-squares point estimate of the CATE, returned as lower = upper.

Linear structural model ``Y = b0 + b'x + (c0 + c'x) A + error`` with the
endogenous regressors ``A`` and ``A x`` instrumented by ``Z`` and ``Z x_j``
(every instrument coordinate and its products with each covariate), exogenous
``1, x``; solved by ordinary 2SLS (numpy least squares for both stages). A
point estimate makes no claim of partial identification: it covers ``tau(x)``
only where it hits it, which the task's coverage shows.
"""

from __future__ import annotations

import numpy as np

from bench import method
from common.iv_bounds.nuisance import finalize


def two_stage_least_squares(X: np.ndarray, Z: np.ndarray, A: np.ndarray, Y: np.ndarray):
    """``(c0, c)``: the coefficients of ``A`` and ``A x`` in the 2SLS fit (``tau_hat(x) = c0 + c'x``)."""
    n = len(Y)
    exog = np.column_stack([np.ones(n), X])
    endog = np.column_stack([A, A[:, None] * X])
    instruments = np.column_stack([exog, Z] + [Z * X[:, [j]] for j in range(X.shape[1])])
    fitted = instruments @ np.linalg.lstsq(instruments, endog, rcond=None)[0]
    beta = np.linalg.lstsq(np.column_stack([exog, fitted]), Y, rcond=None)[0]
    coef = beta[exog.shape[1] :]
    return coef[0], coef[1:]


@method(
    name="iv-2sls",
    kind="baseline",
    tasks=["iv-bounds"],
    reference="two-stage least squares (numpy.linalg.lstsq), linear CATE in x, instruments Z and Z * x",
    version="1",
    deterministic=True,
    description="2SLS point estimate of a linear CATE, returned as lower = upper",
)
def solve(instance, *, seed: int, budget: float) -> dict[str, np.ndarray]:
    """The 2SLS CATE at ``X_test`` as a zero-width interval (clipped to the range of a difference)."""
    d = instance.data
    lo, hi = (float(v) for v in d["y_range"])
    X, Z = np.asarray(d["X"], dtype=np.float64), np.asarray(d["Z"], dtype=np.float64)
    c0, c = two_stage_least_squares(
        X, Z, np.asarray(d["A"], dtype=np.float64), np.asarray(d["Y"], dtype=np.float64)
    )
    est = c0 + np.asarray(d["X_test"]) @ c
    return finalize(est, est, lo, hi)
