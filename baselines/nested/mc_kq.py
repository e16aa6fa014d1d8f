"""MC outer with KQ inner: stage I of NKQ (regularised KQ per inner expectation), then a plain outer mean.

Same kernels, lengthscale and ``lam = lam0 n^(-2/d)`` as ``nkq``
(:mod:`methods.nested.nkq`); only the outer stage differs. This is the
"KQ inner, MC outer" ablation the issue asks for (UNVERIFIED whether the
paper reports this exact variant).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bench import method
from common.nested.driver import OracleStrategy, Plan, estimate, inner, outer, split_inner
from common.nested.estimators import inner_kq
from tasks.nested import apply_f


@method(
    name="mc-kq",
    kind="baseline",
    tasks=["nested-expectation"],
    reference="KQ for the inner expectations (as NKQ stage I), Monte Carlo for the outer one",
    version="1",
    params={"lam0": 0.1, "lengthscale": 1.0},
    deterministic=True,
)
class MCKQ(OracleStrategy):
    """Inner KQ, outer Monte Carlo mean, N = M = n."""

    def plan(self, state: dict[str, Any]) -> Plan:
        n, p = int(state["n"]), state["problem"]
        yield outer(n)
        idx = np.arange(n)
        parts = split_inner((yield inner(idx, n)), idx)
        J = inner_kq(
            parts, p["inner_base"], float(self.params["lengthscale"]), float(self.params["lam0"])
        )
        yield estimate(float(np.mean(apply_f(p["f"], J))))
