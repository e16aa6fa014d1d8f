"""local-causal-relations: is each observed X a definite cause, a definite non-cause or a possible cause of Y?

Li, Liu, Xie, Zhang, Liu and Geng, "Local Identifying Causal Relations in the Presence of
Latent Variables" (LocICR, ICML 2025). The task draws a random DAG (p nodes, 10-20 % of them
hidden common causes) and one observed target Y. A method sees only the number of observed
variables, the index of Y and which CI test answers it; it learns everything else by asking
the task's CI-test oracle, round by round (:class:`CISession`), and ends with one label per
observed variable. The task answers every query, counts the distinct ones, and scores the
labels against the ancestral relations read off the true PAG (:mod:`tasks.local_causal.graphs`).

Modes: ``oracle`` (d-separation in the true DAG among the observed variables; p-value 1 for
separated, 0 otherwise), ``gauss`` (Fisher's z test on ``n`` samples of a linear-Gaussian
SEM that only the task holds) and ``disc`` (causal-learn's G^2 test on ``n`` samples of a
binary Bayesian network on the same DAG, also held by the task only). See
tasks/local_causal/README.md.
"""

from __future__ import annotations

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
    RoundSession,
    Session,
    TaskMeta,
)
from tasks.local_causal.graphs import (
    CAUSE,
    NON_CAUSE,
    POSSIBLE,
    GSquare,
    ancestral_labels,
    d_separated,
    dag_lists,
    fisher_z_pvalue,
    random_dag,
    sample_discrete,
    sample_gaussian,
    true_pag,
)

__all__ = ["CATALOG", "LocalCausalTask", "CISession", "macro_f1", "MAX_QUERIES"]

#: A job may ask at most this many CI queries (repeats included); more is an invalid run.
MAX_QUERIES = 400_000
#: At most this many queries in one round.
MAX_BATCH = 4096


def _check(fields: dict[str, Any]) -> None:
    if fields["mode"] == "oracle" and fields["n"] != 0:
        raise ValueError(f"{fields}: oracle instances have no samples; write n0")
    if fields["mode"] in ("gauss", "disc") and fields["n"] < 100:
        raise ValueError(f"{fields}: {fields['mode']} instances need n >= 100 samples")
    if not 5 <= fields["p"] <= 200:
        raise ValueError(f"{fields}: p must be in [5, 200]")
    if not 0 <= fields["h"] <= 50:
        raise ValueError(f"{fields}: hidden percentage h must be in [0, 50]")


#: ``<mode>-p<nodes>-h<hidden %>-n<samples>-s<seed>``.
CATALOG = Catalog(
    IdForm(
        "local-causal-relations",
        "{mode}-p{p}-h{h}-n{n}-s{seed}",
        example="oracle-p20-h15-n0-s0",
        mode=Choice(("oracle", "gauss", "disc")),
        p=Int(label="nodes", minimum=1),
        h=Int(label="hidden %"),
        n=Int(label="samples"),
        seed=Int(),
    ),
    {
        "smoke": grid(mode=("oracle",), p=(12,), h=(15,), n=(0,), seed=(0,))
        + grid(mode=("gauss",), p=(12,), h=(15,), n=(2000,), seed=(0,)),
        "standard": grid(mode=("oracle",), p=(20, 30), h=(15,), n=(0,), seed=(0, 1, 2))
        + grid(mode=("gauss",), p=(20, 30), h=(15,), n=(2000,), seed=(0, 1, 2))
        + grid(mode=("disc",), p=(20,), h=(15,), n=(2000,), seed=(0, 1, 2)),
        "full": grid(mode=("oracle",), p=(20, 30, 40, 50), h=(10, 20), n=(0,), seed=(0, 1, 2, 3, 4))
        + grid(
            mode=("gauss",), p=(20, 30, 40, 50), h=(10, 20), n=(1000, 5000), seed=(0, 1, 2, 3, 4)
        )
        + grid(
            mode=("disc",), p=(20, 30, 40, 50), h=(10, 20), n=(2000, 5000), seed=(0, 1, 2, 3, 4)
        ),
    },
    validate=_check,
)


def _choose_target(pag: np.ndarray, rng: np.random.Generator) -> tuple[int, np.ndarray]:
    """The observed Y whose labels are most balanced: max (min class count, definite causes), ties at random."""
    q = pag.shape[0]
    best, best_key, best_labels = -1, None, None
    for y in rng.permutation(q):
        lab = ancestral_labels(pag, int(y))
        c = np.bincount(lab[lab >= 0], minlength=3)
        key = (int(c.min()), int(c[CAUSE]), int(c[POSSIBLE]))
        if best_key is None or key > best_key:
            best, best_key, best_labels = int(y), key, lab
    return best, best_labels


