"""tensorly-parafac: tensorly's masked CP-ALS (``tensorly.decomposition.parafac``), one iteration per round.

tensorly 0.10's ``parafac(tensor, rank, mask=...)`` runs plain ALS sweeps
on a dense tensor and, after each sweep, refills the missing entries with
the current model (``tensor = tensor * mask + cp_to_tensor(..., mask=1 - mask)``,
``tensorly/decomposition/_cp.py``): EM on the full tensor, ``O(prod I_n r)``
per sweep. A round here is one such iteration: refill the dense tensor with
the current model (``tl.cp_to_tensor``), then ``parafac(filled, rank,
n_iter_max=1, init=CPTensor((1, factors)), tol=0)`` (one ALS sweep, the
library's own normal equations and MTTKRP). ``mask`` is not passed to that
call because the refill it would do at the end of the iteration is the one
this baseline does at the start of the next round; passing it would compute
the refill twice. tests/test_tensor_completion.py checks that the rounds give
the same factors as one ``parafac(..., mask=mask, n_iter_max=R)`` call.

Deviations: the first sweep sees the unobserved entries filled with the
initial model (tensorly would start from whatever the caller put there);
``normalize_factors=False``, ``linesearch=False`` (defaults); no SVD
initialisation (the task's common start instead).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import tensorly as tl
from tensorly.cp_tensor import CPTensor
from tensorly.decomposition import parafac

from bench import method


@method(
    name="tensorly-parafac",
    kind="baseline",
    tasks=["tensor-completion"],
    reference="tensorly 0.10, tensorly.decomposition.parafac with a mask (EM on the dense tensor)",
    version="1",
    deterministic=False,  # the factors are (tests); the solution also holds the task's timings
)
class TensorlyParafac:
    """One masked-parafac iteration (refill, then one ALS sweep) per round."""

    def __init__(self, instance: Any, *, seed: int, budget: float) -> None:
        d = instance.data
        self.idx = np.asarray(d["idx"])
        self.y = np.asarray(d["y"], dtype=float)
        self.shape = tuple(int(s) for s in d["shape"])
        self.rank = int(d["rank"])
        self.factors: list[np.ndarray] | None = None

    def select(self, state: dict[str, Any]) -> list[np.ndarray]:
        if self.factors is None:
            tl.set_backend("numpy")
            self.factors = [np.array(A, dtype=float) for A in state["init"]]
            self.mask = np.zeros(self.shape, dtype=bool)
            self.mask[tuple(self.idx.T)] = True
            self.observed = np.zeros(self.shape)
            self.observed[tuple(self.idx.T)] = self.y
        weights = np.ones(self.rank)
        filled = np.where(self.mask, self.observed, tl.cp_to_tensor((weights, self.factors)))
        cp = parafac(
            filled,
            self.rank,
            n_iter_max=1,
            init=CPTensor((weights, self.factors)),
            tol=0,
            normalize_factors=False,
        )
        w, factors = cp
        factors = [np.asarray(A, dtype=float) for A in factors]
        factors[-1] = factors[-1] * np.asarray(w)[None, :]
        self.factors = factors
        return self.factors
