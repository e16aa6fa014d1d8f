"""Cross-learning contextual bandits with an unknown context distribution (Huang and Huang, ICML 2025).

Each round a context ``c_t`` is drawn iid from a distribution ``nu`` the learner does not know;
the learner plays one of ``K`` actions; an oblivious adversary has fixed the losses
``l_t(a, c)`` in ``[0, 1]`` in advance; the learner then sees the loss of its action in *every*
context, ``l_t(a_t, .)`` (cross-learning). Regret is measured against the best fixed policy
``pi: [C] -> [K]``. The paper proves that the algorithm of Schneider and Zimmert (2023) has
regret ``O~(sqrt(K T log(1/delta)))`` with probability ``1 - delta``: the point is the tail,
so the task reports quantiles over many independent replications, not only the mean.

Protocol (vectorised replications). One job plays ``R`` independent replications at each of
four horizons ``T/8, T/4, T/2, T`` at once: ``S = 4 R`` streams, stream ``j`` belonging to
horizon ``data["horizons"][j // R]`` (longest first, so the streams still playing at round
``t`` are always a prefix ``0..n_t``). Every round the task sends
``{"t": t, "contexts": int16 (n_t,), "feedback": float32 (n_{t-1}, C)}`` where ``feedback[j]``
is ``l_{t-1}(a_j, .)``, the loss row of the action stream ``j`` played last round (empty at
``t = 0``); the method answers ``int (n_t,)`` actions in ``[0, K)``. Each stream must keep its
own state: replications are independent. The task keeps the contexts, the tables and every
action; :meth:`CrossLearningBandit.evaluate` recomputes the contexts from the job seed and every
metric from the actions alone.

Instance ``data``: ``env``, ``C``, ``K``, ``T``, ``R``, ``horizons`` (longest first), and
``nu_oracle``: the context distribution, public **only** for the oracle row (Balseiro et al.
with ``nu`` known); the paper's method and the other baselines never read it (their code is
the check). See ``tasks/cross_bandit/README.md``.
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
from tasks.cross_bandit import env as E

__all__ = ["CATALOG", "CrossLearningBandit", "CrossSession", "QUANTILES"]

#: Quantiles of the regret over replications that the task reports.
QUANTILES = (0.95, 0.99)


def _check(fields: dict[str, Any]) -> None:
    if fields["T"] % 8:
        raise ValueError(f"{fields}: T must be divisible by 8 (horizons T/8, T/4, T/2, T)")
    if fields["K"] < 2 or fields["C"] < 2:
        raise ValueError(f"{fields}: needs K >= 2 actions and C >= 2 contexts")
    if fields["R"] < 20:
        raise ValueError(f"{fields}: needs R >= 20 replications for a 95% quantile")


CATALOG = Catalog(
    IdForm(
        "cross-learning-bandit",
        "{env}-C{C}-K{K}-T{T}-R{R}-s{seed}",
        example="switch-C10-K5-T8000-R100-s0",
        env=Choice(E.ENVS, what="environment"),
        C=Int(label="contexts", minimum=1),
        K=Int(label="actions", minimum=1),
        T=Int(label="horizon", minimum=1),
        R=Int(label="replications", minimum=1),
        seed=Int(),
    ),
    {
        "smoke": grid(env=("switch", "auction"), C=(5,), K=(3,), T=(400,), R=(20,), seed=(0,)),
        "standard": grid(env=("switch",), C=(10,), K=(5,), T=(8000,), R=(100,), seed=(0,))
        + grid(env=("auction",), C=(20,), K=(8,), T=(8000,), R=(100,), seed=(0,)),
        # paper scale (not run here): memory ~ T K C float32 per horizon, up to ~0.5 GB
        "full": grid(env=("switch",), C=(10, 100), K=(5,), T=(64000,), R=(100,), seed=(0, 1))
        + grid(env=("auction",), C=(20, 100), K=(10,), T=(64000,), R=(100,), seed=(0, 1)),
    },
    validate=_check,
)


class CrossSession(Session):
    """The trusted side: draws contexts, hands out loss rows of played actions, records actions.

    Streams are ordered by horizon, longest first, ``R`` per horizon.
    """

    def __init__(self, instance: Instance, seed: int) -> None:
        p = instance.params
        self.seed = int(seed)
        self.R, self.C, self.K = int(p["R"]), int(p["C"]), int(p["K"])
        self.hs = E.horizons(int(p["T"]))[::-1]  # longest first
        nu = np.asarray(instance.private["nu"])
        self.tables = [E.loss_table(p["env"], self.C, self.K, H, p["seed"]) for H in self.hs]
        self.ctx = [E.contexts(nu, self.R, H, self.seed, i) for i, H in enumerate(self.hs)]
        self.acts = [np.zeros((self.R, H), dtype=np.int16) for H in self.hs]
        self.t = 0
        self.feedback = np.zeros((0, self.C), dtype=np.float32)

    def _active(self, t: int) -> int:
        """How many horizons are still playing at round ``t`` (a prefix, longest first)."""
        return sum(H > t for H in self.hs)

    def state(self) -> dict[str, Any] | None:
        if self.t >= self.hs[0]:
            return None
        n = self._active(self.t)
        ctx = np.concatenate([self.ctx[i][:, self.t] for i in range(n)])
        return {"t": self.t, "contexts": ctx, "feedback": self.feedback}

    def apply(self, action: Any) -> None:
        n = self._active(self.t)
        want = n * self.R
        a = np.asarray(action) if isinstance(action, (np.ndarray, list)) else None
        if a is None or a.shape != (want,) or a.dtype.kind not in "iu":
            got = f"{type(action).__name__} of shape {getattr(a, 'shape', None)} and dtype {getattr(a, 'dtype', None)}"
            raise InvalidSolution(
                f"actions at round {self.t}: expected an integer array of shape ({want},), got {got}"
            )
        bad = np.flatnonzero((a < 0) | (a >= self.K))
        if bad.size:
            raise InvalidSolution(
                f"actions at round {self.t}: action {int(a[bad[0]])} of stream {int(bad[0])} is outside [0, {self.K})"
            )
        rows = []
        for i in range(n):
            ai = a[i * self.R : (i + 1) * self.R].astype(np.int64)
            self.acts[i][:, self.t] = ai
            rows.append(self.tables[i][self.t, ai, :])
        self.feedback = np.concatenate(rows).astype(np.float32)
        self.t += 1

    def solution(self) -> dict[str, Any]:
        return {"seed": self.seed, **{f"actions{i}": a for i, a in enumerate(self.acts)}}


def _summary(reg: np.ndarray) -> dict[str, float]:
    return {
        "mean": float(reg.mean()),
        **{f"q{round(100 * q)}": float(np.quantile(reg, q)) for q in QUANTILES},
    }


_TEMPLATE = '''\
"""{name}: a cross-learning contextual bandit learner for the ``cross-learning-bandit`` task.

