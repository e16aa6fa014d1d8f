"""What the scikit-learn baselines of generalized-metrics share: the models and the scorer."""

from __future__ import annotations

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import make_scorer
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import StandardScaler

from tasks.generalized_metrics import metric_value

__all__ = ["linear_track", "logistic", "mlp", "mlp_track", "scorer", "train_test"]


def linear_track(instance) -> bool | str:
    """``supports`` for the linear baselines."""
    return True if instance.data["track"] == "linear" else "a linear baseline: runs on the linear track only"


def mlp_track(instance) -> bool | str:
    """``supports`` for the one-hidden-layer baselines."""
    return True if instance.data["track"] == "mlp" else "a one-hidden-layer baseline: runs on the mlp track only"


def train_test(instance) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(X_train, y_train, X_test)`` from the instance's public data."""
    d = instance.data
    return np.asarray(d["X_train"]), np.asarray(d["y_train"]), np.asarray(d["X_test"])


def logistic(C: float = 1.0, class_weight: str | None = None) -> Pipeline:
    """Standardised features, then L2 logistic regression (lbfgs)."""
    return make_pipeline(StandardScaler(), LogisticRegression(C=C, class_weight=class_weight, max_iter=2000))


def mlp(seed: int, hidden: int, max_iter: int, alpha: float) -> Pipeline:
    """Standardised features, then one hidden ReLU layer trained by L-BFGS (full batch: deterministic).

    ``alpha = 1`` gives the L2 penalty ``||W||^2 / (2 n)`` on the mean log-loss, the same
    network, optimiser and penalty as METRO's mlp track at its default ``C = 1``.
    """
    net = MLPClassifier(
        hidden_layer_sizes=(hidden,), solver="lbfgs", alpha=alpha, max_iter=max_iter, random_state=seed
    )
    return make_pipeline(StandardScaler(), net)


def scorer(metric: str):
    """``make_scorer`` of the task's metric ``metric`` (the same function the verifier uses)."""
    return make_scorer(lambda y, yhat: metric_value(metric, y, yhat))
