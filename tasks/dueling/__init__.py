"""Task ``dueling-optimization``: convex optimisation from noisy pairwise comparisons.

Saha, Koren and Mansour, "Dueling Convex Optimization with General Preferences"
(ICML 2025, PMLR 267:52552-52564). The method never sees ``f``: it sends pairs
``(x_i, y_i)`` and the task answers each with one bit, ``1`` when ``x_i`` wins,
drawn with probability ``rho_p(f(y_i) - f(x_i))`` (``tasks/dueling/problems.py``:
the logistic transfer for ``p = 1``, a clipped cubic for ``p = 3``). The task
owns ``f``, draws the bits from the job's seed, counts every comparison, and
scores the final point and the iterates the method reported along the way.

Protocol (:class:`DuelSession`); ``state`` is
``{"round", "used", "left", "bits"}`` (``bits``: ``int8`` answers to the previous
round's pairs, ``None`` at the start). An action is a dict:

- ``{"x": (n, d), "y": (n, d), "point": (d,)}``: ``n >= 1`` pairs (float64), at
  most ``left``; ``point`` is the method's current iterate, which the task
  scores (``f(point) - f*``) at the comparison count *before* this round's
  pairs, for the comparisons-to-eps curve;
- ``{"done": (d,)}``: the final point ``x_hat``.

Every objective is normalised so that ``f* = 0`` and ``f(x0) = 1`` at the
public start ``x0 = 0``. Instance ``data`` (public): ``d``, ``p``, ``budget``
(comparisons), ``x0``, ``radius`` (a bound on ``||x0 - x*||``), ``beta`` (a
smoothness bound), ``alpha`` (a strong-convexity bound, 0 when there is none),
``gap0`` (= 1), ``rho_coef`` (the leading coefficient ``c`` of
``rho_p(z) = 1/2 + c z^p + ...``) and ``max_rounds``.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from bench.instances import Catalog, CatalogTask, Choice, IdForm, Int, grid
from bench.registry import register_task
from bench.solutions import as_float_array
from bench.task import (
    Instance,
    InstanceSpec,
    InvalidSolution,
    Metric,
    Normalization,
    Paper,
    Reference,
    RoundSession,
    TaskMeta,
)
from tasks.dueling.problems import TAU, Problem, build, transfer

__all__ = [
    "CATALOG",
    "DuelingOptimization",
    "DuelSession",
    "EPS_LEVELS",
    "BUDGETS",
    "curve_metrics",
]

#: Suboptimality levels of the comparisons-to-eps curve (fractions of the initial gap 1).
EPS_LEVELS = tuple(float(v) for v in np.logspace(-0.5, -6.0, 12))
#: Comparison budget per tier.
BUDGETS = {"smoke": 20_000, "standard": 200_000, "full": 2_000_000}
#: Rounds (IPC messages) allowed per comparison budget: a cap, not a target.
MAX_ROUNDS = {"smoke": 20_000, "standard": 60_000, "full": 400_000}


def _tier_of(fields: dict[str, Any]) -> str:
    return {0: "smoke", 1: "standard", 2: "full"}[fields["b"]]


CATALOG = Catalog(
    IdForm(
        "dueling-optimization",
        "{fn}-d{d}-k{k}-p{p}-b{b}-s{seed}",
        example="quad-d5-k10-p1-b1-s0",
        fn=Choice(("quad", "quartic", "logreg")),
        d=Int(label="dimension", minimum=1),
        k=Int(label="condition", minimum=1),
        p=Choice(("1", "3")),
        b=Int(label="budget-class"),
        seed=Int(),
    ),
    {
        "smoke": grid(fn=("quad",), d=(5,), k=(10,), p=("1", "3"), b=(0,), seed=(0,)),
        "standard": [
            *grid(fn=("quad",), d=(5, 20), k=(10,), p=("1", "3"), b=(1,), seed=(0,)),
            *grid(fn=("logreg",), d=(10,), k=(10,), p=("1", "3"), b=(1,), seed=(0,)),
            *grid(fn=("quartic",), d=(5,), k=(10,), p=("1", "3"), b=(1,), seed=(0,)),
        ],
        "full": [
            *grid(fn=("quad",), d=(5, 20, 50), k=(10, 100), p=("1", "3"), b=(2,), seed=(0, 1)),
            *grid(fn=("logreg",), d=(10, 50), k=(10, 100), p=("1", "3"), b=(2,), seed=(0, 1)),
            *grid(fn=("quartic",), d=(5, 20), k=(10,), p=("1", "3"), b=(2,), seed=(0, 1)),
        ],
    },
)


def curve_metrics(trace_used: np.ndarray, trace_gap: np.ndarray, budget: int) -> dict[str, float]:
    """Comparisons to reach each level of :data:`EPS_LEVELS`, and the log-log slope over the levels reached.

    ``trace_used[j]`` is the comparison count at which the iterate with gap
    ``trace_gap[j]`` was reported. A level never reached counts ``budget``
    (censored) in ``frac_to_eps*`` and is left out of the slope. A level counts
    as reached from the first report after which *every* later iterate (the
    final point included) stays at or below it, so a lucky pass near ``x*``
    does not count. The slope is
    the least-squares slope of ``log N(eps)`` against ``log(1/eps)`` over the
    levels reached (``N(eps)`` counts from the start), NaN below three
    levels.
    """
    out: dict[str, float] = {}
    reached_n, reached_e = [], []
    levels = 0
    for j, eps in enumerate(EPS_LEVELS):
        above = np.flatnonzero(trace_gap > eps)
        # N(eps): the comparison count from which on every reported iterate stays at or below eps
        first = 0 if above.size == 0 else int(above[-1]) + 1
        hit = first < trace_gap.size
        n = float(trace_used[first]) if hit else float(budget)
        out[f"frac_to_eps{j:02d}"] = n / budget
        levels += int(hit)
        if hit:
            reached_n.append(max(n, 1.0))
            reached_e.append(eps)
    out["levels_reached"] = float(levels)
    if len(reached_n) >= 3:
        slope = np.polyfit(np.log(1.0 / np.asarray(reached_e)), np.log(np.asarray(reached_n)), 1)[0]
        out["eps_slope"] = float(slope)
    else:
        out["eps_slope"] = float("nan")
    return out


class DuelSession(RoundSession):
    """The trusted side: answers comparison rounds, counts them, records reported iterates."""

    def __init__(self, problem: Problem, p: int, budget: int, max_rounds: int, seed: int) -> None:
        super().__init__(max_rounds)
        self.problem, self.p, self.budget = problem, p, int(budget)
        self.rng = np.random.default_rng([seed, 7919])
        self.used = 0
        self.bits: np.ndarray | None = None

    def round_state(self) -> dict[str, Any]:
        return {
            "round": self.round,
            "used": self.used,
            "left": self.budget - self.used,
            "bits": self.bits,
        }

    def _point(self, obj: Any, field: str, rows: int | None = None) -> np.ndarray:
        """A ``(d,)`` point, or with ``rows`` a ``(n, d)`` batch of any ``n`` (not :meth:`_float_field`: free rows)."""
        d = self.problem.d
        shape = (d,) if rows is None else (rows, d)
        where = f"round {self.round}: field {field!r}"
        if not isinstance(obj, np.ndarray):
            raise InvalidSolution(
                f"{where} must be a float64 numpy array of shape {shape}, got {type(obj).__name__}"
            )
        if (
            rows is None
            and obj.shape != shape
            or rows is not None
            and (obj.ndim != 2 or obj.shape[1] != d)
        ):
            raise InvalidSolution(
                f"{where} has shape {obj.shape}; expected {shape if rows is None else f'(n, {d})'}"
            )
        try:
            return as_float_array(obj, obj.shape, what=f"{where}: a finite float64 array")
        except InvalidSolution as exc:
            raise InvalidSolution(f"{where}: {exc}") from None

    def apply(self, action: Any) -> None:
        action = self._require_dict(action, " ('x', 'y', 'point' or 'done')")
        if "done" in action:
            self.answer = self._point(action["done"], "done")
            return
        self._check_keys(action, ("x", "y", "point"), "a duel action")
        self._check_round_limit()
        x = self._point(action["x"], "x", rows=-1)
        y = self._point(action["y"], "y", rows=-1)
        if x.shape != y.shape or x.shape[0] < 1:
            raise self._invalid(
                f"'x' {x.shape} and 'y' {y.shape} must have the same shape, with at least one row"
            )
        n = x.shape[0]
        self._check_budget(n, self.budget - self.used, "pairs", "comparisons")
        point = self._point(action["point"], "point")
        self._record(self.used, self.problem.values(point))
        P = transfer(self.problem.values(y) - self.problem.values(x), self.p)
        self.bits = (self.rng.random(n) < P).astype(np.int8)
        self.used += n
        self.round += 1

    def solution(self) -> dict[str, Any]:
        return {
            "x": self.answer,
            "used": self.used,
            "rounds": self.round,
            **self._trace(),
        }


_TEMPLATE = '''\
"""{name}: a comparison-based optimiser for the ``dueling-optimization`` task.

