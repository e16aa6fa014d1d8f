"""exact-als and em-als: the direct solve of every masked regression, and one lifted step per update.

- ``exact-als``: CP-ALS whose factor updates solve the masked least squares
  exactly, each row by its own ``r x r`` normal equations over its observed
  entries (pseudo-inverse, as the official code's ``run_cp_completion`` does
  row by row in Python; here the Grams are accumulated with vectorised
  bincounts, ``O(|Omega| r^2)`` per mode). The "direct method" of the paper.
- ``em-als``: impute-then-ALS (EM): each factor update is one step of the
  lifted solve (fill the unobserved entries with the current model, solve the
  full CP regression once), i.e. the paper's iteration with a single
  Richardson step.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bench import method
from common.tensor_completion.driver import SweepCompleter
from tasks.tensor_completion.cp import exact_mode_update, lifted_mode_update


@method(
    name="exact-als",
    kind="baseline",
    tasks=["tensor-completion"],
    reference="CP-ALS with exact masked least squares (per-row normal equations); the paper's direct method",
    version="1",
    deterministic=False,  # the factors are (tests); the solution also holds the task's timings
)
class ExactALS(SweepCompleter):
    """One sweep of exact per-row masked least squares per round."""

    def __init__(self, instance: Any, *, seed: int, budget: float) -> None:
        super().__init__(instance, exact_mode_update)


def _em(factors, idx, y, n, S):
    A, _ = lifted_mode_update(factors, idx, y, n, epsilon=0.0, max_steps=1, S=S)
    return A


@method(
    name="em-als",
    kind="baseline",
    tasks=["tensor-completion"],
    reference="impute-then-ALS (EM for CP with missing data, e.g. Tomasi and Bro 2005): one lifted step per factor update",
    version="1",
    deterministic=False,  # the factors are (tests); the solution also holds the task's timings
)
class EMALS(SweepCompleter):
    """One sweep per round; each factor update is a single fill-and-solve step."""

    def __init__(self, instance: Any, *, seed: int, budget: float) -> None:
        super().__init__(instance, _em)


def _row_partition(idx: np.ndarray, sizes: list[int]) -> list[list[np.ndarray]]:
    """For each mode and each row, the positions of that row's observed entries (official code's partition)."""
    out = []
    for n, size in enumerate(sizes):
        order = np.argsort(idx[:, n], kind="stable")
        bounds = np.searchsorted(idx[order, n], np.arange(size + 1))
        out.append([order[bounds[i] : bounds[i + 1]] for i in range(size)])
    return out


@method(
    name="exact-als-loop",
    kind="baseline",
    tasks=["tensor-completion"],
    reference=(
        "the official code's direct solver as written (run_cp_completion in fahrbach/fast-tensor-completion): "
        "rows one at a time, each design matrix built entry by entry in Python"
    ),
    version="1",
    deterministic=False,  # the factors are (tests); the solution also holds the task's timings
)
class ExactALSLoop:
    """exact-als's arithmetic with the official direct solver's loops: Python loops over rows and entries.

    Each row ``i`` of factor ``n``: its design matrix is filled one observed
    entry at a time (``design[j] *= factors[d][index[d]]`` for every other
    mode ``d``), then solved with ``pinv(D^T D) @ (D^T b)``, as
    ``run_cp_completion`` and ``solve_least_squares`` do (L2 = 0). The
    per-row entry lists are built in the first round (the official code
    builds them in its initialisation, also timed there). Same iterates as
    ``exact-als`` (a test checks it); only the implementation differs, to
    show how much of a speed-up over "direct methods" is the direct
    method's implementation.
    """

    def __init__(self, instance: Any, *, seed: int, budget: float) -> None:
        d = instance.data
        self.idx = np.asarray(d["idx"])
        self.y = np.asarray(d["y"], dtype=float)
        self.factors: list[np.ndarray] | None = None

    def select(self, state: dict[str, Any]) -> list[np.ndarray]:
        if self.factors is None:
            self.factors = [np.array(A, dtype=float) for A in state["init"]]
            self.parts = _row_partition(self.idx, [A.shape[0] for A in self.factors])
        F, idx, y = self.factors, self.idx, self.y
        N, r = len(F), F[0].shape[1]
        for n in range(N):
            for i, ents in enumerate(self.parts[n]):
                if ents.size == 0:
                    continue
                design = np.ones((ents.size, r))
                response = np.zeros(ents.size)
                for j, e in enumerate(ents):
                    for dd in range(N):
                        if dd != n:
                            design[j] *= F[dd][idx[e, dd]]
                    response[j] = y[e]
                F[n][i] = np.linalg.pinv(design.T @ design) @ (design.T @ response)
        return F
