"""tensor-completion: low-CP-rank tensor completion, timed round by round by the task.

Ghadiri, Fahrbach, Kook and Jadbabaie (ICML 2025) solve the masked
least-squares steps of CP-ALS by *approximate Richardson iteration*: fill the
unobserved entries with the current model, solve the full-tensor CP regression
with its fast structured normal equations, repeat. This task asks how long a
method takes to reach the held-out accuracy of exact ALS.

Instances (``{order}w-n{n}-p{pct}-r{r}-s{seed}``): an ``order``-way cube of
side ``n`` holding a random CP rank-``r`` tensor (Gaussian factors, scaled to
unit entry variance) plus Gaussian noise of standard deviation ``NOISE``;
``pct`` percent of the entries are observed. The method sees the observed
multi-indices and values, the shape and the rank; ``HELDOUT`` further entries
(noisy values and the noise-free truth) stay with the task.

Protocol (:class:`RoundsSession`): ``rounds`` rounds. Round 0's state carries
the initial factors (``N(0, INIT_SCALE^2)`` entries, drawn with the instance:
every method and every seed starts from the same point); each answer is the
method's current CP factors, one round of its own work later (one ALS sweep
for the ALS variants, ``steps_per_round`` Adam steps for Adam). The task
timestamps each answer itself (monotonic clock, from sending the state to
receiving the answer), so the time of a checkpoint is the method's cumulative
compute time, never a number the method reports. The verifier then scores
every checkpoint on the held-out entries; ``time_to_target`` is the cumulative
time of the first checkpoint within 1% of the reference RMSE: the best
held-out RMSE exact masked ALS reaches within as many sweeps as the method
has rounds, from the same start, computed on the trusted side. See ``tasks/tensor_completion/README.md``.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from bench.instances import Catalog, CatalogTask, IdForm, Int, grid
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
from tasks.tensor_completion.cp import cp_at, exact_mode_update

__all__ = [
    "CATALOG",
    "HELDOUT",
    "NOISE",
    "ROUNDS",
    "RoundsSession",
    "TARGET_SLACK",
    "TensorCompletionTask",
    "check_factors",
    "exact_als",
    "generate",
]

#: Standard deviation of the Gaussian noise (the truth has unit entry variance).
NOISE = 0.1
#: Held-out entries the task keeps (fewer when the tensor has fewer unobserved entries).
HELDOUT = 20_000
#: Scale of the initial factors' entries (official code: ``np.random.normal(0, 0.1)``).
INIT_SCALE = 0.1
#: Observations per CP parameter an instance needs at least (below ~20, unregularised ALS
#: from the official start overfits or stalls on these instances: README, "Instances").
MIN_OVERSAMPLING = 20
#: Rounds a method gets, per tier (the official code runs ``NUM_ITERATIONS = 10`` sweeps;
#: twice that here, since the target is exact ALS's best over as many sweeps).
ROUNDS = {"smoke": 10, "standard": 20, "full": 20}
#: A checkpoint reaches the target when its held-out RMSE <= (1 + TARGET_SLACK) * reference.
TARGET_SLACK = 0.01
#: time_to_target of a run that never reaches the target (censored; ``reached`` is 0).
TTT_CAP = 1000.0


def _check(fields: dict[str, Any]) -> None:
    order, n, pct, r = fields["order"], fields["n"], fields["pct"], fields["r"]
    if order not in (3, 4):
        raise ValueError(f"{fields}: order must be 3 or 4")
    if not 1 <= pct <= 50:
        raise ValueError(f"{fields}: the observed percentage must be in [1, 50]")
    if not 1 <= r < n:
        raise ValueError(f"{fields}: needs 1 <= r < n")
    m = int(round(pct / 100 * n**order))
    if m < MIN_OVERSAMPLING * r * n * order:
        raise ValueError(
            f"{fields}: {m} observations for {r * n * order} parameters; need {MIN_OVERSAMPLING} times as many "
            "(unregularised ALS overfits below that)"
        )


def _feasible(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows :func:`_check` accepts (a grid's corners with too few observations are left out)."""
    out = []
    for f in rows:
        try:
            _check(f)
        except ValueError:
            continue
        out.append(f)
    return out