Deviations
----------
List every departure from the paper or its official code, and why.
"""

from __future__ import annotations

import numpy as np

from bench import method


@method(
    name="{name}",
    kind="{kind}",
    tasks=["dueling-optimization"],
    reference="",
    version="1",
    params={{}},
    deterministic=True,
)
class Optimizer:
    """Coordinate comparisons as a starting point: one pair per round, x0 is returned."""

    def __init__(self, instance, *, seed: int, budget: float):
        self.x = np.asarray(instance.data["x0"], dtype=np.float64).copy()

    def select(self, state):
        if state["left"] <= 0 or state["round"] >= 10:
            return {{"done": self.x}}
        e = np.zeros_like(self.x)
        e[state["round"] % e.size] = 0.1
        return {{"x": (self.x + e)[None, :], "y": (self.x - e)[None, :], "point": self.x}}
'''


@register_task
class DuelingOptimization(CatalogTask):
    """Convex optimisation with dueling feedback under a degree-p transfer function."""

    meta = TaskMeta(
        name="dueling-optimization",
        version="1",
        family="dueling",
        area="online learning and query-efficient optimisation",
        paper=Paper(
            title="Dueling Convex Optimization with General Preferences",
            # the author list as the full text gives it (read in the code index, session 41)
            authors=["Aadirupa Saha", "Tomer Koren", "Yishay Mansour"],
            venue="ICML 2025 (PMLR 267:52552-52564, saha25a)",
        ),
        description=(
            "Minimise a convex f on R^d (quadratics with condition number k, a quartic that is not strongly "
            "convex, l2-regularised logistic loss) from one-bit noisy comparisons P(x beats y) = rho_p(f(y) - f(x)) "
            "with transfer degree p = 1 or 3; the task owns f, counts comparisons and scores f(x_hat) - f* "
            "(f normalised to f* = 0, f(x0) = 1) and the comparisons-to-eps curve."
        ),
        metrics=[
            Metric(
                name="gap", direction="min", description="f(x_hat) - f*, the initial gap being 1"
            ),
            Metric(
                name="log10_gap", direction="min", description="log10 of gap (floored at 1e-16)"
            ),
            Metric(
                name="dist",
                direction="min",
                description="||x_hat - x*|| (logreg: to the unique minimiser)",
            ),
            Metric(
                name="best_reported_gap",
                direction="min",
                description="smallest gap of any iterate the method reported (informational)",
            ),
            Metric(
                name="comparisons",
                direction="min",
                unit="comparisons",
                description="comparisons used (oracle-counted)",
            ),
            Metric(
                name="rounds",
                direction="min",
                unit="rounds",
                description="comparison rounds (IPC messages)",
            ),
            Metric(
                name="eps_slope",
                direction="min",
                description="least-squares slope of log(comparisons to eps) vs log(1/eps) over the levels reached (NaN below 3)",
            ),
            Metric(
                name="levels_reached",
                direction="max",
                description="how many of the 12 eps levels 10^-0.5 ... 10^-6 the iterates reached",
            ),
            *[
                Metric(
                    name=f"frac_to_eps{j:02d}",
                    direction="min",
                    description=f"comparisons to gap <= {e:.3g}, as a fraction of the budget (1 = not reached)",
                )
                for j, e in enumerate(EPS_LEVELS)
            ],
        ],
        primary="gap",
        normalization=Normalization(
            kind="log",
            zero=1.0,
            one=1e-6,
            description="log scale: 0 at the start x0 (gap 1), 1 at gap 1e-6",
        ),
        gap_reference=None,
        interactive=True,
        budgets={"smoke": 30.0, "standard": 120.0, "full": 1800.0},
    )
    template = _TEMPLATE
    catalog = CATALOG

    def spec(self, fields: dict[str, Any]) -> InstanceSpec:
        params = {
            **fields,
            "p": int(fields["p"]),
            "budget": BUDGETS[_tier_of(fields)],
            "tau": TAU[int(fields["p"])],
        }
        strong = "strongly-convex" if fields["fn"] != "quartic" else "convex"
        return InstanceSpec(
            id=self.catalog.form.format(**fields),
            params=params,
            tags=("generated", fields["fn"], f"p{fields['p']}", strong),
        )

    def generate(self, fields: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        prob = build(fields["fn"], fields["d"], float(fields["k"]), fields["seed"])
        p = int(fields["p"])
        tier = _tier_of(fields)
        coef = 1.0 / (4.0 * TAU[1]) if p == 1 else 1.0 / TAU[3] ** 3
        data = {
            "d": prob.d,
            "p": p,
            "budget": BUDGETS[tier],
            "max_rounds": MAX_ROUNDS[tier],
            "x0": np.zeros(prob.d),
            "radius": float(np.linalg.norm(prob.x_star)),
            "beta": prob.beta,
            "alpha": prob.alpha,
            "gap0": 1.0,
            "rho_coef": coef,
        }
        return data, {k: v for k, v in dataclasses.asdict(prob).items() if v is not None}

    def reference(
        self, fields: dict[str, Any], data: dict[str, Any], private: dict[str, Any]
    ) -> dict[str, Reference]:
        prob = Problem(**private)
        src = (
            "exact x* (constructed)"
            if prob.fn != "logreg"
            else "Newton's method to machine precision"
        )
        return {
            "optimal": Reference(value=0.0, source=f"f* = 0 by normalisation; {src}"),
            "start": Reference(
                value=float(prob.values(np.zeros(prob.d))),
                source="f(x0) at the public start x0 = 0",
            ),
        }

    def session(self, instance: Instance, seed: int) -> DuelSession:
        d = instance.data
        return DuelSession(
            Problem(**instance.private), int(d["p"]), int(d["budget"]), int(d["max_rounds"]), seed
        )

    def evaluate(self, instance: Instance, solution: Any) -> dict[str, float]:
        prob = Problem(**instance.private)
        if not isinstance(solution, dict) or "x" not in solution or solution.get("x") is None:
            raise InvalidSolution("the session ended without a final point: send {'done': x_hat}")
        x = as_float_array(
            solution["x"], (prob.d,), what=f"x_hat: a finite float64 array of shape ({prob.d},)"
        )
        used, budget = int(solution["used"]), int(instance.data["budget"])
        if used > budget:
            raise InvalidSolution(f"{used} comparisons used; the budget is {budget}")
        gap = float(prob.values(x))
        tu = np.asarray(solution["trace_used"], dtype=np.float64)
        tg = np.asarray(solution["trace_gap"], dtype=np.float64)
        # the final point counts at the final comparison count
        tu, tg = np.append(tu, used), np.append(tg, gap)
        out = {
            "gap": gap,
            "log10_gap": float(np.log10(max(gap, 1e-16))),
            "dist": float(np.linalg.norm(x - prob.x_star)),
            "best_reported_gap": float(tg.min()),
            "comparisons": float(used),
            "rounds": float(solution["rounds"]),
        }
        out.update(curve_metrics(tu, tg, budget))
        return out
