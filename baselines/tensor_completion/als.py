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
