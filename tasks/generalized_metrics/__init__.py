"""generalized-metrics: imbalanced binary classification scored by a generalized metric.

Mao, Mohri and Zhong (ICML 2025) optimise *generalized metrics* of binary
classification: F_beta, Jaccard, AM (the mean of TPR and TNR) and weighted
accuracy, each a ratio of two linear functions of the confusion matrix. An
instance is an imbalanced binary problem (minority rate 2-10 %), a target
metric and a hypothesis class (``linear`` or a one-hidden-layer ``mlp``). A
method sees the training features and labels and the test features, and
returns one 0/1 label per test point; the task owns the test labels and
recomputes every metric from the returned labels. See
``tasks/generalized_metrics/README.md``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bench.instances import Catalog, CatalogTask, Choice, IdForm, Int, grid
from bench.registry import register_task
from bench.solutions import as_int_vector
from bench.task import Instance, InstanceSpec, Metric, Normalization, Paper, Reference, TaskMeta

__all__ = [
    "CATALOG",
    "DATASETS",
    "METRICS",
    "TRACKS",
    "GeneralizedMetricsTask",
    "coefficients",
    "confusion",
    "load",
    "metric_value",
    "score_all",
]

#: Data sets: ``synth`` (``make_classification``), ``cancer`` (breast_cancer,
#: malignant = positive), ``digits`` (one digit of :data:`DIGITS` against the rest). All are
#: bundled with scikit-learn: nothing is downloaded.
DATASETS = ("synth", "cancer", "digits")
#: The positive digit of ``digits`` for seed ``s`` is ``DIGITS[s % 5]`` (digits a linear model
#: does not separate perfectly from the rest; digit 0 it does).
DIGITS = (8, 3, 9, 1, 5)
#: Target metrics (ids): F1, F0.5, F2, Jaccard, AM, weighted accuracy.
METRICS = ("f1", "f05", "f2", "jaccard", "am", "wacc")
#: Hypothesis classes: linear scores, or a one-hidden-layer network.
TRACKS = ("linear", "mlp")
#: Weighted accuracy (Koyejo et al. 2014's form, w1 TP + w2 TN over w1 TP + w2 TN + w3 FP + w4 FN):
#: a positive counts this many times a negative (w1 = w4 = WACC_POSITIVE_WEIGHT, w2 = w3 = 1).
WACC_POSITIVE_WEIGHT = 5.0
#: Share of each data set held out as the test set (stratified).
TEST_FRACTION = 0.3
_BETA = {"f1": 1.0, "f05": 0.5, "f2": 2.0}


def coefficients(metric: str, positive_rate: float) -> tuple[np.ndarray, np.ndarray]:
    """``(a, b)`` with ``metric = (a . c) / (b . c)`` for ``c = (TP, FP, FN, TN) / n``.

    Every metric of :data:`METRICS` is such a ratio of two linear functions of
    the confusion fractions (constants are written with ``TP+FP+FN+TN = 1``);
    AM's coefficients hold the positive rate ``P / n`` of the sample it is
    computed on. This is the form METRO's reformulation starts from.
    """
    if metric in _BETA:
        b2 = _BETA[metric] ** 2
        return np.array([1 + b2, 0.0, 0.0, 0.0]), np.array([1 + b2, 1.0, b2, 0.0])
    if metric == "jaccard":
        return np.array([1.0, 0.0, 0.0, 0.0]), np.array([1.0, 1.0, 1.0, 0.0])
    if metric == "am":
        p = float(positive_rate)
        return np.array([0.5 / p, 0.0, 0.0, 0.5 / (1 - p)]), np.ones(4)
    if metric == "wacc":
        w = WACC_POSITIVE_WEIGHT
        return np.array([w, 0.0, 0.0, 1.0]), np.array([w, 1.0, w, 1.0])
    raise ValueError(f"unknown metric {metric!r}; expected one of {', '.join(METRICS)}")


def confusion(y: np.ndarray, yhat: np.ndarray) -> np.ndarray:
    """``(TP, FP, FN, TN) / n`` for 0/1 arrays ``y`` (truth) and ``yhat`` (predictions)."""
    y = np.asarray(y).astype(bool)
    yhat = np.asarray(yhat).astype(bool)
    counts = [np.sum(y & yhat), np.sum(~y & yhat), np.sum(y & ~yhat), np.sum(~y & ~yhat)]
    return np.asarray(counts, dtype=np.float64) / max(len(y), 1)


def metric_value(metric: str, y: np.ndarray, yhat: np.ndarray) -> float:
    """The metric of predictions ``yhat`` against labels ``y`` (higher is better, in [0, 1]).

    A zero denominator (possible only without positives) scores 0.
    """
    y = np.asarray(y)
    a, b = coefficients(metric, float(np.mean(y)) if len(y) else 0.5)
    c = confusion(y, yhat)
    den = float(b @ c)
    return float(a @ c) / den if den > 0 else 0.0


def score_all(y: np.ndarray, yhat: np.ndarray) -> dict[str, float]:
    """Every metric of :data:`METRICS` for predictions ``yhat``."""
    return {m: metric_value(m, y, yhat) for m in METRICS}


def _subsample_positives(X: np.ndarray, y: np.ndarray, rate: float, rng: np.random.Generator):
    """Keep every negative and just enough positives for a minority rate ``rate``."""
    pos, neg = np.flatnonzero(y == 1), np.flatnonzero(y == 0)
    n_pos = min(len(pos), max(8, int(round(rate / (1 - rate) * len(neg)))))
    keep = np.sort(np.concatenate([neg, rng.choice(pos, size=n_pos, replace=False)]))
    return X[keep], y[keep]


def load(dataset: str, rate_pct: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(X_train, y_train, X_test, y_test)``: float64 features, int64 0/1 labels.

    ``rate_pct`` is the minority (positive) rate in percent. The stream is
    ``numpy.random.default_rng([seed, rate_pct, k])`` (``k`` the index of the
    data set); the test split is stratified, ``TEST_FRACTION`` of the points.
    """
    from sklearn.datasets import load_breast_cancer, load_digits, make_classification
    from sklearn.model_selection import train_test_split

    rate = rate_pct / 100.0
    rng = np.random.default_rng([seed, rate_pct, DATASETS.index(dataset)])
    if dataset == "synth":
        X, y = make_classification(
            n_samples=2000, n_features=20, n_informative=6, n_redundant=4, weights=[1 - rate],
            flip_y=0.02, class_sep=1.0, random_state=int(rng.integers(2**31)),
        )
    elif dataset == "cancer":
        X, target = load_breast_cancer(return_X_y=True)
        X, y = _subsample_positives(X, (target == 0).astype(np.int64), rate, rng)
    elif dataset == "digits":
        X, target = load_digits(return_X_y=True)
        X, y = _subsample_positives(X, (target == DIGITS[seed % len(DIGITS)]).astype(np.int64), rate, rng)
    else:
        raise ValueError(f"unknown data set {dataset!r}; expected one of {', '.join(DATASETS)}")
    X_tr, X_te, y_tr, y_te = train_test_split(
        np.asarray(X, dtype=np.float64), np.asarray(y, dtype=np.int64), test_size=TEST_FRACTION,
        stratify=y, random_state=int(rng.integers(2**31)),
    )
    return X_tr, y_tr, X_te, y_te


