"""Task ``bilevel-hypercleaning``: data hyper-cleaning as nonconvex bilevel optimisation, with counted oracles.

The trusted side (:class:`CleaningSession`) draws the problem from the job's
seed (:func:`tasks.bilevel.problem.make_problem`: the split and which
training labels are flipped), keeps it, and answers the method's oracle
queries in rounds, counting every call. The method never sees the data: only
the sizes, and the values, gradients and Hessian-vector products it asks for.

Oracles (one query = one call; a round is a list of up to ``MAX_BATCH`` queries)::

    {"oracle": "f",   "x": (n,), "y": (p, K)}           -> {"value", "gx": (n,), "gy": (p, K)}   upper call
    {"oracle": "g",   "x": (n,), "y": (p, K)}           -> {"value", "gx": (n,), "gy": (p, K)}   lower call
    {"oracle": "hvp", "x": (n,), "y": (p, K), "v": (p, K)}
                                                        -> {"yy": (p, K), "xy": (n,)}            one Hessian-vector product

``hvp`` is the product of the joint Hessian of ``g`` with ``(0, v)``
(``grad^2_yy g v`` and ``grad^2_xy g v``): one reverse-mode pass, one call.
The budget is on the total, ``grad_calls = f + g + hvp`` calls; a round that
would pass it is refused, so a method reads ``state["budget_left"]``.

An action is ``{"queries": [...], "report": {"weights", "model"}}`` (the
report, the method's current answer, is optional) or
``{"done": True, "weights": (n,) in [0, 1], "model": (p, K)}``. The task
scores the last report made before 25% and 50% of the budget were spent
(``*_q25``, ``*_q50``: the convergence claim), and the final answer: test
accuracy of the returned model, the upper objective (validation loss), the
lower-level gap of the returned model, and the test accuracy of the lower
level *retrained* by the task from the returned weights (its own converged
L-BFGS solve: the check that the weights, not only the model, are good).
"""

from __future__ import annotations

import functools
import hashlib
import math
from typing import Any

import numpy as np

from bench.instances import Choice, IdForm, Int
from bench.registry import UnknownNameError, register_task, unknown_message
from bench.task import (
    Instance,
    InstanceSpec,
    InvalidSolution,
    Metric,
    Normalization,
    Paper,
    Reference,
    Session,
    Task,
    TaskMeta,
)
from tasks.bilevel.problem import DATASETS, MU, SPLIT, HyperCleaning, accuracy, make_problem

__all__ = [
    "BilevelHyperCleaning",
    "CleaningSession",
    "FORM",
    "TIER_IDS",
    "CHECKPOINTS",
    "MAX_BATCH",
    "ORACLES",
    "problem_for",
    "run_inline",
]

#: Oracle names and what each call counts as.
ORACLES = ("f", "g", "hvp")
#: Queries one round may hold.
MAX_BATCH = 64
#: Fractions of the budget at which the last report is scored.
CHECKPOINTS = (0.25, 0.5)

FORM = IdForm(
    "bilevel-hypercleaning",
    "{dataset}-p{noise}-b{budget}",
    example="digits-p40-b3000",
    dataset=Choice(DATASETS, what="dataset"),
    noise=Int(label="flipped %"),
    budget=Int(label="oracle calls", minimum=1),
)

TIER_IDS: dict[str, tuple[str, ...]] = {
    "smoke": ("digits-p40-b300",),
    "standard": ("digits-p30-b3000", "digits-p50-b3000", "synth-p40-b3000", "synth-p60-b3000"),
    "full": (
        "digits-p40-b3000",
        "digits-p30-b3000",
        "digits-p50-b3000",
        "synth-p40-b3000",
        "synth-p60-b3000",
        "digits-p30-b20000",
        "digits-p50-b20000",
        "digits-p60-b20000",
        "synth-p40-b20000",
        "synth-p60-b20000",
    ),
}


