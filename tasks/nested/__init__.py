"""nested-expectation: estimate ``I = E_theta[ f( E_{X|theta}[ g(X, theta) ] ) ]`` through a budgeted sampling oracle.

Chen, Naslidnyk and Briol, "Nested Expectations with Kernel Quadrature" (ICML 2025).

The task owns the oracle. A method never sees ``g``, the maps from the base
variables to ``theta`` and ``X``, or the inner conditional expectation; it asks,
round by round, for

- ``outer`` draws: base points ``u_i`` of the outer variable (i.i.d. from the
  problem's public base law, ``normal``: N(0, I) or ``uniform``: U[0, 1]^d);
  ``theta_i`` is a fixed, secret function of ``u_i``;
- ``inner`` draws at an outer point ``i``: base points ``e_ij`` (i.i.d. from the
  inner base law) and the integrand values ``g(X_ij, theta_i)``, where
  ``X_ij`` is a secret function of ``(theta_i, e_ij)``.

The outer function ``f`` is public (:data:`F_FUNCS`). Every integrand value is
one unit of cost; the instance's budget is ``n * n`` values (nested Monte Carlo
with ``N = M = n``) and the oracle refuses any request beyond it, and any
outer request beyond ``n * n`` draws. The method ends with ``{"op": "estimate"}``.
The task scores ``|estimate - I|`` against the closed form (or a task-side
quadrature with its own error bound recorded), and records the cost that it
counted itself.

Problems (:data:`PROBLEMS`): ``gauss-poly``, ``gauss-exp`` (Gaussian nests with
closed forms), ``unif-poly1`` and ``unif-poly2`` (the paper's synthetic
experiment, Section 5, official ``toy.py``, d = 1 and 2), ``option`` (the
paper's butterfly-call risk example, official ``finance.py``; the inner
expectation is a Black-Scholes price; the truth by quadrature) and ``evppi``
(our health-economics toy: the expected value of perfect partial information
of a two-option decision, the nested part by quadrature). See
``tasks/nested/README.md``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import integrate
from scipy.stats import norm

from bench.instances import Catalog, CatalogTask, Choice, IdForm, Int, grid
from bench.registry import register_task
from bench.task import (
    Instance,
    InstanceSpec,
    InvalidSolution,
    Metric,
    Normalization,
    Paper,
    Reference,
    Session,
    TaskMeta,
)

__all__ = [
    "CATALOG",
    "F_FUNCS",
    "PROBLEMS",
    "NestedSession",
    "NestedTask",
    "Problem",
    "apply_f",
    "truth",
]

#: Public outer functions ``f``.
F_FUNCS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "square": lambda z: np.asarray(z, float) ** 2,
    "relu": lambda z: np.maximum(np.asarray(z, float), 0.0),
}

#: Hard cap on oracle rounds (a method that loops forever is stopped).
MAX_ROUNDS = 20_000


def apply_f(name: str, z: np.ndarray) -> np.ndarray:
    """The public outer function ``f`` named ``name`` applied elementwise."""
    return F_FUNCS[name](z)


@dataclass(frozen=True)
class Problem:
    """A nested expectation: base laws, secret maps and integrand, and its truth."""

    name: str
    outer_dim: int
    inner_dim: int
    outer_base: str  # "normal" or "uniform"
    inner_base: str
    f: str
    smooth: bool
    #: ``(u) -> theta`` with ``u`` of shape ``(k, outer_dim)``; secret.
    theta: Callable[[np.ndarray], np.ndarray]
    #: ``(theta (r, ...), e (r, inner_dim)) -> g`` of shape ``(r,)``; secret.
    g: Callable[[np.ndarray, np.ndarray], np.ndarray]
    description: str


# ----------------------------------------------------------------------------- problems

# option (the paper's Section 5 finance example; official finance.py constants)
S0, SIGMA, T_OUT, T_ALL, K1, K2, SHOCK = 100.0, 0.3, 1.0, 2.0, 50.0, 150.0, 0.2
KM = 0.5 * (K1 + K2)


def _psi(s: np.ndarray) -> np.ndarray:
    """Butterfly payoff: long calls at K1 and K2, short two at (K1 + K2) / 2."""
    return np.maximum(s - K1, 0) + np.maximum(s - K2, 0) - 2 * np.maximum(s - KM, 0)


def _option_theta(u: np.ndarray) -> np.ndarray:
    return S0 * np.exp(SIGMA * math.sqrt(T_OUT) * u[:, 0] - 0.5 * SIGMA**2 * T_OUT)


def _option_g(st: np.ndarray, e: np.ndarray) -> np.ndarray:
    tau = T_ALL - T_OUT
    sT = st * np.exp(SIGMA * math.sqrt(tau) * e[:, 0] - 0.5 * SIGMA**2 * tau)
    return _psi(sT) - _psi((1 + SHOCK) * sT)


def _bs_call(s: np.ndarray, k: float, tau: float) -> np.ndarray:
    """Black-Scholes call price with zero rate: ``E[(S_T - k)^+ | S_t = s]``."""
    v = SIGMA * math.sqrt(tau)
    d1 = (np.log(s / k) + 0.5 * v * v) / v
    return s * norm.cdf(d1) - k * norm.cdf(d1 - v)


def option_inner(st: np.ndarray) -> np.ndarray:
    """Closed-form inner expectation of the option problem (task side only)."""
    tau = T_ALL - T_OUT

    def bfly(s: np.ndarray) -> np.ndarray:
        return _bs_call(s, K1, tau) + _bs_call(s, K2, tau) - 2 * _bs_call(s, KM, tau)

    # psi((1+s) S_T) = (1+s) * butterfly of S_T at strikes K/(1+s)
    a = 1 + SHOCK
    shocked = a * (
        _bs_call(st, K1 / a, tau) + _bs_call(st, K2 / a, tau) - 2 * _bs_call(st, KM / a, tau)
    )
    return bfly(st) - shocked


# evppi (our toy): X1 = 0.6 theta + 0.8 e1, X2 = 0.5 + 0.4 theta + 0.6 e1 + 0.8 e2,
# g = X1 X2 - 0.6, so E[g | theta] = 0.24 theta^2 + 0.3 theta - 0.12 (cov(X1, X2 | theta) = 0.48).
def _evppi_g(th: np.ndarray, e: np.ndarray) -> np.ndarray:
    x1 = 0.6 * th + 0.8 * e[:, 0]
    x2 = 0.5 + 0.4 * th + 0.6 * e[:, 0] + 0.8 * e[:, 1]
    return x1 * x2 - 0.6


def evppi_inner(th: np.ndarray) -> np.ndarray:
    """Closed-form inner expectation of the evppi toy (task side only)."""
    return 0.24 * th**2 + 0.3 * th - 0.12


PROBLEMS: dict[str, Problem] = {
    "gauss-poly": Problem(
        "gauss-poly",
        1,
        1,
        "normal",
        "normal",
        "square",
        True,
        theta=lambda u: u[:, 0],
        g=lambda th, e: (th + e[:, 0]) ** 2 + th * (th + e[:, 0]),
        description="theta ~ N(0,1), X|theta ~ N(theta,1), g = X^2 + theta X, f(z) = z^2; I = 17",
    ),
    "gauss-exp": Problem(
        "gauss-exp",
        1,
        1,
        "normal",
        "normal",
        "square",
        True,
        theta=lambda u: 0.5 * u[:, 0],
        g=lambda th, e: np.exp(th + 0.5 * e[:, 0]),
        description="theta ~ N(0,1/4), X|theta ~ N(theta,1/4), g = exp(X), f(z) = z^2; I = exp(3/4)",
    ),
    "unif-poly1": Problem(
        "unif-poly1",
        1,
        1,
        "uniform",
        "uniform",
        "square",
        True,
        theta=lambda u: u,
        g=lambda th, e: np.sum(e**2.5, axis=1) + np.sum(th**2.5, axis=1),
        description="paper's synthetic example, d = 1: theta, X ~ U[0,1], g = X^2.5 + theta^2.5, f(z) = z^2",
    ),
    "unif-poly2": Problem(
        "unif-poly2",
        2,
        2,
        "uniform",
        "uniform",
        "square",
        True,
        theta=lambda u: u,
        g=lambda th, e: np.sum(e**2.5, axis=1) + np.sum(th**2.5, axis=1),
        description="paper's synthetic example, d = 2: theta, X ~ U[0,1]^2, g = sum X^2.5 + sum theta^2.5, f(z) = z^2",
    ),
    "option": Problem(
        "option",
        1,
        1,
        "normal",
        "normal",
        "relu",
        False,
        theta=_option_theta,
        g=_option_g,
        description="paper's finance example: loss of a butterfly call under a 20% shock, f = max(., 0)",
    ),
    "evppi": Problem(
        "evppi",
        1,
        2,
        "normal",
        "normal",
        "relu",
        False,
        theta=lambda u: u[:, 0],
        g=_evppi_g,
        description="two-option decision toy: E_theta[max(E[NB_diff | theta], 0)] (the nested part of EVPPI)",
    ),
}


def _relu_quad(h: Callable[[np.ndarray], np.ndarray]) -> tuple[float, float]:
    """``E[max(h(Z), 0)]`` for ``Z ~ N(0, 1)`` by adaptive quadrature, with its error estimate."""

    def integrand(z: float) -> float:
        return float(max(h(np.array([z]))[0], 0.0) * norm.pdf(z))

    val, err = integrate.quad(integrand, -12.0, 12.0, limit=400, epsabs=1e-13, epsrel=1e-12)
    return float(val), float(err) + 2 * float(norm.sf(12.0)) * 1e3


def truth(problem: str) -> tuple[float, float, str]:
    """``(I, error bound, how)`` for a problem."""
    if problem == "gauss-poly":
        # E[g|theta] = 2 theta^2 + 1; E[(2 theta^2 + 1)^2] = 4*3 + 4 + 1
        return 17.0, 0.0, "closed form: E[(2 theta^2 + 1)^2] = 17"
    if problem == "gauss-exp":
        # E[g|theta] = exp(theta + 1/8); E[exp(2 theta + 1/4)] = exp(1/4 + 1/2)
        return math.exp(0.75), 0.0, "closed form: E[exp(2 theta + 1/4)] = exp(3/4)"
    if problem in ("unif-poly1", "unif-poly2"):
        d = 1 if problem == "unif-poly1" else 2
        v = 12.0 / 49.0 * d * d + d / 6.0 + 4.0 / 49.0 * d * (d - 1)
        return v, 0.0, "closed form: 12/49 d^2 + d/6 + 4/49 d(d-1) (official toy.py)"
    if problem == "option":
        v, err = _relu_quad(lambda z: option_inner(_option_theta(z[:, None])))
        return v, err, "Black-Scholes inner price, outer integral by scipy quad on [-12, 12]"
    if problem == "evppi":
        v, err = _relu_quad(evppi_inner)
        return v, err, "closed-form inner expectation, outer integral by scipy quad on [-12, 12]"
    raise ValueError(f"unknown problem {problem!r}; known: {sorted(PROBLEMS)}")


# ----------------------------------------------------------------------------- catalog

#: A job runs the budgets ``n = nmax / 8, nmax / 4, nmax / 2, nmax`` in turn.
STAGES = 4


def stage_ns(nmax: int) -> list[int]:
    """The per-stage ``n`` of an instance (``N = M = n``, budget ``n^2``)."""
    return [nmax >> (STAGES - 1 - k) for k in range(STAGES)]


def _ids(problems, nmaxes):
    return grid(problem=problems, nmax=nmaxes)


def _check(fields: dict[str, Any]) -> None:
    if fields["nmax"] % (1 << (STAGES - 1)) or fields["nmax"] < 2 << (STAGES - 1):
        raise ValueError(
            f"{fields}: nmax must be a multiple of {1 << (STAGES - 1)} and >= {2 << (STAGES - 1)}"
        )


#: Ids ``<problem>-n<nmax>``: the job runs n = nmax/8 .. nmax.
CATALOG = Catalog(
    IdForm(
        "nested-expectation",
        "{problem}-n{nmax}",
        example="gauss-poly-n64",
        problem=Choice(tuple(PROBLEMS), what="problem"),
        nmax=Int(label="largest N = M", minimum=16),
    ),
    {
        "smoke": _ids(("gauss-poly", "option"), (16,)),
        "standard": _ids(tuple(PROBLEMS), (128,)),
        "full": _ids(tuple(PROBLEMS), (256,)),
    },
    validate=_check,
)


# ----------------------------------------------------------------------------- the oracle


def _draw(base: str, rng: np.random.Generator, shape: tuple[int, int]) -> np.ndarray:
    if base == "normal":
        return rng.standard_normal(shape)
    return rng.random(shape)


class NestedSession(Session):
    """The oracle of one job: draws every sample, evaluates ``g``, counts every value.

    A job runs the budgets ``ns`` in turn (stages); each stage has a fresh
    budget of ``n * n`` integrand values and fresh, independent draws, and ends
    with the method's estimate.
    """

    def __init__(self, problem: Problem, ns: list[int], seed: int) -> None:
        self.p = problem
        self.ns = [int(v) for v in ns]
        self.seed = int(seed)
        self.stage = 0
        self.estimates: list[float] = []
        self.costs: list[int] = []
        self.outers: list[int] = []
        self.round = 0
        self._start()

    def _start(self) -> None:
        n = self.ns[self.stage]
        self.n = n
        self.budget = n * n
        self.rng = np.random.default_rng(
            [self.seed, self.stage, n, list(PROBLEMS).index(self.p.name)]
        )
        self.u = np.zeros((0, self.p.outer_dim))
        self.theta: np.ndarray | None = None
        self.used = 0
        self.reply: dict[str, Any] = {}

    def _public(self) -> dict[str, Any]:
        p = self.p
        return {
            "outer_dim": p.outer_dim,
            "inner_dim": p.inner_dim,
            "outer_base": p.outer_base,
            "inner_base": p.inner_base,
            "f": p.f,
        }

    def state(self) -> dict[str, Any] | None:
        if self.stage >= len(self.ns):
            return None
        if self.round >= MAX_ROUNDS:
            raise InvalidSolution(f"no estimate after {MAX_ROUNDS} oracle rounds")
        return {
            "stage": self.stage,
            "round": self.round,
            "n": self.n,
            "budget": self.budget,
            "used": self.used,
            "outer_drawn": int(self.u.shape[0]),
            "problem": self._public(),
            "reply": self.reply,
        }

    def _outer(self, count: Any) -> dict[str, Any]:
        k = _as_count(count, "outer 'count'")
        if self.u.shape[0] + k > self.budget:
            raise InvalidSolution(
                f"stage {self.stage}: outer request of {k} draws exceeds the cap of {self.budget} outer draws "
                f"({self.u.shape[0]} drawn)"
            )
        u = _draw(self.p.outer_base, self.rng, (k, self.p.outer_dim))
        self.u = np.concatenate([self.u, u])
        self.theta = self.p.theta(self.u)
        return {"op": "outer", "u": u}

    def _inner(self, index: Any, count: Any) -> dict[str, Any]:
        idx = np.asarray(index)
        cnt = np.asarray(count)
        if (
            idx.ndim != 1
            or cnt.shape != idx.shape
            or idx.dtype.kind not in "iu"
            or cnt.dtype.kind not in "iu"
        ):
            raise InvalidSolution(
                "inner 'index' and 'count' must be integer arrays of the same 1-D shape"
            )
        if idx.size and (idx.min() < 0 or idx.max() >= self.u.shape[0]):
            raise InvalidSolution(f"inner 'index' outside the {self.u.shape[0]} outer draws so far")
        if cnt.size and cnt.min() < 1:
            raise InvalidSolution("inner 'count' entries must be >= 1")
        total = int(cnt.sum())
        if self.used + total > self.budget:
            raise InvalidSolution(
                f"stage {self.stage}: inner request of {total} integrand values exceeds the budget: "
                f"{self.used} used of {self.budget}"
            )
        owner = np.repeat(idx.astype(np.int64), cnt.astype(np.int64))
        e = _draw(self.p.inner_base, self.rng, (total, self.p.inner_dim))
        assert self.theta is not None or total == 0
        g = self.p.g(self.theta[owner], e) if total else np.zeros(0)
        self.used += total
        return {"op": "inner", "owner": owner, "e": e, "g": np.asarray(g, float)}

    def apply(self, action: Any) -> None:
        self.round += 1
        if not isinstance(action, dict) or action.get("op") not in ("outer", "inner", "estimate"):
            raise InvalidSolution(
                "an action is a dict with 'op' in {'outer', 'inner', 'estimate'}; "
                f"got {type(action).__name__}: {action!r}"[:300]
            )
        op = action["op"]
        if op == "outer":
            self.reply = self._outer(action.get("count"))
        elif op == "inner":
            self.reply = self._inner(action.get("index"), action.get("count"))
        else:
            v = action.get("value")
            try:
                v = float(v)
            except (TypeError, ValueError):
                raise InvalidSolution(f"'estimate' needs a float 'value', got {v!r}") from None
            if not math.isfinite(v):
                raise InvalidSolution(f"stage {self.stage}: the estimate is not finite: {v!r}")
            self.estimates.append(v)
            self.costs.append(int(self.used))
            self.outers.append(int(self.u.shape[0]))
            self.stage += 1
            if self.stage < len(self.ns):
                self._start()

    def solution(self) -> dict[str, Any]:
        """Made by the oracle (trusted): the estimates and the counts it kept, per stage."""
        return {
            "n": np.asarray(self.ns, dtype=np.int64),
            "estimate": np.asarray(self.estimates, dtype=float),
            "cost": np.asarray(self.costs, dtype=np.int64),
            "outer": np.asarray(self.outers, dtype=np.int64),
        }


def _as_count(v: Any, what: str) -> int:
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)) or int(v) < 1:
        raise InvalidSolution(f"{what} must be a positive integer, got {v!r}")
    return int(v)


_TEMPLATE = '''\
"""{name}: an estimator for the ``nested-expectation`` task.

