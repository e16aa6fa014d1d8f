"""log-concave-sampling: sample ``pi ~ exp(-V)`` through a batched gradient oracle that counts adaptive rounds.

Zhou and Sugiyama (ICML 2025) simulate the Langevin diffusion with parallel
Picard iterations and claim ``O~(log d)`` adaptive rounds (sequential oracle
calls, each a batch of gradient queries evaluated in parallel), against the
``O~(log^2 d)`` of the parallel Picard LMC of Anari, Chewi and Vuong (2024).

Targets (strongly log-concave, ``alpha = 1`` and ``beta = kappa``, both told to
the method):

- ``gauss``: ``N(m*, diag(1 / lambda))`` with precisions ``lambda_i`` log-spaced
  in ``[1, kappa]`` and ``m* ~ N(0, I)``. Diagonal (an axis-aligned
  Gaussian): every method here is rotation-equivariant (isotropic noise,
  gradient steps), so a rotation would change nothing but the cost of the
  oracle.
- ``logreg``: Bayesian logistic regression, prior ``N(0, I)``, ``2 d``
  generated data points whose design is scaled so that
  ``lambda_max(X^T X) / 4 = kappa - 1`` (so ``1 <= Hessian <= kappa``); the
  reference posterior is ``REF_CHAINS`` independent preconditioned-MALA chains
  run on the task side (cached).

The protocol (:class:`SamplingSession`): the task sends ``x0``
(``N_PART`` starting particles, ``OFFSET * 1 + N(0, I)``), ``d``, ``alpha``,
``beta`` and ``eps``; each answer of the method is one of

- ``{"query": X}`` (``(B, d)``, float64 or float32): one adaptive round, ``B``
  gradient evaluations; the next state carries ``grad`` (``(B, d)``, computed in
  float64 and returned in the query's precision);
- ``{"snapshot": S}`` (``(N_PART, d)``): the task scores the particles now,
  at the rounds counted so far (no round is spent);
- ``{"samples": S}``: the final particles; the session ends.

The task counts rounds and gradient evaluations itself; the solution it
scores holds its own log of (rounds, gradient evaluations, error) at every
snapshot. Metrics (``tasks/sampling/README.md``):

- gauss: ``w2`` is the exact 2-Wasserstein distance between the target and the
  product of the per-coordinate Gaussian fits of the particles, debiased for
  the finite particle count (:func:`w2_diag_debiased`);
- logreg: ``w2`` is the sliced W2 against the reference sample over
  ``N_PROJ`` fixed directions (:func:`sliced_w2`), plus the mean error;
- ``rounds_to_eps``: rounds at the first snapshot (or the final sample) whose
  error is at most ``eps``; ``rounds`` and ``grad_evals`` in total;
- ``w2_r<R>``: the error curve at the round budgets ``CURVE_ROUNDS``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

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
    "TARGETS",
    "SamplingSession",
    "SamplingTask",
    "gradient",
    "sliced_w2",
    "w2_diag_debiased",
]

TARGETS = ("gauss", "logreg")
#: Particles (independent chains) every method returns.
N_PART = 32
#: Starting particles: ``OFFSET * 1 + N(0, I)``.
OFFSET = 3.0
#: Error target of the Gaussian instances (absolute W2, in the units of x).
EPS_GAUSS = 2.0
#: The logistic instances' eps is this multiple of the reference's own sliced-W2 floor.
EPS_FLOOR_MULT = 2.0
#: Sliced-W2 directions (fixed per instance).
N_PROJ = 64
#: Reference chains (independent) for the logistic posterior; the first half is
#: the reference sample, the second half gives the floor.
REF_CHAINS = 2 * N_PART * 4
REF_STEPS = 600
#: Round budgets at which the error curve is read: ``w2_r<R>`` is the error of the last
#: particle set scored at or before ``R`` rounds (the starting particles' if none).
CURVE_ROUNDS = (4, 8, 16, 32, 64, 128, 256, 512, 1024)
#: Oracle limits: rounds per job, floats per batch.
MAX_ROUNDS = 20_000
MAX_BATCH_FLOATS = 40_000_000


def _check(fields: dict[str, Any]) -> None:
    if fields["kappa"] < 1:
        raise ValueError(f"{fields}: kappa >= 1")
    if fields["target"] == "logreg" and fields["d"] > 300:
        raise ValueError(f"{fields}: the logistic reference (MALA) is limited to d <= 300")


#: Ids ``<target>-d<d>-k<kappa>-s<seed>``.
CATALOG = Catalog(
    IdForm(
        "log-concave-sampling",
        "{target}-d{d}-k{kappa}-s{seed}",
        example="gauss-d100-k4-s0",
        target=Choice(TARGETS, what="target"),
        d=Int(label="dimension", minimum=1),
        kappa=Int(label="condition number", minimum=1),
        seed=Int(),
    ),
    {
        "smoke": grid(target=("gauss",), d=(10,), kappa=(4,), seed=(0,))
        + grid(target=("logreg",), d=(10,), kappa=(4,), seed=(0,)),
        "standard": grid(target=("gauss",), d=(10, 30, 100, 300), kappa=(4,), seed=tuple(range(7)))
        + grid(target=("gauss",), d=(10, 100), kappa=(1, 16), seed=(0,))
        + grid(target=("logreg",), d=(10, 100), kappa=(4,), seed=(0,)),
        "full": grid(
            target=("gauss",), d=(10, 30, 100, 300, 1000), kappa=(1, 4, 16), seed=tuple(range(7))
        )
        + grid(target=("gauss",), d=(10, 100), kappa=(100, 1000), seed=(0,))
        + grid(target=("logreg",), d=(10, 100, 300), kappa=(4, 16), seed=(0, 1, 2)),
    },
    validate=_check,
)


# ----------------------------------------------------------------------------- targets


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * z))


def gradient(data: dict[str, Any], x: np.ndarray) -> np.ndarray:
    """``grad V`` at the rows of ``x`` (``(B, d)``), as the oracle computes it."""
    if "lam" in data:
        return (x - data["mean"]) * data["lam"]
    X, y = data["X"], data["y"]
    z = (x @ X.T) * y  # (B, n): y_i x_i^T theta
    return x - (_sigmoid(-z) * y) @ X


def potential(data: dict[str, Any], x: np.ndarray) -> np.ndarray:
    """``V`` at the rows of ``x`` (up to a constant); used by the task's MALA reference."""
    if "lam" in data:
        return 0.5 * np.sum((x - data["mean"]) ** 2 * data["lam"], axis=1)
    X, y = data["X"], data["y"]
    z = (x @ X.T) * y
    return 0.5 * np.sum(x * x, axis=1) + np.sum(np.logaddexp(0.0, -z), axis=1)