@functools.lru_cache(maxsize=16)
def problem_for(dataset: str, noise_pct: int, seed: int) -> HyperCleaning:
    """The problem of one (instance, seed), cached (the session and the verifier share it)."""
    return make_problem(dataset, noise_pct / 100.0, seed)


@functools.lru_cache(maxsize=16)
def _reference_accuracies(dataset: str, noise_pct: int, seed: int) -> tuple[float, float]:
    """Test accuracy of the retrained lower level with uniform weights (noisy) and with clean-only weights."""
    prob = problem_for(dataset, noise_pct, seed)
    W_noisy = prob.retrain(np.ones(prob.n))
    noisy = accuracy(W_noisy, prob.A_te, prob.b_te)
    clean = accuracy(
        prob.retrain((~prob.flipped).astype(np.float64), W0=W_noisy), prob.A_te, prob.b_te
    )
    return noisy, clean


def _array(value: Any, shape: tuple[int, ...], what: str) -> np.ndarray:
    if not isinstance(value, np.ndarray):
        raise InvalidSolution(
            f"{what} must be a float64 numpy array of shape {shape}, got {type(value).__name__}"
        )
    if value.dtype != np.float64:
        raise InvalidSolution(
            f"{what} has dtype {value.dtype}; send float64 (e.g. a.astype(np.float64))"
        )
    if value.shape != shape:
        raise InvalidSolution(f"{what} has shape {value.shape}; expected {shape}")
    bad = np.flatnonzero(~np.isfinite(value.ravel()))
    if bad.size:
        raise InvalidSolution(
            f"{what} is not finite at flat index {int(bad[0])} ({bad.size} bad values)"
        )
    return value


def _weights(value: Any, n: int, what: str) -> np.ndarray:
    w = _array(value, (n,), what)
    out = np.flatnonzero((w < 0.0) | (w > 1.0))
    if out.size:
        raise InvalidSolution(
            f"{what}: weight {float(w[out[0]]):.6g} at example {int(out[0])} is outside [0, 1]"
        )
    return w


