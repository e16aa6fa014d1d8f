"""influence-attribution: data attribution for non-decomposable losses, scored against brute-force LOO.

Deng, Tang and Ma (ICML 2025) propose the Versatile Influence Function (VIF)
for models trained with losses that are not sums of per-point losses. Here a
model is trained by the task (to the unique optimum, damped Newton), and a
method returns, for every training point ``i`` and every test quantity ``j``,
its estimate of ``f_j(theta_{-i}) - f_j(theta_hat)``: how much ``f_j`` moves
when point ``i`` is removed and the model is retrained. The task retrains
itself, once per instance (warm-started Newton from ``theta_hat``; cached on
disk with its cost), and scores the estimate by the Pearson and Spearman
correlation with that brute-force leave-one-out (LOO) change, per test
quantity and averaged over them (the official code's ``correlation.py``), and
by the method's time against the LOO's.

Instances (``<kind>-n<points>-d<features>-s<seed>``):

- ``cox``: Cox proportional hazards (Breslow partial likelihood, ridge 1) on
  synthetic survival data: ``x ~ N(0, I_d)``, event times exponential with
  rate ``exp(x . beta*)``, censoring exponential; test quantities are 50 test
  points' relative hazards ``exp(x_j . theta)`` (the official code's target);
- ``whas500``: the same model on the Worcester Heart Attack Study (500
  patients, 14 covariates, bundled with scikit-survival), 400 training and
  100 test patients drawn by the seed;
- ``listmle``: a linear ListMLE ranker on synthetic queries of 10 items
  (``n / 10`` queries); a training point is an item, whose removal changes
  every term of its query's list; test quantities are the ListMLE losses of
  20 test queries.

Both models are one stratified Breslow objective (``tasks/influence/models.py``).
The method's time is the task's own clock, from the request to the answer
(a one-round session); the LOO time is the cached wall time of the task's
warm-started refits. See ``tasks/influence/README.md``.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np
from scipy import stats

from bench import wire
from bench.instances import Catalog, CatalogTask, Choice, IdForm, Int
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
    Session,
    TaskMeta,
)
from tasks.influence.models import Breslow, fit, loo

__all__ = [
    "CATALOG",
    "KINDS",
    "InfluenceTask",
    "TimedSession",
    "generate",
    "objective",
    "correlations",
]

KINDS = ("cox", "whas500", "listmle")
#: Ridge of every objective (the loss is a sum over points, not a mean).
RIDGE = 1.0
#: Test points (cox, whas500 draws its own 100) and test queries (listmle).
N_TEST_COX = 50
N_TEST_WHAS = 100
N_TEST_QUERIES = 20
#: Items per ListMLE query.
LIST_SIZE = 10
#: Rate of the exponential censoring time in the synthetic Cox data.
CENSOR_RATE = 0.5
#: Points refitted from zero to time a from-scratch retraining (per point, then times n).
COLD_SAMPLE = 20
#: Points retrained with Adam as the official code's LOO does (per point, then times n).
ADAM_SAMPLE = 5


def _check(fields: dict[str, Any]) -> None:
    kind, n, d = fields["kind"], fields["n"], fields["d"]
    if kind == "whas500" and (n != 400 or d != 14):
        raise ValueError(
            f"{fields}: WHAS500 has 14 covariates and 400 training patients (whas500-n400-d14-s<seed>)"
        )
    if kind == "listmle" and n % LIST_SIZE:
        raise ValueError(
            f"{fields}: listmle needs n, the number of items, a multiple of the list size {LIST_SIZE}"
        )
    if n < 5 * d:
        raise ValueError(f"{fields}: needs n >= 5 d")


def _ids(kind: str, sizes, seeds) -> list[dict[str, Any]]:
    return [{"kind": kind, "n": n, "d": d, "seed": s} for (n, d) in sizes for s in seeds]


#: Ids ``<kind>-n<points>-d<features>-s<seed>``.
CATALOG = Catalog(
    IdForm(
        "influence-attribution",
        "{kind}-n{n}-d{d}-s{seed}",
        example="cox-n200-d10-s0",
        kind=Choice(KINDS, what="model"),
        n=Int(label="training points", minimum=1),
        d=Int(label="features", minimum=1),
        seed=Int(),
    ),
    {
        "smoke": _ids("cox", [(100, 5)], (0,)) + _ids("listmle", [(100, 5)], (0,)),
        "standard": _ids(
            "cox", [(200, 10), (400, 10), (700, 10), (1000, 10), (500, 5), (500, 20)], (0,)
        )
        + _ids("whas500", [(400, 14)], (0,))
        + _ids("listmle", [(500, 10), (1000, 10)], (0,)),
        "full": _ids(
            "cox",
            [(200, 10), (400, 10), (700, 10), (1000, 10), (2000, 10), (500, 5), (500, 20)],
            (0, 1, 2),
        )
        + _ids("whas500", [(400, 14)], (0, 1, 2, 3, 4))
        + _ids("listmle", [(500, 10), (1000, 10), (2000, 10)], (0, 1, 2)),
    },
    validate=_check,
)


# ----------------------------------------------------------------------------- generation


def _whas500(seed: int) -> dict[str, np.ndarray]:
    from sksurv.datasets import load_whas500  # bundled with scikit-survival: no download

    X, y = load_whas500()
    X = X.astype(float).to_numpy()
    t = np.asarray(y["lenfol"], dtype=float)
    e = np.asarray(y["fstat"], dtype=float)
    perm = np.random.default_rng([seed, 500]).permutation(len(t))
    test, train = perm[:N_TEST_WHAS], perm[N_TEST_WHAS:]
    mu, sd = X[train].mean(axis=0), X[train].std(axis=0)
    Z = (X - mu) / sd
    return {"X": Z[train], "time": t[train], "event": e[train], "X_test": Z[test]}


def generate(kind: str, n: int, d: int, seed: int) -> dict[str, np.ndarray]:
    """The public arrays of an instance (before the fit).

    ``cox``/``whas500``: ``X`` ``(n, d)``, ``time``, ``event`` (0/1 floats), ``X_test``.
    ``listmle``: ``X`` ``(n, d)``, ``query`` and ``position`` (ints; position 0 is
    the most relevant item of its query; rows sorted by query then position),
    and the same three arrays of the test queries (``X_test``, ``query_test``,
    ``position_test``). Synthetic streams are ``default_rng([seed, n, d, kind])``.
    """
    if kind == "whas500":
        return _whas500(seed)
    rng = np.random.default_rng([seed, n, d, KINDS.index(kind)])
    if kind == "cox":
        X = rng.standard_normal((n + N_TEST_COX, d))
        beta = rng.standard_normal(d) / math.sqrt(d)
        T = rng.exponential(1.0 / np.exp(X[:n] @ beta))
        C = rng.exponential(1.0 / CENSOR_RATE, size=n)
        return {
            "X": X[:n],
            "time": np.minimum(T, C),
            "event": (T <= C).astype(float),
            "X_test": X[n:],
        }
    if kind == "listmle":
        w = 2.0 * rng.standard_normal(d) / math.sqrt(d)

        def lists(q: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
            X = rng.standard_normal((q, LIST_SIZE, d))
            rel = X @ w + rng.standard_normal((q, LIST_SIZE))
            order = np.argsort(-rel, axis=1, kind="stable")
            X = np.take_along_axis(X, order[:, :, None], axis=1).reshape(q * LIST_SIZE, d)
            query = np.repeat(np.arange(q), LIST_SIZE)
            position = np.tile(np.arange(LIST_SIZE), q)
            return X, query, position

        X, query, position = lists(n // LIST_SIZE)
        Xt, qt, pt = lists(N_TEST_QUERIES)
        return {
            "X": X,
            "query": query,
            "position": position,
            "X_test": Xt,
            "query_test": qt,
            "position_test": pt,
        }
    raise ValueError(f"unknown kind {kind!r}; kinds are {', '.join(KINDS)}")


def objective(data: dict[str, Any]) -> tuple[Breslow, str, dict[str, np.ndarray]]:
    """``(training objective, test quantity, test data)`` of an instance's public data."""
    X = np.asarray(data["X"])
    if data["loss"] == "cox":
        model = Breslow(
            X,
            np.asarray(data["time"]),
            np.asarray(data["event"]),
            np.zeros(len(X), dtype=np.int64),
            RIDGE,
        )
        return model, "relative_hazard", {"X": np.asarray(data["X_test"])}
    pos = np.asarray(data["position"]).astype(float)
    model = Breslow(X, pos, np.ones(len(X)), np.asarray(data["query"]), RIDGE)
    Xt = np.asarray(data["X_test"])
    test = {
        "X": Xt,
        "t": np.asarray(data["position_test"]).astype(float),
        "e": np.ones(len(Xt)),
        "strata": np.asarray(data["query_test"]),
    }
    return model, "query_loss", test


