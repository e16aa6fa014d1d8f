"""Nonlinear PDEs solved on a collocation budget (Xu et al., ICML 2025: SKS).

An instance is a problem (:mod:`tasks.pde.problems`) and a collocation budget
``N``: a method may use at most ``N`` collocation points, placed as it likes
(SKS on a grid, DAKS on seeded quasi-random points, the PINN on its own). The
task gives the tensor-product evaluation grid as per-axis coordinates and
never the reference.

Instance ids: ``<problem>-N<N>`` with ``<problem>`` one of ``elliptic``,
``burgers-nu<ν>``, ``eikonal-eps<ε>``, ``allen-cahn-a<a>``, e.g.
``elliptic-N2401`` or ``burgers-nu0.001-N4800``. The tiers list the paper's
parameters (ν ∈ {0.02, 0.001}, ε = 0.1, a ∈ {15, 20}); other values load
too, and bad ones are refused with a one-line error.

A solution is ``u`` on the evaluation grid: a finite ``float64`` array of the
grid's shape. ``evaluate`` computes RMSE (the paper's "L2" metric), relative
L2 and max error against the reference, and reports the reference's own error
floor. See ``tasks/pde/README.md``.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from typing import Any

import numpy as np

from bench.registry import UnknownNameError, register_task
from bench.solutions import as_float_array
from bench.task import (
    Instance,
    InstanceSpec,
    Metric,
    Normalization,
    Paper,
    Reference,
    Task,
    TaskMeta,
)
from tasks.pde.problems import Elliptic, GridError, PDEParameterError, PDEProblem, make_problem
from tasks.pde.references import REFERENCE_VERSION, reference

__all__ = ["PDETask", "parse_instance_id", "eval_axes", "SMOKE_IDS", "TIER_IDS", "as_field", "GridError", "PDEParameterError"]

#: Smallest and largest collocation budgets an instance may name.
N_MIN, N_MAX = 16, 1_000_000

SMOKE_IDS: tuple[str, ...] = ("elliptic-N324", "burgers-nu0.02-N588")

_STANDARD = {
    "elliptic": (324, 625, 1225, 2401, 10000, 40000),
    "burgers-nu0.02": (588, 1200, 4900, 10800),
    "burgers-nu0.001": (1200, 4800),
    "eikonal-eps0.1": (324, 625, 1225),
    "allen-cahn-a15": (2401, 4900),
    "allen-cahn-a20": (2401, 4900),
}
_FULL = {
    "elliptic": (*_STANDARD["elliptic"], 4096, 90000),
    "burgers-nu0.02": (*_STANDARD["burgers-nu0.02"], 2352, 19200),
    "burgers-nu0.001": (*_STANDARD["burgers-nu0.001"], 588, 2352, 43200, 67500, 97200, 120000),
    "eikonal-eps0.1": (*_STANDARD["eikonal-eps0.1"], 2401, 10000),
    "allen-cahn-a15": (625, 1225, *_STANDARD["allen-cahn-a15"], 6400, 8100, 22500, 40000),
    "allen-cahn-a20": (625, 1225, *_STANDARD["allen-cahn-a20"], 6400, 8100, 22500, 40000),
}
TIER_IDS: dict[str, tuple[str, ...]] = {
    "smoke": SMOKE_IDS,
    "standard": tuple(f"{p}-N{n}" for p, ns in _STANDARD.items() for n in ns),
    "full": tuple(f"{p}-N{n}" for p, ns in _FULL.items() for n in sorted(set(ns))),
}

_NUM = r"[0-9]+(?:\.[0-9]+)?(?:e-?[0-9]+)?"
_ID = re.compile(
    rf"^(?:(?P<elliptic>elliptic)|burgers-nu(?P<nu>{_NUM})|eikonal-eps(?P<eps>{_NUM})|allen-cahn-a(?P<a>{_NUM}))"
    r"-N(?P<N>[1-9][0-9]*)$"
)
_ID_FORMAT = "'elliptic-N<N>', 'burgers-nu<nu>-N<N>', 'eikonal-eps<eps>-N<N>' or 'allen-cahn-a<a>-N<N>' (e.g. 'burgers-nu0.02-N1200')"


def parse_instance_id(instance_id: str) -> tuple[PDEProblem, int]:
    """``(problem, N)`` of an instance id.

    Raises
    ------
    UnknownNameError
        (a ``KeyError``) for a malformed id.
    PDEParameterError
        For a well-formed id with a bad parameter or budget (e.g. ``burgers-nu0-N100``).
    """
    if not isinstance(instance_id, str):
        raise UnknownNameError(f"pde instance ids are strings, got {type(instance_id).__name__}")
    m = _ID.match(instance_id)
    if not m:
        raise UnknownNameError(f"malformed pde instance id {instance_id!r}; expected {_ID_FORMAT}")
    n = int(m["N"])
    if not N_MIN <= n <= N_MAX:
        raise PDEParameterError(f"{instance_id}: the collocation budget N={n} is outside [{N_MIN}, {N_MAX}]")
    if m["elliptic"]:
        problem: PDEProblem = Elliptic()
    elif m["nu"] is not None:
        problem = make_problem("burgers", nu=float(m["nu"]))
    elif m["eps"] is not None:
        problem = make_problem("eikonal", eps=float(m["eps"]))
    else:
        problem = make_problem("allen-cahn", a=float(m["a"]))
    return problem, n


def eval_axes(problem: PDEProblem) -> list[np.ndarray]:
    """The evaluation grid's per-axis coordinates (as in the official code where it has one).

    Elliptic 200×200, Burgers 60×60 (x × t), Allen–Cahn 60×60, Eikonal 101×101
    (the official code takes every 16th node of a 1998² finite-difference grid,
    125×125; ours is every 20th node of a 2000-cell grid; see the README).
    """
    sizes = {"elliptic": 200, "burgers": 60, "allen-cahn": 60, "eikonal": 101}[problem.kind]
    return [np.linspace(lo, hi, sizes) for lo, hi in problem.domain]


def as_field(solution: Any, shape: tuple[int, ...]) -> np.ndarray:
    """``solution`` as a float64 array of ``shape``, or :class:`InvalidSolution`."""
    what = f"a finite float64 array of shape {shape} (u on the evaluation grid, axis order as in data['axes_names'])"
    return as_float_array(solution, shape, what=what, index="grid index")


def _spec(instance_id: str) -> InstanceSpec:
    problem, n = parse_instance_id(instance_id)
    params = {"problem": problem.key, "kind": problem.kind, "N": n, **{k: v for k, v in problem.params().items() if k != "kind"}}
    return InstanceSpec(id=instance_id, params=params, tags=(problem.kind, problem.key))


def _digest(instance_id: str) -> str:
    problem, n = parse_instance_id(instance_id)
    axes = eval_axes(problem)
    desc = {"id": instance_id, "pde": problem.params(), "N": n, "eval": [a.size for a in axes], "ref": REFERENCE_VERSION}
    return hashlib.sha256(("pde|" + json.dumps(desc, sort_keys=True)).encode()).hexdigest()


@functools.lru_cache(maxsize=256)
def _load(instance_id: str) -> Instance:
    problem, n = parse_instance_id(instance_id)
    axes = eval_axes(problem)
    for a in axes:
        a.setflags(write=False)
    u_ref, floor, source = reference(problem, axes)
    u_ref.setflags(write=False)
    data = {
        "pde": problem.params(),
        "N": n,
        "domain": [list(d) for d in problem.domain],
        "axes_names": list(problem.axes_names),
        "dirichlet_sides": [list(s) for s in problem.dirichlet_sides],
        "eval_axes": axes,
    }
    return Instance(
        id=instance_id,
        params=dict(_spec(instance_id).params),
        data=data,
        private={"u_ref": u_ref, "floor": floor},
        references={"floor": Reference(value=max(floor, 1e-300), source=source)},
        tags=(problem.kind, problem.key),
        digest=_digest(instance_id),
    )


class _Catalog(dict):
    """Listed instances, plus any well-formed id asked about (``--instances burgers-nu0.005-N300``).

    A well-formed id with a bad parameter raises :class:`PDEParameterError`
    (a ``ValueError``: the CLI prints it on one line) instead of "unknown instance".
    """

    def __contains__(self, instance_id: object) -> bool:
        if dict.__contains__(self, instance_id):
            return True
        try:
            spec = _spec(instance_id)  # type: ignore[arg-type]
        except UnknownNameError:
            return False
        self[spec.id] = spec
        return True


_TEMPLATE = """\
    # Linear interpolation of the Dirichlet data is not a solution; this returns zeros, which
    # the verifier accepts (and scores badly). Replace with your solver.
    shape = tuple(len(a) for a in instance.data["eval_axes"])
    return np.zeros(shape, dtype=np.float64)
