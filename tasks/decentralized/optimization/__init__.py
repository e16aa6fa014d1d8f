"""decentralized-optimization: ridge and l2-logistic regression split over a graph (SPDO).

``n`` nodes each hold ``m`` samples of a regression problem; the goal is the
minimiser of ``f(x) = (1/n) sum_i f_i(x)``. How similar the local functions
are is set by the knob ``delta``: node ``i``'s features are ``Z_i (I + delta
R_i)`` (a feature shift; ``R_i`` symmetric with spectral norm 1) and its
labels come from the model ``x* + delta v_i`` (a label-model shift). The
measured Hessian dissimilarity ``max_i ||H_i - H||_2`` of the ridge instances
is recorded as a parameter.

Methods run inside the trusted gossip simulator (:mod:`tasks.decentralized.gossip`).
Their local oracles are

``grad``
    ``x -> grad f_i(x_i)`` at every node (one gradient call per node);
``prox``
    with ``x = v``, ``shift = g`` and a step ``eta``:
    ``argmin_y f_i(y) - <g_i, y> + ||y - v_i||^2 / (2 eta)``, solved exactly
    here (one prox call per node; the exact-prox baselines use it).

A method ``report``-s its node iterates; the task records ``f(mean x) - f*``
and the consensus error at each report, with the counters at that moment,
and reads off the communication rounds and the local gradient calls until
``f(mean x) - f* <= eps`` for ``eps`` in ``{1e-4, 1e-8}``. ``f*`` is computed
here: exactly for ridge, with scipy's L-BFGS and a Newton polish for logistic.
See ``tasks/decentralized/optimization/README.md`` (and ``tasks/decentralized/README.md`` for the shared gossip engine).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy.optimize import minimize

from bench.instances import Catalog, CatalogTask, Choice, Float, IdForm, Int, grid
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
from tasks.decentralized.gossip import (
    GossipSession,
    Simulator,
    check_rows,
    make_graph,
    metropolis,
    node_program_source,
    public_graph_data,
)

__all__ = ["CATALOG", "LOSSES", "EPSILONS", "DecentralizedOptimization", "generate", "objective", "optimum", "Problem"]

LOSSES = ("ridge", "logistic")
#: Targets on ``f(mean x) - f*``.
EPSILONS = (1e-4, 1e-8)
#: Samples per node, and the l2 weight of every local function.
SAMPLES = 500
LAMBDA = 1e-3
#: Actions per round allowed (local steps between rounds included).
STEPS_PER_ROUND = 64


def _check(fields: dict[str, Any]) -> None:
    if fields["graph"] == "torus" and math.isqrt(fields["n"]) ** 2 != fields["n"]:
        raise ValueError(f"{fields}: a torus needs a square number of nodes")


CATALOG = Catalog(
    IdForm(
        "decentralized-optimization",
        "{loss}-{graph}-n{n}-d{d}-delta{delta}-r{rounds}-s{seed}",
        example="ridge-ring-n16-d10-delta0.1-r400-s0",
        loss=Choice(LOSSES, what="loss"),
        graph=Choice(("ring", "torus", "er", "chords"), what="graph"),
        n=Int(label="nodes", minimum=3),
        d=Int(label="dimension", minimum=1),
        delta=Float(label="similarity knob"),
        rounds=Int(label="round budget", minimum=1),
        seed=Int(),
    ),
    {
        "smoke": grid(loss=("ridge",), graph=("ring",), n=(16,), d=(10,), delta=(0.1,), rounds=(400,), seed=(0,))
        + grid(loss=("logistic",), graph=("torus",), n=(16,), d=(10,), delta=(0.1,), rounds=(400,), seed=(0,)),
        "standard": grid(
            loss=LOSSES, graph=("ring", "torus", "er"), n=(16,), d=(20,), delta=(0.01, 0.1, 1.0), rounds=(1000,), seed=(0, 1, 2)
        ),
        "full": grid(
            loss=LOSSES, graph=("ring", "torus", "er"), n=(16, 64), d=(20, 50), delta=(0.0, 0.01, 0.1, 0.3, 1.0), rounds=(5000,), seed=(0, 1, 2, 3, 4)
        ),
    },
    validate=_check,
)


# ----------------------------------------------------------------------------- the problem


class Problem:
    """Node-local data and the pooled objective (trusted side only)."""

    def __init__(self, loss: str, A: np.ndarray, b: np.ndarray, lam: float = LAMBDA) -> None:
        self.loss, self.A, self.b, self.lam = loss, A, b, lam  # A: (n, m, d), b: (n, m)
        self.n, self.m, self.d = A.shape

    def local_grad(self, X: np.ndarray) -> np.ndarray:
        """``grad f_i(x_i)`` for every node, ``(n, d)``."""
        z = np.einsum("imd,id->im", self.A, X)
        if self.loss == "ridge":
            r = (z - self.b) / self.m
        else:
            r = -self.b * _sigmoid(-self.b * z) / self.m
        return np.einsum("imd,im->id", self.A, r) + self.lam * X

    def f(self, x: np.ndarray) -> float:
        """``f(x) = (1/n) sum_i f_i(x)`` at one point ``x`` of shape ``(d,)``."""
        z = self.A @ x  # (n, m)
        if self.loss == "ridge":
            val = 0.5 * np.mean((z - self.b) ** 2)
        else:
            val = np.mean(np.logaddexp(0.0, -self.b * z))
        return float(val + 0.5 * self.lam * x @ x)

    def grad(self, x: np.ndarray) -> np.ndarray:
        """Gradient of the pooled objective at ``x``."""
        return self.local_grad(np.broadcast_to(x, (self.n, self.d)).copy()).mean(axis=0)

    def hessian(self, x: np.ndarray, i: int | None = None) -> np.ndarray:
        """Hessian of ``f_i`` (or of ``f`` for ``i=None``) at ``x``."""
        A = self.A.reshape(-1, self.d) if i is None else self.A[i]
        if self.loss == "ridge":
            w = np.ones(A.shape[0])
        else:
            b = self.b.reshape(-1) if i is None else self.b[i]
            s = _sigmoid(b * (A @ x))
            w = s * (1 - s)
        return (A * w[:, None]).T @ A / A.shape[0] + self.lam * np.eye(self.d)

    def prox(self, V: np.ndarray, G: np.ndarray, eta: float) -> np.ndarray:
        """``argmin_y f_i(y) - <g_i, y> + ||y - v_i||^2/(2 eta)`` at every node (exact)."""
        out = np.empty_like(V)
        for i in range(self.n):
            if self.loss == "ridge":
                H = self.A[i].T @ self.A[i] / self.m + (self.lam + 1.0 / eta) * np.eye(self.d)
                rhs = self.A[i].T @ self.b[i] / self.m + G[i] + V[i] / eta
                out[i] = np.linalg.solve(H, rhs)
            else:
                y = V[i].copy()
                for _ in range(100):
                    g = self.local_grad_one(i, y) - G[i] + (y - V[i]) / eta
                    if np.linalg.norm(g) < 1e-13:
                        break
                    y -= np.linalg.solve(self.hessian(y, i) + np.eye(self.d) / eta, g)
                out[i] = y
        return out

    def local_grad_one(self, i: int, y: np.ndarray) -> np.ndarray:
        z = self.A[i] @ y
        r = -self.b[i] * _sigmoid(-self.b[i] * z) / self.m
        return self.A[i].T @ r + self.lam * y


def _sigmoid(t: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * t))


def generate(loss: str, n: int, d: int, delta: float, seed: int, m: int = SAMPLES) -> tuple[np.ndarray, np.ndarray]:
    """Node data ``A (n, m, d)``, ``b (n, m)`` with similarity knob ``delta``.

    Features: ``Z_i S (I + delta R_i)`` with ``Z_i`` standard normal, ``S =
    diag(1, 1/2, ..., 1/d)`` (a decaying spectrum, so that the pooled problem
    is ill-conditioned: ``L / mu`` in the hundreds) and ``R_i`` a random
    symmetric matrix scaled to spectral norm 1. Model:
    ``x_i = x* + delta v_i`` with ``x*, v_i ~ N(0, I)``. Ridge labels
    ``A_i x_i + 0.1 e``; logistic labels ``+-1`` with ``P(+1) = sigmoid(a x_i)``.
    The stream is ``default_rng([seed, n, d, round(1e6 delta), loss index])``.
    """
    rng = np.random.default_rng([seed, n, d, round(1e6 * delta), LOSSES.index(loss)])
    x_star = rng.standard_normal(d)
    scales = 1.0 / np.arange(1, d + 1)
    A = np.empty((n, m, d))
    b = np.empty((n, m))
    for i in range(n):
        R = rng.standard_normal((d, d))
        R = (R + R.T) / 2
        R /= np.abs(np.linalg.eigvalsh(R)).max()
        A[i] = rng.standard_normal((m, d)) @ (scales[:, None] * (np.eye(d) + delta * R))
        xi = x_star + delta * rng.standard_normal(d)
        z = A[i] @ xi
        if loss == "ridge":
            b[i] = z + 0.1 * rng.standard_normal(m)
        else:
            b[i] = np.where(rng.random(m) < _sigmoid(z), 1.0, -1.0)
    return A, b


def optimum(prob: Problem) -> tuple[np.ndarray, float, str]:
    """``(x*, f*, source)`` of the pooled objective, on the trusted side."""
    if prob.loss == "ridge":
        H = prob.hessian(np.zeros(prob.d))
        x = np.linalg.solve(H, prob.A.reshape(-1, prob.d).T @ prob.b.reshape(-1) / (prob.n * prob.m))
        source = "exact: normal equations of the pooled ridge objective (numpy.linalg.solve)"
    else:
        res = minimize(prob.f, np.zeros(prob.d), jac=prob.grad, method="L-BFGS-B", options={"gtol": 1e-12, "ftol": 0, "maxiter": 10000})
        x = res.x
        for _ in range(20):  # Newton polish to machine precision
            g = prob.grad(x)
            if np.linalg.norm(g) < 1e-14:
                break
            x = x - np.linalg.solve(prob.hessian(x), g)
        source = "scipy L-BFGS-B (gtol 1e-12) on the pooled data, then Newton steps to ||grad|| < 1e-14"
    return x, prob.f(x), source


def objective(prob: Problem, X: np.ndarray, f_star: float) -> tuple[float, float]:
    """``(f(mean x) - f*, consensus error (1/n) sum ||x_i - mean x||^2)`` of node rows ``X``."""
    with np.errstate(over="ignore", invalid="ignore"):
        xbar = X.mean(axis=0)
        return prob.f(xbar) - f_star, float(np.mean(np.sum((X - xbar) ** 2, axis=1)))


# ----------------------------------------------------------------------------- the protocol


class OptimizationSession(GossipSession):
    """Local oracles ``grad`` and ``prox``; each report is scored as ``f(mean x) - f*``."""

    oracles = ("grad", "prox")

    def __init__(self, sim: Simulator, prob: Problem, f_star: float, max_rounds: int) -> None:
        super().__init__(sim, max_rounds=max_rounds, max_steps=max_rounds * STEPS_PER_ROUND, answer_width=prob.d)
        self.prob, self.f_star = prob, f_star

    def call_oracle(self, name: str, x: np.ndarray | None, action: dict[str, Any]) -> np.ndarray:
        what = f"action {self.sim.counters.steps} (oracle {name})"
        if x is None or x.shape[1] != self.prob.d:
            raise InvalidSolution(f"{what}: field 'x' must be ({self.n}, {self.prob.d})")
        self.sim.oracle(name)
        if name == "grad":
            return self.prob.local_grad(x)
        g = check_rows(action.get("shift", np.zeros_like(x)), self.n, f"{what}: field 'shift'", self.prob.d)
        eta = action.get("eta")
        if not isinstance(eta, (int, float)) or not math.isfinite(eta) or eta <= 0:
            raise InvalidSolution(f"{what}: field 'eta' must be a positive finite number, got {eta!r}")
        return self.prob.prox(x, g, float(eta))

    def score_report(self, report: np.ndarray) -> dict[str, float]:
        gap, cons = objective(self.prob, report, self.f_star)
        return {"gap": gap, "consensus": cons}


_TEMPLATE = '''\
    """Decentralized gradient descent: gradient step, then one gossip round (replace)."""

    def program(self):
        x = np.zeros((self.n, int(self.data["dim"])))
        step = 1.0 / float(self.data["smoothness"])
        while self.rounds_left > 0:
            g = yield oracle("grad", x)
            x = yield mix(x - step * g, report=x)
        return x
'''


@register_task
class DecentralizedOptimization(CatalogTask):
    """Rounds and local gradients to reach ``f(mean x) - f* <= eps``, counted by the simulator.

    The solution is what :class:`OptimizationSession` builds: the final node
    iterates ``x`` (``(n, d)``), the counters and the trace of reports.
    """

    meta = TaskMeta(
        name="decentralized-optimization",
        version="1",
        family="decentralized",
        area="distributed optimisation",
        paper=Paper(
            title="Exploiting Similarity for Computation and Communication-Efficient Decentralized Optimization (SPDO)",
            authors=["Yuki Takezawa", "Xiaowen Jiang", "Anton Rodomanov", "Sebastian U. Stich"],
            arxiv="2506.05791",
            venue="ICML 2025",
        ),
        description=(
            "Ridge and l2-logistic regression split over a graph with a similarity knob; communication rounds "
            "and local gradient calls until f(mean x) - f* <= 1e-8, counted by the trusted gossip simulator."
        ),
        metrics=[
            Metric(name="rounds_eps8", direction="min", unit="rounds", description="communication rounds until f(mean x) - f* <= 1e-8 (the round budget if never)"),
            Metric(name="rounds_eps4", direction="min", unit="rounds", description="communication rounds until f(mean x) - f* <= 1e-4 (the round budget if never)"),
            Metric(name="log2_rounds_eps8", direction="min", description="log2 of rounds_eps8: a paired difference of -1 is 2x fewer rounds"),
            Metric(name="grads_eps8", direction="min", unit="calls", description="local gradient calls per node until 1e-8 (all calls made if never)"),
            Metric(name="grads_eps4", direction="min", unit="calls", description="local gradient calls per node until 1e-4 (all calls made if never)"),
            Metric(name="reached_eps8", direction="max", description="1 if some report reached 1e-8"),
            Metric(name="reached_eps4", direction="max", description="1 if some report reached 1e-4"),
            Metric(name="gap_final", direction="min", description="f(mean x) - f* of the answer"),
            Metric(name="consensus_final", direction="min", description="(1/n) sum ||x_i - mean x||^2 of the answer"),
            Metric(name="rounds", direction="min", unit="rounds", description="communication rounds used in all"),
            Metric(name="grads", direction="min", unit="calls", description="local gradient calls per node in all"),
            Metric(name="prox_calls", direction="min", unit="calls", description="exact local prox calls per node in all"),
        ],
        primary="rounds_eps8",
        normalization=Normalization(kind="log", zero="budget", one=1.0, description="log-scaled: 0 at the round budget, 1 at one round"),
        interactive=True,
        budgets={"smoke": 20.0, "standard": 120.0, "full": 900.0},
    )
    template = _TEMPLATE
    catalog = CATALOG
    reference_cache = True

    def spec(self, fields: dict[str, Any]) -> InstanceSpec:
        params = {**fields, "samples_per_node": SAMPLES, "lambda": LAMBDA}
        return InstanceSpec(id=CATALOG.form.format(**fields), params=params, tags=("generated", fields["loss"], fields["graph"]))

    def generate(self, fields: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """Public: the graph as each node knows it, ``dim``, ``smoothness`` (an upper bound on
        every ``L_i``), ``strong_convexity`` (``lambda``); private: the node data."""
        g = make_graph(fields["graph"], fields["n"], fields["seed"])
        W = metropolis(g)
        A, b = generate(fields["loss"], fields["n"], fields["d"], fields["delta"], fields["seed"])
        scale = 1.0 if fields["loss"] == "ridge" else 0.25
        L = max(float(np.linalg.eigvalsh(A[i].T @ A[i] / A.shape[1]).max()) for i in range(A.shape[0])) * scale + LAMBDA
        data = {
            **public_graph_data(g, W),
            "dim": fields["d"],
            "loss": fields["loss"],
            "smoothness": L,
            "strong_convexity": LAMBDA,
            "max_rounds": fields["rounds"],
        }
        return data, {"A": A, "b": b}

    def reference(self, fields: dict[str, Any], data: dict[str, Any], private: dict[str, Any]) -> dict[str, Reference]:
        prob = Problem(fields["loss"], private["A"], private["b"])
        x, f_star, source = optimum(prob)
        H = prob.hessian(x)
        dis = max(float(np.abs(np.linalg.eigvalsh(prob.hessian(x, i) - H)).max()) for i in range(prob.n))
        return {
            "f_star": Reference(value=f_star, source=source),
            "hessian_dissimilarity": Reference(value=dis, source="max_i ||H_i(x*) - H(x*)||_2, computed here"),
            "budget": Reference(value=float(fields["rounds"]), source="the instance's round budget"),
        }

    def session(self, instance: Instance, seed: int) -> Session:
        fields = CATALOG.form.parse(instance.id)
        g = make_graph(fields["graph"], fields["n"], fields["seed"])
        prob = Problem(fields["loss"], instance.private["A"], instance.private["b"])
        return OptimizationSession(Simulator(g, metropolis(g)), prob, instance.references["f_star"].value, fields["rounds"])

    def scaffold(self, name: str, kind: str) -> str:
        return node_program_source(self.meta.name, name, kind, self.template)

    def evaluate(self, instance: Instance, solution: Any) -> dict[str, float]:
        """Recompute the final gap from the answer and read the hitting times from the trace.

        Raises
        ------
        InvalidSolution
            If the solution is not what the session builds (fields ``x``,
            ``rounds``, ``oracle``, ``trace``), or ``x`` is not a finite ``(n, d)`` array.
        """
        fields = CATALOG.form.parse(instance.id)
        n, d = fields["n"], fields["d"]
        if not isinstance(solution, dict) or not {"x", "rounds", "oracle", "trace"} <= set(solution):
            raise InvalidSolution("the solution must be the session's dict with fields 'x', 'rounds', 'oracle' and 'trace'")
        X = check_rows(solution["x"], n, "field 'x'", d)
        prob = Problem(fields["loss"], instance.private["A"], instance.private["b"])
        f_star = instance.references["f_star"].value
        gap, cons = objective(prob, X, f_star)
        oracle = solution["oracle"] or {}
        grads = float(np.mean(oracle.get("grad", 0)))
        out = {
            "gap_final": gap,
            "consensus_final": cons,
            "rounds": float(solution["rounds"]),
            "grads": grads,
            "prox_calls": float(np.mean(oracle.get("prox", 0))),
        }
        trace = solution["trace"] or {}
        gaps = np.asarray(trace.get("gap", []), dtype=np.float64)
        rounds = np.asarray(trace.get("rounds", []), dtype=np.float64)
        calls = np.asarray(trace.get("calls_grad", np.zeros(gaps.size)), dtype=np.float64)
        calls = np.nan_to_num(calls, nan=0.0)
        for eps, tag in zip(EPSILONS, ("eps4", "eps8"), strict=True):
            hit = np.flatnonzero(gaps <= eps)
            if hit.size:
                out[f"rounds_{tag}"], out[f"grads_{tag}"], out[f"reached_{tag}"] = float(rounds[hit[0]]), float(calls[hit[0]]), 1.0
            elif gap <= eps:  # the answer itself, after the last report
                out[f"rounds_{tag}"], out[f"grads_{tag}"], out[f"reached_{tag}"] = out["rounds"], grads, 1.0
            else:
                out[f"rounds_{tag}"], out[f"grads_{tag}"], out[f"reached_{tag}"] = float(fields["rounds"]), grads, 0.0
        out["log2_rounds_eps8"] = math.log2(max(out["rounds_eps8"], 1.0))
        return out

