"""0/1 knapsack: the core's own small, real task.

Choose a subset of ``n`` items, each with an integer profit and weight, that
maximises the total profit without the total weight exceeding the capacity.
Instances come from Pisinger's classic generators; the optimum of every
instance is computed exactly here, on the trusted side, and never sent to a
method. See ``tasks/knapsack/README.md``.
"""

from __future__ import annotations

import functools
import re
from typing import Any

import numpy as np

from bench.registry import UnknownNameError, register_task, unknown_message
from bench.task import (
    Instance,
    InstanceSpec,
    InvalidSolution,
    Metric,
    Normalization,
    Reference,
    Task,
    TaskMeta,
)

__all__ = [
    "KINDS",
    "DATA_RANGE",
    "CAPACITY_FRACTION",
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

_ID = re.compile(r"^(?P<kind>[a-z][a-z-]*[a-z])-n(?P<n>[1-9][0-9]*)-s(?P<seed>0|[1-9][0-9]*)$")
_ID_FORMAT = "'<kind>-n<items>-s<seed>', e.g. 'uncorrelated-n100-s0'"

# (kinds, sizes, seeds) per tier; "full" adds the large sizes to "standard".
_TIER_GRID: dict[str, tuple[tuple[str, ...], tuple[int, ...], tuple[int, ...]]] = {
    "smoke": (("uncorrelated", "strongly-correlated"), (20, 50), (0, 1)),
    "standard": (KINDS, (100, 500, 1000), (0, 1, 2)),
    "full": (KINDS, (100, 500, 1000, 2000, 5000, 10000), (0, 1, 2)),
}

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
    m = _ID.match(instance_id) if isinstance(instance_id, str) else None
    if m is None:
        raise UnknownNameError(
            f"malformed knapsack instance id {instance_id!r}; expected {_ID_FORMAT}, "
            f"with <kind> one of {', '.join(KINDS)}"
        )
    if m["kind"] not in KINDS:
        raise UnknownNameError(
            f"{unknown_message('knapsack generator', m['kind'], KINDS)} "
            f"(in instance id {instance_id!r})"
        )
    return m["kind"], int(m["n"]), int(m["seed"])


def _spec(kind: str, n: int, seed: int) -> InstanceSpec:
    return InstanceSpec(
        id=f"{kind}-n{n}-s{seed}",
        params={
            "kind": kind,
            "n": n,
            "seed": seed,
            "capacity_fraction": CAPACITY_FRACTION,
            "data_range": DATA_RANGE,
        },
        tags=("generated", kind),
    )


def _tier_specs(tier: str) -> list[InstanceSpec]:
    # Built afresh on each call: specs hold mutable params dicts.
    kinds, sizes, seeds = _TIER_GRID[tier]
    return [_spec(k, n, s) for n in sizes for k in kinds for s in seeds]


@functools.cache
def _known_ids() -> frozenset[str]:
    return frozenset(spec.id for tier in _TIER_GRID for spec in _tier_specs(tier))


@functools.lru_cache(maxsize=256)
def _load(instance_id: str) -> Instance:
    kind, n, seed = parse_instance_id(instance_id)  # a malformed id fails here
    if instance_id not in _known_ids():
        # Well formed but listed by no tier: another size or seed, or a typo.
        raise UnknownNameError(unknown_message("knapsack instance", instance_id, _known_ids()))
    profits, weights, capacity = generate(kind, n, seed)
    value, source = optimum(profits, weights, capacity)
    # The instance is cached and shared: read-only arrays keep a caller from
    # changing it for every later caller.
    profits.setflags(write=False)
    weights.setflags(write=False)
    spec = _spec(kind, n, seed)
    return Instance(
        id=instance_id,
        params=dict(spec.params),
        data={"profits": profits, "weights": weights, "capacity": capacity},
        references={"optimal": Reference(value=value, source=source)},
        tags=spec.tags,
    )


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
class Knapsack(Task):
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

    def instances(self, tier: str) -> list[InstanceSpec]:
        """Instances of ``tier``, in a stable order (size, then generator, then seed)."""
        if tier not in _TIER_GRID:
            raise ValueError(f"unknown tier {tier!r}; tiers are {', '.join(_TIER_GRID)}")
        return _tier_specs(tier)

    def load(self, instance_id: str) -> Instance:
        """Generate the instance and compute its exact optimum (cached in-process).

        ``data`` holds ``profits`` and ``weights`` (read-only ``int64`` arrays
        of shape ``(n,)``) and ``capacity`` (int); the optimum is only in
        ``references["optimal"]``.

        Raises
        ------
        UnknownNameError
            (a ``KeyError``) for a malformed id or one that no tier lists; the
            message gives the expected form or the closest ids.
        """
        return _load(instance_id)

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
        x = _as_choice_vector(solution, len(weights))

        weight = int(weights @ x)
        if weight > capacity:
            raise InvalidSolution(
                f"total weight {weight} exceeds capacity {capacity} by {weight - capacity}; "
                "drop items until the chosen weights fit"
            )
        value = int(profits @ x)
        ref = instance.references.get("optimal")
        best = float(ref.value) if ref is not None else float("nan")
        ratio = value / best if best > 0 else float("nan")
        return {
            "value": float(value),
            "ratio": ratio,
            "gap_pct": 100.0 * (best - value) / best if best > 0 else float("nan"),
            "weight_used": float(weight),
            "n_items": float(x.sum()),
        }


def _as_choice_vector(solution: Any, n: int) -> np.ndarray:
    """``solution`` as an ``int64`` 0/1 array of shape ``(n,)``, or :class:`InvalidSolution`."""
    expected = f"a 0/1 integer or bool array of length {n} (one entry per item)"
    if not isinstance(solution, (np.ndarray, list, tuple)):
        raise InvalidSolution(f"the solution must be {expected}, got {type(solution).__name__}")
    try:
        x = np.asarray(solution)
    except (ValueError, TypeError) as exc:
        raise InvalidSolution(
            f"the solution must be {expected}; cannot read it as an array: {exc}"
        ) from None
    if x.dtype.kind == "f":
        nan = np.flatnonzero(np.isnan(x).ravel())
        where = f" and holds NaN at flat index {int(nan[0])}" if nan.size else ""
        raise InvalidSolution(
            f"the solution has float dtype {x.dtype}{where}; return integers 0/1 or booleans "
            "(e.g. x.astype(np.int8) after rounding a relaxation and repairing it)"
        )
    if x.dtype.kind not in "biu":
        raise InvalidSolution(f"the solution must be {expected}, got dtype {x.dtype}")
    if x.ndim != 1:
        raise InvalidSolution(f"the solution must be {expected}, got shape {x.shape}")
    if x.shape[0] != n:
        raise InvalidSolution(
            f"the solution has length {x.shape[0]}, expected {n} (one entry per item)"
        )
    x = x.astype(np.int64)
    bad = np.flatnonzero((x != 0) & (x != 1))
    if bad.size:
        j = int(bad[0])
        raise InvalidSolution(
            f"entry {j} of the solution is {int(x[j])}; every entry must be 0 or 1 "
            f"({bad.size} entries are not)"
        )
    return x