"""


@register_task
class PDETask(Task):
    """Nonlinear PDEs (elliptic, Burgers, Eikonal, Allen–Cahn) on a collocation budget.

    ``data`` holds ``pde`` (kind and parameters; rebuild the problem with
    :func:`tasks.pde.problems.problem_from_data`), ``N`` (the collocation
    budget), ``domain``, ``axes_names``, ``dirichlet_sides`` and
    ``eval_axes`` (per-axis coordinates of the evaluation grid). The reference
    stays private.
    """

    meta = TaskMeta(
        name="pde",
        version="1",
        family="pde",
        area="scientific machine learning",
        paper=Paper(
            title="Toward Efficient Kernel-Based Solvers for Nonlinear PDEs",
            authors=["Zhitong Xu", "Da Long", "Yiming Xu", "Guang Yang", "Shandian Zhe", "Houman Owhadi"],
            arxiv="2410.11165",
            venue="ICML 2025",
            code_url="https://github.com/XZT008/PDE-GP-Solver",
        ),
        description=(
            "Nonlinear PDEs (nonlinear elliptic, Burgers nu=0.02 and 0.001, regularised Eikonal, Allen-Cahn "
            "a=15 and 20) solved with at most N collocation points; scored by RMSE on a fixed evaluation grid "
            "against exact solutions or converged references."
        ),
        metrics=[
            Metric(name="rmse", direction="min", description="sqrt(mean((u - u_ref)^2)) on the evaluation grid (the paper's and DAKS's 'L2 error')"),
            Metric(name="rel_l2", direction="min", description="||u - u_ref||_2 / ||u_ref||_2 on the evaluation grid"),
            Metric(name="max_err", direction="min", description="max |u - u_ref| on the evaluation grid"),
            Metric(name="ref_floor", direction="min", description="estimated error of the reference itself (RMSE, or max abs for Burgers); errors below it cannot be measured"),
        ],
        primary="rmse",
        normalization=Normalization(kind="log", zero=1.0, one=1e-8, description="0 at RMSE 1, 1 at RMSE 1e-8 (log scale)"),
        budgets={"smoke": 20.0, "standard": 600.0, "full": 3600.0},
    )
    template = _TEMPLATE

    def instances(self, tier: str) -> list[InstanceSpec]:
        """Instances of ``tier`` in a stable order."""
        if tier not in TIER_IDS:
            raise ValueError(f"unknown tier {tier!r}; tiers are smoke, standard, full")
        return [_spec(i) for i in TIER_IDS[tier]]

    def all_instances(self) -> dict[str, InstanceSpec]:
        """Every listed instance by id; any other well-formed id is accepted (and checked) on lookup."""
        out = _Catalog()
        for tier in TIER_IDS:
            for spec in self.instances(tier):
                out.setdefault(spec.id, spec)
        return out

    def budget(self, tier: str, spec: InstanceSpec) -> float:
        """Seconds per job: 10 (smoke), 600 (standard), 3600 (full)."""
        return float(self.meta.budgets[tier])

    def load(self, instance_id: str) -> Instance:
        """Load one instance (the reference is computed once and cached on disk).

        Raises
        ------
        UnknownNameError
            (a ``KeyError``) for a malformed id.
        PDEParameterError
            For a bad PDE parameter or budget.
        """
        return _load(instance_id)

    def instance_digest(self, instance_id: str) -> str:
        """Digest from the id, the PDE parameters and the reference version (no reference computed)."""
        return _digest(instance_id)

    def evaluate(self, instance: Instance, solution: Any) -> dict[str, float]:
        """RMSE, relative L2 and max error of ``solution`` against the reference.

        Raises
        ------
        InvalidSolution
            Unless the solution is a finite float64 array of the evaluation grid's shape.
        """
        u_ref = instance.private["u_ref"]
        u = as_field(solution, u_ref.shape)
        err = u - u_ref
        return {
            "rmse": float(np.sqrt(np.mean(err**2))),
            "rel_l2": float(np.linalg.norm(err) / np.linalg.norm(u_ref)),
            "max_err": float(np.max(np.abs(err))),
            "ref_floor": float(instance.private["floor"]),
        }
