"""The PDEs of the family, as the official SKS code poses them.

Each problem is a class that defines its domain, its Dirichlet boundary (which
sides, which values), its source term and its residual. The residual is
written in terms of *named linear functionals* of ``u`` (``"u"``, ``"lap"``,
``"ux"``...), each a linear combination of partial derivatives given by
multi-indices (one derivative order per axis). That is what every solver needs:

- SKS and finite differences evaluate the functionals on a grid;
- DAKS puts the functionals in its Gram matrix and eliminates one of them with
  the PDE (:meth:`PDEProblem.eliminate`);
- the PINN evaluates them by autograd.

The residual uses only ``+``, ``-``, ``*`` and ``**``, so it accepts numpy
arrays and torch tensors alike. Exact solutions and numerical references live
in :mod:`tasks.pde.references`, never here: a method may import this module.

Axes: elliptic, Eikonal and Allen–Cahn are on ``[0, 1]^2`` with axes
``("x", "y")``; Burgers is on ``x in [-1, 1]``, ``t in [0, 1]`` with axes
``("x", "t")`` (axis 0 is space, as in the official code).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

__all__ = [
    "PDEProblem",
    "Elliptic",
    "Burgers",
    "Eikonal",
    "AllenCahn",
    "PDEParameterError",
    "GridError",
    "make_problem",
    "problem_from_data",
    "check_axes",
    "PROBLEM_KINDS",
]


class PDEParameterError(ValueError):
    """A PDE parameter is out of its allowed range (e.g. a non-positive viscosity)."""


class GridError(ValueError):
    """A grid (per-axis coordinates) is unusable: empty, unsorted, not finite, outside the domain."""


MultiIndex = tuple[int, ...]


def check_axes(axes: Any, domain: tuple[tuple[float, float], ...], *, what: str = "grid", min_points: int = 2) -> list[np.ndarray]:
    """Validate per-axis grid coordinates and return them as float64 arrays.

    Parameters
    ----------
    axes
        One 1-D coordinate array per axis of ``domain``.
    domain
        ``((lo, hi), ...)``, one interval per axis.
    what
        Name used in error messages (``"grid"``, ``"evaluation grid"``).
    min_points
        Fewest points allowed per axis.

    Raises
    ------
    GridError
        With a one-line message naming the axis and what is wrong.
    """
    if not isinstance(axes, (list, tuple)) or len(axes) != len(domain):
        raise GridError(f"the {what} needs {len(domain)} coordinate arrays (one per axis), got {_describe(axes)}")
    out = []
    for j, (ax, (lo, hi)) in enumerate(zip(axes, domain, strict=True)):
        a = np.asarray(ax, dtype=np.float64) if not isinstance(ax, np.ndarray) else ax.astype(np.float64, copy=False)
        if a.ndim != 1:
            raise GridError(f"{what} axis {j}: expected a 1-D array of coordinates, got shape {a.shape}")
        if a.size < min_points:
            raise GridError(f"{what} axis {j}: needs at least {min_points} points, got {a.size}")
        if not np.all(np.isfinite(a)):
            raise GridError(f"{what} axis {j}: coordinates must be finite (found NaN or inf)")
        if np.any(np.diff(a) <= 0):
            raise GridError(f"{what} axis {j}: coordinates must be strictly increasing")
        tol = 1e-12 * max(1.0, abs(hi - lo))
        if a[0] < lo - tol or a[-1] > hi + tol:
            raise GridError(f"{what} axis {j}: coordinates span [{a[0]:g}, {a[-1]:g}], outside the domain [{lo:g}, {hi:g}]")
        out.append(a)
    return out


def _describe(x: Any) -> str:
    if isinstance(x, (list, tuple)):
        return f"a {type(x).__name__} of length {len(x)}"
    return type(x).__name__


@dataclass(frozen=True)
class PDEProblem:
    """Base class: a nonlinear PDE with Dirichlet data on part of a box's boundary.

    Subclasses set the class attributes and implement :meth:`source`,
    :meth:`boundary_value`, :meth:`residual`, :meth:`partials` and
    :meth:`eliminate`.
    """

    kind: ClassVar[str] = ""
    axes_names: ClassVar[tuple[str, ...]] = ("x", "y")
    domain: ClassVar[tuple[tuple[float, float], ...]] = ((0.0, 1.0), (0.0, 1.0))
    #: Which sides carry Dirichlet data: (axis, 0 for the low end / 1 for the high end).
    dirichlet_sides: ClassVar[tuple[tuple[int, int], ...]] = ((0, 0), (0, 1), (1, 0), (1, 1))
    #: Named linear functionals: name -> {multi-index: coefficient}.
    functionals: ClassVar[dict[str, dict[MultiIndex, float]]] = {}
    #: The functional DAKS eliminates with the PDE (it must enter the residual linearly with a constant coefficient).
    eliminated: ClassVar[str] = ""

    # -- identity ------------------------------------------------------------------
    @property
    def key(self) -> str:
        """Short id used in instance names, e.g. ``"burgers-nu0.02"``."""
        raise NotImplementedError

    def params(self) -> dict[str, Any]:
        """The PDE's parameters as plain data (sent to methods)."""
        return {"kind": self.kind}

    def functionals_of(self) -> dict[str, dict[MultiIndex, float]]:
        """The functionals with this instance's coefficients (e.g. Burgers' viscosity)."""
        return {k: dict(v) for k, v in self.functionals.items()}

    def multi_indices(self) -> list[MultiIndex]:
        """Every partial derivative the functionals use, sorted."""
        return sorted({mi for f in self.functionals_of().values() for mi in f})

    # -- data ----------------------------------------------------------------------
    def source(self, X: np.ndarray) -> np.ndarray:
        """Source term at points ``X`` (shape ``(n, d)``); shape ``(n,)``."""
        return np.zeros(X.shape[0])

    def boundary_value(self, X: np.ndarray) -> np.ndarray:
        """Dirichlet data at boundary points ``X`` (shape ``(n, d)``); shape ``(n,)``."""
        return np.zeros(X.shape[0])

    def residual(self, F: dict[str, Any], f: Any) -> Any:
        """PDE residual from the functionals' values ``F`` and the source ``f``."""
        raise NotImplementedError

    def partials(self, F: dict[str, np.ndarray], f: np.ndarray) -> dict[str, np.ndarray]:
        """∂residual/∂F[name] for each functional the residual uses (numpy)."""
        raise NotImplementedError

    def eliminate(self, F: dict[str, np.ndarray], f: np.ndarray) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """Value of the eliminated functional that zeroes the residual, and its partials w.r.t. the others."""
        raise NotImplementedError

    # -- geometry ------------------------------------------------------------------
    def boundary_mask(self, axes: list[np.ndarray]) -> np.ndarray:
        """Boolean array of the grid's shape, true at nodes on a Dirichlet side."""
        shape = tuple(a.size for a in axes)
        mask = np.zeros(shape, dtype=bool)
        for j, end in self.dirichlet_sides:
            lo, hi = self.domain[j]
            target = hi if end else lo
            hit = np.isclose(axes[j], target, rtol=0, atol=1e-12 * max(1.0, hi - lo))
            idx = [slice(None)] * len(shape)
            idx[j] = hit
            mask[tuple(idx)] = True
        return mask

    def on_boundary(self, X: np.ndarray) -> np.ndarray:
        """Which of the points ``X`` (shape ``(n, d)``) lie on a Dirichlet side."""
        out = np.zeros(X.shape[0], dtype=bool)
        for j, end in self.dirichlet_sides:
            lo, hi = self.domain[j]
            out |= np.isclose(X[:, j], hi if end else lo, rtol=0, atol=1e-12 * max(1.0, hi - lo))
        return out

    def boundary_points(self, m: int, rng: np.random.Generator | None = None) -> np.ndarray:
        """``m`` points on the Dirichlet sides, spread in proportion to their lengths.

        Evenly spaced (corners excluded) when ``rng`` is None, otherwise uniform random.
        """
        sides = self.dirichlet_sides
        lengths = np.array([self._side_length(j) for j, _ in sides])
        counts = np.floor(m * lengths / lengths.sum()).astype(int)
        counts[: m - counts.sum()] += 1
        pts = []
        for (j, end), c in zip(sides, counts, strict=True):
            if c == 0:
                continue
            other = [k for k in range(len(self.domain)) if k != j]
            P = np.empty((c, len(self.domain)))
            lo, hi = self.domain[j]
            P[:, j] = hi if end else lo
            for k in other:
                a, b = self.domain[k]
                if rng is None:
                    P[:, k] = a + (b - a) * (np.arange(c) + 0.5) / c
                else:
                    P[:, k] = rng.uniform(a, b, size=c)
            pts.append(P)
        return np.concatenate(pts, axis=0)

    def _side_length(self, axis: int) -> float:
        return math.prod(hi - lo for k, (lo, hi) in enumerate(self.domain) if k != axis)