#: Ids ``<order>w-n<side>-p<percent observed>-r<rank>-s<seed>``.
CATALOG = Catalog(
    IdForm(
        "tensor-completion",
        "{order}w-n{n}-p{pct}-r{r}-s{seed}",
        example="3w-n60-p5-r8-s0",
        order=Int(label="tensor order", minimum=3),
        n=Int(label="side", minimum=2),
        pct=Int(label="percent observed", minimum=1),
        r=Int(label="CP rank", minimum=1),
        seed=Int(),
    ),
    {
        "smoke": grid(order=(3,), n=(36,), pct=(20,), r=(4,), seed=(0,))
        + grid(order=(4,), n=(12,), pct=(20,), r=(3,), seed=(0,)),
        # scaling series (3-way, 20%, rank 4, four sides); 5% and 1% observed at larger sides;
        # rank 16; 4-way at 20% and 5%.
        "standard": grid(order=(3,), n=(40, 60, 80, 120), pct=(20,), r=(4,), seed=(0,))
        + [
            {"order": 3, "n": 100, "pct": 5, "r": 4, "seed": 0},
            {"order": 3, "n": 200, "pct": 1, "r": 4, "seed": 0},
            {"order": 3, "n": 80, "pct": 20, "r": 16, "seed": 0},
        ]
        + [
            {"order": 4, "n": 20, "pct": 20, "r": 4, "seed": 0},
            {"order": 4, "n": 40, "pct": 5, "r": 4, "seed": 0},
        ],
        "full": _feasible(
            grid(
                order=(3,), n=(40, 60, 80, 120, 160, 200), pct=(1, 5, 20), r=(4, 8, 16), seed=(0, 1)
            )
            + grid(order=(4,), n=(20, 30, 40), pct=(1, 5, 20), r=(4, 8), seed=(0, 1))
        ),
    },
    validate=_check,
)


# ----------------------------------------------------------------------------- generation


def generate(order: int, n: int, pct: int, r: int, seed: int) -> dict[str, np.ndarray]:
    """One instance: the truth's factors, observed and held-out entries.

    The stream is ``numpy.random.default_rng([seed, order, n, pct, r])``. The
    truth is ``sum_k prod_m U_m[i_m, k]`` with ``U_m`` of N(0, 1) entries,
    scaled by ``r^(-1/(2 order))`` per factor so an entry has unit variance;
    observed and held-out entries are disjoint uniform draws without
    replacement, their values the truth plus N(0, NOISE^2) noise.

    The start every method gets, ``init`` ``(order, n, r)``, is drawn last
    from the same stream: N(0, INIT_SCALE^2) entries, as the official code's
    ``np.random.normal(0, 0.1, ...)``.

    Returns
    -------
    dict with ``truth_factors`` (list of ``(n, r)``), ``idx`` ``(m, order)``,
    ``y`` ``(m,)``, ``hidx`` ``(h, order)``, ``hy`` ``(h,)``, ``htrue`` ``(h,)``,
    ``init`` ``(order, n, r)``.
    """
    rng = np.random.default_rng([seed, order, n, pct, r])
    shape = (n,) * order
    size = n**order
    scale = r ** (-0.5 / order)
    U = [rng.standard_normal((n, r)) * scale for _ in range(order)]
    m = int(round(pct / 100 * size))
    h = min(HELDOUT, size - m)
    flat = rng.choice(size, m + h, replace=False)
    obs, held = np.sort(flat[:m]), np.sort(flat[m:])
    idx = np.stack(np.unravel_index(obs, shape), axis=1).astype(np.int64)
    hidx = np.stack(np.unravel_index(held, shape), axis=1).astype(np.int64)
    y = cp_at(U, idx) + NOISE * rng.standard_normal(m)
    htrue = cp_at(U, hidx)
    hy = htrue + NOISE * rng.standard_normal(h)
    init = rng.normal(0.0, INIT_SCALE, size=(order, n, r))
    return {
        "truth_factors": U,
        "idx": idx,
        "y": y,
        "hidx": hidx,
        "hy": hy,
        "htrue": htrue,
        "init": init,
    }


def exact_als(
    factors: list[np.ndarray], idx: np.ndarray, y: np.ndarray, sweeps: int
) -> list[np.ndarray]:
    """``sweeps`` sweeps of exact masked ALS (per-row normal equations), modes in order."""
    F = [A.copy() for A in factors]
    for _ in range(sweeps):
        for n in range(len(F)):
            F[n] = exact_mode_update(F, idx, y, n)
    return F


