"""Small-matrix arithmetic that rounds the same on every CPU, for generating instances.

An instance's digest is part of every job key and is what ``bench verify``
checks before it re-scores a published solution, so the same seed must give
the same bytes on every machine. numpy's ``@``, ``np.linalg`` and scipy's
``expm`` call BLAS/LAPACK kernels chosen at run time for the CPU (OpenBLAS:
Haswell, SkylakeX, Zen, Sandybridge, ...). Different kernels sum in different
orders and fuse multiply-adds differently, so the same seed drew SO(n), U(n)
and S^2 samples that differed in the last bits on an Intel and an AMD
machine, and every published matrix-group record failed ``bench verify`` on
the other one. numpy's float64 ``exp``/``log``/``sin``/``cos`` also have
CPU-specific SIMD paths.

Everything here is made of elementwise IEEE operations (``+ - * /`` and
``sqrt``, which are correctly rounded on every CPU) applied in a fixed order,
and of Python's ``math`` functions for the few transcendental values (the C
library's, the same on every CPU of one platform). Complex matrices are
handled as ``(real, imag)`` pairs of float64 arrays, so that no complex
multiply kernel is involved. The matrices are small (n <= ~50), so explicit
loops over one index cost little; every function is batched over leading
axes.

``tests/test_manifold_task.py`` checks that instance digests do not change
when OpenBLAS is forced onto other kernels (``OPENBLAS_CORETYPE``) and numpy's
SIMD paths are switched off (``NPY_DISABLE_CPU_FEATURES``).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = [
    "dot",
    "matmul",
    "cmatmul",
    "expm",
    "cexpm",
    "orthonormalise",
    "unitarise",
    "haar_so",
    "sq_dists",
    "row_norms",
    "vmap_math",
]

Pair = tuple[np.ndarray, np.ndarray]


def dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``sum_k a[..., k] * b[..., k]``, summed left to right (broadcast over leading axes)."""
    out = a[..., 0] * b[..., 0]
    for k in range(1, a.shape[-1]):
        out = out + a[..., k] * b[..., k]
    return out


def matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a @ b`` for ``(..., n, m) @ (..., m, p)`` as a fixed-order sum of ``m`` outer products."""
    out = a[..., :, 0, None] * b[..., None, 0, :]
    for k in range(1, a.shape[-1]):
        out = out + a[..., :, k, None] * b[..., None, k, :]
    return out


def cmatmul(a: Pair, b: Pair) -> Pair:
    """Complex ``a @ b`` on ``(real, imag)`` pairs."""
    ar, ai = a
    br, bi = b
    return matmul(ar, br) - matmul(ai, bi), matmul(ar, bi) + matmul(ai, br)


def _one_norms(parts: tuple[np.ndarray, ...]) -> np.ndarray:
    """Max absolute column sum of each matrix (for a pair, of ``|re| + |im|``, an upper bound)."""
    a = np.abs(parts[0])
    for p in parts[1:]:
        a = a + np.abs(p)
    col = a[..., 0, :]
    for i in range(1, a.shape[-2]):
        col = col + a[..., i, :]
    return col.max(axis=-1)


def _squarings(norms: np.ndarray, target: float = 0.5) -> np.ndarray:
    """The least ``s >= 0`` with ``norm / 2**s <= target``, per matrix (exact, via frexp)."""
    out = np.zeros(norms.shape, dtype=np.int64)
    flat = out.reshape(-1)
    for i, v in enumerate(np.asarray(norms, dtype=np.float64).reshape(-1)):
        v = float(v) / target
        if v > 1.0:
            m, e = math.frexp(v)  # v = m * 2**e, 0.5 <= m < 1
            flat[i] = e if m > 0.5 else e - 1
    return out


def _taylor_expm(parts: tuple[np.ndarray, ...], degree: int, mul) -> tuple[np.ndarray, ...]:
    """``exp(X)`` by Horner's rule on the Taylor series; for ``||X||_1 <= 1/2`` the remainder of
    degree 14 is below ``0.5**15 / 15! < 3e-17``, under float64's rounding."""
    n = parts[0].shape[-1]
    eye = np.broadcast_to(np.eye(n), parts[0].shape)
    zero = np.zeros(parts[0].shape)
    p = tuple(eye + x / degree if i == 0 else x / degree for i, x in enumerate(parts))
    for k in range(degree - 1, 0, -1):
        xp = mul(parts, p)
        p = tuple((eye if i == 0 else zero) + y / k for i, y in enumerate(xp))
    return p


