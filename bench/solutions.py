"""Generic checks of what a method returns, for a task's verifier.

A task's ``evaluate`` starts by turning the method's answer into an array it
can trust, or by refusing it with :class:`~bench.task.InvalidSolution` and a
message that says what to change. The checks every task repeats live here:

- :func:`as_int_vector`: one integer per item (labels, a 0/1 choice, indices),
  in a range; floats are refused even when integral, so a relaxation is never
  scored by accident;
- :func:`as_float_array`: a finite float64 array of a given shape (a field on
  a grid, samples);
- :func:`gap_metrics`: ``ratio`` and ``gap_pct`` against a reference value.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from bench.task import InvalidSolution

__all__ = ["as_int_vector", "as_float_array", "gap_metrics"]


def _as_array(solution: Any, expected: str) -> np.ndarray:
    if not isinstance(solution, (np.ndarray, list, tuple)):
        raise InvalidSolution(f"the solution must be {expected}, got {type(solution).__name__}")
    try:
        return np.asarray(solution)
    except (ValueError, TypeError) as exc:
        raise InvalidSolution(f"the solution must be {expected}; cannot read it as an array: {exc}") from None


def as_int_vector(
    solution: Any,
    n: int,
    *,
    low: int,
    high: int,
    item: str = "entry",
    value: str = "value",
    allow_bool: bool = False,
    expected: str | None = None,
    float_hint: str = "",
) -> np.ndarray:
    """``solution`` as an ``int64`` array of shape ``(n,)`` with values in ``[low, high)``.

    Parameters
    ----------
    solution
        What the method returned: a numpy integer array, or a list/tuple of
        ints (read with :func:`numpy.asarray`).
    n
        The number of entries expected (one per node, item...).
    low, high
        The half-open range every entry must lie in.
    item, value
        What one entry is and what it holds, for messages (``"node"`` and
        ``"label"``: "node 12 has label 7, outside [0, 3)").
    allow_bool
        Accept a bool array (read as 0/1).
    expected
        The phrase describing a valid solution in messages; default
        ``"an integer array of n={n} values in [low, high)"``.
    float_hint
        How to get from a float answer to a valid one, appended to the message
        that refuses floats (e.g. ``"e.g. np.argmax(p, axis=1)"``).

    Raises
    ------
    InvalidSolution
        For another type, a float (NaN included) or other non-integer dtype, a
        bool array unless allowed, another shape or length, or an entry out of
        range; the message names the first offending entry.
    """
    expected = expected or f"an integer array of n={n} {value}s in [{low}, {high})"
    x = _as_array(solution, expected)
    if x.dtype.kind == "f":
        nan = np.flatnonzero(np.isnan(x).ravel())
        where = f" and holds NaN at {item} {int(nan[0])}" if nan.size else ""
        hint = f" ({float_hint})" if float_hint else ""
        raise InvalidSolution(
            f"the solution has float dtype {x.dtype}{where}; return integer {value}s in [{low}, {high}){hint}"
        )
    if x.dtype.kind == "b" and not allow_bool:
        raise InvalidSolution(
            f"the solution has dtype bool; return integer {value}s in [{low}, {high}) (e.g. mask.astype(np.int64))"
        )
    if x.dtype.kind not in "biu":
        raise InvalidSolution(f"the solution must be {expected}, got dtype {x.dtype}")
    if x.ndim != 1:
        raise InvalidSolution(f"the solution must be a 1-D array of {n} {value}s, got shape {x.shape}")
    if x.shape[0] != n:
        raise InvalidSolution(f"expected {n} {value}s (one per {item}), got {x.shape[0]}")
    x = x.astype(np.int64)
    bad = np.flatnonzero((x < low) | (x >= high))
    if bad.size:
        i = int(bad[0])
        more = f" ({bad.size} {item}s are out of range)" if bad.size > 1 else ""
        raise InvalidSolution(f"{item} {i} has {value} {int(x[i])}, outside [{low}, {high}){more}")
    return x


def as_float_array(
    solution: Any, shape: tuple[int, ...], *, what: str | None = None, index: str = "index"
) -> np.ndarray:
    """``solution`` as a finite ``float64`` numpy array of ``shape``.

    Only a numpy array of dtype float64 is accepted (no silent conversion of a
    list or of float32: the method states its precision). ``what`` describes a
    valid solution and ``index`` names a position (``"grid index"``) in messages.

    Raises
    ------
    InvalidSolution
        For another type, dtype or shape, or a non-finite value (the message
        gives the index of the first one and how many there are).
    """
    what = what or f"a finite float64 array of shape {shape}"
    if not isinstance(solution, np.ndarray):
        raise InvalidSolution(f"the solution must be {what}, got {type(solution).__name__}")
    if solution.dtype != np.float64:
        raise InvalidSolution(f"the solution has dtype {solution.dtype}; return {what} (e.g. u.astype(np.float64))")
    if solution.shape != tuple(shape):
        raise InvalidSolution(f"the solution has shape {solution.shape}; expected {tuple(shape)}")
    bad = np.flatnonzero(~np.isfinite(solution.ravel()))
    if bad.size:
        idx = np.unravel_index(int(bad[0]), solution.shape)
        raise InvalidSolution(f"the solution is not finite at {index} {tuple(int(i) for i in idx)} ({bad.size} bad values)")
    return solution


def gap_metrics(value: float, reference: float | None, direction: str = "max") -> dict[str, float]:
    """``ratio = value / reference`` and ``gap_pct``, the distance to the reference in %.

    ``gap_pct`` is ``100 * (reference - value) / |reference|`` for a maximised
    metric and ``100 * (value - reference) / |reference|`` for a minimised one,
    so it is 0 at the reference and positive when worse. Without a usable
    reference (``None``, 0 or not finite) the result is empty: the run store
    cannot hold NaN metrics, and a missing metric is honest.
    """
    if reference is None or not math.isfinite(reference) or reference == 0:
        return {}
    ref = float(reference)
    worse = (ref - value) if direction == "max" else (value - ref)
    return {"ratio": float(value) / ref, "gap_pct": 100.0 * worse / abs(ref)}
