"""Task ``active-learning``: pool-based active learning under class imbalance and label noise.

The trusted side (:class:`ALSession`) owns the pool, the persistent noisy
oracle, the learner and the clean test set. It draws a random initial batch
from the job's seed, fits the learner, and then, for each round, asks the
method ``select(state)`` for queries until the round's batch of ``B`` labels
is spent; the oracle answers every query at once, and the learner is refitted
at the end of each round. A method may spend a round's batch in one call
(classic strategies) or in several (DIRECT and GALAXY need labels while they
select).

``state`` (all numpy arrays; see the README):

- ``round``, ``batch_size``, ``remaining``, ``n_classes``, ``fresh``;
- ``labeled`` (int64, in query order) and ``labels`` (the oracle's answers);
- on the first call of each round (``fresh`` is True): ``features``
  (``(n_pool, d)``, the learner's inputs) and ``proba`` (``(n_pool, K)``, the
  learner's current predicted probabilities). Later calls in the same round
  omit them: they have not changed.

An action is a 1-D integer array of 1 to ``remaining`` new, distinct pool
indices. The solution (made by the session) is the ordered queries and the
round boundaries; ``evaluate`` replays them with the same learner and
oracle and scores balanced accuracy on the clean test set.
"""

from __future__ import annotations

import functools
import hashlib
from typing import Any

import numpy as np

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
from tasks.active_learning.construct import Pool, Setting, fingerprint, load_pool, parse_id
from tasks.active_learning.learner import CACHE, balanced_accuracy

__all__ = ["ActiveLearning", "ALSession", "TIER_IDS", "replay", "check_action", "round_ends"]

TIER_IDS: dict[str, tuple[str, ...]] = {
    "smoke": ("digits-k3-p00", "digits-k3-p10"),
    "standard": (
        "penbased-k3-p00",
        "penbased-k3-p10",
        "letter-k10-p00",
        "letter-k10-p10",
        "caravan-k2-p00",
        "caravan-k2-p10",
    ),
}
TIER_IDS["full"] = (
    *TIER_IDS["standard"],
    "penbased-k3-p20",
    "letter-k10-p20",
    "caravan-k2-p20",
    "letter-lt100-p00",
    "letter-lt100-p10",
    "letter-lt100-p20",
    "penbased-k3-p10-mlp",
    "letter-k10-p10-mlp",
    "penbased-k3-p10-cleanoracle",
    "letter-k10-p10-cleanoracle",
    "blobs10-k4-p00",
    "blobs10-k4-p10",
)


def round_ends(setting: Setting) -> np.ndarray:
    """Cumulative label counts at the end of each round: ``n_init + r * B`` for ``r = 0..rounds``."""
    return setting.n_init + setting.batch * np.arange(setting.rounds + 1, dtype=np.int64)


def _as_index_array(obj: Any, what: str) -> np.ndarray:
    if isinstance(obj, (int, np.integer)) and not isinstance(obj, bool):
        obj = [int(obj)]
    if not isinstance(obj, (np.ndarray, list, tuple)):
        raise InvalidSolution(f"{what} must be a 1-D integer array of pool indices, got {type(obj).__name__}")
    try:
        a = np.asarray(obj)
    except (TypeError, ValueError) as exc:
        raise InvalidSolution(f"{what} cannot be read as an array: {exc}") from None
    if a.size == 0:
        raise InvalidSolution(f"{what} is empty; return at least one pool index")
    if a.dtype.kind not in "iu":
        raise InvalidSolution(f"{what} has dtype {a.dtype}; return integer pool indices (e.g. idx.astype(np.int64))")
    if a.ndim != 1:
        raise InvalidSolution(f"{what} must be 1-D, got shape {a.shape}")
    return a.astype(np.int64)