def _logreg_data(d: int, kappa: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng([seed, d, kappa, 1])
    n = 2 * d
    X = rng.standard_normal((n, d))
    top = np.linalg.norm(X, 2) ** 2 / 4.0
    X *= math.sqrt(max(kappa - 1, 0) / top) if kappa > 1 else 0.0
    theta = rng.standard_normal(d)
    y = np.where(rng.random(n) < _sigmoid(X @ theta), 1.0, -1.0)
    return X, y


def _mala_reference(data: dict[str, Any], d: int, seed: int) -> np.ndarray:
    """``REF_CHAINS`` independent preconditioned-MALA chains, ``REF_STEPS`` steps each.

    Preconditioner and start: the Laplace approximation at the MAP (Newton).
    Step size adapted during the first half (target acceptance 0.57), fixed in the
    second; each chain's last state is one draw.
    """
    X, y = data["X"], data["y"]
    th = np.zeros(d)
    for _ in range(50):
        g = gradient(data, th[None])[0]
        p = _sigmoid((X @ th) * y)
        H = np.eye(d) + (X.T * (p * (1 - p))) @ X
        step = np.linalg.solve(H, g)
        th -= step
        if np.linalg.norm(step) < 1e-12:
            break
    cov = np.linalg.inv(H)
    L = np.linalg.cholesky(cov)
    rng = np.random.default_rng([seed, d, 7])
    x = th + rng.standard_normal((REF_CHAINS, d)) @ L.T
    h = 1.0 / d ** (1 / 3)
    Pinv = np.linalg.inv(cov)

    def logq(a, b, ga):  # log q(b | a), proposal N(a - h/2 C ga, h C)
        m = a - 0.5 * h * ga @ cov
        r = b - m
        return -0.5 * np.sum((r @ Pinv) * r, axis=1) / h

    V, G = potential(data, x), gradient(data, x)
    for t in range(REF_STEPS):
        prop = x - 0.5 * h * G @ cov + math.sqrt(h) * rng.standard_normal(x.shape) @ L.T
        Vp, Gp = potential(data, prop), gradient(data, prop)
        logr = -Vp + V + logq(prop, x, Gp) - logq(x, prop, G)
        acc = np.log(rng.random(len(x))) < logr
        x[acc], V[acc], G[acc] = prop[acc], Vp[acc], Gp[acc]
        if t < REF_STEPS // 2:
            h *= math.exp(0.5 * (acc.mean() - 0.57))
    return x


# ----------------------------------------------------------------------------- metrics


def w2_diag_debiased(samples: np.ndarray, mean: np.ndarray, lam: np.ndarray) -> tuple[float, float]:
    """``(w2, w2_raw)`` of the particles against ``N(mean, diag(1 / lam))``.

    ``w2_raw**2 = sum_i (mhat_i - mean_i)**2 + (shat_i - sigma_i)**2``: the exact
    W2 (closed form) between the target and the product of the per-coordinate
    Gaussian fits (sample mean ``mhat_i``, sample standard deviation ``shat_i``,
    ``ddof = 1``). Correlations between coordinates are not seen. With ``n``
    exact draws, ``E (mhat - mean)^2 = sigma^2 / n`` and
    ``E (shat - sigma)^2 ~ sigma^2 / (2 (n - 1))``, so ``w2_raw`` has a floor
    of about ``sqrt(1.5 sum sigma_i^2 / n)``. ``w2`` subtracts these terms,
    estimated with ``shat``: ``w2**2 = max(0, w2_raw**2 - sum shat_i^2 (1/n +
    1/(2 (n - 1))))``; unbiased to first order for exact draws, its standard
    deviation is about ``1.5 sqrt(2 d) mean(sigma^2) / n`` in W2^2 units.
    """
    n = samples.shape[0]
    mhat = samples.mean(axis=0)
    var = samples.var(axis=0, ddof=1)
    shat = np.sqrt(var)
    sigma = 1.0 / np.sqrt(lam)
    raw2 = float(np.sum((mhat - mean) ** 2) + np.sum((shat - sigma) ** 2))
    bias2 = float(np.sum(var) * (1.0 / n + 1.0 / (2.0 * (n - 1))))
    return math.sqrt(max(raw2 - bias2, 0.0)), math.sqrt(raw2)


def _directions(d: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng([seed, d, 11])
    u = rng.standard_normal((N_PROJ, d))
    return u / np.linalg.norm(u, axis=1, keepdims=True)


def sliced_w2(a: np.ndarray, b: np.ndarray, dirs: np.ndarray) -> float:
    """Sliced W2: ``sqrt(mean_u W2^2(u^T a, u^T b))`` over the fixed directions ``dirs``.

    Each 1-D W2 is exact between the two empirical measures (quantile functions
    on a common grid of ``lcm``-free midpoints: ``max(len(a), len(b))`` levels).
    """
    pa, pb = np.sort(a @ dirs.T, axis=0), np.sort(b @ dirs.T, axis=0)
    m = max(len(pa), len(pb))
    q = (np.arange(m) + 0.5) / m
    ia = np.minimum((q * len(pa)).astype(int), len(pa) - 1)
    ib = np.minimum((q * len(pb)).astype(int), len(pb) - 1)
    return float(np.sqrt(np.mean((pa[ia] - pb[ib]) ** 2)))


# ----------------------------------------------------------------------------- session


def _as_points(
    obj: Any, d: int, what: str, rows: int | None = None, dtypes: tuple = (np.float64,)
) -> np.ndarray:
    if (
        not isinstance(obj, np.ndarray)
        or obj.dtype not in dtypes
        or obj.ndim != 2
        or obj.shape[1] != d
    ):
        got = f"{type(obj).__name__} {getattr(obj, 'dtype', '')} {getattr(obj, 'shape', '')}"
        names = " or ".join(np.dtype(t).name for t in dtypes)
        raise InvalidSolution(f"{what} must be a {names} array of shape (B, {d}); got {got}")
    if rows is not None and obj.shape[0] != rows:
        raise InvalidSolution(
            f"{what} must have {rows} rows (one per particle); got {obj.shape[0]}"
        )
    if not np.all(np.isfinite(obj)):
        raise InvalidSolution(f"{what} has {int(np.sum(~np.isfinite(obj)))} non-finite entries")
    return obj


def score(instance: Instance, samples: np.ndarray) -> dict[str, float]:
    """Error metrics of one particle set (``w2``, ``w2_raw``, ``mean_err``)."""
    data, p = instance.data, instance.private
    if "lam" in data:
        w2, raw = w2_diag_debiased(samples, data["mean"], data["lam"])
        return {
            "w2": w2,
            "w2_raw": raw,
            "mean_err": float(np.linalg.norm(samples.mean(0) - data["mean"])),
        }
    ref = p["reference"]
    w2 = sliced_w2(samples, ref, p["dirs"])
    return {
        "w2": w2,
        "w2_raw": w2,
        "mean_err": float(np.linalg.norm(samples.mean(0) - ref.mean(0))),
    }


class SamplingSession(Session):
    """The oracle: counts every round and gradient evaluation; scores snapshots when they arrive."""

    def __init__(self, instance: Instance, seed: int) -> None:
        self.inst = instance
        self.d = int(instance.params["d"])
        self.rounds = 0
        self.grads = 0
        self.log: list[tuple[int, int, float]] = []
        self.pending: np.ndarray | None = None
        self.first = True
        self.samples: np.ndarray | None = None

    def state(self) -> dict[str, Any] | None:
        if self.samples is not None:
            return None
        st: dict[str, Any] = {"rounds": self.rounds, "grad_evals": self.grads}
        if self.first:
            data = self.inst.data
            st.update(
                x0=data["x0"],
                d=self.d,
                alpha=float(data["alpha"]),
                beta=float(data["beta"]),
                eps=float(self.inst.references["eps"].value),
                eps_design=EPS_GAUSS,
                max_rounds=MAX_ROUNDS,
                max_batch_floats=MAX_BATCH_FLOATS,
            )
            self.first = False
        if self.pending is not None:
            st["grad"] = self.pending
            self.pending = None
        return st

    def apply(self, action: Any) -> None:
        if (
            not isinstance(action, dict)
            or len(action) != 1
            or next(iter(action)) not in ("query", "snapshot", "samples")
        ):
            raise InvalidSolution(
                "each answer must be {'query': X}, {'snapshot': S} or {'samples': S}"
            )
        key, val = next(iter(action.items()))
        if key == "query":
            X = _as_points(val, self.d, "query", dtypes=(np.float64, np.float32))
            if X.size > MAX_BATCH_FLOATS:
                raise InvalidSolution(
                    f"query of {X.size} floats exceeds the batch limit {MAX_BATCH_FLOATS}"
                )
            if self.rounds >= MAX_ROUNDS:
                raise InvalidSolution(f"more than {MAX_ROUNDS} rounds")
            self.rounds += 1
            self.grads += X.shape[0]
            # computed in float64, returned in the query's precision
            self.pending = gradient(self.inst.data, X.astype(np.float64)).astype(X.dtype)
            return
        S = _as_points(val, self.d, key, rows=N_PART)
        if key == "snapshot":
            self.log.append((self.rounds, self.grads, score(self.inst, S)["w2"]))
        else:
            self.samples = S.copy()

    def solution(self) -> dict[str, Any]:
        log = np.asarray(self.log, dtype=float).reshape(-1, 3)
        return {
            "samples": self.samples,
            "rounds": self.rounds,
            "grad_evals": self.grads,
            "log": log,
        }


_TEMPLATE = '''\
"""{name}: a sampler for the ``log-concave-sampling`` task.

Protocol (see tasks/sampling/README.md): the first state carries the particles' start
``x0`` (``(N, d)``) and the target's constants (``alpha``, ``beta``, ``eps``, ``max_rounds``,
``max_batch_floats``). Answer ``{{"query": X}}`` to ask for ``grad V`` at the rows of ``X``
(one adaptive round; the next state's ``"grad"`` holds it), ``{{"snapshot": S}}`` to have the
task score ``N`` particles along the way, and ``{{"samples": S}}`` to finish.

Deviations from the reference
-----------------------------
List every departure from the paper or its official code, and why.
"""

from __future__ import annotations

import numpy as np

from bench import method


@method(
    name="{name}",
    kind="{kind}",
    tasks=["log-concave-sampling"],
    reference="",
    version="1",
    params={{"max_steps": 300}},
    deterministic=True,
)
class Sampler:
    """A starting point: unadjusted Langevin steps ``x - delta grad V(x) + sqrt(2 delta) xi``, one round each."""

    def __init__(self, instance, *, seed: int, budget: float, max_steps: int):
        self.rng = np.random.default_rng(seed)
        self.max_steps = int(max_steps)
        self.x = None
        self.steps = 0

    def select(self, state):
        if self.x is None:  # the first state: start and constants
            self.x = np.array(state["x0"], dtype=np.float64)
            self.delta = state["eps"] / (np.sqrt(state["d"]) * state["beta"])
            wanted = int(np.ceil(1.0 / (state["alpha"] * self.delta)))
            self.n_steps = max(1, min(wanted, self.max_steps, state["max_rounds"] - 1))
            return {{"query": self.x}}
        noise = self.rng.standard_normal(self.x.shape)
        self.x = self.x - self.delta * state["grad"] + np.sqrt(2.0 * self.delta) * noise
        self.steps += 1
        if self.steps >= self.n_steps:
            return {{"samples": self.x}}
        return {{"query": self.x}}
'''


@register_task
class SamplingTask(CatalogTask):
    """Sampling through a round-counting batched gradient oracle; error against the exact target or a MALA reference."""

    meta = TaskMeta(
        name="log-concave-sampling",
        version="1",
        family="sampling",
        area="sampling",
        paper=Paper(
            title="Parallel Simulation for Log-concave Sampling and Score-based Diffusion Models",
            authors=["Huanjian Zhou", "Masashi Sugiyama"],
            arxiv="2412.07435",
            venue="ICML 2025",
        ),
        description=(
            "Sample strongly log-concave targets (diagonal Gaussians, Bayesian logistic regression) through a "
            "batched gradient oracle; the task counts adaptive rounds and gradient evaluations and scores W2."
        ),
        metrics=[
            Metric(
                name="w2",
                direction="min",
                description="gauss: debiased W2 of the per-coordinate Gaussian fit; logreg: sliced W2 vs the MALA reference",
            ),
            Metric(
                name="w2_raw",
                direction="min",
                description="gauss: W2 of the per-coordinate Gaussian fit, not debiased; logreg: = w2",
            ),
            Metric(
                name="mean_err",
                direction="min",
                description="norm of the particle mean minus the target's (reference's) mean",
            ),
            Metric(
                name="rounds",
                direction="min",
                unit="rounds",
                description="oracle calls (adaptive rounds), counted by the task",
            ),
            Metric(
                name="grad_evals",
                direction="min",
                unit="gradients",
                description="gradient evaluations, counted by the task",
            ),
            Metric(
                name="rounds_to_eps",
                direction="min",
                unit="rounds",
                description="rounds at the first scored particle set with w2 <= eps (rounds + 1 if none)",
            ),
            Metric(
                name="grads_to_eps",
                direction="min",
                unit="gradients",
                description="gradient evaluations at that point (grad_evals + 1 if none)",
            ),
            Metric(
                name="reached",
                direction="max",
                description="1 if some scored particle set had w2 <= eps",
            ),
        ],
        primary="w2",
        normalization=Normalization(
            kind="log",
            zero="init",
            one="eps",
            description="0 at the starting particles' error, 1 at eps",
        ),
        gap_reference="eps",
        interactive=True,
        budgets={"smoke": 30.0, "standard": 240.0, "full": 1200.0},
    )
    template = _TEMPLATE
    catalog = CATALOG
    reference_cache = True

    def spec(self, fields: dict[str, Any]) -> InstanceSpec:
        return InstanceSpec(
            id=CATALOG.form.format(**fields), params=dict(fields), tags=(fields["target"],)
        )

    def generate(self, fields: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """``data``: the target's parameters, ``alpha``, ``beta`` and the starting particles ``x0``.

        The method sees ``data`` only through the session's first state (``x0``,
        ``alpha``, ``beta``); ``private`` holds the reference sample (logreg).
        """
        t, d, kappa, seed = fields["target"], fields["d"], fields["kappa"], fields["seed"]
        rng = np.random.default_rng([seed, d, kappa, TARGETS.index(t)])
        x0 = OFFSET + rng.standard_normal((N_PART, d))
        data: dict[str, Any] = {"x0": x0, "alpha": 1.0, "beta": float(kappa)}
        private: dict[str, Any] = {}
        if t == "gauss":
            lam = np.geomspace(1.0, float(kappa), d) if d > 1 else np.ones(1)
            data.update(lam=lam, mean=rng.standard_normal(d))
        else:
            X, y = _logreg_data(d, kappa, seed)
            data.update(X=X, y=y)
            from bench import wire
            from bench.cache import cache_dir, cached_npz, source_digest

            key = f"{wire.digest({'X': X, 'y': y})[:12]}-{source_digest(__name__)}"
            path = cache_dir("sampling", "mala") / f"{t}-d{d}-k{kappa}-s{seed}-{key}.npz"
            ref = cached_npz(path, lambda: {"x": _mala_reference(data, d, seed)})["x"]
            private.update(
                reference=ref[: REF_CHAINS // 2],
                floor_sample=ref[REF_CHAINS // 2 :],
                dirs=_directions(d, seed),
            )
        return data, private

    def reference(
        self, fields: dict[str, Any], data: dict[str, Any], private: dict[str, Any]
    ) -> dict[str, Reference]:
        """``eps``, the starting error ``init`` and the finite-sample floor of ``w2``."""
        fake = Instance(id="", params=dict(fields), data=data, private=private, references={})
        init = score(fake, data["x0"])["w2"]
        if "lam" in data:
            rng = np.random.default_rng([fields["seed"], fields["d"], 99])
            exact = data["mean"] + rng.standard_normal((N_PART, fields["d"])) / np.sqrt(data["lam"])
            floor = score(fake, exact)["w2_raw"]
            return {
                "eps": Reference(
                    value=EPS_GAUSS, source=f"fixed absolute W2 target EPS_GAUSS = {EPS_GAUSS}"
                ),
                "init": Reference(value=init, source="w2 of the starting particles x0"),
                "floor_raw": Reference(
                    value=floor, source=f"w2_raw of {N_PART} exact draws (task-side, seeded)"
                ),
            }
        floor = np.mean(
            [
                sliced_w2(
                    private["floor_sample"][i * N_PART : (i + 1) * N_PART],
                    private["reference"],
                    private["dirs"],
                )
                for i in range(4)
            ]
        )
        return {
            "eps": Reference(
                value=float(EPS_FLOOR_MULT * floor), source=f"{EPS_FLOOR_MULT} x floor_raw"
            ),
            "init": Reference(value=init, source="sliced W2 of the starting particles x0"),
            "floor_raw": Reference(
                value=float(floor),
                source=f"sliced W2 of {N_PART} independent MALA draws vs the reference (mean of 4 sets)",
            ),
        }

    def session(self, instance: Instance, seed: int) -> SamplingSession:
        return SamplingSession(instance, seed)

    def evaluate(self, instance: Instance, solution: Any) -> dict[str, float]:
        """Score the final particles and read the task's own round log.

        Raises
        ------
        InvalidSolution
            Unless ``solution`` is the session's dict with ``N_PART`` finite float64 particles.
        """
        if not isinstance(solution, dict) or not {"samples", "rounds", "grad_evals", "log"} <= set(
            solution
        ):
            raise InvalidSolution(
                "the solution must come from the session: {'samples', 'rounds', 'grad_evals', 'log'}"
            )
        d = int(instance.params["d"])
        S = _as_points(solution["samples"], d, "samples", rows=N_PART)
        out = score(instance, S)
        rounds, grads = int(solution["rounds"]), int(solution["grad_evals"])
        log = np.asarray(solution["log"], dtype=float).reshape(-1, 3)
        log = np.vstack([log, [[rounds, grads, out["w2"]]]])
        eps = instance.references["eps"].value
        hit = np.flatnonzero(log[:, 2] <= eps)
        reached = hit.size > 0
        out.update(
            rounds=float(rounds),
            grad_evals=float(grads),
            rounds_to_eps=float(log[hit[0], 0]) if reached else float(rounds + 1),
            grads_to_eps=float(log[hit[0], 1]) if reached else float(grads + 1),
            reached=float(reached),
        )
        init = instance.references["init"].value
        for R in CURVE_ROUNDS:
            before = np.flatnonzero(log[:, 0] <= R)
            out[f"w2_r{R:04d}"] = float(log[before[-1], 2]) if before.size else float(init)
        return out