#: Instance ids ``<data>-p<rate %>-<metric>-<track>-s<seed>``, and the instances of each tier:
#: smoke (seconds, in CI), standard (the published sweep), full (paper scale).
CATALOG = Catalog(
    IdForm(
        "generalized-metrics",
        "{data}-p{rate}-{metric}-{track}-s{seed}",
        example="synth-p5-f1-linear-s0",
        data=Choice(DATASETS, what="data set"),
        rate=Int(label="minority %", minimum=1),
        metric=Choice(METRICS, what="target metric"),
        track=Choice(TRACKS, what="track"),
        seed=Int(),
    ),
    {
        "smoke": [
            {"data": "synth", "rate": 10, "metric": "f1", "track": "linear", "seed": 0},
            {"data": "cancer", "rate": 10, "metric": "jaccard", "track": "mlp", "seed": 0},
        ],
        "standard": grid(data=DATASETS, rate=(5, 10), metric=METRICS, track=TRACKS, seed=(0,)),
        "full": grid(data=DATASETS, rate=(2, 5, 10), metric=METRICS, track=TRACKS, seed=(0, 1, 2, 3, 4)),
    },
)


_TEMPLATE = """\
    # Predict the minority class everywhere (valid; scores the "all_positive" reference).
    # instance.data: X_train, y_train, X_test (float64/int64 arrays), metric, track (str).
    return np.ones(len(instance.data["X_test"]), dtype=np.int64)
"""