def check_action(action: Any, n_pool: int, remaining: int, labeled: np.ndarray, round_: int) -> np.ndarray:
    """The action as int64 indices, or :class:`InvalidSolution` naming what is wrong.

    ``labeled`` is a boolean mask ``(n_pool,)`` of the points already queried.
    """
    what = f"round {round_}: the action"
    a = _as_index_array(action, what)
    if a.size > remaining:
        raise InvalidSolution(f"{what} has {a.size} indices but only {remaining} labels are left in this round's batch")
    bad = np.flatnonzero((a < 0) | (a >= n_pool))
    if bad.size:
        raise InvalidSolution(f"{what}: index {int(a[bad[0]])} is outside the pool [0, {n_pool})")
    uniq, counts = np.unique(a, return_counts=True)
    if (counts > 1).any():
        raise InvalidSolution(f"{what}: index {int(uniq[counts > 1][0])} appears {int(counts.max())} times")
    again = a[labeled[a]]
    if again.size:
        raise InvalidSolution(f"{what}: index {int(again[0])} is already labelled (re-queries are not allowed)")
    return a


class ALSession(Session):
    """The trusted side of one job: pool, oracle, learner; asks the method round by round."""

    def __init__(self, pool: Pool, seed: int) -> None:
        self.pool = pool
        s = pool.setting
        self.n = pool.features.shape[0]
        self.ends = round_ends(s)
        rng = np.random.default_rng(seed)
        init = np.sort(rng.choice(self.n, size=s.n_init, replace=False)).astype(np.int64)
        self.queries: list[int] = init.tolist()
        self.mask = np.zeros(self.n, dtype=bool)
        self.mask[init] = True
        # What the method is told: the noisy oracle (default) or clean labels (LabelBench's mode).
        self.answers = pool.clean if s.oracle == "clean" else pool.noisy
        self.round = 1
        self._fresh = True
        self._proba: np.ndarray | None = None

    def _fit_proba(self) -> np.ndarray:
        idx = np.asarray(self.queries, dtype=np.int64)
        model = CACHE.get(self.pool.fingerprint, self.pool.setting.head, idx, self.pool.noisy[idx], self.pool.features, self.pool.n_classes)
        return model.predict_proba(self.pool.features)

    def state(self) -> dict[str, Any] | None:
        if len(self.queries) >= int(self.ends[-1]):
            return None
        idx = np.asarray(self.queries, dtype=np.int64)
        st: dict[str, Any] = {
            "round": self.round,
            "batch_size": self.pool.setting.batch,
            "remaining": int(self.ends[self.round]) - len(self.queries),
            "n_classes": self.pool.n_classes,
            "labeled": idx,
            "labels": self.answers[idx].astype(np.int64),
            "fresh": self._fresh,
        }
        if self._fresh:
            self._proba = self._fit_proba()
            st["features"] = self.pool.features
            st["proba"] = self._proba
        return st

    def apply(self, action: Any) -> None:
        remaining = int(self.ends[self.round]) - len(self.queries)
        a = check_action(action, self.n, remaining, self.mask, self.round)
        self.queries.extend(a.tolist())
        self.mask[a] = True
        self._fresh = False
        if len(self.queries) == int(self.ends[self.round]):
            self.round += 1
            self._fresh = True

    def solution(self) -> dict[str, np.ndarray]:
        return {"queries": np.asarray(self.queries, dtype=np.int64), "round_ends": self.ends[: self.round].copy()}