def macro_f1(truth: np.ndarray, pred: np.ndarray) -> tuple[float, dict[int, float]]:
    """Macro-F1 over the classes present in ``truth`` or ``pred`` (each class's F1 = 2TP / (2TP + FP + FN))."""
    per: dict[int, float] = {}
    for c in (NON_CAUSE, POSSIBLE, CAUSE):
        tp = int(np.sum((pred == c) & (truth == c)))
        fp = int(np.sum((pred == c) & (truth != c)))
        fn = int(np.sum((pred != c) & (truth == c)))
        if tp + fp + fn:
            per[c] = 2 * tp / (2 * tp + fp + fn)
    return float(np.mean(list(per.values()))) if per else 1.0, per


class CISession(RoundSession):
    """The CI-test oracle of one job: answers batches of ``(x, y, S)`` queries and counts them.

    ``state()`` gives ``{"round", "p_values"}`` (the answers to the previous batch, in order;
    empty on round 0). The method answers either a batch of queries
    ``{"x": int64 (k,), "y": int64 (k,), "S": bool (k, q)}`` (``S[i]`` marks the
    conditioning set of query i among the q observed variables) or its final labels
    ``{"labels": int64 (q,)}`` (0 definite non-cause, 1 possible cause, 2 definite cause;
    -1 at the target). The solution holds the labels and the task's own counts.

    Unlike :class:`~bench.task.RoundSession`'s default, ``round`` counts the action
    being checked too (the first one is round 1), and there is no round limit.
    """

    def __init__(self, instance: Instance) -> None:
        super().__init__()
        self.q = int(instance.data["n_vars"])
        self.target = int(instance.data["target"])
        self.mode = str(instance.data["mode"])
        pv = instance.private
        self._adj = pv["adj"]
        self._obs = [int(v) for v in pv["observed"]]
        self._lists = dag_lists(self._adj)
        self._corr = pv.get("corr")
        self._gsq = GSquare(pv["discrete"]) if self.mode == "disc" else None
        self._n = int(instance.data["n_samples"])
        self._cache: dict[tuple[int, int, bytes], float] = {}
        self.queries = 0
        self.max_cond = 0
        self._answers = np.zeros(0)

    def _pvalue(self, x: int, y: int, s: list[int]) -> float:
        if self.mode == "oracle":
            sep = d_separated(
                self._adj, self._obs[x], self._obs[y], {self._obs[c] for c in s}, self._lists
            )
            return 1.0 if sep else 0.0
        if self._gsq is not None:
            return self._gsq(x, y, s)
        return fisher_z_pvalue(self._corr, self._n, x, y, s)

    def round_state(self) -> dict[str, Any]:
        return {"round": self.round, "p_values": self._answers}

    def apply(self, action: Any) -> None:
        self.round += 1
        if not isinstance(action, dict):
            raise self._invalid(
                f"the action must be a dict with 'labels' or 'x', 'y', 'S'; got {type(action).__name__}"
            )
        if "labels" in action:
            self.answer = check_labels(action["labels"], self.q, self.target)
            return
        self._check_keys(action, ("x", "y", "S"), "a query batch")
        x = np.asarray(action["x"])
        y = np.asarray(action["y"])
        s = np.asarray(action["S"])
        if (
            x.dtype.kind not in "iu"
            or y.dtype.kind not in "iu"
            or x.ndim != 1
            or x.shape != y.shape
        ):
            raise self._invalid("'x' and 'y' must be 1-D integer arrays of the same length")
        k = x.size
        if not 1 <= k <= MAX_BATCH:
            raise self._invalid(f"a batch has 1 to {MAX_BATCH} queries, got {k}")
        if s.dtype != np.bool_ or s.shape != (k, self.q):
            raise self._invalid(
                f"'S' must be a bool array of shape ({k}, {self.q}), got {s.dtype} {s.shape}"
            )
        if ((x < 0) | (x >= self.q) | (y < 0) | (y >= self.q)).any():
            raise self._invalid(f"a variable index is outside [0, {self.q})")
        if (x == y).any():
            raise self._invalid(
                f"query {int(np.flatnonzero(x == y)[0])} tests a variable against itself"
            )
        rows = np.arange(k)
        if s[rows, x].any() or s[rows, y].any():
            raise self._invalid("a conditioning set contains x or y of its own query")
        self.queries += k
        if self.queries > MAX_QUERIES:
            raise InvalidSolution(f"more than {MAX_QUERIES} CI queries: the query budget is spent")
        out = np.empty(k)
        for i in range(k):
            a, b = int(min(x[i], y[i])), int(max(x[i], y[i]))
            key = (a, b, np.packbits(s[i]).tobytes())
            val = self._cache.get(key)
            if val is None:
                cond = np.flatnonzero(s[i]).tolist()
                self.max_cond = max(self.max_cond, len(cond))
                val = self._pvalue(a, b, cond)
                self._cache[key] = val
            out[i] = val
        self._answers = out

    def solution(self) -> dict[str, Any]:
        labels = self.answer if self.answer is not None else np.full(self.q, -2, dtype=np.int64)
        return {
            "labels": labels,
            "ci_tests": len(self._cache),
            "ci_queries": self.queries,
            "rounds": self.round,
            "max_cond": self.max_cond,
        }