class CleaningSession(Session):
    """The trusted side of one job: the drawn problem, the counted oracles, the checkpoints."""

    def __init__(self, prob: HyperCleaning, seed: int, budget: int) -> None:
        self.prob = prob
        self.seed = int(seed)
        self.budget = int(budget)
        self.calls = {name: 0 for name in ORACLES}
        self.rounds = 0
        self.max_rounds = 2 * self.budget + 10
        self.reply: list[dict[str, Any]] | None = None
        self.report: tuple[np.ndarray, np.ndarray] | None = None
        self.ckpt: list[tuple[np.ndarray, np.ndarray] | None] = [None] * len(CHECKPOINTS)
        self.ckpt_reported = np.zeros(len(CHECKPOINTS), dtype=bool)
        self.answer: tuple[np.ndarray, np.ndarray] | None = None
        self.L = prob.smoothness()

    @property
    def spent(self) -> int:
        return int(sum(self.calls.values()))

    def state(self) -> dict[str, Any] | None:
        if self.answer is not None:
            return None
        return {
            "reply": self.reply,
            "round": self.rounds,
            "budget_left": self.budget - self.spent,
            "calls": dict(self.calls),
            "smoothness": self.L,
        }

    def _check_pair(self, q: dict[str, Any], what: str) -> tuple[np.ndarray, np.ndarray]:
        p = self.prob
        x = _array(q.get("x"), (p.n,), f"{what}: field 'x'")
        y = _array(q.get("y"), (p.p, p.K), f"{what}: field 'y'")
        return x, y

    def _answer(self, q: Any, what: str) -> dict[str, Any]:
        if not isinstance(q, dict):
            raise InvalidSolution(
                f"{what} must be a dict with an 'oracle' ({', '.join(ORACLES)}), got {type(q).__name__}"
            )
        name = q.get("oracle")
        if name not in ORACLES:
            raise InvalidSolution(f"{what}: " + unknown_message("oracle", str(name), ORACLES))
        x, y = self._check_pair(q, what)
        self.calls[name] += 1
        if name == "f":
            value, gy = self.prob.f(y)
            return {"value": value, "gx": np.zeros(self.prob.n), "gy": gy}
        if name == "g":
            value, gx, gy = self.prob.g(x, y)
            return {"value": value, "gx": gx, "gy": gy}
        v = _array(q.get("v"), (self.prob.p, self.prob.K), f"{what}: field 'v'")
        hyy, hxy = self.prob.hvp(x, y, v)
        return {"yy": hyy, "xy": hxy}

    def _take_checkpoints(self, after: int) -> None:
        for i, c in enumerate(CHECKPOINTS):
            if self.ckpt[i] is None and after > c * self.budget:
                if self.report is not None:
                    self.ckpt[i] = self.report
                    self.ckpt_reported[i] = True
                else:
                    self.ckpt[i] = (np.full(self.prob.n, 0.5), np.zeros((self.prob.p, self.prob.K)))

    def apply(self, action: Any) -> None:
        p = self.prob
        what = f"round {self.rounds}"
        if not isinstance(action, dict):
            raise InvalidSolution(
                f"{what}: the action must be a dict with 'queries' or 'done', got {type(action).__name__}"
            )
        self.rounds += 1
        if self.rounds > self.max_rounds:
            raise InvalidSolution(
                f"{what}: more than the {self.max_rounds} rounds this instance allows; send 'done'"
            )
        rep = action.get("report")
        if rep is not None:
            if not isinstance(rep, dict):
                raise InvalidSolution(
                    f"{what}: field 'report' must be a dict with 'weights' and 'model'"
                )
            w = _weights(rep.get("weights"), p.n, f"{what}: report 'weights'")
            m = _array(rep.get("model"), (p.p, p.K), f"{what}: report 'model'")
            self.report = (w.copy(), m.copy())
        if action.get("done"):
            w = _weights(action.get("weights"), p.n, f"{what}: answer 'weights'")
            m = _array(action.get("model"), (p.p, p.K), f"{what}: answer 'model'")
            self.answer = (w.copy(), m.copy())
            self.report = self.answer
            self._take_checkpoints(self.budget + 1)
            return
        queries = action.get("queries")
        if not isinstance(queries, (list, tuple)) or not queries:
            raise InvalidSolution(
                f"{what}: field 'queries' must be a non-empty list of oracle queries (or send 'done')"
            )
        if len(queries) > MAX_BATCH:
            raise InvalidSolution(
                f"{what}: {len(queries)} queries in one round; at most {MAX_BATCH}"
            )
        if self.spent + len(queries) > self.budget:
            raise InvalidSolution(
                f"{what}: {len(queries)} queries but only {self.budget - self.spent} oracle calls are left; send 'done'"
            )
        self._take_checkpoints(self.spent + len(queries))
        self.reply = [self._answer(q, f"{what}: query {i}") for i, q in enumerate(queries)]

    def solution(self) -> dict[str, Any]:
        """The answer, the checkpoints and the counters, built here (never by the method)."""
        if self.answer is None:
            raise InvalidSolution("the method never sent 'done'")
        return {
            "seed": self.seed,
            "weights": self.answer[0],
            "model": self.answer[1],
            "ckpt_models": np.stack([c[1] for c in self.ckpt]),
            "ckpt_reported": self.ckpt_reported.copy(),
            "calls": dict(self.calls),
            "rounds": self.rounds,
        }


def _auc(scores: np.ndarray, positive: np.ndarray) -> float:
    """ROC AUC of ``scores`` for ``positive`` (Mann-Whitney, ties counted half); NaN if a class is empty."""
    pos, neg = scores[positive], scores[~positive]
    if pos.size == 0 or neg.size == 0:
        return math.nan
    order = np.argsort(np.r_[pos, neg], kind="stable")
    ranks = np.empty(order.size)
    allv = np.r_[pos, neg][order]
    # average ranks over ties
    _, first, counts = np.unique(allv, return_index=True, return_counts=True)
    avg = first + (counts - 1) / 2.0 + 1.0
    ranks[order] = np.repeat(avg, counts)
    return float(
        (ranks[: pos.size].sum() - pos.size * (pos.size + 1) / 2.0) / (pos.size * neg.size)
    )