def replay(pool: Pool, solution: Any) -> dict[str, float]:
    """Check ``solution`` and score it: refit the learner on every round's prefix.

    Rejects (``InvalidSolution``) a wrong structure, wrong batch sizes,
    out-of-range or duplicate indices. Scores on the clean test set.
    """
    s = pool.setting
    if not isinstance(solution, dict) or set(solution) != {"queries", "round_ends"}:
        got = sorted(solution) if isinstance(solution, dict) else type(solution).__name__
        raise InvalidSolution(f"the solution must be a dict with 'queries' and 'round_ends', got {got}")
    q = _as_index_array(solution["queries"], "queries")
    ends = _as_index_array(solution["round_ends"], "round_ends")
    want = round_ends(s)
    if ends.size != want.size:
        raise InvalidSolution(f"{ends.size} rounds (initial batch included); the protocol has {want.size}")
    sizes = np.diff(np.concatenate([[0], ends]))
    for r, (got_n, want_n) in enumerate(zip(sizes.tolist(), np.diff(np.concatenate([[0], want])).tolist(), strict=True)):
        if got_n != want_n:
            label = "the initial batch" if r == 0 else f"round {r}"
            raise InvalidSolution(f"{label} has {got_n} queries; it must have {want_n}")
    if q.size != int(want[-1]):
        raise InvalidSolution(f"{q.size} queries; the budget is {int(want[-1])}")
    n = pool.features.shape[0]
    bad = np.flatnonzero((q < 0) | (q >= n))
    if bad.size:
        raise InvalidSolution(f"query {int(bad[0])}: index {int(q[bad[0]])} is outside the pool [0, {n})")
    uniq, first, counts = np.unique(q, return_index=True, return_counts=True)
    if (counts > 1).any():
        i = int(uniq[counts > 1][0])
        raise InvalidSolution(f"pool index {i} is queried {int(counts[uniq == i][0])} times")
    K = pool.n_classes
    curve = []
    for e in want.tolist():
        idx = q[:e]
        model = CACHE.get(pool.fingerprint, s.head, idx, pool.noisy[idx], pool.features, K)
        curve.append(balanced_accuracy(pool.test_y, model.predict(pool.test_features), K))
    c = np.asarray(curve)
    x = want.astype(float)
    auc = float(np.sum((c[1:] + c[:-1]) / 2 * np.diff(x)) / (x[-1] - x[0])) if x.size > 1 else float(c[0])
    counts_by_class = np.bincount(pool.clean[q], minlength=K)
    majority = int(np.argmax(pool.class_counts))
    out = {f"bacc_r{r:02d}": float(v) for r, v in enumerate(curve)}
    out.update({f"labels_r{r:02d}": float(e) for r, e in enumerate(want.tolist())})
    out.update(
        final_bacc=float(c[-1]),
        auc_bacc=auc,
        min_class_labels=float(counts_by_class.min()),
        minority_labels=float(counts_by_class.sum() - counts_by_class[majority]),
        wrong_labels=float(np.sum(pool.noisy[q] != pool.clean[q])),
        n_labels=float(q.size),
    )
    return out


_TEMPLATE = '''\
"""{name}: an active-learning strategy for the ``active-learning`` task.

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
    tasks=["active-learning"],
    reference="",
    version="1",
    params={{}},
    deterministic=True,
)
class Strategy:
    """Margin sampling as a starting point: query the points with the smallest top-2 margin."""

    def __init__(self, instance, *, seed: int, budget: float):
        self.rng = np.random.default_rng(seed)

    def select(self, state):
        """Return 1 to state["remaining"] new pool indices (see tasks/active_learning/README.md)."""
        p = np.sort(state["proba"], axis=1)
        margin = p[:, -1] - p[:, -2]
        margin[state["labeled"]] = np.inf
        return np.argsort(margin, kind="stable")[: state["remaining"]].astype(np.int64)
'''


