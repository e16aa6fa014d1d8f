"""Manifold membership checks and the embeddings the metrics work on (numpy, trusted side).

Representations (one generated point per row of the solution):

- torus ``T^d``: ``float (N, d)`` angles in ``[0, 2 pi)``;
- sphere ``S^2``: ``float (N, 3)`` unit vectors;
- ``SO(n)``: ``float (N, n, n)`` orthogonal matrices with ``det = +1``;
- ``U(n)``: ``complex128 (N, n, n)`` unitary matrices.
"""

from __future__ import annotations

import math

import numpy as np

from bench.task import InvalidSolution
from tasks.manifold_diffusion.reproducible import vmap_math

__all__ = ["TOL", "check_points", "features", "intrinsic_dim", "ambient_shape"]

#: Largest allowed violation of a manifold constraint, per unit of matrix size.
TOL = 1e-5
TWO_PI = 2.0 * math.pi


def intrinsic_dim(manifold: str, n: int) -> int:
    """Dimension ``d`` of the manifold: ``n`` (torus), 2 (sphere), ``n(n-1)/2`` (SO), ``n^2`` (U)."""
    return {"torus": n, "sphere": 2, "so": n * (n - 1) // 2, "u": n * n}[manifold]


def ambient_shape(manifold: str, n: int) -> tuple[int, ...]:
    """Shape of one point in the ambient representation."""
    return {"torus": (n,), "sphere": (3,), "so": (n, n), "u": (n, n)}[manifold]


def _worst(viol: np.ndarray) -> tuple[int, float]:
    i = int(np.argmax(viol))
    return i, float(viol[i])


def check_points(manifold: str, n: int, n_points: int, x: object) -> tuple[np.ndarray, float]:
    """Return ``(points, largest violation)`` or raise :class:`InvalidSolution`.

    The violation is the largest, over points, of: distance outside ``[0, 2 pi)``
    (torus), ``| ||x|| - 1 |`` (sphere), ``max |X^T X - I|`` and ``|det X - 1|``
    (SO(n)), ``max |X^H X - I|`` (U(n)). A point is rejected above
    ``TOL * max(1, n)``; the message quotes the worst point and its violation.
    """
    shape = (n_points, *ambient_shape(manifold, n))
    what = {"torus": "angles", "sphere": "unit vectors", "so": "rotation matrices", "u": "unitary matrices"}[manifold]
    if not isinstance(x, np.ndarray):
        raise InvalidSolution(f"the samples must be a numpy array of shape {shape} ({what}), got {type(x).__name__}")
    if x.shape != shape:
        raise InvalidSolution(f"the samples must have shape {shape} ({n_points} {what}), got {x.shape}")
    if manifold == "u":
        if x.dtype != np.complex128:
            raise InvalidSolution(f"U({n}) samples must be complex128, got dtype {x.dtype}")
    elif x.dtype.kind != "f":
        raise InvalidSolution(f"the samples must be a float array, got dtype {x.dtype}")
    flat = x.reshape(n_points, -1)
    bad = ~np.isfinite(flat).all(axis=1)
    if bad.any():
        raise InvalidSolution(f"sample {int(np.flatnonzero(bad)[0])} holds NaN or inf ({int(bad.sum())} samples do)")
    x = x.astype(np.complex128 if manifold == "u" else np.float64)
    tol = TOL * max(1, n)
    if manifold == "torus":
        outside = (x < 0) | (x >= TWO_PI)
        if outside.any():
            viol = np.maximum(-x, x - TWO_PI + np.finfo(float).eps).max(axis=1)
            i, v = _worst(viol)
            k = int(outside.any(axis=1).sum())
            raise InvalidSolution(
                f"angles must be reduced mod 2 pi into [0, 2 pi): sample {i} has {float(x[i][outside[i]][0])!r}, "
                f"largest violation {v:.3g}; {k} of {n_points} samples are outside (use np.mod(theta, 2 * np.pi))"
            )
        return x, 0.0
    if manifold == "sphere":
        viol = np.abs(np.linalg.norm(x, axis=1) - 1.0)
        i, v = _worst(viol)
        if v > tol:
            raise InvalidSolution(f"sample {i} has norm {np.linalg.norm(x[i]):.6g}, not 1: largest violation {v:.3g} > tolerance {tol:.1g}")
        return x, v
    eye = np.eye(n)
    gram = np.conj(np.swapaxes(x, 1, 2)) @ x
    orth = np.abs(gram - eye).reshape(n_points, -1).max(axis=1)
    i, v = _worst(orth)
    name = "X^T X - I" if manifold == "so" else "X^H X - I"
    if v > tol:
        k = int((orth > tol).sum())
        raise InvalidSolution(
            f"sample {i} is not {'orthogonal' if manifold == 'so' else 'unitary'}: max |{name}| = {v:.3g} > tolerance {tol:.1g} "
            f"({k} of {n_points} samples violate it)"
        )
    if manifold == "so":
        det = np.linalg.det(x)
        dv = np.abs(det - 1.0)
        j, w = _worst(dv)
        if w > tol:
            k = int((dv > tol).sum())
            raise InvalidSolution(
                f"sample {j} has det = {det[j]:.6g}, not +1 (a reflection, not a rotation): largest violation {w:.3g}; "
                f"{k} of {n_points} samples have det = -1"
            )
        v = max(v, w)
    return x, v


def features(manifold: str, x: np.ndarray) -> np.ndarray:
    """Extrinsic embedding in ``R^m`` (rows), used by C2ST, MMD and mode coverage.

    Torus: ``(cos, sin)`` of every angle (so a kernel on it is periodic); sphere:
    the unit vector; SO(n): the flattened matrix; U(n): real and imaginary parts.
    """
    n_points = x.shape[0]
    if manifold == "torus":  # the C library's cos/sin: the same bits on every CPU (see reproducible.py)
        return np.concatenate([vmap_math(math.cos, x), vmap_math(math.sin, x)], axis=1)
    if manifold == "u":
        flat = x.reshape(n_points, -1)
        return np.concatenate([flat.real, flat.imag], axis=1)
    return x.reshape(n_points, -1).astype(np.float64)
