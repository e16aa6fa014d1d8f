"""What the scikit-learn baselines of generalized-metrics share: the track's model and the scorer."""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import make_scorer
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import StandardScaler

from tasks.generalized_metrics import metric_value

__all__ = ["fit_quietly", "model", "scorer", "train_test"]


def train_test(instance) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(X_train, y_train, X_test)`` from the instance's public data."""
    d = instance.data
    return np.asarray(d["X_train"]), np.asarray(d["y_train"]), np.asarray(d["X_test"])


def model(instance, *, seed: int, C: float, hidden: int, max_iter: int) -> Pipeline:
    """Standardised features, then the track's hypothesis class.

    ``linear``: L2 logistic regression (lbfgs, ``C``). ``mlp``: one hidden ReLU
    layer of ``hidden`` units trained by L-BFGS for at most ``max_iter`` steps
    (full batch: deterministic for a seed) with ``alpha = 1 / C``, which puts
    the same penalty on the weights as logistic regression's ``C`` (scikit-learn
    scales ``alpha`` by ``1 / n``). METRO uses the same two models.
    """
    if instance.data["track"] == "linear":
        clf = LogisticRegression(C=C, max_iter=2000)
    else:
        clf = MLPClassifier(
            hidden_layer_sizes=(hidden,), solver="lbfgs", alpha=1.0 / C, max_iter=max_iter, random_state=seed
        )
    return make_pipeline(StandardScaler(), clf)


def fit_quietly(estimator, X: np.ndarray, y: np.ndarray, **fit_params):
    """``estimator.fit`` with L-BFGS's convergence warnings silenced (the step cap is a setting)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return estimator.fit(X, y, **fit_params)


def scorer(metric: str):
    """``make_scorer`` of the task's metric ``metric`` (the same function the verifier uses)."""
    return make_scorer(lambda y, yhat: metric_value(metric, y, yhat))
