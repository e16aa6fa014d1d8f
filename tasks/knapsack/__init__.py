"""0/1 knapsack: the core's own small, real task.

Choose a subset of ``n`` items, each with an integer profit and weight, that
maximises the total profit without the total weight exceeding the capacity.
Instances come from Pisinger's classic generators; the optimum of every
instance is computed exactly here, on the trusted side, and never sent to a
method. See ``tasks/knapsack/README.md``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bench.instances import Catalog, CatalogTask, Choice, IdForm, Int, grid
from bench.registry import register_task, unknown_message
from bench.solutions import as_int_vector, gap_metrics
from bench.task import (
    Instance,
    InstanceSpec,
    InvalidSolution,
    Metric,
    Normalization,
    Reference,
    TaskMeta,
)

__all__ = [
    "KINDS",
    "DATA_RANGE",
    "CAPACITY_FRACTION",
    "CATALOG",
    "Knapsack",
    "generate",
    "optimum",
    "parse_instance_id",
]

#: Pisinger's generators, in the order whose index seeds the random stream.
KINDS = (
    "uncorrelated",
    "weakly-correlated",
    "strongly-correlated",
    "inverse-strongly-correlated",
    "subset-sum",
)
#: Pisinger's data range R: weights (or profits) are drawn from [1, R].
DATA_RANGE = 1000
#: Capacity as a fraction of the total weight (Pisinger's middle instance, h/(H+1) = 1/2).
CAPACITY_FRACTION = 0.5

#: Instance ids, ``<kind>-n<items>-s<seed>``, and the instances of each tier:
#: "full" adds the large sizes to "standard".
CATALOG = Catalog(
    IdForm(
        "knapsack",
        "{kind}-n{n}-s{seed}",
        example="uncorrelated-n100-s0",
        kind=Choice(KINDS, what="generator"),
        n=Int(label="items", minimum=1),
        seed=Int(),
    ),
    {
        "smoke": grid(n=(20, 50), kind=("uncorrelated", "strongly-correlated"), seed=(0, 1)),
        "standard": grid(n=(100, 500, 1000), kind=KINDS, seed=(0, 1, 2)),
        "full": grid(n=(100, 500, 1000, 2000, 5000, 10000), kind=KINDS, seed=(0, 1, 2)),
    },
)

# Beyond this many DP cells the exact reference switches to HiGHS. The largest
# listed instance (n=10000) needs ~1.3e10 cells, about 3 s of numpy; HiGHS is
# the fallback only, because it cannot prove optimality on strongly correlated
# instances of n=1000 within minutes.
_DP_MAX_CELLS = 5e10
_MILP_TIME_LIMIT_S = 600.0


# ----------------------------------------------------------------------------- generation


def generate(kind: str, n: int, seed: int) -> tuple[np.ndarray, np.ndarray, int]:
    """Draw one instance from Pisinger's generator ``kind``.

    Parameters
    ----------
    kind
        One of :data:`KINDS`.
    n
        Number of items.
    seed
        Instance seed. The random stream is ``numpy.random.default_rng([seed,
        n, k])`` with ``k`` the index of ``kind`` in :data:`KINDS`, so that
        instances of different sizes and generators are independent.

    Returns
    -------
    profits, weights : numpy.ndarray
        ``int64`` arrays of shape ``(n,)``, every entry >= 1.
    capacity : int
        ``floor(CAPACITY_FRACTION * weights.sum())``.
    """
    if kind not in KINDS:
        raise ValueError(unknown_message("knapsack generator", kind, KINDS))
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    rng = np.random.default_rng([seed, n, KINDS.index(kind)])
    r, r10 = DATA_RANGE, DATA_RANGE // 10
    if kind == "inverse-strongly-correlated":
        profits = rng.integers(1, r + 1, n)
        weights = profits + r10
    else:
        weights = rng.integers(1, r + 1, n)
        if kind == "uncorrelated":
            profits = rng.integers(1, r + 1, n)
        elif kind == "weakly-correlated":
            # Pisinger keeps p_j >= 1 by clipping, as here.
            profits = np.maximum(weights + rng.integers(-r10, r10 + 1, n), 1)
        elif kind == "strongly-correlated":
            profits = weights + r10
        else:  # subset-sum
            profits = weights.copy()
    # Exact for the fraction 1/2: the total weight is far below 2**53.
    capacity = int(CAPACITY_FRACTION * int(weights.sum()))
    return profits.astype(np.int64), weights.astype(np.int64), capacity


# ----------------------------------------------------------------------------- exact optimum


def _dp_cells(weights: np.ndarray, capacity: int) -> int:
    """Number of DP cells :func:`_dp_optimum` updates (its running time)."""
    w = weights.astype(np.int64)
    prefix = np.cumsum(w)
    suffix = int(w.sum()) - prefix
    hi = np.minimum(capacity, prefix)
    lo = np.maximum(w, capacity - suffix)
    return int(np.maximum(hi - lo + 1, 0).sum())


def _dp_optimum(profits: np.ndarray, weights: np.ndarray, capacity: int) -> int:
    """Optimal value by dynamic programming over capacity, ``O(n C)`` time, ``O(C)`` memory.

    ``f[c]`` is the best profit of the items seen so far within weight ``c``.
    Only the window of ``c`` that can still reach ``capacity`` is updated:
    ``c >= capacity - (weight of the items still to come)``, and ``c`` up to the
    weight of the items seen (beyond it, ``f`` is flat and filled lazily). That
    halves the work of the textbook recursion.
    """
    p = [int(v) for v in profits]
    w = [int(v) for v in weights]
    dtype = np.int32 if sum(p) < 2**31 - 1 else np.int64
    f = np.zeros(capacity + 1, dtype=dtype)
    seen, to_come = 0, sum(w)
    for pi, wi in zip(p, w, strict=True):
        prev_seen, seen, to_come = seen, seen + wi, to_come - wi
        hi = min(capacity, seen)
        if prev_seen < hi:
            f[prev_seen + 1 : hi + 1] = f[prev_seen]
        lo = max(wi, capacity - to_come)
        if lo <= hi:
            # The right-hand side is a new array, so each item is used at most once.
            np.maximum(f[lo : hi + 1], f[lo - wi : hi - wi + 1] + pi, out=f[lo : hi + 1])
    return int(f[min(capacity, seen)])


def _milp_optimum(
    profits: np.ndarray, weights: np.ndarray, capacity: int, time_limit: float
) -> int:
    """Optimal value by HiGHS, accepted only with a proof of optimality.

    Raises
    ------
    RuntimeError
        If HiGHS stops without proving optimality (time limit) or returns an
        infeasible point.
    """
    from scipy.optimize import Bounds, LinearConstraint, milp

    n = len(profits)
    res = milp(
        -profits.astype(float),
        constraints=LinearConstraint(weights.astype(float)[None, :], -np.inf, capacity),
        integrality=np.ones(n),
        bounds=Bounds(0, 1),
        options={"mip_rel_gap": 0.0, "time_limit": time_limit},
    )
    if res.status != 0 or res.x is None:
        raise RuntimeError(
            f"HiGHS did not prove optimality (status {res.status}: {res.message}); "
            f"raise the time limit ({time_limit:g} s) or use the DP"
        )
    x = np.rint(res.x).astype(np.int64)
    value, weight = int(profits @ x), int(weights @ x)
    upper = -float(res.mip_dual_bound)
    # Profits are integers, so a dual bound below value + 1 leaves no better solution.
    if weight > capacity or not upper < value + 1 - 1e-6:
        raise RuntimeError(
            f"HiGHS returned value {value} (weight {weight}, capacity {capacity}) "
            f"with dual bound {upper}; not a proven optimum"
        )
    return value


def optimum(
    profits: np.ndarray, weights: np.ndarray, capacity: int, method: str = "auto"
) -> tuple[int, str]:
    """Exact optimal value of a 0/1 knapsack instance, and how it was obtained.

    Parameters
    ----------
    profits, weights
        Positive integer arrays of shape ``(n,)``.
    capacity
        Non-negative integer.
    method
        ``"dp"``, ``"milp"`` or ``"auto"`` (DP unless it would update more
        than 5e10 cells).

    Returns
    -------
    value : int
        The optimal total profit.
    source : str
        The method, for :class:`~bench.task.Reference`.
    """
    if method == "auto":
        method = "dp" if _dp_cells(weights, capacity) <= _DP_MAX_CELLS else "milp"
    if method == "dp":
        return _dp_optimum(profits, weights, capacity), "exact: dynamic programming over capacity"
    if method == "milp":
        value = _milp_optimum(profits, weights, capacity, _MILP_TIME_LIMIT_S)
        return value, "exact: HiGHS via scipy.optimize.milp, mip_rel_gap=0, dual bound < value + 1"
    raise ValueError(f"method must be 'auto', 'dp' or 'milp', got {method!r}")


# ----------------------------------------------------------------------------- instances


def parse_instance_id(instance_id: str) -> tuple[str, int, int]:
    """Split ``'<kind>-n<items>-s<seed>'`` into ``(kind, n, seed)``.

    Raises
    ------
    UnknownNameError
        (a ``KeyError``) if the id does not have that form or names an
        unknown generator; the message gives the form and close generators.
    """
    f = CATALOG.form.parse(instance_id)
    return f["kind"], f["n"], f["seed"]


# ----------------------------------------------------------------------------- the task

_TEMPLATE = """\
    # Take the items in the order given while they fit: always feasible, rarely good.
    weights = np.asarray(instance.data["weights"])
    capacity = int(instance.data["capacity"])
    x = np.zeros(len(weights), dtype=np.int8)
    load = 0
    for i, w in enumerate(weights.tolist()):
        if load + w <= capacity:
            x[i] = 1
            load += w
    return x
