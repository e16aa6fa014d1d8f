"""Plug-in baselines without a metric-aware threshold: LR at 0.5, class-weighted LR, MLP at 0.5.

Reference: scikit-learn's ``LogisticRegression`` (``class_weight=None`` or
``"balanced"``) and ``MLPClassifier``, each on standardised features,
predicting 1 where the estimated probability is at least 0.5 (``predict``).
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from baselines.generalized_metrics._models import linear_track, logistic, mlp, mlp_track, train_test
from bench import method


def _fit_predict(model, instance) -> np.ndarray:
    X, y, X_test = train_test(instance)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(X, y)
    return model.predict(X_test).astype(np.int64)


@method(
    name="lr-threshold-half",
    kind="baseline",
    tasks=["generalized-metrics"],
    reference="sklearn.linear_model.LogisticRegression (standardised, C=1), threshold 0.5",
    version="1",
    deterministic=True,
    supports=linear_track,
)
def solve_lr(instance, *, seed: int, budget: float) -> np.ndarray:
    """Logistic regression, label 1 where p(1|x) >= 0.5."""
    return _fit_predict(logistic(), instance)


@method(
    name="lr-class-weighted",
    kind="baseline",
    tasks=["generalized-metrics"],
    reference="sklearn.linear_model.LogisticRegression(class_weight='balanced') (standardised, C=1), threshold 0.5",
    version="1",
    deterministic=True,
    supports=linear_track,
)
def solve_weighted(instance, *, seed: int, budget: float) -> np.ndarray:
    """Class-balanced logistic regression (each class weighs half), label 1 where p(1|x) >= 0.5."""
    return _fit_predict(logistic(class_weight="balanced"), instance)


@method(
    name="mlp-threshold-half",
    kind="baseline",
    tasks=["generalized-metrics"],
    reference="sklearn.neural_network.MLPClassifier (one hidden layer, lbfgs, standardised), threshold 0.5",
    version="1",
    params={"hidden": 16, "max_iter": 150, "alpha": 1.0},
    deterministic=True,
    supports=mlp_track,
)
def solve_mlp(instance, *, seed: int, budget: float, hidden: int, max_iter: int, alpha: float) -> np.ndarray:
    """A one-hidden-layer MLP, label 1 where p(1|x) >= 0.5."""
    return _fit_predict(mlp(seed, hidden, max_iter, alpha), instance)