_LAP = {(2, 0): 1.0, (0, 2): 1.0}


@dataclass(frozen=True)
class Elliptic(PDEProblem):
    """Nonlinear elliptic: −Δu + u³ = f on [0,1]², u = 0 on ∂Ω.

    f comes from u* = sin(πx) sin(πy) + 2 sin(4πx) sin(4πy) (official code).
    """

    kind: ClassVar[str] = "elliptic"
    functionals: ClassVar[dict[str, dict[MultiIndex, float]]] = {"u": {(0, 0): 1.0}, "lap": _LAP}
    eliminated: ClassVar[str] = "lap"

    @property
    def key(self) -> str:
        return "elliptic"

    def source(self, X: np.ndarray) -> np.ndarray:
        x, y = X[:, 0], X[:, 1]
        s1 = np.sin(np.pi * x) * np.sin(np.pi * y)
        s4 = np.sin(4 * np.pi * x) * np.sin(4 * np.pi * y)
        u = s1 + 2 * s4
        return 2 * np.pi**2 * s1 + 64 * np.pi**2 * s4 + u**3

    def residual(self, F: dict[str, Any], f: Any) -> Any:
        return -F["lap"] + F["u"] ** 3 - f

    def partials(self, F: dict[str, np.ndarray], f: np.ndarray) -> dict[str, np.ndarray]:
        return {"u": 3 * F["u"] ** 2, "lap": -np.ones_like(F["u"])}

    def eliminate(self, F: dict[str, np.ndarray], f: np.ndarray) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        return F["u"] ** 3 - f, {"u": 3 * F["u"] ** 2}