def _scaled_expm(parts: tuple[np.ndarray, ...], mul, degree: int = 14) -> tuple[np.ndarray, ...]:
    """Scaling and squaring, each matrix scaled by its own power of two (exact)."""
    s = _squarings(_one_norms(parts))
    out = tuple(np.empty(parts[0].shape) for _ in parts)
    for si in np.unique(s):
        sel = s == si
        scale = math.ldexp(1.0, -int(si))
        e = _taylor_expm(tuple(x[sel] * scale for x in parts), degree, mul)
        for _ in range(int(si)):
            e = mul(e, e)
        for o, y in zip(out, e, strict=True):
            o[sel] = y
    return out


def expm(a: np.ndarray) -> np.ndarray:
    """Matrix exponential of real ``(..., n, n)`` matrices (scaling and squaring, Taylor degree 14)."""
    a = np.asarray(a, dtype=np.float64)
    flat = a.reshape(-1, *a.shape[-2:])
    (out,) = _scaled_expm((flat,), lambda x, y: (matmul(x[0], y[0]),))
    return out.reshape(a.shape)


def cexpm(a: Pair) -> Pair:
    """Matrix exponential of complex ``(..., n, n)`` matrices given as ``(real, imag)``."""
    re, im = (np.asarray(x, dtype=np.float64) for x in a)
    shape = re.shape
    out = _scaled_expm((re.reshape(-1, *shape[-2:]), im.reshape(-1, *shape[-2:])), cmatmul)
    return out[0].reshape(shape), out[1].reshape(shape)


def orthonormalise(x: np.ndarray, steps: int = 2) -> np.ndarray:
    """Newton-Schulz steps ``X <- X (3I - X^T X) / 2`` towards the nearest orthogonal matrix.

    For ``X`` orthogonal up to rounding (a product of orthogonal factors), two
    steps bring ``X^T X - I`` to the rounding level.
    """
    n = x.shape[-1]
    three = 3.0 * np.eye(n)
    for _ in range(steps):
        x = matmul(x, three - matmul(np.swapaxes(x, -1, -2), x)) * 0.5
    return x


def unitarise(x: Pair, steps: int = 2) -> Pair:
    """Newton-Schulz steps ``X <- X (3I - X^H X) / 2`` for ``(real, imag)`` matrices."""
    xr, xi = x
    n = xr.shape[-1]
    three = 3.0 * np.eye(n)
    for _ in range(steps):
        hr, hi = np.swapaxes(xr, -1, -2), -np.swapaxes(xi, -1, -2)
        gr, gi = cmatmul((hr, hi), (xr, xi))
        xr, xi = cmatmul((xr, xi), (three - gr, -gi))
        xr, xi = xr * 0.5, xi * 0.5
    return xr, xi


def haar_so(g: np.ndarray) -> np.ndarray:
    """A Haar-distributed rotation from a standard Gaussian ``(n, n)`` matrix ``g``.

    The Q factor of ``g = QR`` with ``R``'s diagonal positive (modified
    Gram-Schmidt, column by column), which is Haar on O(n); the first column
    is negated when ``det Q < 0``. The determinant's sign is read from
    ``np.linalg.det``: ``|det Q| = 1``, so no rounding can flip it.
    """
    q = np.array(g, dtype=np.float64)
    n = q.shape[1]
    for j in range(n):
        for i in range(j):
            q[:, j] = q[:, j] - dot(q[:, i], q[:, j]) * q[:, i]
        q[:, j] = q[:, j] / math.sqrt(float(dot(q[:, j], q[:, j])))
    if np.linalg.det(q) < 0:
        q[:, 0] = -q[:, 0]
    return q


def sq_dists(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Squared Euclidean distances ``(len(a), len(b))`` between rows, summed feature by feature."""
    out = (a[:, None, 0] - b[None, :, 0]) ** 2
    for k in range(1, a.shape[1]):
        out = out + (a[:, None, k] - b[None, :, k]) ** 2
    return out


def row_norms(x: np.ndarray) -> np.ndarray:
    """Euclidean norm of each row (last axis)."""
    return np.sqrt(dot(x, x))


def vmap_math(fn, x: np.ndarray) -> np.ndarray:
    """Apply a scalar ``math`` function elementwise (the C library's, not numpy's SIMD paths)."""
    x = np.asarray(x, dtype=np.float64)
    return np.fromiter((fn(float(v)) for v in x.reshape(-1)), dtype=np.float64, count=x.size).reshape(x.shape)