Deviations
----------
List every departure from the paper or its official code, and why.
"""

from __future__ import annotations

import numpy as np

from bench import method
from tasks.nested import apply_f


@method(
    name="{name}",
    kind="{kind}",
    tasks=["nested-expectation"],
    reference="",
    version="1",
    params={{}},
    deterministic=True,
)
class Estimator:
    """Nested Monte Carlo with N = M = n as a starting point."""

    def __init__(self, instance, *, seed: int, budget: float):
        self.step = 0

    def select(self, state):
        """One oracle request per call (see tasks/nested/README.md)."""
        n, reply = state["n"], state["reply"]
        if state["round"] == 0 or not reply:  # a new stage (budget n * n) starts with an empty reply
            self.step = 0
        self.step += 1
        if self.step == 1:
            return {{"op": "outer", "count": n}}
        if self.step == 2:
            return {{"op": "inner", "index": np.arange(n), "count": np.full(n, n)}}
        inner = np.bincount(reply["owner"], weights=reply["g"], minlength=n) / n
        return {{"op": "estimate", "value": float(np.mean(apply_f(state["problem"]["f"], inner)))}}
'''


def stage_rate(err: np.ndarray, cost: np.ndarray) -> float:
    """Least-squares slope of ``log10 |error|`` (floored at 1e-16) on ``log10 cost`` over one run's stages.

    The mean of these per-run slopes over runs with the same stage costs equals
    the pooled fit over all their (cost, error) points, the fit of
    ``scripts/nested/plots.py``. NaN when fewer than two stages have a positive cost.
    """
    ok = np.asarray(cost, dtype=float) > 0
    if int(ok.sum()) < 2:
        return math.nan
    x = np.log10(np.asarray(cost, dtype=float)[ok])
    y = np.log10(np.maximum(np.asarray(err, dtype=float)[ok], 1e-16))
    dx = x - x.mean()
    sxx = float(dx @ dx)
    return float(dx @ (y - y.mean()) / sxx) if sxx > 0 else math.nan


@register_task
class NestedTask(CatalogTask):
    """Nested expectations through a budgeted, counting sampling oracle.

    The solution is made by the oracle (the session): the method's estimate
    and the number of integrand values and outer draws the oracle counted.
    """

    meta = TaskMeta(
        name="nested-expectation",
        version="2",  # 2: the per-run rate metric (tasks/nested/README.md, versions)
        family="nested",
        area="numerical integration",
        paper=Paper(
            title="Nested Expectations with Kernel Quadrature",
            authors=["Zonghao Chen", "Masha Naslidnyk", "François-Xavier Briol"],
            venue="ICML 2025",
        ),
        description=(
            "Estimate E_theta[f(E_{X|theta}[g(X, theta)])] from at most n^2 integrand values drawn "
            "through a counting oracle (Gaussian, uniform, option-pricing and EVPPI nests with known truth)."
        ),
        metrics=[
            Metric(
                name="abs_err",
                direction="min",
                description="|estimate - I| at the largest budget, I the task's truth",
            ),
            Metric(name="rel_err", direction="min", description="|estimate - I| / |I|"),
            Metric(
                name="log10_err",
                direction="min",
                description="log10 |estimate - I| (floored at 1e-16)",
            ),
            Metric(
                name="cost",
                direction="min",
                description="integrand values counted by the oracle at the largest budget",
            ),
            Metric(
                name="outer",
                direction="min",
                description="outer draws counted by the oracle at the largest budget",
            ),
            Metric(
                name="estimate",
                direction="max",
                description="the method's estimate of I at the largest budget",
            ),
            Metric(
                name="rate",
                direction="min",
                description="least-squares slope of log10 |estimate - I| on log10 cost over the stages (steeper is better)",
            ),
        ]
        + [
            Metric(
                name=f"err{k:02d}",
                direction="min",
                description=f"|estimate - I| at stage {k} (n = nmax / {1 << (STAGES - 1 - k)})",
            )
            for k in range(STAGES)
        ]
        + [
            Metric(
                name=f"nlerr{k:02d}",
                direction="max",
                description=f"-log10 |estimate - I| at stage {k}",
            )
            for k in range(STAGES)
        ]
        + [
            Metric(
                name=f"cost{k:02d}",
                direction="min",
                description=f"integrand values counted at stage {k}",
            )
            for k in range(STAGES)
        ],
        primary="rel_err",
        normalization=Normalization(
            kind="log",
            zero=1.0,
            one=1e-6,
            description="0 for a relative error of 1, 1 for a relative error of 1e-6 (log scale)",
        ),
        budgets={"smoke": 30.0, "standard": 120.0, "full": 600.0},
    )
    template = _TEMPLATE
    catalog = CATALOG

    def spec(self, fields: dict[str, Any]) -> InstanceSpec:
        p = PROBLEMS[fields["problem"]]
        params = dict(fields)
        params.update(
            ns=",".join(map(str, stage_ns(fields["nmax"]))),
            outer_dim=p.outer_dim,
            inner_dim=p.inner_dim,
            f=p.f,
        )
        return InstanceSpec(
            id=CATALOG.form.format(**fields),
            params=params,
            tags=("generated", "smooth" if p.smooth else "nonsmooth", p.outer_base),
        )

    def generate(self, fields: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """``data``: the public description; the problem (maps, integrand) stays private."""
        p = PROBLEMS[fields["problem"]]
        data = {
            "ns": np.asarray(stage_ns(fields["nmax"]), dtype=np.int64),
            "outer_dim": p.outer_dim,
            "inner_dim": p.inner_dim,
            "outer_base": p.outer_base,
            "inner_base": p.inner_base,
            "f": p.f,
        }
        return data, {"problem": p.name}

    def reference(
        self, fields: dict[str, Any], data: dict[str, Any], private: dict[str, Any]
    ) -> dict[str, Reference]:
        v, err, how = truth(fields["problem"])
        return {
            "truth": Reference(value=v, source=how, note=f"error bound {err:.1e}"),
            "truth_error": Reference(
                value=err, source="error bound of the truth (0 for closed forms)"
            ),
        }

    def session(self, instance: Instance, seed: int) -> NestedSession:
        return NestedSession(PROBLEMS[instance.private["problem"]], list(instance.data["ns"]), seed)

    def scaffold(self, name: str, kind: str) -> str:
        from bench.scaffold import NAME_RE

        if not NAME_RE.match(name):
            raise ValueError(f"method name {name!r} must be lower case letters, digits, '-' or '_'")
        if kind not in ("method", "baseline"):
            raise ValueError(f"--kind must be 'method' or 'baseline', got {kind!r}")
        return _TEMPLATE.format(name=name, kind=kind)

    def evaluate(self, instance: Instance, solution: Any) -> dict[str, float]:
        """Error of the oracle-made solution against the truth.

        Raises
        ------
        InvalidSolution
            Unless ``solution`` is the oracle's dict with a finite estimate and counts within budget.
        """
        ns = [int(v) for v in instance.data["ns"]]
        if not isinstance(solution, dict) or not {"estimate", "cost", "outer"} <= set(solution):
            raise InvalidSolution(
                "the solution is the oracle's dict with 'estimate', 'cost' and 'outer'"
            )
        est = np.asarray(solution["estimate"], dtype=float).ravel()
        cost = np.asarray(solution["cost"]).ravel()
        outer = np.asarray(solution["outer"]).ravel()
        if est.shape != (len(ns),) or cost.shape != est.shape or outer.shape != est.shape:
            raise InvalidSolution(
                f"one estimate, cost and outer count per stage ({len(ns)} stages) needed"
            )
        if not np.all(np.isfinite(est)):
            raise InvalidSolution(f"non-finite estimate(s): {est.tolist()}")
        for k, n in enumerate(ns):
            if not (0 <= cost[k] <= n * n and 0 <= outer[k] <= n * n):
                raise InvalidSolution(
                    f"stage {k}: counts (cost {cost[k]}, outer {outer[k]}) outside the budget {n * n}"
                )
        tv = instance.references["truth"].value
        err = np.abs(est - tv)
        out: dict[str, float] = {
            "abs_err": float(err[-1]),
            "rel_err": float(err[-1] / abs(tv)),
            "log10_err": float(math.log10(max(err[-1], 1e-16))),
            "cost": float(cost[-1]),
            "outer": float(outer[-1]),
            "estimate": float(est[-1]),
        }
        for k in range(len(ns)):
            out[f"err{k:02d}"] = float(err[k])
            out[f"nlerr{k:02d}"] = float(-math.log10(max(err[k], 1e-16)))
            out[f"cost{k:02d}"] = float(cost[k])
        out["rate"] = stage_rate(err, cost)
        return out