@dataclass(frozen=True)
class Burgers(PDEProblem):
    """Viscous Burgers: u_t + u u_x − ν u_xx = 0, x ∈ [−1, 1], t ∈ [0, 1].

    u(x, 0) = −sin(πx), u(±1, t) = 0. The functional ``heat`` is u_t − ν u_xx.
    """

    nu: float = 0.02
    kind: ClassVar[str] = "burgers"
    axes_names: ClassVar[tuple[str, ...]] = ("x", "t")
    domain: ClassVar[tuple[tuple[float, float], ...]] = ((-1.0, 1.0), (0.0, 1.0))
    dirichlet_sides: ClassVar[tuple[tuple[int, int], ...]] = ((0, 0), (0, 1), (1, 0))
    eliminated: ClassVar[str] = "heat"

    def __post_init__(self) -> None:
        if not (isinstance(self.nu, (int, float)) and math.isfinite(self.nu) and self.nu > 0):
            raise PDEParameterError(f"Burgers: the viscosity nu must be a finite number > 0, got {self.nu!r}")
        if self.nu < 1e-4 or self.nu > 1.0:
            raise PDEParameterError(
                f"Burgers: nu={self.nu:g} is outside [1e-4, 1]; below 1e-4 the Cole-Hopf reference underflows"
            )

    @property
    def key(self) -> str:
        return f"burgers-nu{self.nu:g}"

    def params(self) -> dict[str, Any]:
        return {"kind": self.kind, "nu": float(self.nu)}

    def functionals_of(self) -> dict[str, dict[MultiIndex, float]]:
        return {"u": {(0, 0): 1.0}, "ux": {(1, 0): 1.0}, "heat": {(0, 1): 1.0, (2, 0): -float(self.nu)}}

    def boundary_value(self, X: np.ndarray) -> np.ndarray:
        initial = np.isclose(X[:, 1], 0.0, rtol=0, atol=1e-12)
        return np.where(initial, -np.sin(np.pi * X[:, 0]), 0.0)

    def residual(self, F: dict[str, Any], f: Any) -> Any:
        return F["heat"] + F["u"] * F["ux"] - f

    def partials(self, F: dict[str, np.ndarray], f: np.ndarray) -> dict[str, np.ndarray]:
        return {"u": F["ux"], "ux": F["u"], "heat": np.ones_like(F["u"])}

    def eliminate(self, F: dict[str, np.ndarray], f: np.ndarray) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        return f - F["u"] * F["ux"], {"u": -F["ux"], "ux": -F["u"]}


@dataclass(frozen=True)
class Eikonal(PDEProblem):
    """Regularised Eikonal: |∇u|² = 1 + εΔu on [0,1]², u = 0 on ∂Ω."""

    eps: float = 0.1
    kind: ClassVar[str] = "eikonal"
    functionals: ClassVar[dict[str, dict[MultiIndex, float]]] = {
        "u": {(0, 0): 1.0},
        "ux": {(1, 0): 1.0},
        "uy": {(0, 1): 1.0},
        "lap": _LAP,
    }
    eliminated: ClassVar[str] = "lap"

    def __post_init__(self) -> None:
        if not (isinstance(self.eps, (int, float)) and math.isfinite(self.eps) and self.eps > 0):
            raise PDEParameterError(f"Eikonal: the regularisation eps must be a finite number > 0, got {self.eps!r}")
        if self.eps < 0.02 or self.eps > 10:
            raise PDEParameterError(
                f"Eikonal: eps={self.eps:g} is outside [0.02, 10]; below 0.02 the Hopf-Cole reference "
                "exp(-dist/eps) underflows on the reference grid"
            )

    @property
    def key(self) -> str:
        return f"eikonal-eps{self.eps:g}"

    def params(self) -> dict[str, Any]:
        return {"kind": self.kind, "eps": float(self.eps)}

    def residual(self, F: dict[str, Any], f: Any) -> Any:
        return F["ux"] ** 2 + F["uy"] ** 2 - 1 - self.eps * F["lap"] - f

    def partials(self, F: dict[str, np.ndarray], f: np.ndarray) -> dict[str, np.ndarray]:
        return {"ux": 2 * F["ux"], "uy": 2 * F["uy"], "lap": -self.eps * np.ones_like(F["ux"])}

    def eliminate(self, F: dict[str, np.ndarray], f: np.ndarray) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        val = (F["ux"] ** 2 + F["uy"] ** 2 - 1 - f) / self.eps
        return val, {"ux": 2 * F["ux"] / self.eps, "uy": 2 * F["uy"] / self.eps}