# ----------------------------------------------------------------------------- scoring


def correlations(scores: np.ndarray, truth: np.ndarray) -> dict[str, float]:
    """Pearson and Spearman between the columns of ``scores`` and ``truth`` (``(n, n_test)``), averaged.

    A constant column of ``scores`` has no correlation and counts as 0; columns
    where the truth is constant are left out (none in the task's instances).
    """
    pear, spear = [], []
    for j in range(truth.shape[1]):
        y = truth[:, j]
        if np.ptp(y) == 0:
            continue
        x = scores[:, j]
        if np.ptp(x) == 0:
            pear.append(0.0)
            spear.append(0.0)
            continue
        pear.append(float(stats.pearsonr(x, y).statistic))
        spear.append(float(stats.spearmanr(x, y).statistic))
    if not pear:
        raise ValueError("every LOO column is constant")
    return {
        "pearson": float(np.mean(pear)),
        "spearman": float(np.mean(spear)),
        "pearson_min": float(np.min(pear)),
    }


class TimedSession(Session):
    """One round, timed by the task: the empty state goes out, the scores come back.

    ``solution()`` is ``{"scores": <the answer>, "method_s": <seconds from request to answer>}``.
    """

    def __init__(self) -> None:
        self._sent: float | None = None
        self._answer: Any = None
        self._seconds = math.nan

    def state(self) -> dict[str, Any] | None:
        if self._sent is not None:
            return None
        self._sent = time.perf_counter()
        return {}

    def apply(self, action: Any) -> None:
        self._seconds = time.perf_counter() - float(self._sent)
        # a copy: an in-process method may keep the array it returned
        self._answer = np.array(action, copy=True) if isinstance(action, np.ndarray) else action

    def solution(self) -> dict[str, Any]:
        return {"scores": self._answer, "method_s": float(self._seconds)}