@register_task
class BilevelHyperCleaning(Task):
    """Data hyper-cleaning (bilevel, weighted logistic regression lower level) at a fixed oracle budget."""

    meta = TaskMeta(
        name="bilevel-hypercleaning",
        version="1",
        family="bilevel",
        area="bilevel optimisation",
        paper=Paper(
            title="TSP: A Two-Sided Smoothed Primal-Dual Method for Nonconvex Bilevel Optimization",
            authors=["Songtao Lu"],
            arxiv=None,
            venue="ICML 2025 (PMLR 267:40665-40708)",
            code_url=None,
        ),
        description=(
            "Data hyper-cleaning on digits and a make_classification draw with 30-60% flipped training labels: "
            "learn per-example weights (upper level, clean validation loss) of a weighted multinomial logistic "
            "regression (lower level) through counted oracles (values, gradients, Hessian-vector products) at a "
            "fixed budget; scored by test accuracy of the returned model and of the task's own retrain from the "
            "returned weights."
        ),
        metrics=[
            Metric(
                name="test_acc",
                direction="max",
                description="test accuracy of the returned lower-level model",
            ),
            Metric(
                name="test_acc_retrained",
                direction="max",
                description="test accuracy of the task's converged lower-level solve from the returned weights",
            ),
            Metric(
                name="val_loss",
                direction="min",
                description="upper objective: clean validation cross-entropy of the returned model",
            ),
            Metric(
                name="val_loss_retrained",
                direction="min",
                description="upper objective at the retrained lower-level solution",
            ),
            Metric(
                name="lower_gap",
                direction="min",
                description="g(w, model) - min_W g(w, W) with the returned weights w (lower-level suboptimality)",
            ),
            Metric(
                name="weight_auc",
                direction="max",
                description="ROC AUC of the returned weights for clean (vs flipped) training examples",
            ),
            Metric(
                name="weight_clean",
                direction="max",
                description="mean weight on training examples whose label is clean",
            ),
            Metric(
                name="weight_flipped",
                direction="min",
                description="mean weight on training examples whose label was flipped",
            ),
            Metric(
                name="test_acc_q25",
                direction="max",
                description="test accuracy of the last report before 25% of the budget was spent",
            ),
            Metric(
                name="test_acc_q50",
                direction="max",
                description="test accuracy of the last report before 50% of the budget was spent",
            ),
            Metric(
                name="val_loss_q25",
                direction="min",
                description="validation loss of the last report before 25% of the budget",
            ),
            Metric(
                name="val_loss_q50",
                direction="min",
                description="validation loss of the last report before 50% of the budget",
            ),
            Metric(
                name="grad_calls",
                direction="min",
                unit="calls",
                description="oracle calls spent: upper + lower gradients + Hessian-vector products",
            ),
            Metric(
                name="upper_calls",
                direction="min",
                unit="calls",
                description="upper-level (f) value-and-gradient calls",
            ),
            Metric(
                name="lower_calls",
                direction="min",
                unit="calls",
                description="lower-level (g) value-and-gradient calls",
            ),
            Metric(
                name="hvp_calls",
                direction="min",
                unit="calls",
                description="Hessian-vector products of g",
            ),
            Metric(
                name="rounds",
                direction="min",
                description="protocol rounds (sequential oracle batches)",
            ),
            Metric(
                name="ref_acc_noisy",
                direction="max",
                description="reference (same for every method): retrained test accuracy with uniform weights",
            ),
            Metric(
                name="ref_acc_clean",
                direction="max",
                description="reference (same for every method): retrained test accuracy on the clean examples only (oracle weights)",
            ),
        ],
        primary="test_acc",
        normalization=Normalization(
            kind="linear", zero="chance", one=1.0, description="chance accuracy 1/K to perfect"
        ),
        gap_reference=None,
        interactive=True,
        budgets={"smoke": 30.0, "standard": 120.0, "full": 900.0},
    )

    def instances(self, tier: str) -> list[InstanceSpec]:
        if tier not in TIER_IDS:
            raise ValueError(f"unknown tier {tier!r}; tiers are smoke, standard, full")
        return [self._spec(i) for i in TIER_IDS[tier]]

    @staticmethod
    @functools.cache
    def _known() -> frozenset[str]:
        return frozenset(i for ids in TIER_IDS.values() for i in ids)

    def _fields(self, instance_id: str) -> dict[str, Any]:
        if instance_id not in self._known():
            try:
                FORM.parse(instance_id)
            except ValueError as exc:
                raise UnknownNameError(str(exc)) from None
            raise UnknownNameError(
                unknown_message("bilevel-hypercleaning instance", instance_id, self._known())
            )
        return FORM.parse(instance_id)

    def _spec(self, instance_id: str) -> InstanceSpec:
        f = self._fields(instance_id)
        n_tr, n_val = SPLIT[f["dataset"]]
        params = {
            "dataset": f["dataset"],
            "noise": f["noise"] / 100.0,
            "budget": f["budget"],
            "n_train": n_tr,
            "n_val": n_val,
            "mu": MU,
            "lower": "weighted multinomial logistic regression",
        }
        return InstanceSpec(
            id=instance_id, params=params, tags=(f["dataset"], f"noise{f['noise']}", "logreg")
        )

    def instance_digest(self, instance_id: str) -> str:
        f = self._fields(instance_id)
        prob = problem_for(f["dataset"], f["noise"], 0)
        h = hashlib.sha256(f"bilevel-hypercleaning|{instance_id}|mu={MU}".encode())
        for a in (
            prob.A_tr,
            prob.b_tr,
            prob.clean_tr,
            prob.A_val,
            prob.b_val,
            prob.A_te,
            prob.b_te,
        ):
            h.update(np.ascontiguousarray(a).tobytes())
        return h.hexdigest()

    def load(self, instance_id: str) -> Instance:
        spec = self._spec(instance_id)
        f = self._fields(instance_id)
        prob = problem_for(f["dataset"], f["noise"], 0)
        data = {
            "n_train": prob.n,
            "n_params": prob.p,
            "n_classes": prob.K,
            "mu": MU,
            "budget": int(f["budget"]),
            "checkpoints": list(CHECKPOINTS),
            "max_batch": MAX_BATCH,
        }
        return Instance(
            id=instance_id,
            params=dict(spec.params),
            data=data,
            private={"dataset": f["dataset"], "noise_pct": f["noise"], "budget": int(f["budget"])},
            references={
                "chance": Reference(
                    value=1.0 / prob.K,
                    source="accuracy of a constant predictor on balanced classes",
                )
            },
            tags=spec.tags,
            digest=self.instance_digest(instance_id),
        )

    def session(self, instance: Instance, seed: int) -> CleaningSession:
        pv = instance.private
        return CleaningSession(
            problem_for(pv["dataset"], pv["noise_pct"], int(seed)), int(seed), pv["budget"]
        )

    def evaluate(self, instance: Instance, solution: Any) -> dict[str, float]:
        """Rescore the session's solution on the problem of its seed.

        Raises
        ------
        InvalidSolution
            If the solution is not the session's dict, or an array has the wrong shape or range.
        """
        need = {"seed", "weights", "model", "ckpt_models", "ckpt_reported", "calls", "rounds"}
        if not isinstance(solution, dict) or not need <= set(solution):
            got = sorted(solution) if isinstance(solution, dict) else type(solution).__name__
            raise InvalidSolution(
                f"the solution must be the session's dict with {sorted(need)}, got {got}"
            )
        pv = instance.private
        prob = problem_for(pv["dataset"], pv["noise_pct"], int(solution["seed"]))
        w = _weights(solution["weights"], prob.n, "weights")
        W = _array(solution["model"], (prob.p, prob.K), "model")
        nc = len(CHECKPOINTS)
        cm = _array(solution["ckpt_models"], (nc, prob.p, prob.K), "ckpt_models")
        calls = solution["calls"]
        total = int(sum(int(calls[k]) for k in ORACLES))
        if total > pv["budget"]:
            raise InvalidSolution(f"{total} oracle calls recorded; the budget is {pv['budget']}")
        W_r = prob.retrain(w, W0=W)  # warm start: deterministic, and 10x cheaper than from 0
        flipped = prob.flipped
        noisy_acc, clean_acc = _reference_accuracies(
            pv["dataset"], pv["noise_pct"], int(solution["seed"])
        )
        out = {
            "test_acc": accuracy(W, prob.A_te, prob.b_te),
            "test_acc_retrained": accuracy(W_r, prob.A_te, prob.b_te),
            "val_loss": prob.f(W)[0],
            "val_loss_retrained": prob.f(W_r)[0],
            "lower_gap": max(0.0, prob.lower_value(w, W) - prob.lower_value(w, W_r)),
            "weight_auc": _auc(w, ~flipped),
            "weight_clean": float(w[~flipped].mean()),
            "weight_flipped": float(w[flipped].mean()) if flipped.any() else math.nan,
            "grad_calls": float(total),
            "upper_calls": float(calls["f"]),
            "lower_calls": float(calls["g"]),
            "hvp_calls": float(calls["hvp"]),
            "rounds": float(solution["rounds"]),
            "ref_acc_noisy": noisy_acc,
            "ref_acc_clean": clean_acc,
        }
        for i, c in enumerate(CHECKPOINTS):
            tag = f"q{round(100 * c)}"
            out[f"test_acc_{tag}"] = accuracy(cm[i], prob.A_te, prob.b_te)
            out[f"val_loss_{tag}"] = prob.f(cm[i])[0]
        return out

    def scaffold(self, name: str, kind: str) -> str:
        from bench.scaffold import NAME_RE

        if not NAME_RE.match(name):
            raise ValueError(f"method name {name!r} must be lower case letters, digits, '-' or '_'")
        if kind not in ("method", "baseline"):
            raise ValueError(f"--kind must be 'method' or 'baseline', got {kind!r}")
        return _TEMPLATE.format(name=name, kind=kind)