@dataclass(frozen=True)
class AllenCahn(PDEProblem):
    """Steady Allen–Cahn: Δu + u³ − u = f on [0,1]², Dirichlet data from u*.

    u* = sin(2πa x) cos(2πa y) + sin(2πx) cos(2πy) (official code, a ∈ {15, 20}).
    """

    a: float = 15.0
    kind: ClassVar[str] = "allen-cahn"
    functionals: ClassVar[dict[str, dict[MultiIndex, float]]] = {"u": {(0, 0): 1.0}, "lap": _LAP}
    eliminated: ClassVar[str] = "lap"

    def __post_init__(self) -> None:
        if not (isinstance(self.a, (int, float)) and math.isfinite(self.a) and self.a > 0):
            raise PDEParameterError(f"Allen-Cahn: the frequency a must be a finite number > 0, got {self.a!r}")
        if self.a > 100:
            raise PDEParameterError(f"Allen-Cahn: a={self.a:g} > 100 cannot be resolved by any budget of this task")

    @property
    def key(self) -> str:
        return f"allen-cahn-a{self.a:g}"

    def params(self) -> dict[str, Any]:
        return {"kind": self.kind, "a": float(self.a)}

    def exact(self, X: np.ndarray) -> np.ndarray:
        """u*, which also gives the boundary data."""
        x, y = X[:, 0], X[:, 1]
        w = 2 * np.pi * self.a
        return np.sin(w * x) * np.cos(w * y) + np.sin(2 * np.pi * x) * np.cos(2 * np.pi * y)

    def boundary_value(self, X: np.ndarray) -> np.ndarray:
        return self.exact(X)

    def source(self, X: np.ndarray) -> np.ndarray:
        x, y = X[:, 0], X[:, 1]
        w = 2 * np.pi * self.a
        sa = np.sin(w * x) * np.cos(w * y)
        s1 = np.sin(2 * np.pi * x) * np.cos(2 * np.pi * y)
        u = sa + s1
        return -2 * w**2 * sa - 8 * np.pi**2 * s1 + u**3 - u

    def residual(self, F: dict[str, Any], f: Any) -> Any:
        return F["lap"] + F["u"] ** 3 - F["u"] - f

    def partials(self, F: dict[str, np.ndarray], f: np.ndarray) -> dict[str, np.ndarray]:
        return {"u": 3 * F["u"] ** 2 - 1, "lap": np.ones_like(F["u"])}

    def eliminate(self, F: dict[str, np.ndarray], f: np.ndarray) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        return f - F["u"] ** 3 + F["u"], {"u": 1 - 3 * F["u"] ** 2}


PROBLEM_KINDS: dict[str, type[PDEProblem]] = {
    "elliptic": Elliptic,
    "burgers": Burgers,
    "eikonal": Eikonal,
    "allen-cahn": AllenCahn,
}


def make_problem(kind: str, **params: Any) -> PDEProblem:
    """Build a problem from its kind and parameters, with one-line errors.

    Raises
    ------
    PDEParameterError
        Unknown kind, unknown or bad parameter.
    """
    cls = PROBLEM_KINDS.get(kind)
    if cls is None:
        raise PDEParameterError(f"unknown PDE kind {kind!r}; kinds are {sorted(PROBLEM_KINDS)}")
    allowed = {f for f in cls.__dataclass_fields__}
    bad = set(params) - allowed
    if bad:
        raise PDEParameterError(f"{kind}: unknown parameter(s) {sorted(bad)}; allowed: {sorted(allowed) or 'none'}")
    for k, v in params.items():
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise PDEParameterError(f"{kind}: parameter {k} must be a number, got {v!r}")
    return cls(**{k: float(v) for k, v in params.items()})


def problem_from_data(data: dict[str, Any]) -> PDEProblem:
    """The problem an instance's public data describes (``data["pde"]``)."""
    p = dict(data["pde"])
    return make_problem(p.pop("kind"), **p)