_TEMPLATE = """\
    # one score per (training point, test quantity): the estimated change
    # f_j(theta_{-i}) - f_j(theta_hat) when training point i is removed.
    # instance.data: loss ("cox" or "listmle"), X, theta (the trained model), ridge, X_test, ...
    n, n_test = len(instance.data["X"]), int(instance.data["n_test"])
    return np.zeros((n, n_test), dtype=np.float64)
"""


@register_task
class InfluenceTask(CatalogTask):
    """Influence scores for a non-decomposable loss, scored against the task's brute-force LOO.

    A solution is a finite float64 array ``(n, n_test)``: row ``i`` the
    estimated change of the ``n_test`` test quantities when training point
    ``i`` is removed. Through the runner it arrives wrapped by
    :class:`TimedSession` with the task-timed ``method_s``.
    """

    meta = TaskMeta(
        name="influence-attribution",
        version="1",
        family="influence",
        area="data attribution",
        paper=Paper(
            title="A Versatile Influence Function for Data Attribution with Non-Decomposable Loss",
            authors=["Junwei Deng", "Weijing Tang", "Jiaqi W. Ma"],
            arxiv="2412.01335",
            venue="ICML 2025",
            code_url="https://github.com/TRAIS-Lab/Versatile-Influence-Function",
        ),
        description=(
            "Influence of each training point on test quantities of a Cox model (synthetic, WHAS500) and a "
            "ListMLE ranker, scored by correlation with the task's brute-force leave-one-out retraining and by "
            "time against it."
        ),
        metrics=[
            Metric(
                name="pearson",
                direction="max",
                description="Pearson correlation with the LOO change, per test quantity, averaged",
            ),
            Metric(
                name="spearman",
                direction="max",
                description="Spearman correlation with the LOO change, averaged",
            ),
            Metric(
                name="pearson_min",
                direction="max",
                description="the lowest per-test-quantity Pearson",
            ),
            Metric(
                name="method_s",
                direction="min",
                unit="s",
                description="task-timed method time (request to answer)",
            ),
            Metric(
                name="time_ratio",
                timed=True,
                direction="min",
                description="method_s / the task's warm-started LOO wall time (cached, measured once per instance)",
            ),
            Metric(
                name="log10_speedup",
                timed=True,
                direction="max",
                description="log10(LOO wall time / method_s)",
            ),
            Metric(
                name="log10_speedup_cold",
                timed=True,
                direction="max",
                description="log10(from-scratch LOO time / method_s); the from-scratch time is n x the mean "
                f"of {COLD_SAMPLE} refits from zero",
            ),
            Metric(
                name="log10_speedup_adam",
                timed=True,
                direction="max",
                description="log10(paper-protocol LOO time / method_s); that time is n x the mean of "
                f"{ADAM_SAMPLE} retrainings by Adam (lr 0.01, 200 full-batch epochs), as the official code",
            ),
        ],
        primary="pearson",
        normalization=Normalization(
            kind="linear",
            zero="uncorrelated",
            one="exact",
            description="Pearson: 0 for scores unrelated to LOO, 1 for LOO itself",
        ),
        budgets={"smoke": 30.0, "standard": 300.0, "full": 1800.0},
    )
    template = _TEMPLATE
    scaffold_deterministic = "the scores may be; the session's solution also holds the task's clock"
    catalog = CATALOG
    reference_cache = True
    # the LOO timings are this machine's: the digest names the data, not the machine
    measured = ("loo_s", "cold_s", "adam_s")

    def spec(self, fields: dict[str, Any]) -> InstanceSpec:
        """The fields as parameters; the model as a tag."""
        model = "cox" if fields["kind"] in ("cox", "whas500") else "listmle"
        return InstanceSpec(
            id=CATALOG.form.format(**fields),
            params=dict(fields),
            tags=("bundled" if fields["kind"] == "whas500" else "generated", model),
        )

    def generate(self, fields: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """``data``: the training data, the trained ``theta``, the ``ridge``; ``private``: the LOO changes.

        The LOO (``loo_delta``, ``(n, n_test)``) and its cost are computed once
        and kept on disk (:func:`bench.cache.cached_npz`), keyed by the task
        version, the id, the digest of the public data and that of the
        family's source code.
        """
        kind = fields["kind"]
        data: dict[str, Any] = dict(generate(kind, fields["n"], fields["d"], fields["seed"]))
        data["loss"] = "listmle" if kind == "listmle" else "cox"
        data["ridge"] = RIDGE
        model, quantity, test = objective(data)
        data["theta"] = fit(model)
        data["quantity"] = quantity
        data["n_test"] = int(
            len(test["X"]) if quantity == "relative_hazard" else len(np.unique(test["strata"]))
        )
        from bench.cache import cache_dir, cached_npz, source_digest

        instance_id = CATALOG.form.format(**fields)
        digest = wire.digest(data)[:16]
        code = source_digest(__name__)
        path = (
            cache_dir(self.meta.family, "loo")
            / f"{instance_id}-v{self.meta.version}-{digest}-{code}.npz"
        )

        def compute() -> dict[str, np.ndarray]:
            from threadpoolctl import threadpool_limits

            with threadpool_limits(1):
                return loo(
                    model,
                    data["theta"],
                    quantity,
                    test,
                    cold_sample=COLD_SAMPLE,
                    adam_sample=ADAM_SAMPLE,
                    seed=fields["seed"],
                )

        res = cached_npz(path, compute)
        private = {
            "loo_delta": np.asarray(res["delta"], dtype=float),
            "loo_s": float(res["seconds"]),
            "loo_iters": float(np.mean(res["iters"])),
            "cold_s": float(res["cold_seconds_per_point"]) * fields["n"],
            "cold_max_diff": float(res["cold_max_diff"]),
            "adam_s": float(res["adam_seconds_per_point"]) * fields["n"],
            "adam_max_diff": float(res["adam_max_diff"]),
        }
        return data, private

    def reference(
        self, fields: dict[str, Any], data: dict[str, Any], private: dict[str, Any]
    ) -> dict[str, Reference]:
        """The LOO's own cost, and the ends of the Pearson scale."""
        n = fields["n"]
        return {
            "exact": Reference(value=1.0, source="the LOO change itself (Pearson 1)"),
            "uncorrelated": Reference(
                value=0.0, source="scores unrelated to the LOO change (Pearson 0)"
            ),
            "loo_s": Reference(
                value=private["loo_s"],
                source=f"wall time of the task's {n} warm-started Newton refits (numpy, analytic Hessian, one "
                "thread), measured once when the instance was first built",
            ),
            "loo_iters": Reference(
                value=private["loo_iters"], source="mean Newton iterations per warm-started refit"
            ),
            "cold_loo_s": Reference(
                value=private["cold_s"],
                source=f"n x the mean wall time of {COLD_SAMPLE} refits from theta = 0 (retraining from scratch)",
            ),
            "adam_loo_s": Reference(
                value=private["adam_s"],
                source=f"n x the mean wall time of {ADAM_SAMPLE} retrainings as the official code's LOO "
                "(Adam, lr 0.01, 200 full-batch epochs from zero, analytic gradient)",
            ),
            "adam_max_diff": Reference(
                value=private["adam_max_diff"],
                source="largest |theta_adam - theta_newton| over those retrainings (how far 200 Adam epochs stop "
                "from the exact LOO optimum)",
            ),
        }

    def session(self, instance: Instance, seed: int) -> Session:
        """One timed round (:class:`TimedSession`)."""
        return TimedSession()

    def evaluate(self, instance: Instance, solution: Any) -> dict[str, float]:
        """Correlate the scores with the LOO change; time against the cached LOO time.

        ``solution`` is the session's ``{"scores", "method_s"}``; a bare array
        (a method called outside the runner) is scored with ``method_s`` NaN.

        Raises
        ------
        InvalidSolution
            Unless the scores are a finite float64 array of shape ``(n, n_test)``.
        """
        if isinstance(solution, dict):
            if "scores" not in solution:
                raise InvalidSolution(
                    "the solution must be {'scores': array (n, n_test), 'method_s': seconds}"
                )
            scores, seconds = solution["scores"], float(solution.get("method_s", math.nan))
        else:
            scores, seconds = solution, math.nan
        truth = instance.private["loo_delta"]
        scores = as_float_array(
            scores,
            truth.shape,
            what=f"a finite float64 array of shape {truth.shape}: (training points, test quantities)",
        )
        out = correlations(scores, truth)
        loo_s = instance.references["loo_s"].value
        cold_s = instance.references["cold_loo_s"].value
        adam_s = instance.references["adam_loo_s"].value
        ok = math.isfinite(seconds) and seconds > 0
        out.update(
            method_s=seconds,
            time_ratio=seconds / loo_s if ok else math.nan,
            log10_speedup=math.log10(loo_s / seconds) if ok else math.nan,
            log10_speedup_cold=math.log10(cold_s / seconds) if ok else math.nan,
            log10_speedup_adam=math.log10(adam_s / seconds) if ok else math.nan,
        )
        return out