def rmse(factors: list[np.ndarray], idx: np.ndarray, values: np.ndarray) -> float:
    """Root-mean-square difference between the CP model and ``values`` at ``idx``."""
    d = cp_at(factors, idx) - values
    return float(math.sqrt(np.mean(d * d)))


def check_factors(
    answer: Any, shape: tuple[int, ...], rank: int, where: str = ""
) -> list[np.ndarray]:
    """The answer as a list of float arrays ``(I_n, rank)``; :class:`InvalidSolution` names what is wrong.

    Accepts a list/tuple of arrays or a dict with key ``"factors"`` holding one.
    """
    at = f" ({where})" if where else ""
    if isinstance(answer, dict):
        if "factors" not in answer:
            raise InvalidSolution(
                f"the answer{at} is a dict without 'factors'; return a list of {len(shape)} arrays"
            )
        answer = answer["factors"]
    if not isinstance(answer, (list, tuple)):
        raise InvalidSolution(
            f"the answer{at} must be a list of {len(shape)} CP factors of shapes "
            f"{[(s, rank) for s in shape]}, got {type(answer).__name__}"
        )
    if len(answer) != len(shape):
        raise InvalidSolution(
            f"the answer{at} has {len(answer)} factors; the tensor has order {len(shape)}"
        )
    out = []
    for k, (A, s) in enumerate(zip(answer, shape, strict=True)):
        try:
            A = np.asarray(A, dtype=float)
        except (TypeError, ValueError) as exc:
            raise InvalidSolution(f"factor {k}{at} is not a numeric array: {exc}") from None
        if A.shape != (s, rank):
            raise InvalidSolution(f"factor {k}{at} has shape {A.shape}; expected ({s}, {rank})")
        bad = np.argwhere(~np.isfinite(A))
        if bad.size:
            i, j = (int(v) for v in bad[0])
            raise InvalidSolution(
                f"factor {k}{at} entry ({i}, {j}) is {A[i, j]}; factors must be finite"
            )
        out.append(A)
    return out


class RoundsSession(Session):
    """``rounds`` rounds; each answer is the method's current factors, timed by the task.

    State of round 0: ``{"round": 0, "rounds": R, "init": [factors]}``; later
    rounds: ``{"round": k, "rounds": R}``. The answer is the list of factors.
    """

    def __init__(self, instance: Instance, rounds: int) -> None:
        self.inst = instance
        self.rounds = int(rounds)
        self.k = 0
        self.t_sent = 0.0
        self.times: list[float] = []
        self.checkpoints: list[Any] = []

    def state(self) -> dict[str, Any] | None:
        if self.k >= self.rounds:
            return None
        st: dict[str, Any] = {"round": self.k, "rounds": self.rounds}
        if self.k == 0:
            st["init"] = [np.array(A) for A in self.inst.private["init"]]
        self.t_sent = time.monotonic()
        return st

    def apply(self, action: Any) -> None:
        self.times.append(time.monotonic() - self.t_sent)
        # a copy: an in-process method may keep mutating the arrays it returned
        if isinstance(action, (list, tuple)):
            action = [np.array(A, copy=True) if isinstance(A, np.ndarray) else A for A in action]
        self.checkpoints.append(action)
        self.k += 1

    def solution(self) -> dict[str, Any]:
        return {"checkpoints": self.checkpoints, "round_s": self.times}


_TEMPLATE = '''\
"""{name}: a CP completion method for the ``tensor-completion`` task.

Deviations
----------
List every departure from the paper or its official code, and why.
"""

from __future__ import annotations

import numpy as np

from bench import method
from tasks.tensor_completion.cp import exact_mode_update


@method(
    name="{name}",
    kind="{kind}",
    tasks=["tensor-completion"],
    reference="",
    version="1",
    params={{}},
    deterministic=False,  # the factors may be; the solution also holds the task's timings
)
class Completer:
    """Exact masked ALS as a starting point: one sweep per round."""

    def __init__(self, instance, *, seed: int, budget: float):
        d = instance.data
        self.idx, self.y = d["idx"], d["y"]
        self.factors = None

    def select(self, state):
        """Return the current CP factors (a list of (I_n, rank) arrays); see tasks/tensor_completion/README.md."""
        if self.factors is None:
            self.factors = [np.array(A, dtype=float) for A in state["init"]]
        for n in range(len(self.factors)):
            self.factors[n] = exact_mode_update(self.factors, self.idx, self.y, n)
        return self.factors
'''