@register_task
class ActiveLearning(Task):
    """Active learning under imbalance and persistent label noise, verified by replay."""

    meta = TaskMeta(
        name="active-learning",
        version="1",
        family="active_learning",
        area="active learning",
        paper=Paper(
            title="Improved Algorithm for Deep Active Learning under Imbalance via Optimal Separation (DIRECT)",
            authors=["Shyam Nuggehalli", "Jifan Zhang", "Lalit K. Jain", "Robert D. Nowak"],
            arxiv="2312.09196",
            venue="ICML 2025",
            code_url="https://github.com/EfficientTraining/LabelBench",
        ),
        description=(
            "Pool-based active learning on imbalanced real data (digits, penbased, letter, Caravan) with a "
            "persistent noisy oracle; a fixed class-weighted head on frozen features; scored by balanced "
            "accuracy on a clean test set, replayed from the queries."
        ),
        metrics=[
            Metric(name="auc_bacc", direction="max", description="normalised area under balanced accuracy vs labels (initial batch to budget)"),
            Metric(name="final_bacc", direction="max", description="balanced test accuracy after the last round"),
            Metric(name="min_class_labels", direction="max", unit="labels", description="labels of the rarest class (by clean label) among the queries"),
            Metric(name="minority_labels", direction="max", unit="labels", description="queried points whose clean class is not the majority class"),
            Metric(name="wrong_labels", direction="min", unit="labels", description="queried points whose oracle label is wrong (informational)"),
            Metric(name="n_labels", direction="max", unit="labels", description="labels spent (always the budget)"),
        ],
        primary="auc_bacc",
        normalization=Normalization(kind="linear", zero="chance", one=1.0, description="chance level 1/K to perfect balanced accuracy"),
        gap_reference=None,
        interactive=True,
        budgets={"smoke": 10.0, "standard": 120.0, "full": 600.0},
    )
    template = _TEMPLATE

    def instances(self, tier: str) -> list[InstanceSpec]:
        if tier not in TIER_IDS:
            raise ValueError(f"unknown tier {tier!r}; tiers are smoke, standard, full")
        return [self._spec(i) for i in TIER_IDS[tier]]

    @staticmethod
    @functools.cache
    def _known() -> frozenset[str]:
        return frozenset(i for ids in TIER_IDS.values() for i in ids)

    def _setting(self, instance_id: str) -> Setting:
        if instance_id not in self._known():
            try:
                parse_id(instance_id)
            except ValueError as exc:
                raise UnknownNameError(str(exc)) from None
            raise UnknownNameError(unknown_message("active-learning instance", instance_id, self._known()))
        return parse_id(instance_id)

    def _spec(self, instance_id: str) -> InstanceSpec:
        s = self._setting(instance_id)
        params = {
            "dataset": s.dataset,
            "k": s.k,
            "longtail_rho": s.longtail,
            "noise": s.noise,
            "n_init": s.n_init,
            "batch_size": s.batch,
            "rounds": s.rounds,
            "budget_labels": s.budget,
            "pca_dims": s.pca,
            "head": s.head,
            "oracle": s.oracle,
        }
        tags = (s.dataset, f"noise{round(s.noise * 100)}", "longtail" if s.longtail else "merged", s.head, f"oracle-{s.oracle}")
        return InstanceSpec(id=instance_id, params=params, tags=tags)

    def instance_digest(self, instance_id: str) -> str:
        s = self._setting(instance_id)
        return hashlib.sha256(f"active-learning|{instance_id}|{fingerprint(s)}".encode()).hexdigest()

    def load(self, instance_id: str) -> Instance:
        spec = self._spec(instance_id)
        pool = load_pool(instance_id)
        s = pool.setting
        params = dict(spec.params)
        params.update(n_pool=int(pool.features.shape[0]), n_test=int(pool.test_y.size), n_classes=pool.n_classes, imbalance_ratio=round(pool.imbalance_ratio, 4))
        data = {
            "n_pool": int(pool.features.shape[0]),
            "n_classes": pool.n_classes,
            "dim": int(pool.features.shape[1]),
            "n_init": s.n_init,
            "batch_size": s.batch,
            "rounds": s.rounds,
        }
        return Instance(
            id=instance_id,
            params=params,
            data=data,
            private={"pool": pool},
            references={"chance": Reference(value=1.0 / pool.n_classes, source="balanced accuracy of a constant or uniformly random predictor")},
            tags=spec.tags,
            digest=self.instance_digest(instance_id),
        )

    def session(self, instance: Instance, seed: int) -> ALSession:
        return ALSession(instance.private["pool"], seed)

    def evaluate(self, instance: Instance, solution: Any) -> dict[str, float]:
        return replay(instance.private["pool"], solution)