"""


@register_task
class Knapsack(CatalogTask):
    """0/1 knapsack on Pisinger's generated instances, scored against the exact optimum.

    A solution is a 1-D integer (or bool) array ``x`` of length ``n`` with
    ``x[j] = 1`` when item ``j`` is taken; lists and tuples of ints are
    converted with ``numpy.asarray``. Floats are refused, even 0.0 and 1.0,
    so that a relaxation is never scored by accident.
    """

    meta = TaskMeta(
        name="knapsack",
        version="1",
        family="knapsack",
        area="combinatorial optimisation",
        paper=None,
        description=(
            "0/1 knapsack: choose items to maximise total profit within a weight capacity. "
            "Pisinger's generators (R=1000, capacity = half the total weight); "
            "scored against the exact optimum."
        ),
        metrics=[
            Metric(name="value", direction="max", description="total profit of the chosen items"),
            Metric(name="ratio", direction="max", description="value / optimal value"),
            Metric(
                name="gap_pct",
                direction="min",
                unit="%",
                description="100 * (optimal - value) / optimal",
            ),
            Metric(
                name="weight_used",
                direction="min",
                description="total weight of the chosen items (informational, <= capacity)",
            ),
            Metric(
                name="n_items",
                direction="min",
                unit="items",
                description="number of items chosen (informational)",
            ),
        ],
        primary="value",
        normalization=Normalization(
            kind="linear",
            zero=0.0,
            one="optimal",
            description="value / optimal value: 0 for the empty knapsack, 1 for an optimal one",
        ),
        gap_reference="optimal",
        budgets={"smoke": 10.0, "standard": 30.0, "full": 120.0},
    )
    template = _TEMPLATE
    catalog = CATALOG
    # The exact optimum of the largest instances takes seconds: keep it on disk.
    reference_cache = True

    def spec(self, fields: dict[str, Any]) -> InstanceSpec:
        """Fields, plus the generator's constants, as filterable parameters."""
        params = {**fields, "capacity_fraction": CAPACITY_FRACTION, "data_range": DATA_RANGE}
        return InstanceSpec(id=CATALOG.form.format(**fields), params=params, tags=("generated", fields["kind"]))

    def generate(self, fields: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """``data`` holds ``profits`` and ``weights`` (``int64`` arrays of shape ``(n,)``) and
        ``capacity`` (int); nothing is private: the optimum is a reference."""
        profits, weights, capacity = generate(fields["kind"], fields["n"], fields["seed"])
        return {"profits": profits, "weights": weights, "capacity": capacity}, {}

    def reference(self, fields: dict[str, Any], data: dict[str, Any], private: dict[str, Any]) -> dict[str, Reference]:
        """The exact optimum (:func:`optimum`), under ``"optimal"``."""
        value, source = optimum(data["profits"], data["weights"], data["capacity"])
        return {"optimal": Reference(value=value, source=source)}

    def evaluate(self, instance: Instance, solution: Any) -> dict[str, float]:
        """Check feasibility and recompute every metric from ``solution`` and the data.

        Raises
        ------
        InvalidSolution
            For a type, dtype, shape or length that is not a 0/1 vector of one
            entry per item, an entry other than 0 or 1, or a total weight over
            the capacity.
        """
        profits = np.asarray(instance.data["profits"], dtype=np.int64)
        weights = np.asarray(instance.data["weights"], dtype=np.int64)
        capacity = int(instance.data["capacity"])
        x = as_int_vector(
            solution,
            len(weights),
            low=0,
            high=2,
            item="item",
            value="choice",
            allow_bool=True,
            expected=f"a 0/1 integer or bool array of length {len(weights)} (one entry per item)",
            float_hint="e.g. x.astype(np.int8) after rounding a relaxation and repairing it",
        )
        weight = int(weights @ x)
        if weight > capacity:
            raise InvalidSolution(
                f"total weight {weight} exceeds capacity {capacity} by {weight - capacity}; "
                "drop items until the chosen weights fit"
            )
        value = int(profits @ x)
        ref = instance.references.get("optimal")
        gaps = gap_metrics(value, None if ref is None else float(ref.value))
        return {
            "value": float(value),
            "ratio": gaps.get("ratio", float("nan")),
            "gap_pct": gaps.get("gap_pct", float("nan")),
            "weight_used": float(weight),
            "n_items": float(x.sum()),
        }