@register_task
class TensorCompletionTask(CatalogTask):
    """Low-CP-rank tensor completion; held-out RMSE and time to exact ALS's accuracy, per round."""

    meta = TaskMeta(
        name="tensor-completion",
        version="2",  # 2: the target is exact ALS's best over the rounds (1 never published)
        family="tensor_completion",
        area="numerical linear algebra",
        paper=Paper(
            title="Fast Tensor Completion via Approximate Richardson Iteration",
            authors=["Mehrdad Ghadiri", "Matthew Fahrbach", "Yunbum Kook", "Ali Jadbabaie"],
            arxiv="2502.09534",
            venue="ICML 2025",
            code_url="https://github.com/fahrbach/fast-tensor-completion",
        ),
        description=(
            "Complete a noisy random CP rank-r tensor (3-way and 4-way cubes, 1-20% observed) from its observed "
            "entries; the task times each round of the method itself and scores held-out RMSE and the time to "
            "reach exact masked ALS's held-out RMSE within 1%."
        ),
        metrics=[
            Metric(
                name="rmse",
                direction="min",
                description="held-out RMSE against the noisy values, last round",
            ),
            Metric(
                name="truth_rmse",
                direction="min",
                description="held-out RMSE against the noise-free truth, last round",
            ),
            Metric(
                name="train_rmse",
                direction="min",
                description="RMSE on the observed entries, recomputed from the last factors",
            ),
            Metric(
                name="rmse_ratio",
                direction="min",
                description="rmse / the reference (exact ALS's best over the rounds)",
            ),
            Metric(
                name="time_to_target",
                direction="min",
                unit="s",
                description="task-timed cumulative method time to the first round with rmse <= 1.01 x reference (1000 if never)",
            ),
            Metric(name="log10_ttt", direction="min", description="log10(time_to_target)"),
            Metric(
                name="reached", direction="max", description="1 if some round reached the target"
            ),
            Metric(
                name="rounds_to_target",
                direction="min",
                description="rounds to the target (rounds + 1 if never)",
            ),
            Metric(
                name="method_s",
                direction="min",
                unit="s",
                description="task-timed method time over all rounds",
            ),
            Metric(
                name="round_s",
                direction="min",
                unit="s",
                description="median task-timed time of one round (one ALS sweep)",
            ),
        ],
        primary="rmse",
        normalization=Normalization(
            kind="log",
            zero="zero_model",
            one="noise_floor",
            description="log scale between the all-zero model's held-out RMSE and the truth's (the noise level)",
        ),
        budgets={"smoke": 30.0, "standard": 600.0, "full": 1800.0},
    )
    template = _TEMPLATE
    catalog = CATALOG
    reference_cache = True

    def scaffold(self, name: str, kind: str) -> str:
        from bench.scaffold import NAME_RE

        if not NAME_RE.match(name):
            raise ValueError(f"method name {name!r} must be lower case letters, digits, '-' or '_'")
        if kind not in ("method", "baseline"):
            raise ValueError(f"--kind must be 'method' or 'baseline', got {kind!r}")
        return _TEMPLATE.format(name=name, kind=kind)

    def spec(self, fields: dict[str, Any]) -> InstanceSpec:
        """The fields as parameters plus the tensor size and observation count; the order as a tag."""
        size = fields["n"] ** fields["order"]
        params = dict(fields, size=size, observed=int(round(fields["pct"] / 100 * size)))
        return InstanceSpec(
            id=CATALOG.form.format(**fields),
            params=params,
            tags=("generated", f"{fields['order']}-way"),
        )

    def generate(self, fields: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """``data``: ``idx``, ``y``, ``shape``, ``rank``, ``rounds`` per tier; ``private``: held-out entries."""
        g = generate(fields["order"], fields["n"], fields["pct"], fields["r"], fields["seed"])
        shape = np.array([fields["n"]] * fields["order"], dtype=np.int64)
        data = {"idx": g["idx"], "y": g["y"], "shape": shape, "rank": int(fields["r"])}
        private = {"hidx": g["hidx"], "hy": g["hy"], "htrue": g["htrue"], "init": g["init"]}
        return data, private

    def rounds(self, instance_id: str) -> int:
        """Rounds of an instance: those of the first tier (smoke, standard, full) that lists it."""
        for tier in ("smoke", "standard", "full"):
            if instance_id in self.catalog.ids(tier):
                return ROUNDS[tier]
        return ROUNDS["standard"]

    def reference(
        self, fields: dict[str, Any], data: dict[str, Any], private: dict[str, Any]
    ) -> dict[str, Reference]:
        """The target (exact ALS's best held-out RMSE over the rounds), the noise floor, the zero model."""
        rounds = self.rounds(CATALOG.form.format(**fields))
        hidx, hy, htrue = private["hidx"], private["hy"], private["htrue"]
        F = [np.array(A) for A in private["init"]]
        trace, best_F = [], None
        for _ in range(rounds):
            F = exact_als(F, data["idx"], data["y"], 1)
            trace.append(rmse(F, hidx, hy))
            if trace[-1] <= min(trace):
                best_F = [A.copy() for A in F]
        best = int(np.argmin(trace))
        return {
            "exact_als": Reference(
                value=trace[best],
                source=(
                    f"best held-out RMSE of exact masked ALS (per-row normal equations) over {rounds} sweeps "
                    "from the instance's start"
                ),
            ),
            "exact_als_sweep": Reference(
                value=float(best + 1), source="the sweep at which exact ALS is best"
            ),
            "exact_als_truth": Reference(
                value=rmse(best_F, hidx, htrue),
                source="the same factors' RMSE against the noise-free truth",
            ),
            "noise_floor": Reference(
                value=float(math.sqrt(np.mean((hy - htrue) ** 2))),
                source="held-out RMSE of the noise-free truth (the noise level)",
            ),
            "zero_model": Reference(
                value=float(math.sqrt(np.mean(hy**2))),
                source="held-out RMSE of the all-zero tensor",
            ),
        }

    def budget(self, tier: str, spec: InstanceSpec) -> float:
        return float(self.meta.budgets[tier])

    def session(self, instance: Instance, seed: int) -> Session:
        """:meth:`rounds` rounds from the instance's start.

        Every job of an instance starts from the same factors (the instance's
        ``init``), whatever its seed: the methods are deterministic, so the
        seeds repeat the timing.
        """
        return RoundsSession(instance, self.rounds(instance.id))

    def evaluate(self, instance: Instance, solution: Any) -> dict[str, float]:
        """Score every checkpoint on the held-out entries; time to the target from the task's own clock.

        Raises
        ------
        InvalidSolution
            Unless the solution comes from the rounds protocol and every
            checkpoint is a list of finite factors of shapes ``(I_n, rank)``.
        """
        if (
            not isinstance(solution, dict)
            or "checkpoints" not in solution
            or "round_s" not in solution
        ):
            raise InvalidSolution(
                "the solution must come from the rounds protocol: {'checkpoints': [...], 'round_s': [...]}"
            )
        d, p = instance.data, instance.private
        shape = tuple(int(s) for s in d["shape"])
        rank = int(d["rank"])
        cps = solution["checkpoints"]
        times = np.asarray(solution["round_s"], dtype=float)
        if len(cps) == 0 or len(cps) != times.size:
            raise InvalidSolution(f"{len(cps)} checkpoints for {times.size} timed rounds")
        target = (1.0 + TARGET_SLACK) * instance.references["exact_als"].value
        cum = np.cumsum(times)
        ttt, hit = TTT_CAP, len(cps) + 1
        for k, cp in enumerate(cps):
            F = check_factors(cp, shape, rank, where=f"round {k}")
            if hit > len(cps) and rmse(F, p["hidx"], p["hy"]) <= target:
                ttt, hit = float(cum[k]), k + 1
        F = check_factors(cps[-1], shape, rank, where=f"round {len(cps) - 1}")
        last = rmse(F, p["hidx"], p["hy"])
        return {
            "rmse": last,
            "truth_rmse": rmse(F, p["hidx"], p["htrue"]),
            "train_rmse": rmse(F, d["idx"], d["y"]),
            "rmse_ratio": last / instance.references["exact_als"].value,
            "time_to_target": ttt,
            "log10_ttt": math.log10(max(ttt, 1e-6)),
            "reached": float(hit <= len(cps)),
            "rounds_to_target": float(hit),
            "method_s": float(cum[-1]),
            "round_s": float(np.median(times)),
        }