@register_task
class GeneralizedMetricsTask(CatalogTask):
    """Imbalanced binary classification scored by the instance's target metric.

    A solution is one label per test point: an integer (or bool) array of
    0/1 values of length ``len(X_test)``.
    """

    meta = TaskMeta(
        name="generalized-metrics",
        version="1",
        family="generalized_metrics",
        area="learning objectives",
        paper=Paper(
            title="Principled Algorithms for Optimizing Generalized Metrics in Binary Classification",
            authors=["Anqi Mao", "Mehryar Mohri", "Yutao Zhong"],
            venue="ICML 2025",
            arxiv="2512.23133",
        ),
        description=(
            "Imbalanced binary classification (make_classification, breast_cancer, digits one-vs-rest; "
            "minority 2-10 %) with a target metric among F1, F0.5, F2, Jaccard, AM and weighted accuracy, "
            "on a linear or one-hidden-layer track; methods return test labels, the task scores them."
        ),
        metrics=[
            Metric(name="target", direction="max", description="the instance's target metric on the test labels"),
            Metric(name="f1", direction="max", description="F1 on the test set"),
            Metric(name="f05", direction="max", description="F0.5 on the test set"),
            Metric(name="f2", direction="max", description="F2 on the test set"),
            Metric(name="jaccard", direction="max", description="Jaccard TP / (TP + FP + FN) on the test set"),
            Metric(name="am", direction="max", description="AM: (TPR + TNR) / 2 (balanced accuracy) on the test set"),
            Metric(
                name="wacc", direction="max",
                description=f"weighted accuracy, positives weighted {WACC_POSITIVE_WEIGHT:g}, on the test set",
            ),
            Metric(name="positive_rate", direction="max", description="share of test points labelled 1"),
        ],
        primary="target",
        normalization=Normalization(
            kind="linear", zero="trivial", one=1.0,
            description="0 for the better constant prediction (all 0 or all 1), 1 for a perfect one",
        ),
        gap_reference="oracle_threshold",
        # Seconds per job. Smoke budgets keep several times the quiet-machine time.
        budgets={"smoke": 30.0, "standard": 60.0, "full": 300.0},
    )
    template = _TEMPLATE
    catalog = CATALOG

    def spec(self, fields: dict[str, Any]) -> InstanceSpec:
        """The id's fields as filterable parameters."""
        return InstanceSpec(
            id=CATALOG.form.format(**fields), params=dict(fields), tags=(fields["data"], fields["track"])
        )

    def generate(self, fields: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """Public: ``X_train``, ``y_train``, ``X_test``, the target ``metric`` and the ``track``;
        private: ``y_test``."""
        X_tr, y_tr, X_te, y_te = load(fields["data"], fields["rate"], fields["seed"])
        data = {"X_train": X_tr, "y_train": y_tr, "X_test": X_te, "metric": fields["metric"], "track": fields["track"]}
        return data, {"y_test": y_te}

    def reference(
        self, fields: dict[str, Any], data: dict[str, Any], private: dict[str, Any]
    ) -> dict[str, Reference]:
        """``trivial``: the better constant prediction; ``oracle_threshold``: a logistic
        regression fitted on the training set whose threshold is chosen on the *test*
        labels (a plug-in that could never be deployed: headroom, not a method)."""
        from sklearn.linear_model import LogisticRegression
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler

        y, metric = private["y_test"], fields["metric"]
        ones, zeros = np.ones_like(y), np.zeros_like(y)
        trivial = max(metric_value(metric, y, ones), metric_value(metric, y, zeros))
        model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000))
        model.fit(data["X_train"], data["y_train"])
        scores = model.decision_function(data["X_test"])
        best = max(metric_value(metric, y, (scores >= t).astype(np.int64)) for t in np.unique(scores))
        return {
            "trivial": Reference(value=trivial, source="the better of all-0 and all-1 predictions"),
            "oracle_threshold": Reference(
                value=best, source="LogisticRegression (C=1, standardised) with its threshold chosen on the test labels"
            ),
        }

    def evaluate(self, instance: Instance, solution: Any) -> dict[str, float]:
        """Recompute every metric from the returned test labels.

        Raises
        ------
        InvalidSolution
            Unless ``solution`` is an integer or bool array of one 0/1 label per test point.
        """
        y = np.asarray(instance.private["y_test"])
        yhat = as_int_vector(
            solution, len(y), low=0, high=2, item="test point", value="label", allow_bool=True,
            expected=f"a 0/1 integer or bool array of test labels, one per test point (length {len(y)})",
            float_hint="e.g. (scores >= threshold).astype(np.int64)",
        )
        scores = score_all(y, yhat)
        return {"target": scores[instance.data["metric"]], **scores, "positive_rate": float(yhat.mean())}