_TEMPLATE = '''\
"""{name}: a bilevel method for the ``bilevel-hypercleaning`` task.

Deviations
----------
List every departure from the paper or its official code, and why.
"""

from __future__ import annotations

from bench import method
from common.bilevel.program import OracleProgram, Program


@method(
    name="{name}",
    kind="{kind}",
    tasks=["bilevel-hypercleaning"],
    reference="",
    version="1",
    params={{"lr_y": 1.0}},
    deterministic=True,
)
class Method(OracleProgram):
    """Gradient descent on the lower level at uniform weights, as a starting point."""

    def program(self) -> Program:
        lr = float(self.params["lr_y"]) / self.smoothness
        while self.budget_left >= 1:
            (r,) = yield [self.g(self.x, self.y)]
            self.y = self.y - lr * r["gy"]
        return self.x, self.y
'''


def run_inline(
    task: Any,
    instance: Instance,
    program: Any,
    *,
    seed: int = 0,
    params: dict[str, Any] | None = None,
) -> dict[str, float]:
    """Run a method class against the task's session in this process and score it.

    For tests and tuning scripts only; the runner always goes through the sandbox.
    """
    public = Instance(
        id=instance.id,
        params=instance.params,
        data=instance.data,
        tags=instance.tags,
        digest="public",
    )
    obj = program(public, seed=seed, budget=float("inf"), **(params or {}))
    session = task.session(instance, seed)
    while (state := session.state()) is not None:
        session.apply(obj.select(state))
    return task.evaluate(instance, session.solution())