def check_labels(obj: Any, q: int, target: int) -> np.ndarray:
    """The labels as int64, or :class:`InvalidSolution` naming what is wrong."""
    a = np.asarray(obj)
    if a.dtype.kind not in "iu" or a.shape != (q,):
        raise InvalidSolution(
            f"labels must be an integer array of shape ({q},), got {a.dtype} {a.shape}"
        )
    a = a.astype(np.int64)
    if a[target] != -1:
        raise InvalidSolution(f"labels[{target}] (the target Y) must be -1, got {int(a[target])}")
    rest = np.delete(np.arange(q), target)
    bad = rest[(a[rest] < 0) | (a[rest] > 2)]
    if bad.size:
        raise InvalidSolution(
            f"labels[{int(bad[0])}] = {int(a[bad[0]])} is not 0 (non-cause), 1 (possible) or 2 (cause)"
        )
    return a


_TEMPLATE = '''\
"""{name}: a method for the ``local-causal-relations`` task (see tasks/local_causal/README.md).

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
    tasks=["local-causal-relations"],
    reference="",
    version="1",
    params={{}},
    deterministic=True,
)
class Labeller:
    """Marginal independence as a start: X independent of Y -> definite non-cause, else possible."""

    def __init__(self, instance, *, seed: int, budget: float):
        self.q, self.y = instance.data["n_vars"], instance.data["target"]
        self.xs = [x for x in range(self.q) if x != self.y]

    def select(self, state):
        if state["round"] == 0:
            k = len(self.xs)
            return {{"x": np.array(self.xs, dtype=np.int64), "y": np.full(k, self.y, dtype=np.int64),
                    "S": np.zeros((k, self.q), dtype=bool)}}
        labels = np.full(self.q, 1, dtype=np.int64)
        labels[self.xs] = np.where(state["p_values"] > 0.01, 0, 1)
        labels[self.y] = -1
        return {{"labels": labels}}
'''