Protocol (see tasks/cross_bandit/README.md): one object plays ``S = len(horizons) * R``
independent streams at once, longest horizon first. Every round ``select`` gets
``state["t"]``, ``state["contexts"]`` (int, one per stream still playing) and
``state["feedback"]`` (float ``(n_prev, C)``: row ``j`` is last round's loss of the action
stream ``j`` played, in *every* context) and returns one action in ``[0, K)`` per stream.
Streams must not share what they learn.

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
    tasks=["cross-learning-bandit"],
    reference="",
    version="1",
    params={{"eta": 0.05}},
    deterministic=True,
)
class Learner:
    """A starting point: exponential weights per (stream, context) on the observed loss rows."""

    def __init__(self, instance, *, seed: int, budget: float, eta: float):
        d = instance.data
        self.K, self.C, self.R = int(d["K"]), int(d["C"]), int(d["R"])
        streams = self.R * len(d["horizons"])
        self.cum = np.zeros((streams, self.C, self.K))  # estimated cumulative loss
        self.eta = float(eta)
        self.rng = np.random.default_rng(seed)
        self.last = None  # (contexts, actions, probabilities) of the previous round

    def select(self, state):
        fb = np.asarray(state["feedback"], dtype=np.float64)
        if self.last is not None and len(fb):
            _, acts, prob = self.last
            n = len(fb)
            rows = np.arange(n)
            # the played action's loss is seen in every context: importance-weight it there
            self.cum[rows, :, acts[:n]] += fb / prob[:n, None]
        ctx = np.asarray(state["contexts"], dtype=np.int64)
        rows = np.arange(len(ctx))
        z = -self.eta * self.cum[rows, ctx]
        p = np.exp(z - z.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        u = self.rng.random(len(ctx))
        acts = np.minimum((np.cumsum(p, axis=1) < u[:, None]).sum(axis=1), self.K - 1)
        self.last = (ctx, acts, p[rows, acts])
        return acts.astype(np.int16)
'''


@register_task
class CrossLearningBandit(CatalogTask):
    """Regret of a cross-learning contextual bandit learner, as quantiles over replications.

    The solution is what :class:`CrossSession` recorded: the job seed and, per horizon
    (longest first), the ``(R, H)`` actions. The task regenerates contexts and tables and
    recomputes everything.
    """

    meta = TaskMeta(
        name="cross-learning-bandit",
        version="1",
        family="cross_bandit",
        area="online learning",
        paper=Paper(
            title="High Probability Bound for Cross-Learning Contextual Bandits with Unknown Context Distributions",
            authors=["Ruiyuan Huang", "Zengfeng Huang"],
            arxiv="2410.04080",
            venue="ICML 2025",
        ),
        description=(
            "Adversarial (oblivious) contextual bandits with cross-learning feedback and iid contexts from an "
            "unknown distribution (switching-best-action and first-price-auction tables); the task draws "
            "contexts, reveals the played action's loss in every context, and computes the regret against the "
            "best fixed policy over 100 replications per job: mean, 95% and 99% quantiles, and their log-log "
            "slope over the horizons T/8..T."
        ),
        metrics=[
            Metric(
                name="regret_q99",
                direction="min",
                description="99% quantile over the R replications of the regret at horizon T",
            ),
            Metric(
                name="regret_q95",
                direction="min",
                description="95% quantile of the regret at horizon T",
            ),
            Metric(name="regret_mean", direction="min", description="mean regret at horizon T"),
            Metric(
                name="regret_max",
                direction="min",
                description="largest regret over the replications at horizon T",
            ),
            Metric(
                name="regret_q99_per_sqrt_kt", direction="min", description="regret_q99 / sqrt(K T)"
            ),
            Metric(
                name="hindsight_q99",
                direction="min",
                description="99% quantile of the regret against the best policy in hindsight on each replication's own contexts",
            ),
            Metric(
                name="slope_q99",
                direction="min",
                description="least-squares slope of log regret_q99 on log T over the horizons T/8, T/4, T/2, T (NaN if a quantile is <= 0)",
            ),
            Metric(
                name="slope_q95", direction="min", description="the same slope for the 95% quantile"
            ),
            Metric(
                name="slope_mean", direction="min", description="the same slope for the mean regret"
            ),
            *[
                Metric(
                    name=f"q99_T{d}", direction="min", description=f"regret_q99 at horizon T/{d}"
                )
                for d in E.HORIZON_FRACTIONS[:-1]
            ],
            *[
                Metric(
                    name=f"mean_T{d}", direction="min", description=f"mean regret at horizon T/{d}"
                )
                for d in E.HORIZON_FRACTIONS[:-1]
            ],
        ],
        primary="regret_q99",
        normalization=Normalization(
            kind="linear",
            zero="uniform",
            one=0.0,
            description="0 at uniform play's expected regret, 1 at zero regret",
        ),
        gap_reference="uniform",
        interactive=True,
        budgets={"smoke": 30.0, "standard": 300.0, "full": 3600.0},
    )
    catalog = CATALOG
    template = _TEMPLATE

    def spec(self, fields: dict[str, Any]) -> InstanceSpec:
        params = {**fields, "horizons": E.horizons(fields["T"])}
        return InstanceSpec(
            id=CATALOG.form.format(**fields), params=params, tags=(fields["env"], "oblivious")
        )

    def generate(self, fields: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """Public: sizes and horizons (and ``nu_oracle`` for the oracle row); private: ``nu``."""
        nu = E.context_distribution(fields["env"], fields["C"], fields["seed"])
        data = {
            "env": fields["env"], "C": fields["C"], "K": fields["K"], "T": fields["T"], "R": fields["R"],
            "horizons": np.asarray(E.horizons(fields["T"])[::-1], dtype=np.int64),
            "nu_oracle": nu.copy(),
        }  # fmt: skip
        return data, {"nu": nu}

    def reference(
        self, fields: dict[str, Any], data: dict[str, Any], private: dict[str, Any]
    ) -> dict[str, Reference]:
        """Uniform play's exact expected regret at horizon ``T``, and ``sqrt(K T)`` for scale."""
        table = E.loss_table(fields["env"], fields["C"], fields["K"], fields["T"], fields["seed"])
        return {
            "uniform": Reference(value=E.uniform_expected_regret(table, private["nu"]), source="exact expectation of uniform play against the best fixed policy"),
            "sqrt_kt": Reference(value=math.sqrt(fields["K"] * fields["T"]), source="sqrt(K T), the scale of the claimed bound"),
        }  # fmt: skip

    def session(self, instance: Instance, seed: int) -> Session:
        return CrossSession(instance, seed)

    def evaluate(self, instance: Instance, solution: Any) -> dict[str, float]:
        """Recompute contexts from the job seed, then the regret of every replication at every horizon.

        Raises
        ------
        InvalidSolution
            Unless ``solution`` is ``{"seed": int, "actions0".."actions3": int (R, H)}`` with actions in
            ``[0, K)``, horizons longest first.
        """
        p = instance.params
        if not isinstance(solution, dict) or not isinstance(solution.get("seed"), int):
            raise InvalidSolution(
                "solution: expected the session's record {'seed': int, 'actions0': ..., ...}"
            )
        R, C, K = int(p["R"]), int(p["C"]), int(p["K"])
        hs = E.horizons(int(p["T"]))[::-1]
        nu = np.asarray(instance.private["nu"])
        stats: dict[int, dict[str, float]] = {}
        out: dict[str, float] = {}
        for i, H in enumerate(hs):
            a = solution.get(f"actions{i}")
            if not isinstance(a, np.ndarray) or a.shape != (R, H) or a.dtype.kind not in "iu":
                raise InvalidSolution(f"actions{i}: expected an integer array of shape ({R}, {H})")
            if a.size and (a.min() < 0 or a.max() >= K):
                raise InvalidSolution(f"actions{i}: actions must lie in [0, {K})")
            table = E.loss_table(p["env"], C, K, H, p["seed"])
            ctx = E.contexts(nu, R, H, solution["seed"], i)
            reg = E.regret(table, ctx, a.astype(np.int64))
            stats[H] = _summary(reg)
            if i == 0:
                out["regret_max"] = float(reg.max())
                out["hindsight_q99"] = float(
                    np.quantile(E.hindsight_regret(table, ctx, a.astype(np.int64)), 0.99)
                )
        T = hs[0]
        out.update(
            regret_q99=stats[T]["q99"], regret_q95=stats[T]["q95"], regret_mean=stats[T]["mean"]
        )
        out["regret_q99_per_sqrt_kt"] = stats[T]["q99"] / math.sqrt(K * T)
        xs = sorted(stats)
        for key, name in (("q99", "slope_q99"), ("q95", "slope_q95"), ("mean", "slope_mean")):
            out[name] = E.loglog_slope(xs, [stats[h][key] for h in xs])
        for d in E.HORIZON_FRACTIONS[:-1]:
            out[f"q99_T{d}"] = stats[T // d]["q99"]
            out[f"mean_T{d}"] = stats[T // d]["mean"]
        return out
