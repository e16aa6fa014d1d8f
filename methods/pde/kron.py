"""Kronecker-structured kernel interpolation on a grid: the linear algebra of SKS.

The solution model is u(x) = κ(x, M) K⁻¹ η with M = x⁽⁰⁾ × x⁽¹⁾ a tensor grid,
κ a product kernel and K = K₀ ⊗ K₁ (jitter added to each 1-D Gram). η is
stored as an ``(n0, n1)`` array ``H`` (C order, so ``vec(A₀ H A₁ᵀ) = (A₀ ⊗ A₁) vec(H)``).

A derivative ∂^{(a,b)} of the interpolant on the grid is the mode product
``A₀ H A₁ᵀ`` with ``Aⱼ = [∂^{o} kⱼ](x⁽ʲ⁾, x⁽ʲ⁾) Kⱼ⁻¹``. Nothing of size N×N is
formed here (the dense Gauss–Newton of :mod:`methods.pde.sks` expands these
factors with ``np.kron`` on purpose, as the official code's dense Hessian does).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.linalg as sla

from common.pde.kernels import kernel_matrix
from tasks.pde.problems import PDEProblem, check_axes

__all__ = ["KronModel"]


def _mesh(axes: list[np.ndarray]) -> np.ndarray:
    g = np.meshgrid(*axes, indexing="ij")
    return np.stack([a.ravel() for a in g], axis=1)


@dataclass
class KronModel:
    """The 1-D factors of one SKS model.

    Parameters
    ----------
    problem
        The PDE (gives the functionals, the source and the boundary).
    axes
        Collocation grid, one increasing 1-D array per axis (2-D only).
    ls
        Lengthscale per axis.
    jitter
        Added to the diagonal of each 1-D Gram matrix.
    kernel
        ``"se"`` (the official code's choice), ``"matern52"`` or ``"matern72"``.
    """

    problem: PDEProblem
    axes: list[np.ndarray]
    ls: tuple[float, ...]
    jitter: float
    kernel: str = "se"
    K: list[np.ndarray] = field(init=False)
    Kinv: list[np.ndarray] = field(init=False)
    ops: dict[tuple[int, int], np.ndarray] = field(init=False)  # (axis, order) -> A
    terms: dict[str, list[tuple[float, tuple[int, ...]]]] = field(init=False)

    def __post_init__(self) -> None:
        if len(self.problem.domain) != 2:
            raise ValueError(f"SKS here handles 2-D problems; got {len(self.problem.domain)} axes")
        # a bad collocation grid fails here with one line naming the axis (GridError), not in LAPACK
        self.axes = check_axes(self.axes, self.problem.domain, what="collocation grid", min_points=3)
        self.shape = tuple(a.size for a in self.axes)
        self.K, self.Kinv = [], []
        for x, ls in zip(self.axes, self.ls, strict=True):
            k = kernel_matrix(x, x, ls, kind=self.kernel) + self.jitter * np.eye(x.size)
            c = sla.cho_factor(k, lower=True)
            self.K.append(k)
            self.Kinv.append(sla.cho_solve(c, np.eye(x.size)))
        self.terms = {
            name: [(coef, mi) for mi, coef in spec.items()] for name, spec in self.problem.functionals_of().items()
        }
        orders = {(j, mi[j]) for t in self.terms.values() for _, mi in t for j in range(2)} | {(0, 0), (1, 0)}
        self.ops = {}
        for j, o in sorted(orders):
            x = self.axes[j]
            self.ops[(j, o)] = kernel_matrix(x, x, self.ls[j], o, 0, kind=self.kernel) @ self.Kinv[j]
        X = _mesh(self.axes)
        self.points = X
        self.source = self.problem.source(X).reshape(self.shape)
        self.bmask = self.problem.boundary_mask(self.axes)
        self.bvals = self.problem.boundary_value(X[self.bmask.ravel()])

    # -- operators -----------------------------------------------------------------
    def apply(self, name: str, H: np.ndarray) -> np.ndarray:
        """Functional ``name`` of the interpolant at the grid nodes, shape ``self.shape``."""
        out = np.zeros(self.shape)
        for coef, mi in self.terms[name]:
            out += coef * (self.ops[(0, mi[0])] @ H @ self.ops[(1, mi[1])].T)
        return out

    def apply_T(self, name: str, R: np.ndarray) -> np.ndarray:
        """Adjoint of :meth:`apply`."""
        out = np.zeros(self.shape)
        for coef, mi in self.terms[name]:
            out += coef * (self.ops[(0, mi[0])].T @ R @ self.ops[(1, mi[1])])
        return out

    def u(self, H: np.ndarray) -> np.ndarray:
        """The interpolant at the grid nodes (≈ H, up to the jitter)."""
        return self.ops[(0, 0)] @ H @ self.ops[(1, 0)].T

    def kinv(self, H: np.ndarray) -> np.ndarray:
        """K⁻¹ η as a mode product."""
        return self.Kinv[0] @ H @ self.Kinv[1].T

    def dense(self, name: str) -> np.ndarray:
        """The N×N matrix of functional ``name`` (for the dense Gauss–Newton only)."""
        out = 0.0
        for coef, mi in self.terms[name]:
            out = out + coef * np.kron(self.ops[(0, mi[0])], self.ops[(1, mi[1])])
        return out

    def functionals(self, H: np.ndarray) -> dict[str, np.ndarray]:
        """Every functional the residual needs, at the grid nodes."""
        return {name: self.apply(name, H) for name in self.terms}

    def predict(self, H: np.ndarray, eval_axes: list[np.ndarray]) -> np.ndarray:
        """The interpolant on another tensor grid: ``κ(E₀, x⁽⁰⁾) K₀⁻¹ H K₁⁻¹ κ(x⁽¹⁾, E₁)``."""
        A = [kernel_matrix(e, x, ls, kind=self.kernel) @ ki for e, x, ls, ki in zip(eval_axes, self.axes, self.ls, self.Kinv, strict=True)]
        return A[0] @ H @ A[1].T