@register_task
class LocalCausalTask(CatalogTask):
    """Label every observed X against the target Y through a counting CI-test oracle; macro-F1 vs the true PAG."""

    meta = TaskMeta(
        name="local-causal-relations",
        version="1",
        family="local_causal",
        area="causal discovery",
        paper=Paper(
            title="Local Identifying Causal Relations in the Presence of Latent Variables",
            authors=["Zheng Li", "Zeyu Liu", "Feng Xie", "Hao Zhang", "Chunchen Liu", "Zhi Geng"],
            venue="ICML 2025",
            code_url="https://github.com/zhengli0060/LocICR",
        ),
        description=(
            "Random DAGs with hidden common causes and one observed target Y: label every observed X "
            "as a definite cause, definite non-cause or possible cause of Y, asking a CI-test oracle "
            "(d-separation, Fisher z on task-held Gaussian data or G^2 on task-held binary data) that the task counts; scored by "
            "3-class macro-F1 against the relations in the true PAG."
        ),
        metrics=[
            Metric(
                name="macro_f1",
                direction="max",
                description="3-class macro-F1 of the labels against the true PAG's relations (classes present in truth or labels)",
            ),
            Metric(
                name="accuracy",
                direction="max",
                description="fraction of observed X (Y excluded) labelled as in the true PAG",
            ),
            Metric(
                name="ci_tests",
                direction="min",
                unit="tests",
                description="distinct CI tests (unordered pair, conditioning set) the task answered",
            ),
            Metric(
                name="ci_queries",
                direction="min",
                unit="queries",
                description="CI queries asked, repeats included",
            ),
            Metric(
                name="rounds",
                direction="min",
                description="protocol rounds (query batches + the final labels)",
            ),
            Metric(
                name="max_cond",
                direction="min",
                description="largest conditioning set among the distinct tests",
            ),
            Metric(
                name="f1_non_cause",
                direction="max",
                description="F1 of the class 'definite non-cause' (1 when the class is absent from truth and labels)",
            ),
            Metric(
                name="f1_possible", direction="max", description="F1 of the class 'possible cause'"
            ),
            Metric(
                name="f1_cause", direction="max", description="F1 of the class 'definite cause'"
            ),
        ],
        primary="macro_f1",
        normalization=Normalization(
            kind="linear",
            zero="all_possible",
            one=1.0,
            description="0 for labelling every X possible (no test), 1 for the true PAG's relations",
        ),
        gap_reference=None,
        interactive=True,
        budgets={"smoke": 30.0, "standard": 180.0, "full": 1800.0},
    )
    template = _TEMPLATE
    catalog = CATALOG

    def scaffold(self, name: str, kind: str) -> str:
        from bench.scaffold import NAME_RE

        if not NAME_RE.match(name):
            raise ValueError(f"method name {name!r} must be lower case letters, digits, '-' or '_'")
        if kind not in ("method", "baseline"):
            raise ValueError(f"--kind must be 'method' or 'baseline', got {kind!r}")
        return _TEMPLATE.format(name=name, kind=kind)

    def spec(self, fields: dict[str, Any]) -> InstanceSpec:
        n_hidden = int(round(fields["p"] * fields["h"] / 100))
        params = {**fields, "n_observed": fields["p"] - n_hidden, "degree": 2.0}
        return InstanceSpec(
            id=CATALOG.form.format(**fields), params=params, tags=(fields["mode"], "generated")
        )

    def generate(self, fields: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """Public: the number of observed variables, the target and the test's kind. Private: the DAG, the data's correlations, the truth."""
        dag = random_dag(fields["p"], fields["h"], fields["seed"])
        pag = true_pag(dag)
        rng = np.random.default_rng([fields["seed"], fields["p"], 31])
        target, labels = _choose_target(pag, rng)
        data = {
            "n_vars": int(dag.observed.size),
            "target": target,
            "mode": fields["mode"],
            "n_samples": int(fields["n"]),
        }
        private: dict[str, Any] = {
            "adj": dag.adj,
            "observed": dag.observed,
            "hidden": dag.hidden,
            "pag": pag,
            "truth": labels,
        }
        if fields["mode"] == "gauss":
            x = sample_gaussian(dag, fields["n"], fields["seed"])[:, dag.observed]
            private["corr"] = np.corrcoef(x, rowvar=False)
        elif fields["mode"] == "disc":
            private["discrete"] = sample_discrete(dag, fields["n"], fields["seed"])[:, dag.observed]
        return data, private

    def reference(
        self, fields: dict[str, Any], data: dict[str, Any], private: dict[str, Any]
    ) -> dict[str, Reference]:
        t = private["truth"]
        c = np.bincount(t[t >= 0], minlength=3)
        keep = t >= 0
        trivial, _ = macro_f1(t[keep], np.full(int(keep.sum()), POSSIBLE))
        return {
            "perfect": Reference(value=1.0, source="macro-F1 of the true PAG's relations"),
            "all_possible": Reference(
                value=trivial, source="macro-F1 of labelling every X a possible cause"
            ),
            "n_cause": Reference(
                value=float(c[CAUSE]), source="definite causes of Y in the true PAG"
            ),
            "n_possible": Reference(
                value=float(c[POSSIBLE]), source="possible causes of Y in the true PAG"
            ),
            "n_non_cause": Reference(
                value=float(c[NON_CAUSE]), source="definite non-causes of Y in the true PAG"
            ),
        }

    def session(self, instance: Instance, seed: int) -> Session:
        return CISession(instance)

    def evaluate(self, instance: Instance, solution: Any) -> dict[str, float]:
        """Score the labels against the true PAG's relations; the counts are the session's own.

        Raises
        ------
        InvalidSolution
            Unless ``solution`` is the session's dict and its labels are one of 0, 1, 2 per
            observed X (-1 at Y).
        """
        need = {"labels", "ci_tests", "ci_queries", "rounds", "max_cond"}
        if not isinstance(solution, dict) or set(solution) != need:
            raise InvalidSolution(
                f"the solution must be the session's dict with keys {sorted(need)}"
            )
        q, target = int(instance.data["n_vars"]), int(instance.data["target"])
        labels = check_labels(solution["labels"], q, target)
        truth = instance.private["truth"]
        keep = np.arange(q) != target
        f1, per = macro_f1(truth[keep], labels[keep])
        out = {
            "macro_f1": f1,
            "accuracy": float(np.mean(truth[keep] == labels[keep])),
            "f1_non_cause": per.get(NON_CAUSE, 1.0),
            "f1_possible": per.get(POSSIBLE, 1.0),
            "f1_cause": per.get(CAUSE, 1.0),
        }
        for k in ("ci_tests", "ci_queries", "rounds", "max_cond"):
            v = solution[k]
            if not isinstance(v, (int, np.integer)) or v < 0:
                raise InvalidSolution(f"{k} must be a non-negative integer, got {v!r}")
            out[k] = float(v)
        return out
