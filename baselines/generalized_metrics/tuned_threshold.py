"""tuned-threshold and mlp-tuned-threshold: plug-in classifiers with a threshold tuned for the target metric.

Reference: scikit-learn's ``TunedThresholdClassifierCV`` (``sklearn.model_selection``),
used as its documentation recommends: ``scoring`` is ``make_scorer`` of the
target metric, the threshold is chosen by 5-fold stratified cross-validation
and the classifier is refitted on the whole training set. This is the
two-stage plug-in approach the paper compares against.
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import StratifiedKFold, TunedThresholdClassifierCV

from baselines.generalized_metrics._models import (
    linear_track,
    logistic,
    mlp,
    mlp_track,
    scorer,
    train_test,
)
from bench import method


def _tuned(estimator, instance, seed: int, thresholds: int) -> np.ndarray:
    X, y, X_test = train_test(instance)
    cv = StratifiedKFold(5, shuffle=True, random_state=seed)
    tuned = TunedThresholdClassifierCV(
        estimator, scoring=scorer(instance.data["metric"]), cv=cv, thresholds=thresholds, random_state=seed
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        tuned.fit(X, y)
    return tuned.predict(X_test).astype(np.int64)


@method(
    name="tuned-threshold",
    kind="baseline",
    tasks=["generalized-metrics"],
    reference="sklearn.model_selection.TunedThresholdClassifierCV over LogisticRegression (standardised), scoring = the target metric",
    version="1",
    params={"thresholds": 100},
    deterministic=True,
    supports=linear_track,
)
def solve(instance, *, seed: int, budget: float, thresholds: int) -> np.ndarray:
    """Logistic regression with its threshold tuned for the target metric by 5-fold CV."""
    return _tuned(logistic(), instance, seed, thresholds)


@method(
    name="mlp-tuned-threshold",
    kind="baseline",
    tasks=["generalized-metrics"],
    reference="sklearn.model_selection.TunedThresholdClassifierCV over MLPClassifier (one hidden layer, lbfgs), scoring = the target metric",
    version="1",
    params={"thresholds": 100, "hidden": 16, "max_iter": 150, "alpha": 1.0},
    deterministic=True,
    supports=mlp_track,
)
def solve_mlp(instance, *, seed: int, budget: float, thresholds: int, hidden: int, max_iter: int, alpha: float) -> np.ndarray:
    """A one-hidden-layer MLP with its threshold tuned for the target metric by 5-fold CV."""
    return _tuned(mlp(seed, hidden, max_iter, alpha), instance, seed, thresholds)
